package engine

import (
	"testing"
	"time"

	"github.com/splash-inference/splash/engine/spec"
)

// cycleGuess proposes for the fake model in cycle mode (next token = last
// plus one): the whole draft right at the positions right says, else a
// draft whose first token is wrong.
type cycleGuess struct {
	right func(pos int) bool
}

func (c *cycleGuess) Propose(wants []spec.Want) error {
	for i := range wants {
		w := &wants[i]
		last := w.Tokens[len(w.Tokens)-1]
		for j := range w.K {
			t := (last + 1 + int32(j)) % fakeVocab
			if !c.right(len(w.Tokens)) {
				t = (t + 5) % fakeVocab
			}
			w.Draft = append(w.Draft, t)
		}
	}
	return nil
}

// TestDraftCostFollowsTimedSteps runs one long request under proposers of
// different quality, with steps timed as fixed + perToken·tokens, and
// counts the draft tokens verified.
func TestDraftCostFollowsTimedSteps(t *testing.T) {
	always := func(int) bool { return true }
	never := func(int) bool { return false }
	half := func(pos int) bool { return pos*37%11 < 5 } // 5 positions in 11, scattered
	for _, tc := range []struct {
		name              string
		right             func(int) bool
		fixed, perToken   time.Duration // 0, 0: untimed (DefaultCost)
		least, most       int           // draft tokens verified over 300 tokens
		leastTokensPerRow float64
		fixedDraft        bool // Config.FixedDraft
	}{
		{name: "a perfect draft runs at k = 4", right: always, fixed: 20 * time.Millisecond, perToken: 10 * time.Millisecond,
			least: 230, most: 300, leastTokensPerRow: 4.5},
		{name: "a useless draft is all but switched off", right: never, most: 12},
		{name: "a useless draft, timed", right: never, fixed: 20 * time.Millisecond, perToken: 10 * time.Millisecond, most: 12},
		{name: "a half-right draft with cheap verification", right: half, fixed: 30 * time.Millisecond, perToken: time.Millisecond,
			least: 150, most: 600},
		{name: "a half-right draft with dear verification", right: half, fixed: time.Millisecond, perToken: 30 * time.Millisecond,
			most: 60},
		// The last steps verify fewer: no draft past MaxTokens.
		{name: "FixedDraft verifies a useless draft in full every step", right: never, fixed: 20 * time.Millisecond, perToken: 10 * time.Millisecond,
			least: 4 * 296, most: 4 * 300, fixedDraft: true},
		{name: "FixedDraft with a half-right draft", right: half, fixed: time.Millisecond, perToken: 30 * time.Millisecond,
			least: 300, most: 4 * 300, leastTokensPerRow: 1.3, fixedDraft: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{BlockSize: 16, NumBlocks: 64, MaxBatchTokens: 64, MaxRunning: 4, MaxDraft: 4, FixedDraft: tc.fixedDraft}, &cycleGuess{right: tc.right})
			h.m.cycle = true
			if tc.perToken > 0 {
				h.elapsed = func(p *Plan) time.Duration { return tc.fixed + time.Duration(p.NumTokens())*tc.perToken }
			}
			h.add(Request{ID: 1, Prompt: prompt(8, 3), MaxTokens: 300}, greedy())
			h.run()
			if len(h.out[1]) != 300 {
				t.Fatalf("%d tokens, want 300", len(h.out[1]))
			}
			t.Logf("drafted %d accepted %d steps %d", h.drafted, h.accepted, h.steps)
			if h.drafted < tc.least || h.drafted > tc.most {
				t.Fatalf("%d draft tokens verified (%d accepted) in %d steps, want %d to %d", h.drafted, h.accepted, h.steps, tc.least, tc.most)
			}
			if perRow := 300 / float64(h.steps-1); perRow < tc.leastTokensPerRow {
				t.Fatalf("%.2f tokens per step, want at least %.2f", perRow, tc.leastTokensPerRow)
			}
		})
	}
}

// TestNoDraftRequest: a request submitted with NoDraft is never given room
// for drafts, next to one that runs at full speculation; both decode right.
func TestNoDraftRequest(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 16, NumBlocks: 64, MaxBatchTokens: 64, MaxRunning: 4, MaxDraft: 4},
		&cycleGuess{right: func(int) bool { return true }})
	h.m.cycle = true
	h.add(Request{ID: 1, Prompt: prompt(8, 3), MaxTokens: 40, NoDraft: true}, greedy())
	h.add(Request{ID: 2, Prompt: prompt(8, 5), MaxTokens: 40}, greedy())
	drafted := map[uint64]int{}
	h.onPlan = func(p *Plan) {
		for _, r := range p.Rows {
			drafted[r.Seq] += r.MaxDraft
		}
	}
	h.run()
	if drafted[1] != 0 || drafted[2] == 0 {
		t.Fatalf("draft room per request %v, want none for 1 and some for 2", drafted)
	}
	for id, base := range map[uint64]int32{1: 3, 2: 5} {
		out := h.out[id]
		if len(out) != 40 {
			t.Fatalf("request %d: %d tokens", id, len(out))
		}
		last := prompt(8, base)[7]
		for i, tok := range out {
			if want := (last + 1 + int32(i)) % fakeVocab; tok != want {
				t.Fatalf("request %d token %d = %d, want %d", id, i, tok, want)
			}
		}
	}
}

// TestNewRequestsStartFromPeers: a request that arrives after others have
// been verified starts from their record: deep when their drafts landed,
// at k = 0 (no first probe) when they kept failing.
func TestNewRequestsStartFromPeers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		right       bool
		least, most int // the second request's first draft room
	}{
		{"peers' drafts land", true, 3, 4},
		{"peers' drafts fail", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{BlockSize: 16, NumBlocks: 64, MaxBatchTokens: 64, MaxRunning: 4, MaxDraft: 4, DraftCost: 0.25},
				&cycleGuess{right: func(int) bool { return tc.right }})
			h.m.cycle = true
			h.add(Request{ID: 1, Prompt: prompt(8, 3), MaxTokens: 60}, greedy())
			h.run()
			first := -1
			h.onPlan = func(p *Plan) {
				for _, r := range p.Rows {
					if r.Seq == 2 && r.Kind == DecodeRow && first < 0 {
						first = r.MaxDraft
					}
				}
			}
			h.add(Request{ID: 2, Prompt: prompt(8, 5), MaxTokens: 20}, greedy())
			h.run()
			if first < tc.least || first > tc.most {
				t.Fatalf("second request's first draft room %d, want %d to %d", first, tc.least, tc.most)
			}
		})
	}
}
