package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestDequantKV: every set's q8 widening gives metal.DequantizeKV's floats
// bit for bit, for whole groups and a ragged rest, at any int8 and scale
// (subnormal, zero, negative, Inf).
func TestDequantKV(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{32, 64, 96, 128, 4096, 40, 7} {
		q := make([]int8, n)
		for i := range q {
			q[i] = int8(rng.IntN(256) - 128)
		}
		scales := randF16(rng, (n+metal.KVGroup-1)/metal.KVGroup)
		special := []uint16{0x0001, 0x0000, 0x8000, 0xbc00, 0x7c00}
		for i := range scales {
			if i < len(special) {
				scales[i] = special[i]
			}
		}
		want := make([]float32, n)
		metal.DequantizeKV(want, q, scales)
		for _, set := range append(availableFused(), portableFused()) {
			got := make([]float32, n)
			set.dequantKV(got, q, scales)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s, %d values: [%d] = %v, want %v", set.name, n, i, got[i], want[i])
				}
			}
		}
	}
}
