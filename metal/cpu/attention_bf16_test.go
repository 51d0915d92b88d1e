package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// randBF16 is n bfloat16 (as F32ToBF16DAZ stores them) of normal values
// times 2^e for e drawn from [lo, hi]: exponents low enough that products
// and sums fall below float32's normal range test the flushing to zero.
func randBF16(rng *rand.Rand, n, lo, hi int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = metal.F32ToBF16DAZ(float32(rng.NormFloat64() * math.Exp2(float64(lo+rng.IntN(hi-lo+1)))))
	}
	return v
}

// TestBF16KernelsMatchPortable: every set's KVBF16 kernels give the
// portable ones' bits: narrowing special values (subnormals, NaN, Inf,
// ties) in place and not, and into one half of pairs (the other kept), and scores and value sums of one to eleven
// heads, in magnitudes where VDPBF16PS flushes subnormal results, over
// whole tables and value pairs ending anywhere in the last group.
func TestBF16KernelsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	ref := portableBF16()
	specials := []uint32{0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
		0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffa00000, 0x3f808000, 0x3f818000, 0x3f80ffff, 0x80000000}
	for _, set := range availableFused() {
		k := set.bf16
		for n := range 41 {
			src := make([]float32, n)
			for i := range src {
				if i < len(specials) && rng.IntN(2) == 0 {
					src[i] = math.Float32frombits(specials[i])
				} else {
					src[i] = math.Float32frombits(rng.Uint32())
				}
			}
			want, got := make([]uint16, n), make([]uint16, n)
			ref.narrow(want, src)
			k.narrow(got, src)
			inPlace := append([]float32(nil), src...)
			k.narrow(bf16View(inPlace)[:n], inPlace)
			for i := range want {
				if got[i] != want[i] || bf16View(inPlace)[i] != want[i] {
					t.Fatalf("%s: narrow(%#08x) = %#04x (in place %#04x), portable %#04x", set.name, math.Float32bits(src[i]), got[i], bf16View(inPlace)[i], want[i])
				}
			}
			for odd := range 2 {
				pw, pg := make([]uint16, 2*n), make([]uint16, 2*n)
				for i := range pw {
					pw[i] = uint16(rng.Uint32())
				}
				copy(pg, pw)
				ref.narrowPairs(pw, src, odd)
				k.narrowPairs(pg, src, odd)
				if !slices.Equal(pg, pw) {
					t.Fatalf("%s: narrowPairs of %d, odd %d: %#04x, portable %#04x", set.name, n, odd, pg, pw)
				}
			}
		}
		for _, hd := range []int{32, 64, 128} {
			for _, mag := range [][2]int{{-4, 4}, {-70, -56}} {
				for heads := 1; heads <= 11; heads++ {
					groups := 1 + rng.IntN(3)
					keys := randBF16(rng, groups*8*hd, mag[0], mag[1])
					tab := make([]halfGroup, groups)
					for g := range tab {
						tab[g] = halfGroup{k: &keys[g*8*hd], pf: &keys[(groups-1-g)*8*hd]}
					}
					q, want, got := make([][]uint16, heads), make([][]float32, heads), make([][]float32, heads)
					for h := range heads {
						q[h] = randBF16(rng, hd, mag[0], mag[1])
						want[h], got[h] = make([]float32, 8*groups), make([]float32, 8*groups)
					}
					name := fmt.Sprintf("%s hd %d 2^%v heads %d groups %d", set.name, hd, mag, heads, groups)
					ref.scoresHeads(want, q, tab, hd, 0.125)
					k.scoresHeads(got, q, tab, hd, 0.125)
					sameBits(t, name+" scores", got, want)

					pairs := 1 + rng.IntN(4*groups)
					w := make([][]uint16, heads)
					for h := range heads {
						w[h] = randBF16(rng, 2*pairs, mag[0]/2, mag[1]/2)
						w[h][rng.IntN(2*pairs)] = 0
						want[h] = make([]float32, hd)
						for i := range want[h] {
							want[h][i] = float32(rng.NormFloat64() * math.Exp2(float64(mag[0])))
						}
						got[h] = append([]float32(nil), want[h]...)
					}
					ref.sumsHeads(want, w, tab, pairs, hd)
					k.sumsHeads(got, w, tab, pairs, hd)
					sameBits(t, fmt.Sprintf("%s sums of %d pairs", name, pairs), got, want)
				}
			}
		}
	}
}

func sameBits(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	for h := range want {
		for i := range want[h] {
			if math.Float32bits(got[h][i]) != math.Float32bits(want[h][i]) {
				t.Fatalf("%s: head %d [%d] = %v, portable %v", what, h, i, got[h][i], want[h][i])
			}
		}
	}
}

// TestDPBF16 checks the portable lane against values worked by hand: the
// odd product first, each sum rounded, subnormal sums flushed.
func TestDPBF16(t *testing.T) {
	bf := metal.F32ToBF16DAZ
	for _, tc := range []struct {
		acc, a0, a1, b0, b1, want float32
	}{
		{1, 2, 3, 5, 7, 1 + 21 + 10},
		// 2^24 + 1 rounds to 2^24 (ties to even), so the order shows:
		// odd first, (2^24 + 1) − 1 = 2^24 − 1; even first, 2^24.
		{0x1p24, -1, 1, 1, 1, 0x1p24 - 1},
		{0x1p24, 1, -1, 1, 1, 0x1p24},
		// A subnormal result becomes zero: 2^-70 · 2^-70 = 2^-140.
		{0, 0x1p-70, 0, 0x1p-70, 0, 0},
		{0x1p-126, 0x1p-70, 0, -0x1p-70, 0, 0x1p-126 - 0x1p-140},
	} {
		got := dpBF16(tc.acc, bf(tc.a0), bf(tc.a1), bf(tc.b0), bf(tc.b1))
		want := flushSubnormal(tc.want)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("dpBF16(%v, %v·%v + %v·%v) = %v, want %v", tc.acc, tc.a1, tc.b1, tc.a0, tc.b0, got, want)
		}
	}
}
