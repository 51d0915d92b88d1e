package engine

import (
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
)

// checkStateRows fails when a plan's rows break the state slots' rules:
// every row carries a slot, no two rows of a step share one, and no more
// sequences run than there are slots.
func checkStateRows(t *testing.T, slots int) func(*Plan) {
	return func(p *Plan) {
		t.Helper()
		seen := map[int32]uint64{}
		for _, r := range p.Rows {
			if r.State < 0 || int(r.State) >= slots {
				t.Fatalf("sequence %d runs in state slot %d of %d", r.Seq, r.State, slots)
			}
			if other, dup := seen[r.State]; dup {
				t.Fatalf("sequences %d and %d share state slot %d", other, r.Seq, r.State)
			}
			seen[r.State] = r.Seq
		}
	}
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
// and restart from position 0, speculation stays off, and every output
// equals the solo greedy reference with no block or slot leaked.
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
			promptLen := map[uint64]int{}
			slots := checkStateRows(t, tc.cfg.StateSlots)
			h.onPlan = func(p *Plan) {
				slots(p)
				checkStateCuts(t, p, promptLen, tc.cfg.StateChunk, tc.cfg.StateShortRows)
			}
			var reqs []Request
			for i := range tc.requests {
				r := Request{ID: uint64(i + 1), Prompt: prompt(5+3*i, int32(i)), MaxTokens: 12}
				promptLen[r.ID] = len(r.Prompt)
				reqs = append(reqs, r)
				h.add(r, greedy())
			}
			h.run()
			if got := h.s.Stats().Preemptions > 0; got != tc.wantPreemption {
				t.Fatalf("preemptions %d, want some: %v", h.s.Stats().Preemptions, tc.wantPreemption)
			}
			if h.drafted != 0 {
				t.Fatalf("%d draft tokens verified on a model whose state cannot roll back", h.drafted)
			}
			for _, r := range reqs {
				want, reason := referenceGreedy(r, fakeVocab, h.s.Config().MaxModelLen)
				if !slices.Equal(h.out[r.ID], want) || h.reason[r.ID] != reason {
					t.Errorf("sequence %d: %v (%s), want %v (%s)", r.ID, h.out[r.ID], h.reason[r.ID], want, reason)
				}
			}
		})
	}
}

// TestStateSlotWaitsForCancel: with one slot a second request waits while
// the first runs, however many blocks are free; cancelling the first frees
// its slot, and the second then runs to its reference output from a
// cleared state.
func TestStateSlotWaitsForCancel(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 32, MaxBatchTokens: 16, MaxRunning: 4, StateSlots: 1}, nil)
	h.onPlan = checkStateRows(t, 1)
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
