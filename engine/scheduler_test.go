package engine

import (
	"fmt"
	"github.com/splash-inference/splash/metal"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
)

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"ok", Config{BlockSize: 4, NumBlocks: 8, MaxBatchTokens: 16, MaxRunning: 4}, ""},
		{"no blocks", Config{NumBlocks: 0, MaxBatchTokens: 16, MaxRunning: 4}, "NumBlocks"},
		{"no budget", Config{NumBlocks: 8, MaxRunning: 4}, "MaxBatchTokens"},
		{"running beyond budget", Config{NumBlocks: 8, MaxBatchTokens: 2, MaxRunning: 4}, "exceeds"},
		{"context beyond pool", Config{BlockSize: 4, NumBlocks: 2, MaxBatchTokens: 8, MaxRunning: 1, MaxModelLen: 9}, "MaxModelLen"},
		{"negative draft", Config{NumBlocks: 8, MaxBatchTokens: 8, MaxRunning: 1, MaxDraft: -1}, "MaxDraft"},
		{"negative prefill cap", Config{NumBlocks: 8, MaxBatchTokens: 8, MaxRunning: 1, MaxPrefillWithDecode: -1}, "MaxPrefillWithDecode"},
		{"negative break-even", Config{NumBlocks: 8, MaxBatchTokens: 8, MaxRunning: 1, AttentionBreakEven: -1}, "AttentionBreakEven"},
		{"negative state slots", Config{NumBlocks: 8, MaxBatchTokens: 8, MaxRunning: 1, StateSlots: -1}, "StateSlots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, nil)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestAddRejects(t *testing.T) {
	s, err := New(Config{BlockSize: 4, NumBlocks: 4, MaxBatchTokens: 8, MaxRunning: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Request{ID: 1, Prompt: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    Request
		want string
	}{
		{"duplicate", Request{ID: 1, Prompt: []int32{1}}, "already"},
		{"empty prompt", Request{ID: 2}, "empty"},
		{"prompt fills context", Request{ID: 3, Prompt: make([]int32, 16)}, "no room"},
		{"negative max tokens", Request{ID: 4, Prompt: []int32{1}, MaxTokens: -1}, "negative"},
	} {
		if err := s.Add(tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	s.Cancel(1, stop.Cancelled)
	if err := s.kv.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}

// rowShape is the part of a plan row a scenario pins down.
type rowShape struct {
	seq             uint64
	kind            RowKind
	start, n, logit int
}

func shapes(p *Plan) []rowShape {
	var out []rowShape
	for i := range p.Rows {
		r := &p.Rows[i]
		out = append(out, rowShape{r.Seq, r.Kind, r.Start, len(r.Tokens) + len(r.Draft), r.NumLogits()})
	}
	return out
}

func prompt(n int, base int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = (base + int32(i)) % fakeVocab
	}
	return out
}

// TestScheduleScenarios pins the plans of small hand-written situations.
func TestScheduleScenarios(t *testing.T) {
	type step struct {
		add  []Request
		want []rowShape
	}
	cfg := Config{BlockSize: 4, NumBlocks: 16, MaxBatchTokens: 6, MaxRunning: 3}
	capped := cfg
	capped.MaxPrefillWithDecode = 2
	capped4 := cfg
	capped4.MaxPrefillWithDecode = 4
	deep := cfg
	deep.MaxPrefillWithDecode, deep.AttentionBreakEven = 4, 4
	for _, tc := range []struct {
		name  string
		cfg   *Config // cfg when nil
		steps []step
	}{
		{"chunked prefill then decode", nil, []step{
			{add: []Request{{ID: 1, Prompt: prompt(10, 1), MaxTokens: 2}}, want: []rowShape{{1, PrefillRow, 0, 6, 0}}},
			{want: []rowShape{{1, PrefillRow, 6, 4, 1}}},
			{want: []rowShape{{1, DecodeRow, 10, 1, 1}}},
			{want: nil},
		}},
		{"decode rows before prompt chunks", nil, []step{
			{add: []Request{{ID: 1, Prompt: prompt(3, 1), MaxTokens: 3}}, want: []rowShape{{1, PrefillRow, 0, 3, 1}}},
			{add: []Request{{ID: 2, Prompt: prompt(9, 5), MaxTokens: 1}}, want: []rowShape{{1, DecodeRow, 3, 1, 1}, {2, PrefillRow, 0, 5, 0}}},
			{want: []rowShape{{1, DecodeRow, 4, 1, 1}, {2, PrefillRow, 5, 4, 1}}},
			{want: nil},
		}},
		{"prompt chunks shrink while others decode", &capped, []step{
			{add: []Request{{ID: 1, Prompt: prompt(3, 1), MaxTokens: 3}}, want: []rowShape{{1, PrefillRow, 0, 3, 1}}},
			{add: []Request{{ID: 2, Prompt: prompt(9, 5), MaxTokens: 1}}, want: []rowShape{{1, DecodeRow, 3, 1, 1}, {2, PrefillRow, 0, 2, 0}}},
			{want: []rowShape{{1, DecodeRow, 4, 1, 1}, {2, PrefillRow, 2, 2, 0}}},
			{want: []rowShape{{2, PrefillRow, 4, 5, 1}}}, // nobody decodes: the whole budget
			{want: nil},
		}},
		{"prompt chunks shrink with their context while others decode", &deep, []step{
			{add: []Request{{ID: 1, Prompt: prompt(3, 1), MaxTokens: 4}}, want: []rowShape{{1, PrefillRow, 0, 3, 1}}},
			// Costs with C = 4: n·(1 + (start + n/2)/4) within 4.
			{add: []Request{{ID: 2, Prompt: prompt(8, 5), MaxTokens: 1}}, want: []rowShape{{1, DecodeRow, 3, 1, 1}, {2, PrefillRow, 0, 2, 0}}},
			{want: []rowShape{{1, DecodeRow, 4, 1, 1}, {2, PrefillRow, 2, 2, 0}}},
			{want: []rowShape{{1, DecodeRow, 5, 1, 1}, {2, PrefillRow, 4, 1, 0}}},
			{want: []rowShape{{2, PrefillRow, 5, 3, 1}}}, // nobody decodes: the whole budget
			{want: nil},
		}},
		{"a short newcomer is admitted beside a long prompt", &capped4, []step{
			{add: []Request{{ID: 1, Prompt: prompt(3, 1), MaxTokens: 6}}, want: []rowShape{{1, PrefillRow, 0, 3, 1}}},
			{add: []Request{{ID: 2, Prompt: prompt(12, 5), MaxTokens: 1}}, want: []rowShape{{1, DecodeRow, 3, 1, 1}, {2, PrefillRow, 0, 4, 0}}},
			// Half the cap left aside for the newcomer, which fits in it.
			{add: []Request{{ID: 3, Prompt: prompt(3, 9), MaxTokens: 1}}, want: []rowShape{{1, DecodeRow, 4, 1, 1}, {2, PrefillRow, 4, 2, 0}, {3, PrefillRow, 0, 2, 0}}},
			{want: []rowShape{{1, DecodeRow, 5, 1, 1}, {3, DecodeRow, 2, 1, 1}, {2, PrefillRow, 6, 4, 0}}},
			{want: []rowShape{{1, DecodeRow, 6, 1, 1}, {2, PrefillRow, 10, 2, 1}}},
			{want: []rowShape{{1, DecodeRow, 7, 1, 1}}},
			{want: nil},
		}},
		{"a newcomer counts past its cached prefix", &capped4, []step{
			{add: []Request{{ID: 1, Prompt: prompt(8, 3), MaxTokens: 1}}, want: []rowShape{{1, PrefillRow, 0, 6, 0}}},
			{want: []rowShape{{1, PrefillRow, 6, 2, 1}}},
			{add: []Request{{ID: 2, Prompt: prompt(3, 1), MaxTokens: 8}}, want: []rowShape{{2, PrefillRow, 0, 3, 1}}},
			{add: []Request{{ID: 3, Prompt: prompt(20, 50), MaxTokens: 1}}, want: []rowShape{{2, DecodeRow, 3, 1, 1}, {3, PrefillRow, 0, 4, 0}}},
			// Its first 8 tokens cached, the newcomer wants one: it goes beside.
			{add: []Request{{ID: 4, Prompt: append(prompt(8, 3), 99), MaxTokens: 1}}, want: []rowShape{{2, DecodeRow, 4, 1, 1}, {3, PrefillRow, 4, 3, 0}, {4, PrefillRow, 8, 1, 1}}},
			{want: []rowShape{{2, DecodeRow, 5, 1, 1}, {3, PrefillRow, 7, 4, 0}}},
			{want: []rowShape{{2, DecodeRow, 6, 1, 1}, {3, PrefillRow, 11, 4, 0}}},
			{want: []rowShape{{2, DecodeRow, 7, 1, 1}, {3, PrefillRow, 15, 4, 0}}},
			{want: []rowShape{{2, DecodeRow, 8, 1, 1}, {3, DecodeRow, 19, 1, 1}}},
			{want: []rowShape{{2, DecodeRow, 9, 1, 1}}},
			{want: nil},
		}},
		{"a longer prompt waits for an older shorter one", &capped4, []step{
			{add: []Request{{ID: 1, Prompt: prompt(3, 1), MaxTokens: 5}}, want: []rowShape{{1, PrefillRow, 0, 3, 1}}},
			{add: []Request{{ID: 2, Prompt: prompt(8, 5), MaxTokens: 1}}, want: []rowShape{{1, DecodeRow, 3, 1, 1}, {2, PrefillRow, 0, 4, 0}}},
			{add: []Request{{ID: 3, Prompt: prompt(12, 9), MaxTokens: 1}}, want: []rowShape{{1, DecodeRow, 4, 1, 1}, {2, PrefillRow, 4, 4, 1}}},
			{want: []rowShape{{1, DecodeRow, 5, 1, 1}, {3, PrefillRow, 0, 4, 0}}},
			{want: []rowShape{{1, DecodeRow, 6, 1, 1}, {3, PrefillRow, 4, 4, 0}}},
			{want: []rowShape{{3, PrefillRow, 8, 4, 1}}},
			{want: nil},
		}},
		{"prefix hit covers all but the last token", nil, []step{
			{add: []Request{{ID: 1, Prompt: prompt(8, 3), MaxTokens: 1}}, want: []rowShape{{1, PrefillRow, 0, 6, 0}}},
			{want: []rowShape{{1, PrefillRow, 6, 2, 1}}},
			{add: []Request{{ID: 2, Prompt: prompt(8, 3), MaxTokens: 1}}, want: []rowShape{{2, PrefillRow, 7, 1, 1}}},
			{add: []Request{{ID: 3, Prompt: append(prompt(8, 3), 9), MaxTokens: 1}}, want: []rowShape{{3, PrefillRow, 8, 1, 1}}},
			{want: nil},
		}},
		{"prompt logprobs want every position and skip the cache", nil, []step{
			{add: []Request{{ID: 1, Prompt: prompt(8, 3), MaxTokens: 1}}, want: []rowShape{{1, PrefillRow, 0, 6, 0}}},
			{want: []rowShape{{1, PrefillRow, 6, 2, 1}}},
			{add: []Request{{ID: 2, Prompt: prompt(8, 3), MaxTokens: 1, PromptLogprobs: true}}, want: []rowShape{{2, PrefillRow, 0, 6, 6}}},
			{want: []rowShape{{2, PrefillRow, 6, 2, 2}}},
			{want: nil},
		}},
		{"running cap holds the queue", nil, []step{
			{add: []Request{{ID: 1, Prompt: prompt(1, 1), MaxTokens: 2}, {ID: 2, Prompt: prompt(1, 2), MaxTokens: 2},
				{ID: 3, Prompt: prompt(1, 3), MaxTokens: 2}, {ID: 4, Prompt: prompt(1, 4), MaxTokens: 2}},
				want: []rowShape{{1, PrefillRow, 0, 1, 1}, {2, PrefillRow, 0, 1, 1}, {3, PrefillRow, 0, 1, 1}}},
			{want: []rowShape{{1, DecodeRow, 1, 1, 1}, {2, DecodeRow, 1, 1, 1}, {3, DecodeRow, 1, 1, 1}}},
			{want: []rowShape{{4, PrefillRow, 0, 1, 1}}},
			{want: []rowShape{{4, DecodeRow, 1, 1, 1}}},
			{want: nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				c = *tc.cfg
			}
			h := newHarness(t, c, nil)
			for i, st := range tc.steps {
				for _, r := range st.add {
					h.add(r, greedy())
				}
				p := h.s.Schedule()
				if got := shapes(p); !slices.Equal(got, st.want) {
					t.Fatalf("step %d: rows %+v, want %+v", i, got, st.want)
				}
				if p.Empty() {
					break
				}
				logits, err := h.m.Forward(p.Batch(), h.kv)
				if err != nil {
					t.Fatal(err)
				}
				res, err := h.dec.Decide(p, logits, func(id uint64) *sample.Sampler { return h.samplers[id] })
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.s.Update(p, res); err != nil {
					t.Fatal(err)
				}
				if err := h.s.Check(); err != nil {
					t.Fatal(err)
				}
			}
			h.checkLeaks()
		})
	}
}

func TestVerifyRowsCarryDrafts(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 32, MaxBatchTokens: 16, MaxRunning: 2, MaxDraft: 4}, spec.Ngram{})
	// A repetitive prompt: the n-gram proposer has something to find at once.
	p := []int32{1, 2, 3, 1, 2, 3, 1, 2}
	h.add(Request{ID: 1, Prompt: p, MaxTokens: 30}, greedy())
	h.step()
	plan := h.s.Schedule()
	r := plan.Rows[0]
	if r.Kind != DecodeRow || r.MaxDraft < 1 || len(r.Draft) == 0 {
		t.Fatalf("row %+v: want a verify row with drafts", r)
	}
	b := plan.Batch()
	if br := b.Rows[0]; len(br.Tokens) != 1+len(r.Draft) || br.Logits != len(br.Tokens) || br.Start != len(p) {
		t.Fatalf("model row %+v for draft %v", br, r.Draft)
	}
	h.s.Cancel(1, stop.Cancelled)
	h.checkLeaks()
}

func TestUpdateRejectsMalformedResults(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 16, MaxBatchTokens: 8, MaxRunning: 2}, nil)
	h.add(Request{ID: 1, Prompt: prompt(3, 1), MaxTokens: 5}, greedy())
	h.step()
	p := h.s.Schedule()
	if p.SetDrafts([]spec.Want{{Seq: 1, Draft: []int32{4, 5}}}); len(p.Rows[0].Draft) != 0 {
		t.Fatalf("draft beyond MaxDraft 0 kept: %v", p.Rows[0].Draft)
	}
	for _, tc := range []struct {
		name string
		res  StepResult
		want string
	}{
		{"row count", StepResult{}, "rows"},
		{"no token", StepResult{Rows: []RowResult{{}}}, "needs 1 to 1"},
		{"too many", StepResult{Rows: []RowResult{{Tokens: []int32{1, 2}}}}, "needs 1 to 1"},
	} {
		if _, err := h.s.Update(p, tc.res); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := h.s.Update(p, StepResult{Rows: []RowResult{{Tokens: []int32{7}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.Update(p, StepResult{Rows: []RowResult{{Tokens: []int32{7}}}}); err == nil {
		t.Fatal("the same plan was applied twice")
	}
	h.s.Cancel(1, stop.Cancelled)
	h.checkLeaks()
}

// TestCancelInEveryState cancels a sequence waiting, prefilling, decoding
// and while its row is in an outstanding plan; its blocks must be free at
// once and the plan's later Update must ignore it.
func TestCancelInEveryState(t *testing.T) {
	for _, tc := range []struct {
		name      string
		steps     int // full steps before cancelling
		inFlight  bool
		wantState SeqState
	}{
		{"waiting", 0, false, Waiting},
		{"prefilling", 1, false, Prefilling},
		{"decoding", 3, false, Decoding},
		{"in flight", 3, true, Decoding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{BlockSize: 4, NumBlocks: 16, MaxBatchTokens: 6, MaxRunning: 2}, nil)
			h.add(Request{ID: 1, Prompt: prompt(10, 1), MaxTokens: 20}, greedy())
			h.add(Request{ID: 2, Prompt: prompt(3, 7), MaxTokens: 4}, greedy())
			for range tc.steps {
				h.step()
			}
			if got := h.s.State(1); got != tc.wantState {
				t.Fatalf("state %v, want %v", got, tc.wantState)
			}
			if !tc.inFlight {
				h.s.Cancel(1, stop.Cancelled)
				h.run()
			} else {
				p := h.s.Schedule()
				logits, err := h.m.Forward(p.Batch(), h.kv)
				if err != nil {
					t.Fatal(err)
				}
				res, err := h.dec.Decide(p, logits, func(id uint64) *sample.Sampler { return h.samplers[id] })
				if err != nil {
					t.Fatal(err)
				}
				h.s.Cancel(1, stop.Cancelled)
				if err := h.s.Check(); err != nil { // sequence 1's blocks are already free
					t.Fatal(err)
				}
				for i := range p.Rows {
					if p.Rows[i].Seq == 1 {
						res.Rows[i].Tokens = nil // its result may be anything now, even malformed
					}
				}
				outs, err := h.s.Update(p, res)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range outs {
					if o.ID == 1 {
						t.Fatalf("cancelled sequence got output %+v", o)
					}
					h.out[o.ID] = append(h.out[o.ID], o.Tokens...)
				}
				h.run()
			}
			if h.s.Cancel(1, stop.Cancelled) {
				t.Fatal("second Cancel found the sequence")
			}
			want, _ := referenceGreedy(Request{Prompt: prompt(3, 7), MaxTokens: 4}, fakeVocab, h.s.Config().MaxModelLen)
			if !slices.Equal(h.out[2], want) {
				t.Fatalf("survivor output %v, want %v", h.out[2], want)
			}
		})
	}
}

// TestPreemptionRecomputes runs two sequences that cannot both fit: the
// younger is preempted, recomputed later, and both match their solo runs.
func TestPreemptionRecomputes(t *testing.T) {
	cfg := Config{BlockSize: 4, NumBlocks: 8, MaxBatchTokens: 8, MaxRunning: 2}
	h := newHarness(t, cfg, nil)
	reqs := []Request{{ID: 1, Prompt: prompt(6, 1), MaxTokens: 20}, {ID: 2, Prompt: prompt(6, 9), MaxTokens: 20}}
	for _, r := range reqs {
		h.add(r, greedy())
	}
	h.run()
	if h.s.Stats().Preemptions == 0 {
		t.Fatal("no preemption: the scenario does not test what it claims")
	}
	for _, r := range reqs {
		want, reason := referenceGreedy(r, fakeVocab, h.s.Config().MaxModelLen)
		if !slices.Equal(h.out[r.ID], want) || h.reason[r.ID] != reason {
			t.Errorf("sequence %d: %v (%s), want %v (%s)", r.ID, h.out[r.ID], h.reason[r.ID], want, reason)
		}
	}
}

// TestStress runs many random requests with shared prefixes, stop tokens,
// speculation and random cancellations through a tiny block pool, and
// checks that every sequence's output equals its solo greedy output (a
// cancelled one's output is a prefix of it), with the pool's invariants
// checked after every step and no leak at the end.
func TestStress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		proposer spec.Proposer
		draft    bool // an external hybrid proposer with a draft model
	}{
		{"no speculation", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6}, nil, false},
		{"ngram speculation", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6, MaxDraft: 5}, spec.Ngram{}, false},
		// DraftCost pinned low: n-gram lookup over random prompts rarely
		// lands, and at the default cost adaptive k would all but stop
		// proposing; drafts must keep meeting preemption and tiny budgets.
		{"block size 1, small budget", Config{BlockSize: 1, NumBlocks: 48, MaxBatchTokens: 7, MaxRunning: 3, MaxDraft: 3, DraftCost: 0.01}, spec.Ngram{}, false},
		{"big blocks", Config{BlockSize: 16, NumBlocks: 6, MaxBatchTokens: 40, MaxRunning: 8, MaxDraft: 4}, spec.Ngram{}, false},
		{"draft model and ngram", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6, MaxDraft: 5}, nil, true},
		{"prompt cap", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6, MaxDraft: 5, MaxPrefillWithDecode: 5}, spec.Ngram{}, false},
		// Fractional costs: what is left of the cap is often less than a token.
		{"prompt cap by attention", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6, MaxDraft: 5, MaxPrefillWithDecode: 7, AttentionBreakEven: 9}, spec.Ngram{}, false},
		// A model with state layers: verify rows save the state in a spare
		// slot and rejected drafts recompute from it (state_spec_test.go).
		{"state model, ngram", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6, MaxDraft: 5, DraftCost: 0.01, StateSlots: 4}, spec.Ngram{}, false},
		{"state model, draft model and ngram", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6, MaxDraft: 5, StateSlots: 4,
			StateChunk: 4, StateShortRows: 5}, nil, true},
		{"state model, snapshots", Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 24, MaxRunning: 6, MaxDraft: 5, DraftCost: 0.01, StateSlots: 4,
			StateChunk: 4, StateShortRows: 5, StateSnapshots: 6, StateSnapshotEvery: 8, WarmAnswers: true}, spec.Ngram{}, false},
	} {
		for seed := range uint64(6) {
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, seed), func(t *testing.T) { stressOnce(t, tc.cfg, tc.proposer, tc.draft, seed) })
		}
	}
}

func stressOnce(t *testing.T, cfg Config, proposer spec.Proposer, withDraft bool, seed uint64) {
	rng := rand.New(rand.NewPCG(77, seed))
	h := newHarness(t, cfg, proposer)
	var draft *spec.DraftModel
	if withDraft {
		dm := newFakeModel(fakeVocab)
		dm.skew = 5
		var err error
		if draft, err = spec.NewDraftModel(dm, 24, 4, metal.KVF16); err != nil {
			t.Fatal(err)
		}
		h.external = spec.NewHybrid(spec.Ngram{}, draft)
	}
	maxLen := h.s.Config().MaxModelLen
	shared := prompt(maxLen/2, 5)
	var reqs []Request
	cancelAt := map[uint64]int{}
	next := uint64(1)
	addRandom := func() {
		n := 1 + rng.IntN(maxLen/2)
		p := make([]int32, n)
		for i := range p {
			p[i] = int32(rng.IntN(fakeVocab))
		}
		if rng.IntN(2) == 0 { // share a prefix with others
			copy(p, shared[:min(n, len(shared))])
		}
		r := Request{ID: next, Prompt: p, MaxTokens: 1 + rng.IntN(maxLen/2)}
		if rng.IntN(3) == 0 {
			r.StopTokens = []int32{int32(rng.IntN(fakeVocab))}
		}
		if rng.IntN(6) == 0 {
			cancelAt[r.ID] = h.steps + rng.IntN(20)
		}
		h.add(r, greedy())
		reqs = append(reqs, r)
		next++
	}
	for range 12 {
		addRandom()
	}
	for h.step() {
		if h.steps < 150 && rng.IntN(4) == 0 {
			addRandom()
		}
		for id, at := range cancelAt {
			if at == h.steps && h.s.Cancel(id, stop.Cancelled) && h.external != nil {
				h.external.Release(id)
			}
		}
		if h.steps > 20000 {
			t.Fatal("no progress")
		}
	}
	h.checkLeaks()
	cancelled := 0
	for _, r := range reqs {
		want, reason := referenceGreedy(r, fakeVocab, maxLen)
		got := h.out[r.ID]
		if _, isCancel := cancelAt[r.ID]; isCancel && h.reason[r.ID] == stop.None {
			cancelled++
			if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
				t.Fatalf("cancelled %d: %v is not a prefix of %v", r.ID, got, want)
			}
			continue
		}
		if !slices.Equal(got, want) || h.reason[r.ID] != reason {
			t.Fatalf("sequence %d (prompt %d tokens): %v (%s), want %v (%s)", r.ID, len(r.Prompt), got, h.reason[r.ID], want, reason)
		}
	}
	st := h.s.Stats()
	t.Logf("seed %d: %d requests, %d cancelled, %d steps, %d preemptions, prefix hits %d of %d tokens, drafts %d accepted %d",
		seed, len(reqs), cancelled, h.steps, st.Preemptions, st.KV.HitTokens, st.KV.Queried, h.drafted, h.accepted)
	if st.Preemptions == 0 || st.KV.HitTokens == 0 && (cfg.StateSlots == 0 || cfg.StateSnapshots > 0) { // a state model hits only snapshots
		t.Fatalf("the stress run exercised no preemption or no prefix hit: %+v", st)
	}
	if (proposer != nil || withDraft) && h.accepted == 0 {
		t.Fatal("no draft token was ever accepted")
	}
	if draft != nil {
		if err := draft.CheckLeaks(); err != nil {
			t.Fatalf("draft cache: %v", err)
		}
	}
}

// TestSeededSamplingReproducible runs a sampled workload with speculation
// twice: the same seeds give the same tokens.
func TestSeededSamplingReproducible(t *testing.T) {
	run := func(seedBase uint64) map[uint64][]int32 {
		h := newHarness(t, Config{BlockSize: 4, NumBlocks: 24, MaxBatchTokens: 16, MaxRunning: 4, MaxDraft: 4}, spec.Ngram{})
		for i := range uint64(8) {
			seed := seedBase + i
			h.add(Request{ID: i + 1, Prompt: prompt(3+int(i), int32(i)), MaxTokens: 25},
				sample.Params{Temperature: 0.8, TopP: 0.95, TopK: 8, Seed: &seed})
		}
		h.run()
		return h.out
	}
	a, b, c := run(100), run(100), run(200)
	same := func(x, y map[uint64][]int32) bool {
		for id := range x {
			if !slices.Equal(x[id], y[id]) {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatalf("same seeds, different outputs:\n%v\n%v", a, b)
	}
	if same(a, c) {
		t.Fatal("different seeds gave identical outputs: sampling ignores the seed")
	}
}

// TestSampledBatchedEqualsAlone: without speculation a sampled sequence
// consumes one draw per token, so with its seed it must produce the same
// tokens alone and in a crowded, preempting batch.
func TestSampledBatchedEqualsAlone(t *testing.T) {
	params := func(id uint64) sample.Params {
		seed := 1000 + id
		return sample.Params{Temperature: 0.9, TopP: 0.9, MinP: 0.02, FrequencyPenalty: 0.2, RepetitionPenalty: 1.1, Seed: &seed}
	}
	reqs := make([]Request, 10)
	for i := range reqs {
		reqs[i] = Request{ID: uint64(i + 1), Prompt: prompt(4+3*i, int32(i)), MaxTokens: 30, StopTokens: []int32{15}}
	}
	crowd := newHarness(t, Config{BlockSize: 4, NumBlocks: 20, MaxBatchTokens: 16, MaxRunning: 6}, nil)
	for _, r := range reqs {
		crowd.add(r, params(r.ID))
	}
	crowd.run()
	if crowd.s.Stats().Preemptions == 0 {
		t.Fatal("no preemption in the crowded run")
	}
	for _, r := range reqs {
		alone := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 64, MaxRunning: 1, MaxModelLen: 80}, nil)
		alone.add(r, params(r.ID))
		alone.run()
		if !slices.Equal(crowd.out[r.ID], alone.out[r.ID]) || crowd.reason[r.ID] != alone.reason[r.ID] {
			t.Fatalf("sequence %d: batched %v (%s), alone %v (%s)", r.ID, crowd.out[r.ID], crowd.reason[r.ID], alone.out[r.ID], alone.reason[r.ID])
		}
	}
}
