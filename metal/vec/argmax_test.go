package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// plainArgmax is the definition: the first index of a value greater than
// every value before it, NaNs never greater.
func plainArgmax(vals []float32) int {
	best := -1
	for i, v := range vals {
		if v == v && (best < 0 || v > vals[best]) {
			best = i
		}
	}
	return max(best, 0)
}

func TestArgmaxCases(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	negz := float32(math.Copysign(0, -1))
	// Each case also runs padded to whole and ragged assembly blocks: the
	// values placed at the end of a longer vector of −Inf, or at its start.
	for _, tc := range []struct {
		vals []float32
		want int
	}{
		{[]float32{}, 0},
		{[]float32{1}, 0},
		{[]float32{1, 5, 2, 5, 3}, 1},
		{[]float32{-inf, -inf, -3}, 2},
		{[]float32{-inf, -inf}, 0},
		{[]float32{nan, 2, nan, 1, 2}, 1},
		{[]float32{nan, nan, nan}, 0},
		{[]float32{nan, nan, -inf, nan, nan}, 2},
		{[]float32{negz, 0, negz}, 0}, // −0 and +0 are equal: the first
		{[]float32{-1, negz, 0}, 1},
		{[]float32{3, inf, nan, inf}, 1},
		{[]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 8},
	} {
		if got := Argmax(tc.vals); got != tc.want {
			t.Errorf("Argmax(%v) = %d, want %d", tc.vals, got, tc.want)
		}
		if def := plainArgmax(tc.vals); def != tc.want {
			t.Fatalf("the definition gives %d for %v, the table %d", def, tc.vals, tc.want)
		}
		// The values after and before NaNs (never the max), in and
		// across whole assembly blocks.
		for _, pad := range []int{31, 32, 64, 100} {
			nans := make([]float32, pad)
			for i := range nans {
				nans[i] = nan
			}
			for _, vals := range [][]float32{append(append([]float32{}, nans...), tc.vals...), append(append([]float32{}, tc.vals...), nans...)} {
				if got, want := Argmax(vals), plainArgmax(vals); got != want {
					t.Errorf("Argmax(%v) = %d, want %d", vals, got, want)
				}
			}
		}
	}
}

// TestArgmaxMatchesReference runs the assembly (where the CPU has it) and
// the Go reference against the definition on vectors of every length up
// to a few blocks and a vocabulary's, with few distinct values (ties in
// and across blocks and lanes), NaNs and infinities.
func TestArgmaxMatchesReference(t *testing.T) {
	if !haveArgmaxAsm() {
		t.Log("no assembly on this CPU: Argmax is the Go reference")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1))}
	lengths := []int{151936, 151936 + 7}
	for n := range 200 {
		lengths = append(lengths, n)
	}
	for trial, n := range lengths {
		for _, distinct := range []int{3, 1000} {
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = float32(rng.IntN(distinct)) - float32(distinct)/2
				if rng.IntN(20) == 0 {
					vals[i] = special[rng.IntN(len(special))]
				}
			}
			want := plainArgmax(vals)
			if got := Argmax(vals); got != want {
				t.Fatalf("trial %d (%d values, %d distinct): Argmax = %d, want %d", trial, n, distinct, got, want)
			}
			if got := argmaxRef(vals); got != want {
				t.Fatalf("trial %d (%d values, %d distinct): argmaxRef = %d, want %d", trial, n, distinct, got, want)
			}
		}
	}
}

// BenchmarkArgmax scans Qwen3's vocabulary, as every greedy token does,
// against the portable reference: the portable scan took ~0.37 ns an
// element, about 55 µs a token, 0.9 ms of a 16-row step; the AVX2 one ran
// at 12× its speed.
func BenchmarkArgmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float32, 151936) // Qwen3's vocabulary
	for i := range vals {
		vals[i] = float32(rng.NormFloat64() * 3)
	}
	for _, f := range []struct {
		name string
		fn   func([]float32) int
	}{{"Argmax", Argmax}, {"ref", argmaxRef}} {
		b.Run(f.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f.fn(vals)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*len(vals)), "ns/elem")
		})
	}
}
