package engine

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
)

func rawLogprob(prefix []int32, tok int32) float64 {
	l := fakeLogits(prefix, fakeVocab)
	m, sum := math.Inf(-1), 0.0
	for _, x := range l {
		m = math.Max(m, float64(x))
	}
	for _, x := range l {
		sum += math.Exp(float64(x) - m)
	}
	return float64(l[tok]) - m - math.Log(sum)
}

// TestDeciderLogprobs checks token and prompt logprobs against the fake
// model's logits computed directly, through chunked prefill and verify rows.
func TestDeciderLogprobs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params sample.Params
	}{
		{"greedy", sample.Params{Logprobs: 2}},
		{"sampled", sample.Params{Temperature: 0.8, Logprobs: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{BlockSize: 4, NumBlocks: 16, MaxBatchTokens: 5, MaxRunning: 2, MaxDraft: 3}, spec.Ngram{})
			p := []int32{1, 2, 3, 1, 2, 3, 1, 2}
			h.add(Request{ID: 1, Prompt: p, MaxTokens: 12, PromptLogprobs: true}, tc.params)
			toks := append([]int32(nil), p...)
			var promptLPs []TokenLogprobs
			for {
				plan := h.s.Schedule()
				if plan.Empty() {
					break
				}
				logits, err := h.m.Forward(plan.Batch(), h.kv)
				if err != nil {
					t.Fatal(err)
				}
				res, err := h.dec.Decide(plan, logits, func(uint64) *sample.Sampler { return h.samplers[1] })
				if err != nil {
					t.Fatal(err)
				}
				rr := res.Rows[0]
				for _, lp := range rr.PromptLogprobs { // valid until the next Decide
					promptLPs = append(promptLPs, TokenLogprobs{Logprob: lp.Logprob, Top: slices.Clone(lp.Top)})
				}
				if len(rr.Logprobs) != len(rr.Tokens) {
					t.Fatalf("%d logprobs for %d tokens", len(rr.Logprobs), len(rr.Tokens))
				}
				for j, tok := range rr.Tokens {
					prefix := append(append([]int32(nil), toks...), rr.Tokens[:j]...)
					lp := rr.Logprobs[j]
					if want := rawLogprob(prefix, tok); math.Abs(float64(lp.Logprob)-want) > 1e-5 {
						t.Fatalf("token %d logprob %g, want %g", tok, lp.Logprob, want)
					}
					checkTop(t, prefix, lp.Top, tc.params.Logprobs)
				}
				if _, err := h.s.Update(plan, res); err != nil {
					t.Fatal(err)
				}
				toks = append(toks, rr.Tokens...)
			}
			if len(promptLPs) != len(p)-1 {
				t.Fatalf("%d prompt logprobs for a %d-token prompt", len(promptLPs), len(p))
			}
			for i, lp := range promptLPs {
				if want := rawLogprob(p[:i+1], p[i+1]); math.Abs(float64(lp.Logprob)-want) > 1e-5 {
					t.Fatalf("prompt token %d logprob %g, want %g", i+1, lp.Logprob, want)
				}
				checkTop(t, p[:i+1], lp.Top, tc.params.Logprobs)
			}
			h.checkLeaks()
		})
	}
}

// checkTop checks that top holds the n most likely tokens after prefix
// under the fake model, best first, with their raw logprobs.
func checkTop(t *testing.T, prefix []int32, top []sample.TokenLogprob, n int) {
	t.Helper()
	l := fakeLogits(prefix, fakeVocab)
	order := make([]int32, fakeVocab)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(l[b], l[a]) })
	if len(top) != n {
		t.Fatalf("%d top logprobs, want %d", len(top), n)
	}
	for i, tl := range top {
		if l[tl.Token] != l[order[i]] {
			t.Fatalf("top %v: rank %d is token %d, want one as likely as %d", top, i, tl.Token, order[i])
		}
		if want := rawLogprob(prefix, tl.Token); math.Abs(float64(tl.Logprob)-want) > 1e-5 {
			t.Fatalf("top token %d logprob %g, want %g", tl.Token, tl.Logprob, want)
		}
	}
}

// TestSpeculativeSamplingPreservesDistribution generates through the whole
// pipeline (scheduler, drafts, Decider's rejection sampling) and compares
// the distribution of the first speculated token, over many seeded
// requests, with the exact marginal computed from the fake model's logits:
// with n-gram drafts (q one-hot) and with drafts drawn from a distribution
// of their own, reported in spec.Want.Probs (as spec.DFlash's sampled
// drafts are).
func TestSpeculativeSamplingPreservesDistribution(t *testing.T) {
	for _, tc := range []struct {
		name     string
		proposer spec.Proposer
	}{{"ngram", spec.Ngram{}}, {"draft distribution", newDrawingProposer()}} {
		t.Run(tc.name, func(t *testing.T) { checkSpeculativeSampling(t, tc.proposer) })
	}
}

// drawingProposer draws each draft token from a fixed distribution q,
// unlike the fake model's, and reports it in Want.Probs. first records
// each sequence's first draft token where it is the first token after its
// prompt's (tokens fed: promptLen+1).
type drawingProposer struct {
	q         []float32
	rng       *rand.Rand
	promptLen int
	first     map[uint64]int32
}

func newDrawingProposer() *drawingProposer {
	q := make([]float32, fakeVocab)
	for i := range q {
		q[i] = float32(i+1) / float32(fakeVocab*(fakeVocab+1)/2)
	}
	return &drawingProposer{q: q, rng: rand.New(rand.NewPCG(5, 6)), promptLen: 2 * fakeVocab, first: map[uint64]int32{}}
}

func (d *drawingProposer) Propose(wants []spec.Want) error {
	for i := range wants {
		w := &wants[i]
		for range w.K {
			u, acc, tok := d.rng.Float64(), 0.0, int32(fakeVocab-1)
			for t, q := range d.q {
				if acc += float64(q); u < acc {
					tok = int32(t)
					break
				}
			}
			w.Draft = append(w.Draft, tok)
			w.Probs = append(w.Probs, d.q)
		}
		if len(w.Tokens) == d.promptLen+1 && w.K > 0 {
			d.first[w.Seq] = w.Draft[0]
		}
	}
	return nil
}

// checkFirstAcceptance checks how often a drawingProposer's first draft
// token was kept against the rejection rule's chance of keeping it,
// Σ_a p0(a) Σ_x min(p(x|a), q(x)), within 4 standard deviations: a rule
// taking the drafts for deterministic ones (q one-hot) would keep
// Σ_a p0(a) Σ_x q(x)·p(x|a).
func checkFirstAcceptance(t *testing.T, d *drawingProposer, out map[uint64][]int32, p0 []float32, probs func(a int32) []float32) {
	t.Helper()
	want := 0.0
	for a, pa := range p0 {
		for x, px := range probs(int32(a)) {
			want += float64(pa) * math.Min(float64(px), float64(d.q[x]))
		}
	}
	kept := 0
	for id, tok := range d.first {
		if out[id][1] == tok { // a rejected x has p(x) < q(x): the residual never draws it
			kept++
		}
	}
	n := float64(len(d.first))
	if got, sd := float64(kept)/n, math.Sqrt(want*(1-want)/n); n < 1000 || math.Abs(got-want) > 4*sd {
		t.Fatalf("first drafts kept %d of %v (%.3f), the rejection rule keeps %.3f ± %.3f", kept, n, got, want, sd)
	}
}

func checkSpeculativeSampling(t *testing.T, proposer spec.Proposer) {
	params := sample.Params{Temperature: 1, TopK: 10, Logprobs: -1}
	prompt := make([]int32, 2*fakeVocab) // every token appears: unigram lookup always proposes
	for i := range prompt {
		prompt[i] = int32(i % fakeVocab)
	}
	const n = 3000
	h := newHarness(t, Config{BlockSize: 8, NumBlocks: 512, MaxBatchTokens: 256, MaxRunning: 64, MaxDraft: 2}, proposer)
	for i := range uint64(n) {
		seed := i
		p := params
		p.Seed = &seed
		h.add(Request{ID: i, Prompt: prompt, MaxTokens: 3}, p)
	}
	h.run()
	if h.drafted < n/2 {
		t.Fatalf("only %d draft tokens for %d requests: the test is not speculating", h.drafted, n)
	}
	// Exact marginal of the second generated token.
	probs := func(prefix []int32) []float32 {
		s, err := sample.New(params, rand.NewPCG(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, fakeVocab)
		s.Probs(fakeLogits(prefix, fakeVocab), out)
		return out
	}
	want := make([]float64, fakeVocab)
	p0 := probs(prompt)
	for a, pa := range p0 {
		if pa == 0 {
			continue
		}
		for b, pb := range probs(append(append([]int32(nil), prompt...), int32(a))) {
			want[b] += float64(pa) * float64(pb)
		}
	}
	counts := make([]int, fakeVocab)
	for id := range uint64(n) {
		counts[h.out[id][1]]++
	}
	chi, dof := 0.0, -1
	for b, c := range counts {
		e := want[b] * n
		if e < 5 { // pool sparse cells so the statistic is chi-square
			continue
		}
		chi += (float64(c) - e) * (float64(c) - e) / e
		dof++
	}
	// 99.9th percentile of chi-square for up to 15 degrees of freedom.
	if chi > 37.70 {
		t.Fatalf("chi-square %.1f with %d dof: counts %v, expected %v", chi, dof, counts, want)
	}
	t.Logf("chi-square %.1f with %d dof; %d drafts, %d accepted", chi, dof, h.drafted, h.accepted)
	if d, ok := proposer.(*drawingProposer); ok {
		checkFirstAcceptance(t, d, h.out, p0, func(a int32) []float32 { return probs(append(slices.Clone(prompt), a)) })
	}
}

// TestPromptLogprobsSurvivePreemption preempts prompt-logprobs requests in
// the middle of their prompts: each prompt position is reported once, with
// the right value.
func TestPromptLogprobsSurvivePreemption(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 2, NumBlocks: 14, MaxBatchTokens: 4, MaxRunning: 3}, nil)
	var reqs []Request
	for i := range uint64(4) {
		r := Request{ID: i + 1, Prompt: prompt(9+int(i), int32(3*i)), MaxTokens: 6, PromptLogprobs: true}
		reqs = append(reqs, r)
		h.add(r, greedy())
	}
	h.run()
	if h.s.Stats().Preemptions == 0 {
		t.Fatal("no preemption")
	}
	for _, r := range reqs {
		got := h.prompt[r.ID]
		if len(got) != len(r.Prompt)-1 {
			t.Fatalf("sequence %d: %d prompt logprobs for %d tokens", r.ID, len(got), len(r.Prompt))
		}
		for i, lp := range got {
			if want := rawLogprob(r.Prompt[:i+1], r.Prompt[i+1]); math.Abs(float64(lp.Logprob)-want) > 1e-5 {
				t.Fatalf("sequence %d position %d: %g, want %g", r.ID, i+1, lp.Logprob, want)
			}
		}
		if want, _ := referenceGreedy(r, fakeVocab, h.s.Config().MaxModelLen); !slices.Equal(h.out[r.ID], want) {
			t.Fatalf("sequence %d: %v, want %v", r.ID, h.out[r.ID], want)
		}
	}
}
