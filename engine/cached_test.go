package engine

import (
	"maps"
	"slices"
	"testing"
)

// TestCachedTokensReported: a sequence's first Output says how many of its
// prompt tokens the prefix cache served (every token of an earlier prompt
// it begins with), later Outputs say nothing, and a first request with a
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
	}{{1, 0}, {2, 11}} { // every token of the shared 11
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

// TestSharedPrefixRowsAdjacent: decode rows of sequences that share
// prompt blocks sit side by side in a step, whatever order the sequences
// came in (a backend's shared-prefix attention takes consecutive rows
// only), and every sequence still gets its own greedy answer.
func TestSharedPrefixRowsAdjacent(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4}, nil)
	systemA, systemB := prompt(12, 1), prompt(12, 7)
	mate := map[uint64]uint64{1: 3, 3: 1, 2: 4, 4: 2}
	var reqs []Request
	for id, system := range [][]int32{systemA, systemB, systemA, systemB} {
		reqs = append(reqs, Request{ID: uint64(id + 1), Prompt: slices.Concat(system, []int32{int32(id), 2}), MaxTokens: 30})
	}
	checked := 0
	h.onPlan = func(p *Plan) {
		if len(p.Rows) != 4 || !p.onlyDecodeRows() {
			return
		}
		checked++
		at := map[uint64]int{}
		for i, r := range p.Rows {
			at[r.Seq] = i
		}
		for i, r := range p.Rows {
			j := at[mate[r.Seq]]
			if j != i-1 && j != i+1 {
				t.Fatalf("decode rows of sequences %v: %d is not beside %d, which shares its prompt", slices.Collect(maps.Keys(at)), r.Seq, mate[r.Seq])
			}
			if !slices.Equal(r.Blocks[:3], p.Rows[j].Blocks[:3]) {
				t.Fatalf("sequences %d and %d do not share their prompt's blocks: %v, %v", r.Seq, mate[r.Seq], r.Blocks, p.Rows[j].Blocks)
			}
		}
	}
	// The second pair comes once the first decodes: it meets the first's
	// cached blocks, arrival order 1 (A), 2 (B), 3 (A), 4 (B).
	h.add(reqs[0], greedy())
	h.add(reqs[1], greedy())
	for h.s.State(1) != Decoding || h.s.State(2) != Decoding {
		h.step()
	}
	h.add(reqs[2], greedy())
	h.add(reqs[3], greedy())
	h.run()
	if checked == 0 {
		t.Fatal("no step decoded all four sequences")
	}
	for _, r := range reqs {
		if want, _ := referenceGreedy(r, fakeVocab, h.s.Config().MaxModelLen); !slices.Equal(h.out[r.ID], want) {
			t.Fatalf("sequence %d: %v, want %v", r.ID, h.out[r.ID], want)
		}
	}
}
