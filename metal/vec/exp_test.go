package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpWeightAccuracy: each weight is e^d to float32 precision over the
// whole range kept, and 0 below it.
func TestExpWeightAccuracy(t *testing.T) {
	worst := 0.0
	for i := 0; i <= 200000; i++ {
		d := float32(-87 * float64(i) / 200000)
		got, want := float64(expWeight(d, 0, 1)), math.Exp(float64(d))
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("relative error up to %g, want below 3e-7", worst)
	}
	for _, d := range []float32{-87.5, -1000, float32(math.Inf(-1)), float32(math.NaN())} {
		if got := expWeight(d, 0, 1); got != 0 || math.Signbit(float64(got)) {
			t.Errorf("expWeight(%v) = %v, want +0", d, got)
		}
	}
	if got := expWeight(3, 5, 0.5); got != expWeight(-1, 0, 1) {
		t.Errorf("e^((3−5)·0.5) = %v, want e^−1 = %v", got, expWeight(-1, 0, 1))
	}
}

// TestExpWeightsMatchReference: the assembly's weights and sum are the Go
// reference's, bit for bit, over logits with banned (−Inf), NaN and
// far-below values, and ExpWeights adds a ragged tail as documented.
func TestExpWeightsMatchReference(t *testing.T) {
	if !haveExpAsm() {
		t.Skip("no assembly on this CPU: ExpWeights is the Go reference")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{8, 16, 24, 64, 1000, 151936} {
		for _, invT := range []float32{1, 1 / 0.7, 1 / 1.5, 50} {
			x := make([]float32, n)
			m := float32(math.Inf(-1))
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 4)
				switch rng.IntN(50) {
				case 0:
					x[i] = float32(math.Inf(-1))
				case 1:
					x[i] = float32(math.NaN())
				case 2:
					x[i] = -200
				}
				if x[i] > m {
					m = x[i]
				}
			}
			got, want := make([]float32, n), make([]float32, n)
			gs, ws := expWeightsAsm(&got[0], &x[0], n, m, invT), expWeightsRef(want, x, m, invT)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n %d, 1/T %v: w[%d] = %v (x %v), want %v", n, invT, i, got[i], x[i], want[i])
				}
			}
			if gs != ws {
				t.Fatalf("n %d, 1/T %v: sum %v, want %v", n, invT, gs, ws)
			}
		}
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	w := make([]float32, len(x))
	s := ExpWeights(w, x, 11, 1)
	want := make([]float32, 8)
	ws := expWeightsRef(want, x[:8], 11, 1)
	for i := 8; i < len(x); i++ {
		ws += float64(expWeight(x[i], 11, 1))
	}
	if s != ws || w[10] != 1 || w[9] != expWeight(10, 11, 1) {
		t.Errorf("ExpWeights over 11 = %v (w[9] %v, w[10] %v), want %v", s, w[9], w[10], ws)
	}
}

// BenchmarkExpWeights computes the weights of Qwen3's 151,936 logits, as
// the sampler does for every sampled token, against the portable
// reference. Before ExpWeights, float64 Go took 1.1 ms a token (0.8 ms for
// logprobs' log-sum-exp), the greater part of a decode step's time; in
// float32 SIMD, 0.1 ms.
func BenchmarkExpWeights(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 151936)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 3)
	}
	w := make([]float32, len(x))
	m := x[Argmax(x)]
	b.Run("ExpWeights", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ExpWeights(w, x, m, 1)
		}
	})
	b.Run("ref", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			expWeightsRef(w, x, m, 1)
		}
	})
}
