package engine

import (
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/metal"
)

// checkStateRows fails when a plan's rows break the state slots' rules:
// every row carries a slot (and a spare when c speculates), no two rows
// of a step share one, no more sequences run than there are slots, and
// the batch saves each verify row's state in its spare, after the copies
// the KV manager owes.
func checkStateRows(t *testing.T, c Config) func(*Plan) {
	slots := c.CacheSlots() - c.StateSnapshots
	return func(p *Plan) {
		t.Helper()
		seen := map[int32]uint64{}
		b := p.Batch()
		for _, r := range p.Rows {
			for _, s := range []int32{r.State, r.spare} {
				if s < 0 && (s == r.State || c.MaxDraft > 0) || int(s) >= slots {
					t.Fatalf("sequence %d runs in state slot %d, spare %d, of %d", r.Seq, r.State, r.spare, slots)
				}
				if other, dup := seen[s]; dup && s >= 0 {
					t.Fatalf("sequences %d and %d share state slot %d", other, r.Seq, s)
				}
				seen[s] = r.Seq
			}
			save := metal.StateCopy{Src: r.State, Dst: r.spare}
			if saved := slices.Contains(b.StateCopies[len(p.stateCopies):], save); saved != (r.Kind == DecodeRow && len(r.Draft) > 0) {
				t.Fatalf("sequence %d's %d drafts: state saved %v (%v)", r.Seq, len(r.Draft), saved, b.StateCopies)
			}
		}
	}
}

// addStatePrompts queues n greedy requests of maxTokens, the i-th with a
// prompt of 5+3i tokens, twice over when repeat is set (a repeat n-gram
// lookup drafts from), and returns them and their prompts' lengths.
func (h *harness) addStatePrompts(n, maxTokens int, repeat bool) ([]Request, map[uint64]int) {
	var reqs []Request
	promptLen := map[uint64]int{}
	for i := range n {
		p := prompt(5+3*i, int32(i))
		if repeat {
			p = append(p, p...)
		}
		r := Request{ID: uint64(i + 1), Prompt: p, MaxTokens: maxTokens}
		promptLen[r.ID] = len(r.Prompt)
		reqs = append(reqs, r)
		h.add(r, greedy())
	}
	return reqs, promptLen
}

// checkStateCuts fails when a prefill row of a state model is cut where
// Config.StateChunk says it must not be: a row within the prompt starts
// at a multiple of chunk and ends at one or at the prompt's end, a row
// past the prompt is at most short tokens long.
func checkStateCuts(t *testing.T, p *Plan, promptLen map[uint64]int, chunk, short int) {
	t.Helper()
	if chunk == 0 {
		return
	}
	for _, r := range p.Rows {
		if r.Kind != PrefillRow {
			continue
		}
		start, end, pl := r.Start, r.Start+len(r.Tokens), promptLen[r.Seq]
		switch {
		case start >= pl && len(r.Tokens) > short:
			t.Fatalf("sequence %d recomputes generated positions [%d, %d) in one row, more than %d", r.Seq, start, end, short)
		case start < pl && (start%chunk != 0 || end%chunk != 0 && end != pl):
			t.Fatalf("sequence %d prompt chunk [%d, %d) of a %d-token prompt is not cut at multiples of %d", r.Seq, start, end, pl, chunk)
		}
	}
}

// TestStateModelScheduling runs a model with a state layer (the fake's
// state mode, whose logits come from the state in the row's slot) through
// a pool with fewer slots than MaxRunning and too few blocks: waiting
// sequences are admitted as slots free up, preempted ones give theirs back
// and restart from position 0, and every output equals the solo greedy
// reference with no block or slot leaked.
func TestStateModelScheduling(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cfg            Config
		requests       int
		wantPreemption bool
	}{
		{"slots bound running", Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 16, MaxRunning: 6, StateSlots: 2, MaxDraft: 4}, 5, false},
		{"preemption frees slots", Config{BlockSize: 4, NumBlocks: 10, MaxBatchTokens: 16, MaxRunning: 4, StateSlots: 3, MaxDraft: 4}, 6, true},
		{"chunks cut at state chunks", Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 16, MaxRunning: 4, StateSlots: 4,
			MaxPrefillWithDecode: 5, StateChunk: 4, StateShortRows: 3}, 5, false},
		{"preempted recompute in short rows", Config{BlockSize: 4, NumBlocks: 10, MaxBatchTokens: 16, MaxRunning: 4, StateSlots: 3,
			StateChunk: 8, StateShortRows: 3}, 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg, spec.Ngram{})
			reqs, promptLen := h.addStatePrompts(tc.requests, 12, false)
			slots := checkStateRows(t, tc.cfg)
			h.onPlan = func(p *Plan) {
				slots(p)
				checkStateCuts(t, p, promptLen, tc.cfg.StateChunk, tc.cfg.StateShortRows)
			}
			h.run()
			if got := h.s.Stats().Preemptions > 0; got != tc.wantPreemption {
				t.Fatalf("preemptions %d, want some: %v", h.s.Stats().Preemptions, tc.wantPreemption)
			}
			h.checkOutputs(reqs)
		})
	}
}

// TestStateSlotWaitsForCancel: with one slot a second request waits while
// the first runs, however many blocks are free; cancelling the first frees
// its slot, and the second then runs to its reference output from a
// cleared state.
func TestStateSlotWaitsForCancel(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 32, MaxBatchTokens: 16, MaxRunning: 4, StateSlots: 1}, nil)
	h.onPlan = checkStateRows(t, h.s.Config())
	first := Request{ID: 1, Prompt: prompt(6, 1), MaxTokens: 20}
	second := Request{ID: 2, Prompt: prompt(7, 3), MaxTokens: 8}
	h.add(first, greedy())
	h.add(second, greedy())
	for range 4 {
		h.step()
		if st := h.s.State(second.ID); st != Waiting {
			t.Fatalf("second sequence %v with the only slot held by the first", st)
		}
	}
	if !h.s.Cancel(first.ID, stop.Cancelled) {
		t.Fatal("first sequence not live")
	}
	h.run()
	want, reason := referenceGreedy(second, fakeVocab, h.s.Config().MaxModelLen)
	if !slices.Equal(h.out[second.ID], want) || h.reason[second.ID] != reason {
		t.Fatalf("second sequence: %v (%s), want %v (%s)", h.out[second.ID], h.reason[second.ID], want, reason)
	}
	if s := h.s.Stats().KV; s.StateSlots != 1 || s.FreeSlots != 1 {
		t.Fatalf("slots after the run: %d free of %d", s.FreeSlots, s.StateSlots)
	}
}
