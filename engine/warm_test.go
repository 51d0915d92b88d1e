package engine

import (
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/stop"
)

// TestNextTurnResumesAtAnswer: a model with state snapshots keeps one at
// its prompt's last chunk boundary; with WarmAnswers a finished request's
// answer is recomputed as a prompt on the scheduler's own account (rows
// marked Warm, asking no logits, no Output), so a next turn that sends
// prompt, answer and a new message back resumes at the answer's last chunk
// boundary; a cancelled request is not warmed. Outputs equal the solo
// reference and nothing leaks.
func TestNextTurnResumesAtAnswer(t *testing.T) {
	const chunk = 4
	for _, tc := range []struct {
		name      string
		warm      bool
		cancelAt  int // steps into the first request; 0: it runs to its end
		wantHit   int
		wantWarms bool
	}{
		{"warm answers", true, 0, 20, true},
		{"prompt's last chunk only", false, 0, 8, false},
		{"cancelled, not warmed", true, 6, 8, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 2,
				StateChunk: chunk, StateShortRows: 6, StateSnapshots: 8, StateSnapshotEvery: 16, WarmAnswers: tc.warm}, nil)
			warmRows := 0
			h.onPlan = func(p *Plan) {
				for _, r := range p.Rows {
					if r.Warm {
						warmRows++
						if r.Logits != 0 || r.CompletesSequence || r.Seq < warmIDs || p.hasDecodeRows() && len(r.Tokens) > chunk {
							t.Fatalf("warming row %+v in a step with decode rows: %v", r, p.hasDecodeRows())
						}
					}
				}
			}
			first := Request{ID: 1, Prompt: prompt(10, 3), MaxTokens: 13} // 23 tokens: chunk boundaries 8 (prompt) and 20
			h.add(first, greedy())
			if tc.cancelAt > 0 {
				for range tc.cancelAt {
					h.step()
				}
				h.s.Cancel(first.ID, stop.Cancelled)
			}
			h.run()
			if (warmRows > 0) != tc.wantWarms {
				t.Errorf("%d warming rows, want some: %v", warmRows, tc.wantWarms)
			}
			turn := append(slices.Clone(first.Prompt), h.out[first.ID]...)
			next := Request{ID: 2, Prompt: append(turn, 5, 6, 7), MaxTokens: 4}
			h.add(next, greedy())
			h.run()
			if got := h.cached[next.ID]; len(got) == 0 || got[0] != tc.wantHit {
				t.Errorf("next turn of %d tokens: cached %v, want %d", len(next.Prompt), got, tc.wantHit)
			}
			if _, ok := h.out[warmIDs]; ok {
				t.Errorf("a warming sequence had output")
			}
			reqs := []Request{next}
			if tc.cancelAt == 0 {
				reqs = append(reqs, first)
			}
			h.checkOutputs(reqs)
		})
	}
}

// TestRequestTakesWarmingPlace: with one running place, a request that
// arrives while an answer is warming takes its place (the warming is
// dropped, leaving the prompt's snapshot) rather than wait for it.
func TestRequestTakesWarmingPlace(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 8, MaxRunning: 1, StateSlots: 1,
		StateChunk: 4, StateShortRows: 6, StateSnapshots: 8, StateSnapshotEvery: 16, WarmAnswers: true}, nil)
	first := Request{ID: 1, Prompt: prompt(10, 3), MaxTokens: 30}
	h.add(first, greedy())
	for h.s.State(first.ID) != Finished {
		h.step()
	}
	h.step() // the warming's first chunk
	if len(h.s.running) != 1 || !h.s.running[0].warm {
		t.Fatalf("running after the first request: %d, want its warming", len(h.s.running))
	}
	second := Request{ID: 2, Prompt: prompt(6, 9), MaxTokens: 3}
	h.add(second, greedy())
	h.step()
	if st := h.s.State(second.ID); st == Waiting {
		t.Fatalf("the second request waits behind a warming")
	}
	h.run()
	h.checkOutputs([]Request{first, second})
}

// TestWarmingYieldsToStreams: while another request decodes, a warming
// sequence gets one StateChunk a step, so the stream's steps stay short.
func TestWarmingYieldsToStreams(t *testing.T) {
	const chunk = 4
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 2, StateSlots: 2,
		StateChunk: chunk, StateShortRows: 6, StateSnapshots: 8, StateSnapshotEvery: 16, WarmAnswers: true}, nil)
	shared := 0
	h.onPlan = func(p *Plan) {
		for _, r := range p.Rows {
			if r.Warm && p.hasDecodeRows() {
				shared++
				if len(r.Tokens) > chunk {
					t.Fatalf("a warming chunk of %d tokens beside decode rows", len(r.Tokens))
				}
			}
		}
	}
	first := Request{ID: 1, Prompt: prompt(10, 3), MaxTokens: 13} // its warming recomputes 8..20
	second := Request{ID: 2, Prompt: prompt(6, 9), MaxTokens: 40} // still decoding then
	h.add(first, greedy())
	h.add(second, greedy())
	h.run()
	if shared == 0 {
		t.Fatal("the warming never ran beside the stream")
	}
	h.checkOutputs([]Request{first, second})
}
