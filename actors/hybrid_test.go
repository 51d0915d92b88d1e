package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
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

// tinyHybridModel builds a small random hybrid model of the given layout
// (hybridref's configs) with a vocabulary that promptFor's tokens fit.
func tinyHybridModel(t testing.TB, arch string, cfg *model.Config, d metal.DType) model.Model {
	t.Helper()
	cfg.Architecture, cfg.VocabSize = arch, 160
	w, _ := hybridref.Random(cfg, d, 7)
	be := cpu.New(2)
	t.Cleanup(be.Close)
	m, err := model.Architectures().Build(cfg, w, be)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// hybridPrompt is request i's prompt: 20 to 149 tokens, so that prompts
// span one, two or three of the delta rule's 64-token chunks and the
// scheduler cuts them at chunk ends.
func hybridPrompt(i int) []int32 {
	p := make([]int32, 20+(i*37)%130)
	for j := range p {
		p[j] = int32((i*31 + j*7 + j*j) % 160)
	}
	return p
}

// TestHybridGreedyIsBatchInvariant: a hybrid model's greedy output (dense
// and mixture-of-experts, f32 and bf16 weights, f32 cache) equals the
// plain loop's, whose prompt is one call, token for token and its
// logprobs bit for bit (which needs the prompt chunks cut at the delta
// rule's chunks and verify rows no longer than its short calls), alone or
// among 8 and 64 concurrent requests, with speculation off, by n-gram
// lookup, by a draft model, by both (auto) and by an oracle that is right up to a draft
// index that moves with the position (so verify passes accept every count
// of drafts and the rejected ones go back to the state saved before them),
// and with so few blocks that 64 requests preempt each other, with state
// snapshots every 64 positions or without (a preempted sequence then
// resumes from its own prompt's snapshot); no block, state slot, spare or
// snapshot leaks afterwards.
func TestHybridGreedyIsBatchInvariant(t *testing.T) {
	const n = 16
	for _, tc := range []struct {
		arch string
		cfg  *model.Config
		d    metal.DType
	}{
		{"Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true), metal.BF16},
		{"Qwen3NextForCausalLM", hybridref.TinyMoE("qwen3_next"), metal.F32},
		{"Qwen3_5MoeForConditionalGeneration", hybridref.TinyMoE("qwen3_5_moe"), metal.BF16},
	} {
		t.Run(tc.cfg.Hybrid.ModelType, func(t *testing.T) {
			m := tinyHybridModel(t, tc.arch, tc.cfg, tc.d)
			want, wantLogprobs := map[int][]int32{}, map[int][]float32{}
			for i := range 64 {
				want[i], wantLogprobs[i] = greedyAloneLogprobs(t, m, metal.KVF32, hybridPrompt(i), n)
			}
			for _, run := range []struct {
				spec                    string // off, ngram, draft or oracle
				conc, blocks, snapshots int
				wantPreemptions         bool
			}{
				{"off", 1, 128, 0, false}, {"ngram", 8, 128, 0, false}, {"draft", 8, 128, 0, false}, {"auto", 8, 128, 0, false},
				{"oracle", 1, 128, 0, false},
				{"oracle", 8, 128, 0, false}, {"off", 64, 1024, 0, false}, {"oracle", 64, 1024, 0, false},
				{"off", 64, 48, 0, true}, {"oracle", 64, 48, 0, true}, {"oracle", 64, 48, 32, true},
			} {
				t.Run(fmt.Sprintf("%s/%d/%d-blocks/%d-snapshots", run.spec, run.conc, run.blocks, run.snapshots), func(t *testing.T) {
					cfg := Config{Model: m, Spec: run.spec, KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
						Scheduler: engine.Config{NumBlocks: run.blocks, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 64,
							StateSnapshots: run.snapshots, StateSnapshotEvery: 64},
						Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
					switch run.spec {
					case "draft", "auto": // auto: n-gram lookup and the draft model (spec.Hybrid)
						cfg.Draft = tinyDenseDraft(t, cfg.Model.Config().VocabSize)
						cfg.Scheduler.DraftCost = 0.01 // keep proposing, however often the unrelated draft is wrong
					case "oracle":
						cfg.Spec, cfg.Proposer = "ngram", oracleProposer{want: want} // the proposer replaces the spec's
						cfg.Scheduler.DraftCost = 0.01
					}
					// Whether sequences get preempted (and, with snapshots,
					// whether one is preempted after its first snapshot, so
					// that it resumes from it) depends on how many requests
					// arrive before the first ones finish, so a run that
					// wants preemptions is repeated (five times at most)
					// until they happen; every run must match the model
					// alone.
					metrics := runHybridBatch(t, cfg, run.conc, n, want, wantLogprobs)
					for attempt := 1; preempted(metrics) != run.wantPreemptions || (run.snapshots > 0 && !prefixHits(metrics)); attempt++ {
						if !run.wantPreemptions || attempt == 5 {
							t.Fatalf("preemptions: %v, want %v; prefix hits %v (attempt %d):\n%s", preempted(metrics), run.wantPreemptions, prefixHits(metrics), attempt, metrics)
						}
						metrics = runHybridBatch(t, cfg, run.conc, n, want, wantLogprobs)
					}
					proposed := !strings.Contains(metrics, "splash_spec_proposed_tokens_total 0\n")
					if mustPropose := run.spec == "draft" || run.spec == "auto" || run.spec == "oracle"; proposed != mustPropose && run.spec != "ngram" {
						t.Errorf("proposed drafts: %v, want %v:\n%s", proposed, mustPropose, metrics)
					}
					if hits := prefixHits(metrics); hits != (run.snapshots > 0) {
						t.Errorf("prefix hits: %v, want %v (preempted sequences resume from their snapshots)", hits, run.snapshots > 0)
					}
				})
			}
		})
	}
}

// prefixHits reports whether an engine's metrics count prefix-cache hits.
func prefixHits(metrics string) bool {
	return !strings.Contains(metrics, "splash_prefix_cache_hit_tokens_total 0\n")
}

// preempted reports whether an engine's metrics count a preemption.
func preempted(metrics string) bool {
	return !strings.Contains(metrics, "splash_preemptions_total 0\n")
}

// runHybridBatch serves conc concurrent requests (hybridPrompt(i), n greedy
// tokens) on a new engine, checks each against the model alone (tokens and
// logprobs bit for bit), waits for it to go idle (no leaks) and returns its
// metrics.
func runHybridBatch(t *testing.T, cfg Config, conc, n int, want map[int][]int32, wantLogprobs map[int][]float32) string {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	results := make([]result, conc)
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() {
			ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: hybridPrompt(i), MaxTokens: n, Sampling: sample.Params{Logprobs: 0}})
			if err != nil {
				results[i].err = err
				return
			}
			results[i] = collect(ch)
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if fmt.Sprint(r.tokens) != fmt.Sprint(want[i]) {
			t.Fatalf("request %d (prompt of %d): %v, alone %v", i, len(hybridPrompt(i)), r.tokens, want[i])
		}
		for j, lp := range r.logprobs {
			if math.Float32bits(lp) != math.Float32bits(wantLogprobs[i][j]) {
				t.Fatalf("request %d (prompt of %d): token %d's logprob %v, alone %v", i, len(hybridPrompt(i)), j, lp, wantLogprobs[i][j])
			}
		}
		if len(r.logprobs) != n {
			t.Fatalf("request %d: %d logprobs", i, len(r.logprobs))
		}
	}
	waitIdle(t, e)
	var sb strings.Builder
	e.WriteMetrics(&sb)
	return sb.String()
}

// oracleProposer proposes request i's greedy reference continuation
// (want[i]; a hybridPrompt's first token tells i), wrong at the draft
// index the sequence's length picks (k+1 or more: right throughout), so
// that verify passes accept every count of drafts, or at the one wrong
// picks.
type oracleProposer struct {
	want map[int][]int32
	// wrong picks the draft index made wrong from the sequence's length and
	// k; nil: the length modulo k+2.
	wrong func(n, k int) int
}

func (o oracleProposer) Propose(wants []spec.Want) error {
	for i := range wants {
		w := &wants[i]
		for r := range o.want {
			p := hybridPrompt(r)
			if p[0] != w.Tokens[0] || len(w.Tokens) < len(p) {
				continue
			}
			gen := len(w.Tokens) - len(p)
			next := o.want[r][min(gen, len(o.want[r])):]
			w.Draft = append(w.Draft, next[:min(w.K, len(next))]...)
			bad := len(w.Tokens) % (w.K + 2)
			if o.wrong != nil {
				bad = o.wrong(len(w.Tokens), w.K)
			}
			if bad < len(w.Draft) {
				w.Draft[bad] = (w.Draft[bad] + 1) % 160
			}
			break
		}
	}
	return nil
}

// tinyDenseDraft is a small dense Qwen3 model of vocab tokens, a draft
// model unrelated to the target.
func tinyDenseDraft(t testing.TB, vocab int) model.Model {
	t.Helper()
	ms := testmodel.Tiny("qwen3")
	ms.Vocab, ms.Layers, ms.Seed = vocab, 1, 5
	return tinyModelOf(t, ms)
}

// TestHybridPrefixHitsResumeFromSnapshots: with state snapshots every 64
// positions, a prompt that shares a cached prompt's first o tokens, for
// every o across two snapshot intervals, is served from the deepest
// snapshot at or below o (its cached tokens say so) and answers with the
// tokens and bit-identical logprobs of a cold run, with n-gram
// speculation or without; nothing leaks, and without snapshots nothing is
// served from the cache.
func TestHybridPrefixHitsResumeFromSnapshots(t *testing.T) {
	const n, every = 8, 64
	m := tinyHybridModel(t, "Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true), metal.F32)
	base := hybridPrompt(5)
	for len(base) < 200 {
		base = append(base, hybridPrompt(len(base))...)
	}
	base = base[:200]
	prompt := func(o int) []int32 {
		p := append([]int32(nil), base[:o]...)
		for j := range 10 {
			p = append(p, int32((o*13+j*29+1)%160))
		}
		return p
	}
	for _, run := range []struct {
		spec      string
		snapshots int
	}{{"off", 0}, {"off", 16}, {"ngram", 16}} {
		snapshots := run.snapshots
		t.Run(fmt.Sprintf("%s/snapshots=%d", run.spec, snapshots), func(t *testing.T) {
			e, err := New(Config{Model: m, Spec: run.spec, KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
				Scheduler: engine.Config{NumBlocks: 256, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 8,
					StateSnapshots: snapshots, StateSnapshotEvery: every},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			generate(t, e, base, n) // caches base with snapshots at 64, 128 and 192
			for o := 2 * every; o <= 3*every+8; o++ {
				p := prompt(o)
				r := generate(t, e, p, n)
				want, wantLogprobs := greedyAloneLogprobs(t, m, metal.KVF32, p, n)
				if fmt.Sprint(r.tokens) != fmt.Sprint(want) {
					t.Fatalf("offset %d: %v, cold %v", o, r.tokens, want)
				}
				for j, lp := range r.logprobs {
					if math.Float32bits(lp) != math.Float32bits(wantLogprobs[j]) {
						t.Fatalf("offset %d: token %d's logprob %v, cold %v", o, j, lp, wantLogprobs[j])
					}
				}
				if wantHit := (o / every) * every * min(snapshots, 1); r.usage.CachedTokens != wantHit {
					t.Fatalf("offset %d: %d tokens cached, want %d", o, r.usage.CachedTokens, wantHit)
				}
			}
			waitIdle(t, e)
			var sb strings.Builder
			e.WriteMetrics(&sb)
			kept := !strings.Contains(sb.String(), "splash_state_snapshot_bytes 0\n")
			if !strings.Contains(sb.String(), "splash_state_snapshot_bytes ") || kept != (snapshots > 0) {
				t.Errorf("snapshots kept %v, want %v:\n%s", kept, snapshots > 0, sb.String())
			}
		})
	}
}

// TestCommittedFeaturesOfRecomputedTokens: a hybrid model's decode row that
// recomputes the tokens a rejected verify kept (it starts at the state
// saved before that verify) commits the features of every token it feeds
// and of its accepted drafts; a warming row commits none.
func TestCommittedFeaturesOfRecomputedTokens(t *testing.T) {
	const w = 1
	for _, tc := range []struct {
		tokens, draft, result []int32
		want                  []float32
	}{
		{[]int32{5, 6, 7}, []int32{8, 9}, []int32{8, 1}, []float32{0, 1, 2, 3}},
		{[]int32{5, 6}, []int32{8, 9}, []int32{2}, []float32{0, 1}},
		{[]int32{5, 6}, nil, []int32{2}, []float32{0, 1}},
	} {
		plan := &engine.Plan{Rows: []engine.PlanRow{{Seq: 1, Kind: engine.DecodeRow, Start: 10, Tokens: tc.tokens, Draft: tc.draft},
			{Seq: 2, Kind: engine.PrefillRow, Start: 64, Tokens: []int32{1, 2}, Warm: true}}}
		res := engine.StepResult{Rows: []engine.RowResult{{Tokens: tc.result}}}
		out := []float32{0, 1, 2, 3, 4, 5, 6}
		got := committedFeatures(out, w, plan, res)
		if want := []spec.Features{{Seq: 1, Start: 10, Rows: tc.want}}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("tokens %v, drafts %v, result %v: committed %v, want %v", tc.tokens, tc.draft, tc.result, got, want)
		}
	}
}

// TestHybridNextTurnResumesAtAnswer: an agent's next turn (the previous
// prompt, its answer and a new message) on a hybrid model resumes from a
// state snapshot at the previous turn's last chunk boundary when the
// scheduler warms finished answers (engine.Config.WarmAnswers), at the
// previous prompt's last chunk boundary when it does not, and answers
// with the tokens and bit-identical logprobs of a cold run either way;
// nothing leaks.
func TestHybridNextTurnResumesAtAnswer(t *testing.T) {
	const n, chunk = 80, 64
	m := tinyHybridModel(t, "Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true), metal.F32)
	first := hybridPrompt(3) // 131 tokens: the prompt's last chunk boundary is 128, the answer's 192
	for _, tc := range []struct {
		warm    bool
		wantHit int
	}{{true, (len(first) + n) / chunk * chunk}, {false, len(first) / chunk * chunk}} {
		t.Run(fmt.Sprintf("warm=%v", tc.warm), func(t *testing.T) {
			e, err := New(Config{Model: m, Spec: "ngram", KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
				Scheduler: engine.Config{NumBlocks: 256, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 8,
					StateSnapshots: 16, StateSnapshotEvery: 256, WarmAnswers: tc.warm},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			answer := generate(t, e, first, n)
			waitIdle(t, e) // the answer warmed
			next := append(append(slices.Clone(first), answer.tokens...), 7, 8, 9, 10)
			r := generate(t, e, next, 8)
			want, wantLogprobs := greedyAloneLogprobs(t, m, metal.KVF32, next, 8)
			if fmt.Sprint(r.tokens) != fmt.Sprint(want) {
				t.Fatalf("next turn: %v, cold %v", r.tokens, want)
			}
			for j, lp := range r.logprobs {
				if math.Float32bits(lp) != math.Float32bits(wantLogprobs[j]) {
					t.Fatalf("next turn: token %d's logprob %v, cold %v", j, lp, wantLogprobs[j])
				}
			}
			if r.usage.CachedTokens != tc.wantHit {
				t.Errorf("next turn of %d tokens: %d cached, want %d", len(next), r.usage.CachedTokens, tc.wantHit)
			}
			waitIdle(t, e)
		})
	}
}
