package actors

import (
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model/hybridref"
)

// BenchmarkHybridSpeculation generates 96 greedy tokens after a 64-token
// prompt on a hybrid model (Qwen3.5-shaped heads, hybridref.Wide), alone,
// without speculation and with proposals of 4 tokens that are all right
// (an oracle of the answer: speculation's best case), right up to the
// second (every verify pass keeps one draft, so its state goes back to
// the save and the next row recomputes two tokens) or wrong from the first
// (keeps none). Compare each one's time per request against off's.
// DraftCost is pinned so that k stays 4 even where adaptive k would back
// off.
//
// On the shared 2-core test machine (-benchtime 3x, one run): off 417 ms,
// all right 93 ms (0.22), second wrong 323 ms (0.77), first wrong 814 ms
// (1.95: six tokens a row, the recomputed one and four drafts beside the
// new one, for each token).
func BenchmarkHybridSpeculation(b *testing.B) {
	const n = 96
	m := tinyHybridModel(b, "Qwen3_5ForConditionalGeneration", hybridref.Wide(), metal.BF16)
	newEngine := func(proposer spec.Proposer) *Engine {
		cfg := Config{Model: m, Spec: "off", KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
			Scheduler: engine.Config{NumBlocks: 64, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 4},
			Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))}
		if proposer != nil {
			cfg.Spec, cfg.Proposer = "ngram", proposer
			cfg.Scheduler.MaxDraft, cfg.Scheduler.DraftCost = 4, 0.01 // always 4
		}
		e, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(e.Close)
		return e
	}
	want := map[int][]int32{0: generate(b, newEngine(nil), hybridPrompt(0), n).tokens}
	for _, tc := range []struct {
		name     string
		proposer spec.Proposer
	}{
		{"off", nil},
		{"all right", oracleProposer{want: want, wrong: func(int, int) int { return 4 }}},
		{"second wrong", oracleProposer{want: want, wrong: func(int, int) int { return 1 }}},
		{"first wrong", oracleProposer{want: want, wrong: func(int, int) int { return 0 }}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newEngine(tc.proposer)
			for range b.N {
				if r := generate(b, e, hybridPrompt(0), n); fmt.Sprint(r.tokens) != fmt.Sprint(want[0]) {
					b.Fatalf("%v, want %v", r.tokens, want[0])
				}
			}
		})
	}
}
