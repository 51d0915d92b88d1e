package actors

import (
	"io"
	"log/slog"
	"testing"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model/hybridref"
)

// BenchmarkHybridResentPrompt is an agent resending its conversation to
// a hybrid model (Qwen3.5-shaped heads, hybridref.Wide): a 2048-token
// prompt plus one new token, answered with one token, cold (a prompt
// never seen) or with the prompt's state snapshot cached (the hit
// resumes at 2048 and computes one position). The time per request is
// about its time to first token; compare cached against cold.
func BenchmarkHybridResentPrompt(b *testing.B) {
	const length = 2048
	cfg := hybridref.Wide()
	m := tinyHybridModel(b, "Qwen3_5ForConditionalGeneration", cfg, metal.BF16)
	e, err := New(Config{Model: m, Spec: "off", KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: 2048, BlockSize: 16, MaxBatchTokens: 512, MaxRunning: 4, StateSnapshots: 16},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	conversation := func(seed int) []int32 {
		p := make([]int32, length+1)
		for j := range p {
			p[j] = int32((seed*7919 + j*31 + j*j) % 160)
		}
		return p
	}
	for _, cached := range []bool{false, true} {
		name := "cold"
		if cached {
			name = "cached"
			generate(b, e, conversation(0)[:length], 1)
		}
		b.Run(name, func(b *testing.B) {
			for i := range b.N {
				p := conversation(i + 1)
				if cached {
					p = conversation(0)
					p[length] = int32(i % 160)
				}
				if r := generate(b, e, p, 1); cached && r.usage.CachedTokens != length {
					b.Fatalf("%d tokens cached, want %d", r.usage.CachedTokens, length)
				}
			}
		})
	}
}
