package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/model/testmodel"
)

// idDecoder renders each token as "<id>", so tests can check text without
// a tokenizer.
type idDecoder struct{}

func (idDecoder) Add(id int32) string { return fmt.Sprintf("<%d>", id) }
func (idDecoder) Flush() string       { return "" }

func tinyModel(t testing.TB) model.Model { return tinyModelSeed(t, 1) }

func tinyModelSeed(t testing.TB, seed uint64) model.Model { return tinyModelShaped(t, seed, 0) }

// tinyModelShaped is tinyModelSeed with heads of headDim (0: Tiny's).
func tinyModelShaped(t testing.TB, seed uint64, headDim int) model.Model {
	t.Helper()
	spec := testmodel.Tiny("qwen3")
	spec.Seed = seed
	if headDim > 0 {
		spec.HeadDim = headDim
	}
	return tinyModelOf(t, spec)
}

// tinyModelOf writes spec's checkpoint and builds it on a 2-thread CPU.
func tinyModelOf(t testing.TB, spec testmodel.Spec) model.Model {
	t.Helper()
	dir := t.TempDir()
	if err := testmodel.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	src, err := model.Open(dir, model.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(2)
	t.Cleanup(func() { be.Close(); src.Close() })
	m, err := src.Build(be)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newEngine(t testing.TB, m model.Model, spec string, blocks int, fault func(uint64)) *Engine {
	return newEngineWithDraft(t, m, nil, spec, blocks, fault)
}

func newEngineWithDraft(t testing.TB, m, draft model.Model, spec string, blocks int, fault func(uint64)) *Engine {
	t.Helper()
	return newEngineKV(t, m, draft, spec, blocks, fault, metal.KVF16)
}

func newEngineKV(t testing.TB, m, draft model.Model, spec string, blocks int, fault func(uint64), kvType metal.KVType) *Engine {
	t.Helper()
	e, err := New(Config{Model: m, Draft: draft, Spec: spec, KVType: kvType, NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: blocks, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 64}, VerifierFault: fault,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// greedyAlone is the reference: a plain loop over the model, one sequence.
func greedyAlone(t testing.TB, m model.Model, prompt []int32, n int) []int32 {
	return greedyAloneIn(t, m, metal.KVF16, prompt, n)
}

// greedyAloneIn is greedyAlone with a cache of type kvType.
func greedyAloneIn(t testing.TB, m model.Model, kvType metal.KVType, prompt []int32, n int) []int32 {
	out, _ := greedyAloneLogprobs(t, m, kvType, prompt, n)
	return out
}

// greedyAloneLogprobs is greedyAloneIn that also returns each generated
// token's logprob.
func greedyAloneLogprobs(t testing.TB, m model.Model, kvType metal.KVType, prompt []int32, n int) ([]int32, []float32) {
	nb := max(16, (len(prompt)+n)/16+1)
	kv := model.NewCache(m, nb, 16, 1, kvType) // a state model's one sequence in slot 0
	blocks := make([]int32, nb)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	logits, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: blocks, Logits: 1}}}, kv)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	var lps []float32
	for len(out) < n {
		best := int32(0)
		for i, v := range logits {
			if v > logits[best] {
				best = int32(i)
			}
		}
		out = append(out, best)
		lps = append(lps, sample.Logprob(logits, best))
		logits, err = m.Forward(&model.Batch{Rows: []model.Row{{Start: len(prompt) + len(out) - 1, Tokens: []int32{best}, Blocks: blocks, Logits: 1}}}, kv)
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, lps
}

func promptFor(i int) []int32 {
	p := make([]int32, 5+i%7)
	for j := range p {
		p[j] = int32(100 + (i*31+j*7)%50) // small alphabet: n-grams recur, drafts get proposed
	}
	return p
}

type result struct {
	tokens   []int32
	logprobs []float32
	text     string
	finish   stop.Reason
	usage    Usage
	err      error
}

func collect(ch <-chan Event) result {
	var r result
	for ev := range ch {
		r.tokens = append(r.tokens, ev.Tokens...)
		for _, lp := range ev.Logprobs {
			r.logprobs = append(r.logprobs, lp.Logprob)
		}
		r.text += ev.Text
		if ev.Finish != stop.None {
			r.finish = ev.Finish
		}
		if ev.Err != nil {
			r.err = ev.Err
		}
		r.usage = ev.Usage
	}
	return r
}

func waitIdle(t *testing.T, e *Engine) {
	t.Helper()
	for i := 0; i < 200; i++ {
		idle, err := e.CheckPool()
		if err != nil {
			t.Fatal(err)
		}
		if idle {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("engine never became idle")
}

// TestGreedyIsBatchAndSpecInvariant: greedy output equals the plain loop's,
// alone or among 8 and 64 concurrent requests, with and without n-gram
// speculation, over a float16 cache, a q8 one and a bf16 one (heads of
// 32) and a float32 one; no block leaks afterwards.
func TestGreedyIsBatchAndSpecInvariant(t *testing.T) {
	for _, tc := range []struct {
		kvType  metal.KVType
		headDim int
	}{{metal.KVF16, 0}, {metal.KVQ8, 32}, {metal.KVBF16, 32}, {metal.KVF32, 0}} {
		t.Run(tc.kvType.String(), func(t *testing.T) {
			m := tinyModelShaped(t, 1, tc.headDim)
			draft := tinyModelShaped(t, 99, tc.headDim) // an unrelated model: most drafts are rejected
			checkGreedyInvariant(t, m, draft, tc.kvType)
		})
	}
}

func checkGreedyInvariant(t *testing.T, m, draft model.Model, kvType metal.KVType) {
	const n = 12
	want := map[int][]int32{}
	for i := 0; i < 64; i++ {
		want[i] = greedyAloneIn(t, m, kvType, promptFor(i), n)
	}
	for _, spec := range []string{"off", "ngram", "draft", "auto"} {
		for _, conc := range []int{1, 8, 64} {
			t.Run(fmt.Sprintf("%s/%d", spec, conc), func(t *testing.T) {
				var d model.Model
				if spec == "draft" || spec == "auto" {
					d = draft
				}
				e := newEngineKV(t, m, d, spec, 128, nil, kvType)
				results := generateAll(e, conc, n)
				for i, r := range results {
					if r.err != nil {
						t.Fatalf("request %d: %v", i, r.err)
					}
					if fmt.Sprint(r.tokens) != fmt.Sprint(want[i]) {
						t.Fatalf("request %d: %v, alone %v", i, r.tokens, want[i])
					}
					if r.finish != stop.Length || r.usage.CompletionTokens != n || r.usage.PromptTokens != len(promptFor(i)) {
						t.Fatalf("request %d: finish %q usage %+v", i, r.finish, r.usage)
					}
				}
				waitIdle(t, e)
				var sb strings.Builder
				e.WriteMetrics(&sb)
				proposed := strings.Contains(sb.String(), "splash_spec_proposed_tokens_total 0\n")
				if conc > 1 && spec == "off" != proposed {
					t.Fatalf("speculation %s: proposed-token metric:\n%s", spec, sb.String())
				}
				if steps := checkAcceptanceLength(t, sb.String(), spec); conc > 1 && (steps > 0) != (spec != "off") {
					t.Fatalf("speculation %s: %d verify steps with drafts", spec, steps)
				}
			})
		}
	}
}

// TestGreedySharedPrefixIsBatchInvariant: requests that share a long
// prompt prefix (a fleet's system prompt: the prefix cache hands them the
// same blocks, and attention reads those once for all of them,
// cpu/attention_shared.go) answer as each does alone, over a bf16 cache
// and a float32 one.
func TestGreedySharedPrefixIsBatchInvariant(t *testing.T) {
	m := tinyModelShaped(t, 1, 32)
	system := make([]int32, 300)
	for j := range system {
		system[j] = int32(100 + (j*13)%50)
	}
	prompt := func(i int) []int32 { return append(slices.Clone(system), promptFor(i)...) }
	const n, conc = 12, 8
	for _, kvType := range []metal.KVType{metal.KVBF16, metal.KVF32} {
		t.Run(kvType.String(), func(t *testing.T) {
			e := newEngineKV(t, m, nil, "off", 128, nil, kvType)
			var wg sync.WaitGroup
			results := make([]result, conc)
			for i := range conc {
				wg.Go(func() {
					ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt(i), MaxTokens: n, Sampling: sample.Params{Logprobs: -1}})
					if err != nil {
						results[i].err = err
						return
					}
					results[i] = collect(ch)
				})
			}
			wg.Wait()
			cached := 0
			for i, r := range results {
				if r.err != nil {
					t.Fatalf("request %d: %v", i, r.err)
				}
				if want := greedyAloneIn(t, m, kvType, prompt(i), n); fmt.Sprint(r.tokens) != fmt.Sprint(want) {
					t.Fatalf("request %d: %v, alone %v", i, r.tokens, want)
				}
				cached += r.usage.CachedTokens
			}
			if cached < conc/2*288 { // requests arriving together may each prefill some of it
				t.Fatalf("%d prompt tokens from the prefix cache, want the system prompt's 288 for most requests", cached)
			}
			waitIdle(t, e)
		})
	}
}

// TestStopStringsAndCancellation: a stop string ends a request, and a
// cancelled request's stream ends with its blocks (and, for a hybrid
// model, its state slot and spare) freed, with n-gram speculation on.
func TestStopStringsAndCancellation(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    model.Model
	}{
		{"dense", tinyModel(t)},
		{"hybrid", tinyHybridModel(t, "Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true), metal.F32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			e := newEngine(t, m, "ngram", 64, nil)
			ref := greedyAlone(t, m, promptFor(3), 6)
			stopAt := fmt.Sprintf("<%d>", ref[2])
			ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: promptFor(3), MaxTokens: 50, Stop: []string{stopAt}, Sampling: sample.Params{Logprobs: -1}})
			if err != nil {
				t.Fatal(err)
			}
			r := collect(ch)
			if r.finish != stop.Stop || strings.Contains(r.text, stopAt) && !strings.HasPrefix(r.text, stopAt) {
				t.Fatalf("finish %q text %q (stop %q)", r.finish, r.text, stopAt)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ch, err = e.Generate(ctx, GenerateRequest{Prompt: promptFor(4), MaxTokens: 0, Sampling: sample.Params{Logprobs: -1}})
			if err != nil {
				t.Fatal(err)
			}
			<-ch // first tokens arrived: the sequence holds blocks
			cancel()
			// A caller that cancelled may miss the last event, but the stream must
			// end and the blocks must be freed.
			if r = collect(ch); r.finish != stop.Cancelled && r.finish != stop.None {
				t.Fatalf("finish %q after cancel", r.finish)
			}
			waitIdle(t, e)
		})
	}
}

func TestLogprobs(t *testing.T) {
	m := tinyModel(t)
	e := newEngine(t, m, "ngram", 64, nil)
	ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: promptFor(1), MaxTokens: 5, PromptLogprobs: true, Sampling: sample.Params{Logprobs: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var gen, prompt []TokenLogprobs
	for ev := range ch {
		gen = append(gen, ev.Logprobs...)
		prompt = append(prompt, ev.PromptLogprobs...)
	}
	if len(gen) != 5 || len(prompt) != len(promptFor(1))-1 {
		t.Fatalf("%d generated and %d prompt logprobs", len(gen), len(prompt))
	}
	for i, lp := range prompt {
		// each names the prompt token it is for, with its top 3 best first
		if lp.Token != promptFor(1)[i+1] || len(lp.Top) != 3 || lp.Logprob > 0 || lp.Top[0].Logprob < lp.Top[2].Logprob {
			t.Fatalf("prompt logprobs %d: %+v", i, lp)
		}
	}
	for _, lp := range gen {
		// greedy: the sampled token is the most likely one
		if len(lp.Top) != 3 || lp.Top[0].Token != lp.Token || lp.Logprob > 0 {
			t.Fatalf("logprobs %+v", lp)
		}
	}
}

// TestVerifierPanic injects a panic into the forward pass during a
// 16-request run: every request ends, and a new request then succeeds.
func TestVerifierPanic(t *testing.T) {
	m := tinyModel(t)
	var armed atomic.Bool
	armed.Store(true)
	e := newEngine(t, m, "ngram", 128, func(step uint64) {
		if step == 3 && armed.CompareAndSwap(true, false) {
			panic("injected fault")
		}
	})
	var wg sync.WaitGroup
	var failed, completed atomic.Int32
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: promptFor(i), MaxTokens: 10, Sampling: sample.Params{Logprobs: -1}})
			if err != nil {
				t.Error(err)
				return
			}
			r := collect(ch)
			if r.err != nil {
				failed.Add(1)
			} else if r.finish == stop.Length {
				completed.Add(1)
			}
		}(i)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("requests hung after the verifier panic")
	}
	if failed.Load() == 0 || failed.Load()+completed.Load() != 16 {
		t.Fatalf("%d failed, %d completed of 16", failed.Load(), completed.Load())
	}
	ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: promptFor(0), MaxTokens: 4, Sampling: sample.Params{Logprobs: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(ch); r.err != nil || len(r.tokens) != 4 {
		t.Fatalf("after restart: %+v", r)
	}
	waitIdle(t, e)
}
