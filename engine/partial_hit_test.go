package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/spec"
)

// TestPrefixHitReusesEveryCachedToken: a second request after a first one
// reuses every token the first computed that its prompt begins with, up to
// its own last token (computed for its logits), whether it resends the
// first prompt exactly, extends it by 1 or 40 tokens, differs from it in the
// middle of a block, or ends at any offset of a block; it arrives once the
// first finished or while the first still decodes (a live sequence's partial
// block); with speculation or without. Its greedy output is the cold
// reference's, its first prefill row starts at the hit, its first Output
// reports the hit, and no block leaks.
func TestPrefixHitReusesEveryCachedToken(t *testing.T) {
	const bs = 8
	rng := rand.New(rand.NewPCG(3, 8))
	first := make([]int32, 3*bs+3)
	for i := range first {
		first[i] = int32(rng.IntN(fakeVocab))
	}
	tail := func(n int) []int32 {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32((i*5 + 3) % fakeVocab)
		}
		return out
	}
	type variant struct {
		name   string
		prompt []int32
	}
	variants := []variant{
		{"resent exactly", first},
		{"extended by 1", slices.Concat(first, tail(1))},
		{"extended by 40", slices.Concat(first, tail(40))},
		{"differs mid-block", slices.Concat(first[:2*bs+3], []int32{(first[2*bs+3] + 1) % fakeVocab}, first[2*bs+4:])},
	}
	for k := 2 * bs; k <= 3*bs+1; k++ { // ends at every offset of block 2, and the first of block 3
		variants = append(variants, variant{fmt.Sprintf("prefix of %d", k), first[:k]})
	}
	for _, proposer := range []spec.Proposer{nil, spec.Ngram{}} {
		for _, concurrent := range []bool{false, true} {
			for _, v := range variants {
				t.Run(fmt.Sprintf("%s/spec=%v/concurrent=%v", v.name, proposer != nil, concurrent), func(t *testing.T) {
					h := newHarness(t, Config{BlockSize: bs, NumBlocks: 64, MaxBatchTokens: 64, MaxRunning: 4, MaxDraft: 3}, proposer)
					r1 := Request{ID: 1, Prompt: first, MaxTokens: 9}
					h.add(r1, greedy())
					for h.s.State(1) != Decoding && h.step() {
					}
					if !concurrent {
						h.run()
					}
					// What the first computed: its tokens but the last, or
					// those so far while it runs.
					done := slices.Concat(first, h.out[1])
					if q, ok := h.s.seqs[1]; ok {
						done = q.tokens[:q.computed]
					} else {
						done = done[:len(done)-1]
					}
					lcp := 0
					for lcp < len(done) && lcp < len(v.prompt) && done[lcp] == v.prompt[lcp] {
						lcp++
					}
					want := min(lcp, len(v.prompt)-1)
					start := -1
					h.onPlan = func(p *Plan) {
						for _, r := range p.Rows {
							if r.Seq == 2 && start < 0 {
								start = r.Start
							}
						}
					}
					r2 := Request{ID: 2, Prompt: v.prompt, MaxTokens: 6}
					h.add(r2, greedy())
					h.run()
					if start != want || h.cached[2][0] != want {
						t.Fatalf("first row of the second request at %d, cached tokens %d; want the hit of %d", start, h.cached[2][0], want)
					}
					for _, r := range []Request{r1, r2} {
						if ref, _ := referenceGreedy(r, fakeVocab, h.s.Config().MaxModelLen); !slices.Equal(h.out[r.ID], ref) {
							t.Fatalf("request %d: %v, cold %v", r.ID, h.out[r.ID], ref)
						}
					}
				})
			}
		}
	}
}
