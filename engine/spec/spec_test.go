package spec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNgramPropose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		g      Ngram
		tokens []int32
		k      int
		want   []int32
	}{
		{"trigram match", Ngram{}, []int32{1, 2, 3, 4, 5, 9, 1, 2, 3}, 3, []int32{4, 5, 9}},
		{"most recent occurrence wins", Ngram{}, []int32{1, 2, 7, 1, 2, 8, 5, 1, 2}, 2, []int32{8, 5}},
		{"falls back to bigram", Ngram{}, []int32{9, 2, 3, 6, 2, 3}, 1, []int32{6}},
		{"falls back to unigram", Ngram{}, []int32{4, 7, 5, 4}, 3, []int32{7, 5, 4}},
		{"clipped at the end", Ngram{}, []int32{1, 2, 3, 1, 2}, 5, []int32{3, 1, 2}},
		{"no recurrence", Ngram{}, []int32{1, 2, 3, 4}, 3, nil},
		{"min n excludes unigram", Ngram{MinN: 2}, []int32{4, 7, 5, 4}, 3, nil},
		{"k zero", Ngram{}, []int32{1, 1, 1}, 0, nil},
		{"overlapping repeat", Ngram{}, []int32{5, 5, 5, 5}, 2, []int32{5}},
		{"too short", Ngram{}, []int32{1}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.g.Lookup(tc.tokens, tc.k, nil)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Propose = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAcceptGreedy(t *testing.T) {
	for _, tc := range []struct {
		draft, target []int32
		want          int
	}{
		{[]int32{1, 2, 3}, []int32{1, 2, 3, 4}, 3},
		{[]int32{1, 2, 3}, []int32{1, 5, 3, 4}, 1},
		{[]int32{1, 2, 3}, []int32{0, 2, 3, 4}, 0},
		{nil, []int32{7}, 0},
	} {
		if got := AcceptGreedy(tc.draft, tc.target); got != tc.want {
			t.Errorf("AcceptGreedy(%v, %v) = %d, want %d", tc.draft, tc.target, got, tc.want)
		}
	}
}

// specPair is a synthetic draft/target pair: position j's distributions do
// not depend on earlier tokens, so every emitted token at position j must
// follow p[j] whatever was accepted before.
type specPair struct {
	p, q [][]float32
}

func syntheticPair() specPair {
	return specPair{
		p: [][]float32{
			{0.30, 0.25, 0.20, 0.10, 0.10, 0.05},
			{0.05, 0.05, 0.10, 0.20, 0.25, 0.35},
			{0.50, 0.10, 0.10, 0.10, 0.10, 0.10},
		},
		q: [][]float32{
			{0.05, 0.10, 0.15, 0.20, 0.20, 0.30}, // disagrees with p on purpose
			{0.10, 0.30, 0.10, 0.10, 0.30, 0.10},
			{0.40, 0.20, 0.10, 0.10, 0.10, 0.10},
		},
	}
}

// positionCounts runs trials verify rows of two guesses and counts the
// tokens emitted at positions 0 and 1.
func positionCounts(t *testing.T, deterministic bool, accept func(draft []int32, target, q func(int) []float32, rng *rand.Rand) (int, int32)) [2][]int {
	const trials = 30000
	pair := syntheticPair()
	rng := rand.New(rand.NewPCG(11, 12))
	var counts [2][]int
	counts[0], counts[1] = make([]int, 6), make([]int, 6)
	target := func(j int) []float32 { return pair.p[j] }
	draftQ := func(j int) []float32 { return pair.q[j] }
	if deterministic {
		draftQ = func(int) []float32 { return nil }
	}
	for range trials {
		draft := make([]int32, 2)
		for j := range draft {
			if deterministic {
				draft[j] = int32(3 + j) // a fixed guess, as n-gram lookup gives
			} else {
				d, _ := draw(pair.q[j], rng)
				draft[j] = d
			}
		}
		n, extra := accept(draft, target, draftQ, rng)
		out := append(append([]int32{}, draft[:n]...), extra)
		counts[0][out[0]]++
		if len(out) > 1 {
			counts[1][out[1]]++
		}
	}
	return counts
}

func chiSquare(counts []int, p []float32) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	chi := 0.0
	for i, c := range counts {
		e := float64(p[i]) * float64(n)
		chi += (float64(c) - e) * (float64(c) - e) / e
	}
	return chi
}

// chi2Crit is the 99.9th percentile of chi-square with 5 degrees of freedom.
const chi2Crit = 20.52

// TestRejectionSamplingPreservesTarget is the statistical check that
// speculative sampling emits tokens distributed as the target alone would.
func TestRejectionSamplingPreservesTarget(t *testing.T) {
	residual := make([]float32, 6)
	rejection := func(draft []int32, target, q func(int) []float32, rng *rand.Rand) (int, int32) {
		n, tok, err := AcceptSample(draft, target, q, rng, residual)
		if err != nil {
			t.Fatal(err)
		}
		return n, tok
	}
	for _, tc := range []struct {
		name          string
		deterministic bool
	}{{"draft distribution q", false}, {"deterministic proposer", true}} {
		t.Run(tc.name, func(t *testing.T) {
			pair := syntheticPair()
			counts := positionCounts(t, tc.deterministic, rejection)
			for j := range 2 {
				if chi := chiSquare(counts[j], pair.p[j]); chi > chi2Crit {
					t.Errorf("position %d: chi-square %.1f > %.2f: counts %v vs p %v", j, chi, chi2Crit, counts[j], pair.p[j])
				}
			}
		})
	}
	// The test has power: accepting every guess emits q, and fails it.
	naive := func(draft []int32, target, q func(int) []float32, rng *rand.Rand) (int, int32) {
		tok, _ := draw(target(len(draft)), rng)
		return len(draft), tok
	}
	if chi := chiSquare(positionCounts(t, false, naive)[0], syntheticPair().p[0]); chi <= chi2Crit {
		t.Fatalf("accept-all passed the chi-square test (%.1f): the test cannot detect a wrong rule", chi)
	}
}

func TestAcceptSampleRejectsImpossibleDraft(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	q := []float32{1, 0}
	_, _, err := AcceptSample([]int32{1}, func(int) []float32 { return []float32{0.5, 0.5} },
		func(int) []float32 { return q }, rng, make([]float32, 2))
	if err == nil {
		t.Fatal("a draft token with q = 0 was accepted")
	}
}

func repeat(h [2]int, n int) [][2]int {
	out := make([][2]int, n)
	for i := range out {
		out[i] = h
	}
	return out
}
