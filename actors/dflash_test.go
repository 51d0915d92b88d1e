package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/model/testmodel"
)

// tinyDFlash binds a random DFlash draft of kind k (block of 3) to m, a
// tinyModel target.
func tinyDFlash(t testing.TB, m model.Model, k model.DFlashKind) *model.DFlashDraft {
	t.Helper()
	return openDFlash(t, m, testmodel.DFlashSpec{Kind: k, Target: testmodel.Tiny("qwen3"), BlockSize: 3, Seed: 7})
}

// openDFlash writes the random DFlash draft of s and binds it to m.
func openDFlash(t testing.TB, m model.Model, s testmodel.DFlashSpec) *model.DFlashDraft {
	t.Helper()
	dir := t.TempDir()
	if err := testmodel.WriteDFlash(dir, s); err != nil {
		t.Fatal(err)
	}
	be := cpu.New(2)
	d, ts, err := model.OpenDFlashDraft(dir, m, be)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close(); be.Close() })
	return d
}

// newDFlashEngine is an engine over m speculating with d.
func newDFlashEngine(t *testing.T, m model.Model, d *model.DFlashDraft) *Engine {
	t.Helper()
	e, err := New(Config{Model: m, DFlash: d, Spec: "dflash", NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: 128, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 64},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// TestGreedyDFlashIsSpecInvariant: with DFlash and DFlash2 speculation,
// greedy output equals the plain loop's, alone and among 8 and 64
// concurrent requests, and drafts were proposed (so the target's features
// reached the draft); no block leaks afterwards.
func TestGreedyDFlashIsSpecInvariant(t *testing.T) {
	m := tinyModel(t)
	const n = 10
	want := map[int][]int32{}
	for i := range 64 {
		want[i] = greedyAlone(t, m, promptFor(i), n)
	}
	for _, kind := range []model.DFlashKind{model.DFlash, model.DFlash2} {
		d := tinyDFlash(t, m, kind)
		for _, conc := range []int{1, 8, 64} {
			t.Run(fmt.Sprintf("%s/%d", kind, conc), func(t *testing.T) {
				e := newDFlashEngine(t, m, d)
				for i, r := range generateAll(e, conc, n) {
					if r.err != nil {
						t.Fatalf("request %d: %v", i, r.err)
					}
					if fmt.Sprint(r.tokens) != fmt.Sprint(want[i]) {
						t.Fatalf("request %d: %v, alone %v", i, r.tokens, want[i])
					}
				}
				waitIdle(t, e)
				var sb strings.Builder
				e.WriteMetrics(&sb)
				if strings.Contains(sb.String(), "splash_spec_proposed_tokens_total 0\n") {
					t.Fatalf("no draft proposed:\n%s", sb.String())
				}
				if checkAcceptanceLength(t, sb.String(), "dflash") == 0 {
					t.Fatalf("no verify step with drafts:\n%s", sb.String())
				}
			})
		}
	}
}

// TestSpecDFlashNeedsADraft: --spec dflash without a DFlash draft is refused.
func TestSpecDFlashNeedsADraft(t *testing.T) {
	_, err := New(Config{Model: tinyModel(t), Spec: "dflash", KVType: metal.KVF16, NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: 16, BlockSize: 16}})
	if err == nil || !strings.Contains(err.Error(), "DFlash draft") {
		t.Fatalf("error %v", err)
	}
}

// generateAll runs requests 0…conc−1 (promptFor(i), n greedy tokens each)
// concurrently and returns their results in order.
func generateAll(e *Engine, conc, n int) []result { return generateEach(e, conc, n, promptFor) }

// generateEach is generateAll with request i's prompt prompt(i).
func generateEach(e *Engine, conc, n int, prompt func(int) []int32) []result {
	var wg sync.WaitGroup
	results := make([]result, conc)
	for i := range conc {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt(i), MaxTokens: n, Sampling: sample.Params{Logprobs: -1}})
			if err != nil {
				results[i].err = err
				return
			}
			results[i] = collect(ch)
		}(i)
	}
	wg.Wait()
	return results
}

// TestCommittedFeatures: of a step's captured features, a prefill row's
// all positions are committed, a decode row's anchor and accepted drafts,
// each from its own place in the batch.
func TestCommittedFeatures(t *testing.T) {
	const w = 2
	plan := &engine.Plan{Rows: []engine.PlanRow{
		{Seq: 1, Kind: engine.DecodeRow, Start: 10, Tokens: []int32{5}, Draft: []int32{6, 7, 8}},
		{Seq: 2, Kind: engine.DecodeRow, Start: 4, Tokens: []int32{9}},
		{Seq: 3, Kind: engine.PrefillRow, Start: 0, Tokens: []int32{1, 2, 3}},
		{Seq: 4, Kind: engine.DecodeRow, Start: 7, Tokens: []int32{5}, Draft: []int32{6, 7}},
	}}
	res := engine.StepResult{Rows: []engine.RowResult{
		{Tokens: []int32{6, 1}}, // one draft accepted
		{Tokens: []int32{3}},
		{},
		{Tokens: []int32{6, 7, 2}}, // all accepted and the bonus
	}}
	// 4 + 1 + 3 + 3 positions, each row of features holding its index twice
	var out []float32
	for i := range 11 {
		out = append(out, float32(i), float32(i))
	}
	got := committedFeatures(out, w, plan, res)
	want := []spec.Features{
		{Seq: 1, Start: 10, Rows: []float32{0, 0, 1, 1}},
		{Seq: 2, Start: 4, Rows: []float32{4, 4}},
		{Seq: 3, Start: 0, Rows: []float32{5, 5, 6, 6, 7, 7}},
		{Seq: 4, Start: 7, Rows: []float32{8, 8, 9, 9, 10, 10}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("committed %v, want %v", got, want)
	}
}

// TestGreedyDFlashSharedPrefix: requests sharing a long system prompt,
// served from the prefix cache after the first, answer as each does alone
// with DFlash speculation, and draft (the draft's context of the shared
// prefix comes from its own prefix cache).
func TestGreedyDFlashSharedPrefix(t *testing.T) {
	m := tinyModel(t)
	d := tinyDFlash(t, m, model.DFlash)
	system := make([]int32, 300)
	for j := range system {
		system[j] = int32(100 + (j*13)%50)
	}
	prompt := func(i int) []int32 { return append(slices.Clone(system), promptFor(i)...) }
	const n, conc = 12, 8
	e := newDFlashEngine(t, m, d)
	proposed := func() int {
		var sb strings.Builder
		e.WriteMetrics(&sb)
		for _, line := range strings.Split(sb.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "splash_spec_proposed_tokens_total "); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatal("no proposed-token metric")
		return 0
	}
	gen := func(i int) result {
		ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt(i), MaxTokens: n, Sampling: sample.Params{Logprobs: -1}})
		if err != nil {
			return result{err: err}
		}
		return collect(ch)
	}
	results := []result{gen(0)}
	waitIdle(t, e)
	before := proposed()
	var wg sync.WaitGroup
	more := make([]result, conc)
	for i := range conc {
		wg.Go(func() { more[i] = gen(i + 1) })
	}
	wg.Wait()
	results = append(results, more...)
	cached := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if want := greedyAlone(t, m, prompt(i), n); fmt.Sprint(r.tokens) != fmt.Sprint(want) {
			t.Fatalf("request %d: %v, alone %v", i, r.tokens, want)
		}
		cached += r.usage.CachedTokens
	}
	if cached < conc*288 {
		t.Fatalf("%d prompt tokens from the prefix cache, want the system prompt's 288 for every later request", cached)
	}
	if after := proposed(); after-before < conc {
		t.Fatalf("requests with a prefix-cache hit proposed %d tokens in all", after-before)
	}
	waitIdle(t, e)
}

// TestUselessDFlashBacksOff: the number of block tokens verified adapts
// per sequence to acceptance (the scheduler's spec.AdaptiveK, each row
// asking the draft for that many): a random DFlash draft, whose proposals
// the target rejects, is backed off to rare probes, far below a block per
// step, and its verify steps are mostly plain decodes; output stays
// greedy.
func TestUselessDFlashBacksOff(t *testing.T) {
	m := &countingModel{Model: tinyModel(t)}
	d := tinyDFlash(t, m.Model, model.DFlash)
	const n = 96
	prompt := promptFor(3)
	want := greedyAlone(t, m.Model, prompt, n)
	e := newDFlashEngine(t, m, d)
	ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt, MaxTokens: n, Sampling: sample.Params{Logprobs: -1}, SpecTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	proposed, steps := 0, 0
	var toks []int32
	for ev := range ch {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		toks = append(toks, ev.Tokens...)
		if ev.Spec != nil {
			steps++
			proposed += len(ev.Spec.Proposed)
		}
	}
	if fmt.Sprint(toks) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", toks, want)
	}
	full := (d.Config().BlockSize - 1) * steps
	t.Logf("%d tokens proposed in %d steps (a block each: %d), %d target passes", proposed, steps, full, m.passes.Load())
	if proposed == 0 || proposed > n/4 {
		t.Fatalf("%d tokens proposed over %d steps, want 1 to %d", proposed, steps, n/4)
	}
}

// TestHybridDFlash: a DFlash draft over a hybrid target (Qwen3.5) serves
// 8 concurrent requests with the plain loop's greedy tokens: the target's
// features are captured in its state rows' passes, and its drafts are
// verified with the state saved before each verify row and the kept tokens
// replayed after a rejection.
func TestHybridDFlash(t *testing.T) {
	const n = 12
	m := tinyHybridModel(t, "Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true), metal.F32)
	c := m.Config()
	target := testmodel.Spec{Arch: "qwen3", Hidden: c.HiddenSize, Intermediate: 96, Layers: c.NumHiddenLayers, Heads: 4, KVHeads: 2, HeadDim: 16,
		Vocab: c.VocabSize, MaxContext: 4096}
	d := openDFlash(t, m, testmodel.DFlashSpec{Target: target, BlockSize: 4, TargetLayerIDs: []int{1, 2}, Seed: 3})
	e, err := New(Config{Model: m, DFlash: d, Spec: "dflash", KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: 128, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 8},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	for i, r := range generateEach(e, 8, n, hybridPrompt) {
		want, _ := greedyAloneLogprobs(t, m, metal.KVF32, hybridPrompt(i), n)
		if r.err != nil || fmt.Sprint(r.tokens) != fmt.Sprint(want) {
			t.Fatalf("request %d: %v (%v), alone %v", i, r.tokens, r.err, want)
		}
	}
	waitIdle(t, e)
	// The drafts were verified on the hybrid target (its state saved and
	// replayed), not skipped.
	var sb strings.Builder
	e.WriteMetrics(&sb)
	if strings.Contains(sb.String(), "splash_spec_proposed_tokens_total 0\n") {
		t.Fatalf("no draft proposed on the hybrid target:\n%s", sb.String())
	}
	checkAcceptanceLength(t, sb.String(), "dflash")
}

// TestSampledDFlash: sampling requests under DFlash and DFlash2 drafts
// (drafts drawn from the draft's distribution, rejection sampling against
// it) run concurrently to their length, each step's accepted drafts among
// its proposals and followed by the target's own token.
func TestSampledDFlash(t *testing.T) {
	m := tinyModel(t)
	const n, conc = 16, 8
	for _, kind := range []model.DFlashKind{model.DFlash, model.DFlash2} {
		t.Run(string(kind), func(t *testing.T) {
			e := newDFlashEngine(t, m, tinyDFlash(t, m, kind))
			var wg sync.WaitGroup
			errs := make([]error, conc)
			proposed := make([]int, conc)
			for i := range conc {
				wg.Go(func() {
					seed := uint64(i)
					ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: promptFor(i), MaxTokens: n, SpecTrace: true,
						Sampling: sample.Params{Temperature: 1.5, TopK: 40, Seed: &seed, Logprobs: -1}})
					if err != nil {
						errs[i] = err
						return
					}
					got := 0
					for ev := range ch {
						if ev.Err != nil {
							errs[i] = ev.Err
						}
						if s := ev.Spec; s != nil {
							proposed[i] += len(s.Proposed)
							if s.Accepted > len(s.Proposed) || len(ev.Tokens) > s.Accepted+1 || !slices.Equal(ev.Tokens[:min(s.Accepted, len(ev.Tokens))], s.Proposed[:min(s.Accepted, len(ev.Tokens))]) {
								errs[i] = fmt.Errorf("step %+v gave %v", *s, ev.Tokens)
							}
						}
						got += len(ev.Tokens)
					}
					if errs[i] == nil && got != n {
						errs[i] = fmt.Errorf("%d tokens", got)
					}
				})
			}
			wg.Wait()
			total := 0
			for i, err := range errs {
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				total += proposed[i]
			}
			if total == 0 {
				t.Fatal("no draft proposed")
			}
			waitIdle(t, e)
		})
	}
}
