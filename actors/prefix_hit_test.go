package actors

import (
	"fmt"
	"slices"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// TestPrefixHitGreedyMatchesCold: with a random model through the real
// engine, a prompt sent after another one is answered exactly as a cold
// run answers it, and its usage counts every token of the first request's
// computed tokens it begins with (up to its own last token) as cached: when
// it resends the first prompt exactly, extends it by 1 or 40 tokens, differs
// from it mid-block, or ends at any offset of a block; over each cache
// type, with n-gram speculation and with a draft model (whose own cache
// takes partial hits too). No block leaks.
func TestPrefixHitGreedyMatchesCold(t *testing.T) {
	const bs, n = 16, 6 // newEngineKV's block size
	for _, tc := range []struct {
		name    string
		kvType  metal.KVType
		headDim int
		spec    string
		offsets bool // every offset of a block, not just the four cases
	}{
		{"f16", metal.KVF16, 0, "off", true},
		{"bf16", metal.KVBF16, 32, "off", true},
		{"q8", metal.KVQ8, 32, "off", false},
		{"f16-ngram", metal.KVF16, 0, "ngram", false},
		{"f16-draft", metal.KVF16, 0, "draft", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tinyModelShaped(t, 1, tc.headDim)
			var draft model.Model
			if tc.spec == "draft" {
				draft = tinyModelShaped(t, 1, tc.headDim) // the target's twin: drafts are accepted
			}
			first := make([]int32, 3*bs+5)
			for j := range first {
				first[j] = int32(100 + (j*13)%50)
			}
			more := func(k int) []int32 {
				out := slices.Clone(first)
				for j := range k {
					out = append(out, int32(60+(j*7)%40))
				}
				return out
			}
			variants := map[string][]int32{
				"resent":            first,
				"extended by 1":     more(1),
				"extended by 40":    more(40),
				"differs mid-block": slices.Concat(first[:2*bs+5], []int32{7}, first[2*bs+6:]),
			}
			if tc.offsets {
				for k := 2*bs + 1; k < 3*bs; k++ {
					variants[fmt.Sprintf("prefix of %d", k)] = first[:k]
				}
			}
			for name, p := range variants {
				e := newEngineKV(t, m, draft, tc.spec, 64, nil, tc.kvType)
				r1 := generate(t, e, first, n)
				if want := greedyAloneIn(t, m, tc.kvType, first, n); !slices.Equal(r1.tokens, want) {
					t.Fatalf("%s: first request %v, alone %v", name, r1.tokens, want)
				}
				done := slices.Concat(first, r1.tokens)
				done = done[:len(done)-1] // the last token's keys and values are never computed
				lcp := 0
				for lcp < len(done) && lcp < len(p) && done[lcp] == p[lcp] {
					lcp++
				}
				r2 := generate(t, e, p, n)
				if want := greedyAloneIn(t, m, tc.kvType, p, n); !slices.Equal(r2.tokens, want) {
					t.Fatalf("%s: %v after the first request, cold %v", name, r2.tokens, want)
				}
				if want := min(lcp, len(p)-1); r2.usage.CachedTokens != want {
					t.Fatalf("%s: %d cached tokens, want %d", name, r2.usage.CachedTokens, want)
				}
				waitIdle(t, e)
			}
		})
	}
}

// generate runs one greedy request to the end, with each token's logprob.
func generate(t testing.TB, e *Engine, prompt []int32, n int) result {
	t.Helper()
	return generateImages(t, e, prompt, nil, n)
}
