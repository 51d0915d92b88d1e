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

// TestQuantizeKVSets: every set stores metal.QuantizeKV's int8 values and
// scales bit for bit (groups of normal, tiny, huge, zero and subnormal
// values, and values beyond the float16 range); a group with NaN or Inf
// dequantizes to NaN everywhere.
func TestQuantizeKVSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const groups = 64
	x := make([]float32, groups*metal.KVGroup)
	for g := range groups {
		scale := []float32{1, 1e-3, 300, 1e-7, 1e-30, 1e6, 0, 1e8}[g%8]
		for i := range metal.KVGroup {
			x[g*metal.KVGroup+i] = float32(rng.NormFloat64()) * scale
		}
	}
	for _, set := range append(availableFused(), portableFused()) {
		q, sc := make([]int8, len(x)), make([]uint16, groups)
		wq, wsc := make([]int8, len(x)), make([]uint16, groups)
		set.quantizeKV(q, sc, x)
		metal.QuantizeKV(wq, wsc, x)
		for i := range q {
			if q[i] != wq[i] {
				t.Fatalf("%s: q[%d] = %d, want %d (x %g)", set.name, i, q[i], wq[i], x[i])
			}
		}
		for g := range sc {
			if sc[g] != wsc[g] {
				t.Fatalf("%s: scale %d = %#04x, want %#04x", set.name, g, sc[g], wsc[g])
			}
		}
		bad := make([]float32, 2*metal.KVGroup)
		bad[1], bad[metal.KVGroup+2] = float32(math.NaN()), float32(math.Inf(-1))
		q, sc, back := make([]int8, len(bad)), make([]uint16, 2), make([]float32, len(bad))
		set.quantizeKV(q, sc, bad)
		metal.DequantizeKV(back, q, sc)
		if !math.IsNaN(float64(back[0])) || !math.IsNaN(float64(back[metal.KVGroup])) {
			t.Fatalf("%s: groups with NaN and -Inf dequantized to %v and %v, want NaN", set.name, back[0], back[metal.KVGroup])
		}
	}
}
