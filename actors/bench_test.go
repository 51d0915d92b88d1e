package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// benchModel is the random Qwen3-0.6B-shaped q4 package (built once into
// the temp directory and cached).
func benchModel(b *testing.B) model.Model {
	b.Helper()
	dir, err := testmodel.Package(os.TempDir(), testmodel.Qwen3_0_6B(), metal.Q4)
	if err != nil {
		b.Fatal(err)
	}
	src, err := model.Open(dir, model.OpenOptions{SkipChecksums: true})
	if err != nil {
		b.Fatal(err)
	}
	be := cpu.New(0)
	b.Cleanup(func() { be.Close(); src.Close() })
	m, err := src.Build(be)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func benchEngine(b *testing.B, m model.Model, specName string, p spec.Proposer) *Engine {
	e, err := New(Config{Model: m, Spec: specName, Proposer: p, NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: 2048, BlockSize: 16, MaxBatchTokens: 512, MaxRunning: 64},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	return e
}

func runOne(b *testing.B, e *Engine, prompt []int32, n int) ([]int32, time.Duration) {
	start := time.Now()
	ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt, MaxTokens: n, Sampling: sample.Params{Logprobs: -1}})
	if err != nil {
		b.Fatal(err)
	}
	var ttft time.Duration
	var toks []int32
	for ev := range ch {
		if ev.Err != nil {
			b.Fatal(ev.Err)
		}
		if ttft == 0 && len(ev.Tokens) > 0 {
			ttft = time.Since(start)
		}
		toks = append(toks, ev.Tokens...)
	}
	return toks, ttft
}

// BenchmarkConcurrentDecode reports aggregate decode tokens/s with 1, 4, 16
// and 64 requests running at once (16 new tokens each, short prompts).
func BenchmarkConcurrentDecode(b *testing.B) {
	m := benchModel(b)
	for _, conc := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			e := benchEngine(b, m, "off", nil)
			const n = 16
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for j := 0; j < conc; j++ {
					wg.Add(1)
					go func(j int) {
						defer wg.Done()
						runOne(b, e, promptFor(i*conc+j), n)
					}(j)
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*conc*n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// replay proposes, for each sequence, the continuation an earlier greedy
// run produced; with corrupt it changes every second proposed token, so
// that about half the drafts are rejected.
type replay struct {
	want    map[int32][]int32 // first prompt token → prompt + greedy output
	corrupt bool
	useless bool // every proposed token wrong: adaptive k must back off
}

func (r *replay) Propose(wants []spec.Want) error {
	for i := range wants {
		w := &wants[i]
		full := r.want[w.Tokens[0]]
		for j := len(w.Tokens); j < len(full) && len(w.Draft) < w.K; j++ {
			t := full[j]
			if r.useless || r.corrupt && (j%2 == 1) {
				t++
			}
			w.Draft = append(w.Draft, t)
		}
	}
	return nil
}

// BenchmarkSpeculativeReplay compares single-stream decoding without
// speculation, with a replay draft that is always right (acceptance 1,
// zero draft cost), one right about half the time, and one always wrong
// (adaptive k should keep it close to no speculation).
func BenchmarkSpeculativeReplay(b *testing.B) {
	m := benchModel(b)
	prompt := []int32{1000, 2000, 3000, 4000}
	const n = 32
	ref, _ := runOne(b, benchEngine(b, m, "off", nil), prompt, n)
	full := append(append([]int32{}, prompt...), ref...)
	for _, tc := range []struct {
		name string
		p    spec.Proposer
		spec string
	}{
		{"off", nil, "off"},
		{"replay", &replay{want: map[int32][]int32{prompt[0]: full}}, ""},
		{"replay-half", &replay{want: map[int32][]int32{prompt[0]: full}, corrupt: true}, ""},
		{"useless", &replay{want: map[int32][]int32{prompt[0]: full}, useless: true}, ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := benchEngine(b, m, tc.spec, tc.p)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got, _ := runOne(b, e, prompt, n)
				if fmt.Sprint(got) != fmt.Sprint(ref) {
					b.Fatalf("speculation changed greedy output")
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkPrefixCacheTTFT compares time to first token for a resent
// conversation whose prefix is cached with the cold first send. The prompt
// length is SPLASH_BENCH_PROMPT tokens (default 1024; the issue asks 8K,
// which takes minutes cold on the portable kernels).
func BenchmarkPrefixCacheTTFT(b *testing.B) {
	m := benchModel(b)
	n := 1024
	if v := os.Getenv("SPLASH_BENCH_PROMPT"); v != "" {
		fmt.Sscan(v, &n)
	}
	prompt := make([]int32, n)
	for i := range prompt {
		prompt[i] = int32(1000 + i%5000)
	}
	for i := 0; i < b.N; i++ {
		e := benchEngine(b, m, "off", nil)
		_, cold := runOne(b, e, prompt, 1)
		resent := append(append([]int32{}, prompt...), 42, 43) // the next turn adds a little
		_, warm := runOne(b, e, resent, 1)
		b.ReportMetric(float64(cold.Milliseconds()), "cold-ttft-ms")
		b.ReportMetric(float64(warm.Milliseconds()), "cached-ttft-ms")
		b.ReportMetric(float64(warm)/float64(cold), "cached/cold")
	}
}
