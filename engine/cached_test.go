package engine

import (
	"slices"
	"testing"
)

// TestCachedTokensReported: a sequence's first Output says how many of its
// prompt tokens the prefix cache served (whole blocks of an earlier,
// identical prompt), later Outputs say nothing, and a first request with a
// cold cache reports 0.
func TestCachedTokensReported(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4}, nil)
	prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	h.add(Request{ID: 1, Prompt: prompt, MaxTokens: 3}, greedy())
	h.run()
	h.add(Request{ID: 2, Prompt: slices.Concat(prompt, []int32{12, 13}), MaxTokens: 3}, greedy())
	h.run()
	for _, tc := range []struct {
		id   uint64
		want int
	}{{1, 0}, {2, 8}} { // two whole 4-token blocks of the shared 11
		c := h.cached[tc.id]
		if len(c) == 0 || c[0] != tc.want {
			t.Fatalf("request %d: CachedTokens per output %v, want %d first", tc.id, c, tc.want)
		}
		for _, later := range c[1:] {
			if later != 0 {
				t.Fatalf("request %d: CachedTokens repeated on a later output: %v", tc.id, c)
			}
		}
	}
}
