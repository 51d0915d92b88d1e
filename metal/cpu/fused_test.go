package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestExp32Accuracy checks exp32's documented bound against math.Exp over
// its whole range, and its clamping outside.
func TestExp32Accuracy(t *testing.T) {
	const bound = 2.5e-7
	worst, at := 0.0, 0.0
	for i := 0; i <= 1_000_000; i++ {
		x := float32(float64(expLo) + float64(expHi-expLo)*float64(i)/1e6)
		want := math.Exp(float64(x))
		if e := math.Abs(float64(exp32(x))-want) / want; e > worst {
			worst, at = e, float64(x)
		}
	}
	t.Logf("exp32 worst relative error %.3g at x=%g", worst, at)
	if worst > bound {
		t.Errorf("exp32 relative error %.3g at x=%g, documented bound %.3g", worst, at, bound)
	}
	for _, tc := range []struct {
		x      float32
		lo, hi float64
	}{{0, 1, 1}, {-1000, 0, 2e-38}, {float32(math.Inf(-1)), 0, 2e-38}, {1000, 1e38, math.MaxFloat32}} {
		if got := float64(exp32(tc.x)); got < tc.lo || got > tc.hi {
			t.Errorf("exp32(%g) = %g, want in [%g, %g]", tc.x, got, tc.lo, tc.hi)
		}
	}
}

func TestExpShiftSumsTheExponentials(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x := randVec(rng, 37)
	want := make([]float64, len(x))
	sum := 0.0
	for i, v := range x {
		want[i] = math.Exp(float64(v) - 0.5)
		sum += want[i]
	}
	got := expShift(x, 0.5)
	if e := maxRelErr(x, want); e > 1e-6 {
		t.Errorf("expShift values: relative error %g", e)
	}
	if e := math.Abs(float64(got)-sum) / sum; e > 1e-6 {
		t.Errorf("expShift sum %g, want %g", got, sum)
	}
}

// TestFusedKernelsMatchPortable: the SIMD loops return the portable bits.
func TestFusedKernelsMatchPortable(t *testing.T) {
	sets := availableFused()
	if len(sets) == 0 {
		t.Skip("no SIMD loops on this architecture")
	}
	for _, best := range sets {
		t.Run(best.name, func(t *testing.T) { testFusedSet(t, best) })
	}
}

// testFusedSet checks one SIMD set against the portable loops.
func testFusedSet(t *testing.T, best fusedKernels) {
	ref := portableFused()
	rng := rand.New(rand.NewPCG(8, 8))
	testSoftmax(t, &ref, &best, rng)
	for _, n := range []int{1, 7, 8, 9, 27, 64, 131, 200} {
		t.Run(fmt.Sprint("n=", n), func(t *testing.T) {
			x := randVec(rng, n)
			for i := range x {
				x[i] *= 30 // reach both clamps of exp32 and large SiLU inputs
			}
			x[0] = 0
			// past both clamps for certain, inside the SIMD blocks where n ≥ 8
			x[n-1], x[n/2] = 500, -500
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			sa, sb := ref.expShift(a, 3), best.expShift(b, 3)
			same(t, "expShift", b, a)
			same(t, "expShift sum", []float32{sb}, []float32{sa})
			// Values of one scale, whose sum depends on the order of the adds.
			a, b = randVec(rng, n), nil
			b = append(b, a...)
			sa, sb = ref.expShift(a, 0.5), best.expShift(b, 0.5)
			same(t, "expShift sum of like values", []float32{sb}, []float32{sa})

			// Maxima: ordinary values, then zeros of both signs and NaNs
			// (which never replace a running maximum in either order).
			m := randVec(rng, n)
			same(t, "max", []float32{best.max(m)}, []float32{ref.max(m)})
			for i := range m {
				switch i % 3 {
				case 0:
					m[i] = float32(math.Copysign(0, float64(m[i])))
				case 1:
					m[i] = float32(math.NaN())
				}
			}
			same(t, "max of zeros and NaNs", []float32{best.max(m)}, []float32{ref.max(m)})
			// Only zeros and NaNs: the sign of the maximum is that of the
			// first zero in its lane, so it checks the order of the steps.
			for i := range m {
				if i%3 == 2 {
					m[i] = float32(math.Copysign(0, float64(rng.IntN(2)*2-1)))
				}
			}
			same(t, "max of only zeros and NaNs", []float32{best.max(m)}, []float32{ref.max(m)})

			up := randVec(rng, n)
			a, b = append([]float32(nil), x...), append([]float32(nil), x...)
			ref.siluMul(a, up)
			best.siluMul(b, up)
			same(t, "siluMul", b, a)

			a, b = append([]float32(nil), x...), append([]float32(nil), x...)
			ref.scale(a, 0.37)
			best.scale(b, 0.37)
			same(t, "scale", b, a)
			oa, ob := make([]float32, n), make([]float32, n)
			ref.normScale(oa, x, up, 1.7)
			best.normScale(ob, x, up, 1.7)
			same(t, "normScale", ob, oa)
			b = append([]float32(nil), x...)
			best.normScale(b, b, up, 1.7) // in place, as RMSNorm does
			same(t, "normScale in place", b, oa)

			// RoPE's rotation of one head: x the first halves, up the
			// second, cosines and sines of random angles.
			c, sn := make([]float32, n), make([]float32, n)
			for i := range c {
				s64, c64 := math.Sincos(float64(x[i]) * 3)
				c[i], sn[i] = float32(c64), float32(s64)
			}
			loA, hiA := append([]float32(nil), x...), append([]float32(nil), up...)
			loB, hiB := append([]float32(nil), x...), append([]float32(nil), up...)
			ref.rotate(loA, hiA, c, sn)
			best.rotate(loB, hiB, c, sn)
			same(t, "rotate first halves", loB, loA)
			same(t, "rotate second halves", hiB, hiA)

			if got, want := best.sumSquares(x), ref.sumSquares(x); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("sumSquares = %v, portable %v", got, want)
			}

			a, b = append([]float32(nil), x...), append([]float32(nil), x...)
			ref.add(a, up)
			best.add(b, up)
			same(t, "add", b, a)
		})
	}
	// Float16 conversion: ordinary values, halfway cases, the subnormal
	// range, overflow to infinity; lengths with and without a tail.
	for _, n := range []int{3, 8, 1000, 1003} {
		x := randVec(rng, n)
		for i := range x {
			switch i % 5 {
			case 1:
				x[i] *= 1e-6 // float16 subnormals
			case 2:
				x[i] *= 4e4 // near and past the largest float16
			case 3:
				x[i] = float32(int(x[i]*1000)) + 0.5 // ties at large exponents
			}
		}
		a, b := make([]uint16, n), make([]uint16, n)
		ref.toF16(a, x)
		best.toF16(b, x)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("toF16(%v) = %#x, portable %#x", x[i], b[i], a[i])
			}
		}
	}
	// Head widths: whole 64-float chunks, a partial chunk, and not eights;
	// position counts on both sides of the eight-position step.
	for _, hd := range []int{128, 64, 72, 8, 12, 256, 200} {
		for _, npos := range []int{1, 3, 4, 5, 8, 9, 16, 23, 32, 47} {
			t.Run(fmt.Sprintf("hd=%d/pos=%d", hd, npos), func(t *testing.T) {
				stride := 3*hd + 5
				h := randF16(rng, (npos-1)*stride+hd)
				h[0], h[len(h)-1] = 0x7c00, 0x0001 // +Inf, the smallest subnormal
				ka, kb := make([]float32, npos*hd), make([]float32, npos*hd)
				ref.widen(ka, hd, h, stride)
				best.widen(kb, hd, h, stride)
				same(t, "widen", kb, ka)

				k := randVec(rng, (npos-1)*stride+hd)
				q := randVec(rng, hd)
				a, b := make([]float32, npos), make([]float32, npos)
				ref.scores(a, q, k, stride, 0.125)
				best.scores(b, q, k, stride, 0.125)
				same(t, "scores", b, a)

				w := randVec(rng, npos)
				oa := randVec(rng, hd)
				ob := append([]float32(nil), oa...)
				ref.weightedSum(oa, k, stride, w)
				best.weightedSum(ob, k, stride, w)
				same(t, "weightedSum", ob, oa)

				// Two query heads at once: each as if alone.
				q1, w1 := randVec(rng, hd), randVec(rng, npos)
				a1, b0, b1 := make([]float32, npos), make([]float32, npos), make([]float32, npos)
				ref.scores(a1, q1, k, stride, 0.125)
				best.scores2(b0, b1, q, q1, k, stride, 0.125)
				same(t, "scores2 first", b0, a)
				same(t, "scores2 second", b1, a1)
				// Two tokens with two query heads each: each as if alone.
				var q4, o4 [4][]float32
				for i := range q4 {
					q4[i], o4[i] = randVec(rng, hd), make([]float32, npos)
				}
				best.scores4(o4, q4, k, stride, 0.125)
				for i := range q4 {
					ref.scores(a, q4[i], k, stride, 0.125)
					same(t, fmt.Sprintf("scores4 query %d", i), o4[i], a)
				}
				// Keys and values read in place as float16, where the set
				// has that path: the same as on the widened rows.
				if best.scoresHalf2 != nil {
					h16 := randF16(rng, (npos-1)*stride+hd)
					wide := make([]float32, npos*hd)
					ref.widen(wide, hd, h16, stride)
					tmp := randVec(rng, 8*hd) // scratch: its contents must not matter
					var want [2][]float32
					for i, qi := range [][]float32{q, q1} {
						want[i] = make([]float32, npos)
						ref.scores(want[i], qi, wide, hd, 0.125)
					}
					g0, g1 := make([]float32, npos), make([]float32, npos)
					best.scoresHalf2(g0, g1, q, q1, h16, stride, 0.125, tmp, h16)
					same(t, "scoresHalf2 first", g0, want[0])
					same(t, "scoresHalf2 second", g1, want[1])
					ra0, ra1 := randVec(rng, hd), randVec(rng, hd)
					rb0, rb1 := append([]float32(nil), ra0...), append([]float32(nil), ra1...)
					ref.weightedSum(ra0, wide, hd, w)
					ref.weightedSum(ra1, wide, hd, w1)
					best.weightedSum2Half(rb0, rb1, h16, stride, w, w1, tmp, h16)
					same(t, "weightedSum2Half first", rb0, ra0)
					same(t, "weightedSum2Half second", rb1, ra1)
				}
				oa0, oa1 := randVec(rng, hd), randVec(rng, hd)
				ob0, ob1 := append([]float32(nil), oa0...), append([]float32(nil), oa1...)
				ref.weightedSum(oa0, k, stride, w)
				ref.weightedSum(oa1, k, stride, w1)
				best.weightedSum2(ob0, ob1, k, stride, w, w1)
				same(t, "weightedSum2 first", ob0, oa0)
				same(t, "weightedSum2 second", ob1, oa1)
				// Many query heads over the same values: each as if alone,
				// for every grouping of the heads the set may use.
				for _, heads := range []int{1, 3, 4, 5, 7, 10, 13, 23} {
					ho, hw := make([][]float32, heads), make([][]float32, heads)
					for i := range ho {
						ho[i], hw[i] = randVec(rng, hd), randVec(rng, npos)
					}
					want := make([][]float32, heads)
					for i := range ho {
						want[i] = append([]float32(nil), ho[i]...)
						ref.weightedSum(want[i], k, stride, hw[i])
					}
					best.weightedSumHeads(ho, hw, k, stride)
					for i := range ho {
						same(t, fmt.Sprintf("weightedSumHeads %d of %d", i, heads), ho[i], want[i])
					}
					hq := make([][]float32, heads)
					for i := range ho {
						ho[i], hq[i] = make([]float32, npos), randVec(rng, hd)
						want[i] = make([]float32, npos)
						ref.scores(want[i], hq[i], k, stride, 0.125)
					}
					best.scoresHeads(ho, hq, k, stride, 0.125)
					for i := range ho {
						same(t, fmt.Sprintf("scoresHeads %d of %d", i, heads), ho[i], want[i])
					}
				}
			})
		}
	}
}

func BenchmarkSiLUMul(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	gate, up := randVec(rng, 3072), randVec(rng, 3072)
	for _, k := range []struct {
		name string
		f    fusedKernels
	}{{"portable", portableFused()}, {"best", bestFused()}} {
		b.Run(k.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				k.f.siluMul(gate, up)
				copy(gate, up)
			}
		})
	}
}

// BenchmarkSoftmax is one softmax of a row of n attention scores: n = 256
// (a verify row's context in VerifyRatio) and 4096 (a long one), the row
// refilled between calls from a copy in L1 as scores are.
//
// On Zen 5 the AVX-512 softmax took 0.45-0.58 ns an element (about 1.7
// cycles), some 2.5× what its operations need: 15-19% of a run's
// attention (5 tokens at 256, 16 at 4096). Its exponential is a chain of
// about 75 cycles a sixteen (seven unfused Horner steps, as exp32 is
// written), and too few sixteens fit in flight to hide it: with three
// steps instead of seven (wrong values, a probe) the row took 0.63 of the
// time. Unrolling cannot help (the sixteens are already independent); a
// shorter chain would, which means a new exp32 (fma32 Horner steps, or
// Estrin's scheme) for every kernel set at once.
func BenchmarkSoftmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{256, 4096} {
		src := randVec(rng, n)
		for i := range src {
			src[i] *= 8
		}
		x := make([]float32, n)
		for _, k := range []struct {
			name string
			f    fusedKernels
		}{{"portable", portableFused()}, {"best", bestFused()}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					copy(x, src)
					k.f.softmaxRow(x)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/elem")
			})
		}
	}
}

// same fails t unless got has want's bits.
func same(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %v, portable %v", what, i, got[i], want[i])
		}
	}
}

// TestHeadsHalfMatchWidened: the in-place many-head kernels, where a set
// has them (each may be missing), return the bits of the widened path for every grouping of
// the heads, with the groups of positions scattered through the cache.
func TestHeadsHalfMatchWidened(t *testing.T) {
	ref := portableFused()
	for _, f := range availableFused() {
		if f.scoresHeadsHalf == nil && f.weightedSumHeadsHalf == nil {
			continue
		}
		rng := rand.New(rand.NewPCG(21, 21))
		for _, hd := range []int{32, 64, 128} {
			for _, groups := range []int{1, 3} {
				for _, heads := range []int{2, 4, 6, 8, 10, 12, 14, 16, 22} {
					name := fmt.Sprintf("%s/hd=%d/groups=%d/heads=%d", f.name, hd, groups, heads)
					// Groups at scattered row offsets of one float16 buffer.
					cache := randF16(rng, 64*hd)
					tab := make([]halfGroup, groups)
					wide := make([]float32, 8*groups*hd)
					for g, row := range rng.Perm(8)[:groups] {
						i := row * 8 * hd
						tab[g] = halfGroup{k: &cache[i], pf: &cache[rng.IntN(64)*hd]}
						ref.widen(wide[8*g*hd:8*(g+1)*hd], hd, cache[i:], hd)
					}
					n := 8 * groups
					outs, qs, want := make([][]float32, heads), make([][]float32, heads), make([][]float32, heads)
					for i := range outs {
						outs[i], qs[i], want[i] = make([]float32, n), randVec(rng, hd), make([]float32, n)
						ref.scores(want[i], qs[i], wide, hd, 0.125)
					}
					if f.scoresHeadsHalf != nil {
						f.scoresHeadsHalf(outs, qs, tab, hd, 0.125)
						for i := range outs {
							same(t, fmt.Sprintf("%s: scores of head %d", name, i), outs[i], want[i])
						}
					}
					ws := make([][]float32, heads)
					for i := range outs {
						outs[i], ws[i] = randVec(rng, hd), randVec(rng, n)
						want[i] = append(want[i][:0], outs[i]...)
						ref.weightedSum(want[i], wide, hd, ws[i])
					}
					if f.weightedSumHeadsHalf != nil {
						f.weightedSumHeadsHalf(outs, ws, tab, hd)
						for i := range outs {
							same(t, fmt.Sprintf("%s: value sums of head %d", name, i), outs[i], want[i])
						}
					}
				}
			}
		}
	}
}

// testSoftmax checks a set's softmaxRow against the portable one on rows
// of every length up to 40 and around 256 (every case of a sixteen and an
// eight cut short): attention scores, scores whose largest is a zero of
// either sign, and scores far enough below the largest to clamp.
func testSoftmax(t *testing.T, ref, best *fusedKernels, rng *rand.Rand) {
	var lengths []int
	for n := 1; n <= 40; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 247, 248, 249, 255, 256, 257)
	for _, n := range lengths {
		x := randVec(rng, n)
		for i := range x {
			x[i] *= 8
		}
		zeros := make([]float32, n)
		for i := range zeros {
			zeros[i] = -float32(rng.IntN(4)) // ties, and -0 from 0·(-1)
			if rng.IntN(2) == 0 {
				zeros[i] = float32(math.Copysign(0, -1))
			}
		}
		zeros[rng.IntN(n)] = 0
		far := randVec(rng, n)
		far[n-1] = 200 // every other value clamps at exp32(-87)
		for _, row := range [][]float32{x, zeros, far} {
			a, b := append([]float32(nil), row...), append([]float32(nil), row...)
			ref.softmaxRow(a)
			best.softmaxRow(b)
			same(t, fmt.Sprintf("softmax of %d", n), b, a)
		}
	}
}
