package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func seed(v uint64) *uint64 { return &v }

func mustNew(t testing.TB, p Params) *Sampler {
	t.Helper()
	if p.Seed == nil {
		p.Seed = seed(1)
	}
	s, err := New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// logitsOf returns logits whose softmax is probs.
func logitsOf(probs ...float64) []float32 {
	out := make([]float32, len(probs))
	for i, p := range probs {
		out[i] = float32(math.Log(p))
		if p == 0 {
			out[i] = float32(math.Inf(-1))
		}
	}
	return out
}

func randomLogits(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.NormFloat64() * 3)
	}
	return out
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		want string
	}{
		{Params{}, ""},
		{Params{Temperature: 0.7, TopP: 0.9, TopK: 40, MinP: 0.05, RepetitionPenalty: 1.1, Logprobs: 5}, ""},
		{Params{Temperature: -1}, "temperature"},
		{Params{TopP: 1.5}, "top_p"},
		{Params{TopK: -3}, "top_k"},
		{Params{MinP: 2}, "min_p"},
		{Params{RepetitionPenalty: -1}, "repetition_penalty"},
		{Params{PresencePenalty: float32(math.NaN())}, "finite"},
		{Params{Logprobs: 21}, "logprobs"},
		{Params{LogitBias: map[int32]float32{-2: 1}}, "logit_bias"},
	} {
		err := tc.p.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.p, err, tc.want)
		}
	}
	if _, err := New(Params{}, nil); err == nil {
		t.Error("New without seed or entropy succeeded")
	}
}

// TestProbs checks the processed distribution for each filter and penalty
// against hand-computed values.
func TestProbs(t *testing.T) {
	base := logitsOf(0.5, 0.3, 0.15, 0.05)
	for _, tc := range []struct {
		name   string
		p      Params
		prompt []int32
		output []int32
		want   []float64
	}{
		{"greedy is one-hot", Params{}, nil, nil, []float64{1, 0, 0, 0}},
		{"temperature 1 is softmax", Params{Temperature: 1}, nil, nil, []float64{0.5, 0.3, 0.15, 0.05}},
		{"temperature 0.5 squares", Params{Temperature: 0.5}, nil, nil, norm(0.25, 0.09, 0.0225, 0.0025)},
		{"top-k 2", Params{Temperature: 1, TopK: 2}, nil, nil, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.7 keeps two", Params{Temperature: 1, TopP: 0.7}, nil, nil, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.79 keeps two", Params{Temperature: 1, TopP: 0.79}, nil, nil, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.81 keeps three", Params{Temperature: 1, TopP: 0.81}, nil, nil, norm(0.5, 0.3, 0.15, 0)},
		{"min-p 0.4 keeps p>=0.2", Params{Temperature: 1, MinP: 0.4}, nil, nil, []float64{0.625, 0.375, 0, 0}},
		{"min-p then top-k", Params{Temperature: 1, MinP: 0.2, TopK: 1}, nil, nil, []float64{1, 0, 0, 0}},
		{"bias", Params{Temperature: 1, LogitBias: map[int32]float32{3: float32(math.Log(10))}}, nil, nil, norm(0.5, 0.3, 0.15, 0.5)},
		{"presence", Params{Temperature: 1, PresencePenalty: float32(math.Log(5))}, nil, []int32{0, 0}, norm(0.1, 0.3, 0.15, 0.05)},
		{"frequency", Params{Temperature: 1, FrequencyPenalty: float32(math.Log(5))}, nil, []int32{0, 0}, norm(0.02, 0.3, 0.15, 0.05)},
		{"greedy with presence", Params{PresencePenalty: 2}, nil, []int32{0}, []float64{0, 1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustNew(t, tc.p)
			s.SetPrompt(tc.prompt)
			for _, o := range tc.output {
				s.Accept(o)
			}
			got := make([]float32, len(base))
			s.Probs(base, got)
			for i := range got {
				if math.Abs(float64(got[i])-tc.want[i]) > 1e-5 {
					t.Fatalf("probs %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func norm(v ...float64) []float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	for i := range v {
		v[i] /= s
	}
	return v
}

func TestRepetitionPenalty(t *testing.T) {
	logits := []float32{2, -1, 1.5, 0}
	s := mustNew(t, Params{RepetitionPenalty: 2})
	s.SetPrompt([]int32{0})
	s.Accept(1)
	got := s.penalised(logits)
	want := []float32{1, -2, 1.5, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("penalised %v, want %v", got, want)
		}
	}
	if s.Sample(logits).Token != 2 {
		t.Fatal("greedy did not follow the penalised arg max")
	}
	if logits[0] != 2 {
		t.Fatal("penalties modified the caller's logits")
	}
}

func TestGreedyTiesTakeLowestID(t *testing.T) {
	s := mustNew(t, Params{})
	if got := s.Sample([]float32{1, 3, 3, 2}).Token; got != 1 {
		t.Fatalf("token %d, want 1", got)
	}
}

func TestSeededSamplingIsReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	steps := make([][]float32, 50)
	for i := range steps {
		steps[i] = randomLogits(rng, 1000)
	}
	p := Params{Temperature: 0.9, TopP: 0.95, TopK: 50, MinP: 0.01, FrequencyPenalty: 0.3}
	run := func(s *Sampler) []int32 {
		var out []int32
		for _, l := range steps {
			tok := s.Sample(l).Token
			s.Accept(tok)
			out = append(out, tok)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		a, b     func() *Sampler
		wantSame bool
	}{
		{"same seed", func() *Sampler { q := p; q.Seed = seed(42); return mustNew(t, q) },
			func() *Sampler { q := p; q.Seed = seed(42); return mustNew(t, q) }, true},
		{"different seed", func() *Sampler { q := p; q.Seed = seed(42); return mustNew(t, q) },
			func() *Sampler { q := p; q.Seed = seed(43); return mustNew(t, q) }, false},
		{"same entropy source state", func() *Sampler { s, _ := New(p, rand.NewPCG(5, 5)); return s },
			func() *Sampler { s, _ := New(p, rand.NewPCG(5, 5)); return s }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := run(tc.a()), run(tc.b())
			same := true
			for i := range a {
				same = same && a[i] == b[i]
			}
			if same != tc.wantSame {
				t.Fatalf("same = %v, want %v:\n%v\n%v", same, tc.wantSame, a, b)
			}
		})
	}
}

// TestSampleFollowsProbs draws many tokens and compares frequencies with
// Probs by a chi-square statistic.
func TestSampleFollowsProbs(t *testing.T) {
	logits := logitsOf(0.4, 0.25, 0.2, 0.1, 0.05)
	for _, p := range []Params{{Temperature: 1}, {Temperature: 0.7, TopP: 0.9}, {Temperature: 1.3, TopK: 3}} {
		s := mustNew(t, p)
		want := make([]float32, len(logits))
		s.Probs(logits, want)
		const n = 20000
		counts := make([]int, len(logits))
		for range n {
			counts[s.Sample(logits).Token]++
		}
		chi2, dof := 0.0, -1
		for i, c := range counts {
			e := float64(want[i]) * n
			if e == 0 {
				if c != 0 {
					t.Fatalf("%+v: token %d drawn %d times with probability 0", p, i, c)
				}
				continue
			}
			chi2 += (float64(c) - e) * (float64(c) - e) / e
			dof++
		}
		// 99.9th percentile of chi-square with ≤ 4 degrees of freedom is 18.47.
		if chi2 > 18.47 {
			t.Errorf("%+v: chi-square %.2f with %d dof, counts %v, probs %v", p, chi2, dof, counts, want)
		}
	}
}

func TestLogprobsAreRawLogSoftmax(t *testing.T) {
	logits := []float32{1, 4, 2, 3, 0}
	lse := math.Log(math.Exp(1) + math.Exp(4) + math.Exp(2) + math.Exp(3) + math.Exp(0))
	// Temperature, penalties and bias change the choice, never the reported logprobs.
	s := mustNew(t, Params{LogitBias: map[int32]float32{0: 10}, Temperature: 0, Logprobs: 3})
	r := s.Sample(logits)
	if r.Token != 0 || math.Abs(float64(r.Logprob)-(1-lse)) > 1e-5 {
		t.Fatalf("token %d logprob %g, want 0 and %g", r.Token, r.Logprob, 1-lse)
	}
	wantTop := []int32{1, 3, 2}
	if len(r.Top) != 3 {
		t.Fatalf("top %v", r.Top)
	}
	for i, tl := range r.Top {
		if tl.Token != wantTop[i] || math.Abs(float64(tl.Logprob)-(float64(logits[tl.Token])-lse)) > 1e-5 {
			t.Fatalf("top %v, want tokens %v", r.Top, wantTop)
		}
	}
	if got := Logprob(logits, 1); math.Abs(float64(got)-(4-lse)) > 1e-5 {
		t.Fatalf("Logprob = %g", got)
	}
	off := mustNew(t, Params{Logprobs: -1})
	if r := off.Sample(logits); r.Logprob != 0 || r.Top != nil {
		t.Fatalf("logprobs computed when off: %+v", r)
	}
}

// TestLogprobsAppend checks that Logprobs appends a position's top tokens
// after those already in dst, leaving them as they were, as the Decider
// does for the positions of one step.
func TestLogprobsAppend(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		n    int // top tokens per position
		vecs int
	}{
		{"one position", 3, 1},
		{"three positions", 3, 3},
		{"more than the vocabulary", 9, 2},
		{"none", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dst []TokenLogprob
			var want [][]TokenLogprob
			for range tc.vecs {
				logits := randomLogits(rng, 6)
				_, alone := Logprobs(logits, 0, tc.n, nil)
				want = append(want, alone)
				_, dst = Logprobs(logits, 0, tc.n, dst)
			}
			for i, w := range want {
				got := dst[:len(w)]
				dst = dst[len(w):]
				if !slices.Equal(got, w) {
					t.Fatalf("position %d: %v, want %v", i, got, w)
				}
			}
			if len(dst) != 0 {
				t.Fatalf("%d entries left over", len(dst))
			}
		})
	}
}

func TestSampleDoesNotAllocate(t *testing.T) {
	logits := randomLogits(rand.New(rand.NewPCG(1, 1)), 5000)
	for _, p := range []Params{
		{Logprobs: 5},
		{Temperature: 0.8, TopP: 0.9, TopK: 40, PresencePenalty: 0.5, Logprobs: 2},
		{Temperature: 1, MinP: 0.1, RepetitionPenalty: 1.2},
	} {
		s := mustNew(t, p)
		s.SetPrompt([]int32{1, 2, 3})
		s.Accept(7)
		s.Sample(logits) // warm the scratch
		if n := testing.AllocsPerRun(20, func() { s.Sample(logits) }); n != 0 {
			t.Errorf("%+v: %.1f allocations per Sample", p, n)
		}
	}
}

func TestSelectTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 7, 100, 1000} {
		vals := randomLogits(rng, n)
		vals[0] = vals[n-1] // a tie
		for _, k := range []int{1, n / 2, n} {
			if k == 0 {
				continue
			}
			idx := make([]int32, n)
			for i := range idx {
				idx[i] = int32(i)
			}
			selectTop(idx, vals, k)
			worstIn := idx[0]
			for _, in := range idx[:k] {
				if before(vals, worstIn, in) {
					worstIn = in
				}
			}
			for _, out := range idx[k:] {
				if before(vals, out, worstIn) {
					t.Fatalf("n=%d k=%d: %d outside the top beats %d inside", n, k, out, worstIn)
				}
			}
		}
	}
}

func TestExpReduced(t *testing.T) {
	for x := -700.0; x <= 0; x += 0.0137 {
		if got, want := expReduced(x), math.Exp(x); math.Abs(got-want) > 1e-8*want {
			t.Fatalf("expReduced(%g) = %g, want %g", x, got, want)
		}
	}
}

// TestLogSumExp: ln Σ exp(v) within 1e-6 over long and short vectors
// (chunks of the stack buffer), with −Inf entries, far-below ones, and
// all −Inf.
func TestLogSumExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{1, 2, 7, 2048, 2049, 151936} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 5)
		}
		v[0] = float32(math.Inf(-1))
		if n > 2 {
			v[1] = -200
		}
		m, s := math.Inf(-1), 0.0
		for _, x := range v {
			m = max(m, float64(x))
		}
		for _, x := range v {
			s += math.Exp(float64(x) - m)
		}
		if want := m + math.Log(s); n > 1 && math.Abs(logSumExp(v)-want) > 1e-6 {
			t.Fatalf("n=%d: logSumExp = %v, want %v", n, logSumExp(v), want)
		}
	}
	if got := logSumExp([]float32{float32(math.Inf(-1)), float32(math.Inf(-1))}); !math.IsInf(got, -1) {
		t.Errorf("logSumExp of −Infs = %v, want −Inf", got)
	}
}

func TestTopKScanMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 10, 1000} {
		vals := randomLogits(rng, n)
		for i := 0; i < n; i += 7 {
			vals[i] = vals[0] // ties
		}
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		sortBest(all, vals)
		for _, k := range []int{1, min(3, n), n} {
			got := topKScan(nil, vals, k, -math.MaxFloat64)
			sortBest(got, vals)
			if !slices.Equal(got, all[:k]) {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, got, all[:k])
			}
		}
	}
}

func TestBannedTokensAreNeverSampled(t *testing.T) {
	inf := float32(math.Inf(-1))
	logits := []float32{inf, 1, inf, 0.5}
	for _, p := range []Params{{Temperature: 1}, {Temperature: 1, TopK: 3}, {Temperature: 2, MinP: 0.01}, {Temperature: 1, TopP: 0.99}} {
		s := mustNew(t, p)
		for range 200 {
			if tok := s.Sample(logits).Token; tok == 0 || tok == 2 {
				t.Fatalf("%+v: sampled banned token %d", p, tok)
			}
		}
	}
}

// TestNucleusMatchesSortedCut compares the histogram nucleus with the
// definition: sort best first, cut where the mass reaches top_p.
func TestNucleusMatchesSortedCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 200 {
		n := 1 + rng.IntN(3000)
		adj := randomLogits(rng, n)
		if trial%3 == 0 {
			for i := range adj {
				adj[i] = float32(math.Round(float64(adj[i]))) // many ties
			}
		}
		temp := 0.3 + rng.Float64()*1.5
		topP := rng.Float64()
		m := float64(adj[argmax(adj)])
		w := make([]float32, n)
		total := 0.0
		sorted := make([]int32, n)
		for i := range adj {
			w[i] = float32(math.Exp((float64(adj[i]) - m) / temp))
			total += float64(w[i])
			sorted[i] = int32(i)
		}
		sortBest(sorted, adj)
		want, acc := sorted, 0.0
		for j, t := range sorted {
			acc += float64(w[t])
			if acc >= topP*total {
				want = sorted[:j+1]
				break
			}
		}
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(n - 1 - i)
		}
		got, _ := nucleus(idx, adj, w, m, 1/temp, topP*total)
		got = slices.Clone(got)
		sortBest(got, adj)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d T=%.2f p=%.3f): nucleus of %d tokens, want %d", trial, n, temp, topP, len(got), len(want))
		}
	}
}

func TestArgmax(t *testing.T) {
	inf := float32(math.Inf(-1))
	nan := float32(math.NaN())
	for _, tc := range []struct {
		vals []float32
		want int32
	}{
		{[]float32{1}, 0},
		{[]float32{1, 5, 2, 5, 3}, 1},
		{[]float32{0, 0, 0, 0, 0, 0, 0, 9}, 7},
		{[]float32{inf, inf, -3}, 2},
		{[]float32{inf, inf}, 0},
		{[]float32{nan, 2, nan, 1, 2}, 1},
		{[]float32{nan, nan, nan}, 0},
		{[]float32{nan, nan, inf, nan, nan}, 2},
		{[]float32{0, 0, 0, 4, 0, 0, 4, 0}, 3},          // tie across lanes: the lower index
		{[]float32{0, 0, 4, 0, 0, 4, 0, 0, 0}, 2},       // tie across lanes, other order
		{[]float32{0, 4, 0, 0, 0, 4, 0, 0, 0, 0, 4}, 1}, // tie within a lane and the tail
		{[]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 8},       // the max in the tail
	} {
		if got := argmax(tc.vals); got != tc.want {
			t.Errorf("argmax(%v) = %d, want %d", tc.vals, got, tc.want)
		}
	}
	// Against a plain scan, on vectors of every length mod 4 with few
	// distinct values, so ties are common.
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 2000 {
		vals := make([]float32, 1+rng.IntN(40))
		for i := range vals {
			vals[i] = float32(rng.IntN(6))
		}
		want := int32(0)
		for i, v := range vals {
			if v > vals[want] {
				want = int32(i)
			}
		}
		if got := argmax(vals); got != want {
			t.Fatalf("trial %d: argmax(%v) = %d, want %d", trial, vals, got, want)
		}
	}
}

// TestEveryTokenTopPMatchesSortedCut: with no min-p or top-k, candidates
// weighs the whole vocabulary at once and looks for the nucleus among the
// tokens near the max first; the set is the sorted cut of its own
// weights, whether the nucleus ends near the max or reaches into a far
// tail (one token far above a large flat rest, top-p near 1), with banned
// (−Inf) tokens never in it.
func TestEveryTokenTopPMatchesSortedCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	tails := 0
	for trial := range 300 {
		n := 1 + rng.IntN(3000)
		adj := randomLogits(rng, n)
		topP := rng.Float64()
		temp := 0.5 + rng.Float64()
		if trial%2 == 1 {
			// One token 21.5 tempered nats above 5000-6000 others, past
			// the near tokens: they hold 2.3e-6 of the mass or more,
			// beyond 1 − topP.
			n = 5000 + rng.IntN(1000)
			adj = make([]float32, n)
			for i := range adj {
				adj[i] = float32(rng.NormFloat64() * 0.01)
			}
			adj[rng.IntN(n)] = float32(21.5 * temp)
			topP = 1 - 1.0/(1<<20)
		}
		for range n / 50 {
			adj[rng.IntN(n)] = float32(math.Inf(-1))
		}
		s := mustNew(t, Params{Temperature: float32(temp), TopP: float32(topP), Logprobs: -1})
		got, total := s.candidates(adj)
		got = slices.Clone(got)
		if got == nil { // every token
			for i, l := range adj {
				if !math.IsInf(float64(l), -1) {
					got = append(got, int32(i))
				}
			}
		}
		m := float64(adj[argmax(adj)])
		sorted, full := []int32{}, 0.0
		for i, l := range adj {
			if !math.IsInf(float64(l), -1) {
				sorted = append(sorted, int32(i))
				full += float64(s.w[i])
			}
		}
		sortBest(sorted, adj)
		want, acc := sorted, 0.0
		for j, tok := range sorted {
			acc += float64(s.w[tok])
			if acc >= topP*full {
				want, full = sorted[:j+1], acc
				break
			}
		}
		if math.Abs(full-total) > 1e-9*full {
			t.Fatalf("trial %d: the candidates weigh %v, want %v", trial, total, full)
		}
		sortBest(got, adj)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d T=%.2f p=%.9f): %d candidates, want %d", trial, n, temp, topP, len(got), len(want))
		}
		if far := (m - float64(adj[want[len(want)-1]])) / temp; far >= nucleusNear {
			tails++
		}
	}
	if tails == 0 {
		t.Error("no trial's nucleus reached past the near tokens: the fallback went untested")
	}
}

// TestPickMatchesRunningSum: pick finds the token where the running sum
// passes u, as one add at a time does (up to rounding right at a
// boundary), never a weightless one, and the last weighted one past the
// end.
func TestPickMatchesRunningSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := range 500 {
		n := 1 + rng.IntN(700)
		w := make([]float32, n)
		for i := range w {
			if rng.IntN(5) > 0 { // a fifth weigh 0, as banned tokens do
				w[i] = float32(rng.ExpFloat64())
			}
		}
		total, last := 0.0, 0
		for i, v := range w {
			total += float64(v)
			if v > 0 {
				last = i
			}
		}
		for range 20 {
			u := rng.Float64() * total * 1.001 // sometimes past the end
			want, acc := last, 0.0
			for i, v := range w {
				if v > 0 {
					if acc += float64(v); u < acc {
						want = i
						break
					}
				}
			}
			got := pick(w, u)
			if got != want && math.Abs(u-boundary(w, got, want)) > 1e-9*total {
				t.Fatalf("trial %d (n=%d): pick(u=%v) = %d (weight %v), want %d", trial, n, u, got, w[got], want)
			}
			if w[got] == 0 && total > 0 {
				t.Fatalf("trial %d: picked weightless token %d", trial, got)
			}
		}
	}
}

// boundary is the running sum of w up to the lower of two indices'
// boundary between them.
func boundary(w []float32, a, b int) float64 {
	s := 0.0
	for i := range min(a, b) + 1 {
		s += float64(w[i])
	}
	return s
}
