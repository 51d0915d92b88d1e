package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model/hybridref"
)

// BenchmarkHybridNextTurn is an agent's next turn on a hybrid model
// (Qwen3.5-shaped heads, hybridref.Wide): a 1000-token prompt answered
// with 200 tokens, then the prompt, the answer and a 16-token message
// sent back, whose time to first token is timed, with the scheduler
// warming finished answers (engine.Config.WarmAnswers: the turn resumes
// at the answer's last 64-token boundary, 1152) or not (at the prompt's,
// 960). Each iteration is a new conversation; the warming runs between
// the turns, as an agent's tools would.
//
// On the shared 2-core test machine (-benchtime 3x, one run): 219 ms with
// 960 tokens cached, 85 ms with 1152 (warm/cold 0.39); before snapshots at
// a prompt's last chunk boundary the turn resumed at 512, the last
// 512-token interval.
func BenchmarkHybridNextTurn(b *testing.B) {
	const prompt, answer = 1000, 200
	m := tinyHybridModel(b, "Qwen3_5ForConditionalGeneration", hybridref.Wide(), metal.BF16)
	for _, warm := range []bool{false, true} {
		b.Run(fmt.Sprintf("warm=%v", warm), func(b *testing.B) {
			e, err := New(Config{Model: m, Spec: "off", KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
				Scheduler: engine.Config{NumBlocks: 1024, BlockSize: 16, MaxBatchTokens: 512, MaxRunning: 4, StateSnapshots: 16, WarmAnswers: warm},
				Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(e.Close)
			var ttft time.Duration
			cached := 0
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				p := make([]int32, prompt)
				for j := range p {
					p[j] = int32((i*7919 + j*31 + j*j) % 160)
				}
				first := generate(b, e, p, answer)
				for idle := false; !idle; time.Sleep(time.Millisecond) { // the answer warmed, or not
					if idle, err = e.CheckPool(); err != nil {
						b.Fatal(err)
					}
				}
				next := append(slices.Concat(p, first.tokens), p[:16]...)
				b.StartTimer()
				t0 := time.Now()
				ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: next, MaxTokens: 1, Sampling: sample.Params{Logprobs: -1}})
				if err != nil {
					b.Fatal(err)
				}
				r := collect(ch)
				ttft += time.Since(t0)
				if r.err != nil {
					b.Fatal(r.err)
				}
				cached = r.usage.CachedTokens
			}
			b.ReportMetric(float64(ttft.Milliseconds())/float64(b.N), "ttft-ms")
			b.ReportMetric(float64(cached), "cached-tokens")
		})
	}
}
