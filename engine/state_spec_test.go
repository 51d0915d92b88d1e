package engine

import (
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/metal"
)

// oracleDraft proposes the fake model's own greedy continuation, made
// wrong at the draft index wrong picks from the row's position and k (k or
// more: all right), so that verify rows accept every count of drafts from
// none to all.
type oracleDraft struct {
	wrong func(pos, k int) int
}

func (o oracleDraft) Propose(wants []spec.Want) error {
	for i := range wants {
		w := &wants[i]
		toks := slices.Clone(w.Tokens)
		bad := o.wrong(len(toks), w.K)
		for j := range w.K {
			l := fakeLogits(toks, fakeVocab)
			next := int32(0)
			for v, x := range l {
				if x > l[next] {
					next = int32(v)
				}
			}
			if j == bad {
				next = (next + 1) % fakeVocab
			}
			w.Draft = append(w.Draft, next)
			toks = append(toks, next)
		}
	}
	return nil
}

// TestStateModelSpeculates: a model with state layers speculates with n-gram,
// oracle and draft-model proposals (the oracle's wrong at every draft index
// in turn), whole prompts, state chunks and preemption: each verify row
// saves its state in the sequence's spare slot (checkStateRows), drafts
// are accepted and rejected, a rejected verify's next decode row
// recomputes its accepted tokens from the saved state in one short row
// (the fake fails a row that does not start where its state stands), and
// every output equals the solo greedy reference with no block or slot
// leaked.
func TestStateModelSpeculates(t *testing.T) {
	partly := oracleDraft{wrong: func(pos, k int) int { return pos % (k + 2) }}
	for _, tc := range []struct {
		name           string
		cfg            Config
		proposer       spec.Proposer
		draftModel     bool // an external n-gram and draft-model proposer (spec.Hybrid)
		wantPreemption bool
		wantRejections bool
	}{
		{"oracle", Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 4, MaxDraft: 4, DraftCost: 0.01}, partly, false, false, true},
		{"oracle, short rows", Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 4, MaxDraft: 6, DraftCost: 0.01,
			StateChunk: 8, StateShortRows: 4}, partly, false, false, true},
		{"oracle, preemption", Config{BlockSize: 4, NumBlocks: 12, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 3, MaxDraft: 4, DraftCost: 0.01,
			StateChunk: 4, StateShortRows: 6}, partly, false, true, true},
		{"oracle, snapshots", Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 4, MaxDraft: 4, DraftCost: 0.01,
			StateChunk: 4, StateShortRows: 6, StateSnapshots: 8, StateSnapshotEvery: 8}, partly, false, false, true},
		{"ngram", Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 4, MaxDraft: 4, DraftCost: 0.01}, spec.Ngram{}, false, false, false},
		{"draft model and ngram", Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 4, MaxDraft: 4, DraftCost: 0.01,
			StateChunk: 4, StateShortRows: 6}, nil, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg, tc.proposer)
			if tc.draftModel {
				dm := newFakeModel(fakeVocab)
				dm.skew = 5
				draft, err := spec.NewDraftModel(dm, 64, tc.cfg.BlockSize, metal.KVF16)
				if err != nil {
					t.Fatal(err)
				}
				h.external = spec.NewHybrid(spec.Ngram{}, draft)
			}
			c := h.s.Config()
			reqs, promptLen := h.addStatePrompts(6, 24, true)
			slots := checkStateRows(t, c)
			h.onPlan = func(p *Plan) {
				slots(p)
				checkStateCuts(t, p, promptLen, c.StateChunk, c.StateShortRows)
				for _, r := range p.Rows {
					if n := len(r.Tokens) + len(r.Draft); c.StateChunk > 0 && r.Kind == DecodeRow && n > c.StateShortRows {
						t.Fatalf("sequence %d's decode row of %d tokens and %d drafts is longer than %d", r.Seq, len(r.Tokens), len(r.Draft), c.StateShortRows)
					}
				}
			}
			h.run()
			if got := h.s.Stats().Preemptions > 0; got != tc.wantPreemption {
				t.Errorf("preemptions %d, want some: %v", h.s.Stats().Preemptions, tc.wantPreemption)
			}
			if h.drafted == 0 || h.accepted == 0 || tc.wantRejections && h.accepted == h.drafted {
				t.Errorf("%d drafts verified, %d accepted; want some accepted and, with wrong proposals, some rejected", h.drafted, h.accepted)
			}
			h.checkOutputs(reqs)
		})
	}
}
