package actors

import (
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// BenchmarkHybridVerifyState weighs the two ways a hybrid model's verify
// pass of k+1 = 5 tokens can leave its linear layers' state at the
// accepted position, on a slice of a Qwen3.5-0.8B-shaped model (hidden
// 1024, 16 Gated DeltaNet heads of 128, three linear and two attention
// layers) after a 256-token prompt: save the state in a spare slot before
// the pass and, when drafts are rejected, recompute the accepted tokens in
// the next step's row (what the scheduler does), or keep every verify
// position's state (k+1 more slots a sequence, a state written per
// position, emulated by k+1 state copies, which write what the kernel
// would and read the state once more). Each iteration times a verify
// pass, a save (one state copy), the next step's row with two accepted
// tokens recomputed before its own and 4 drafts, and the k+1 copies;
// reported per verify pass: save/verify, replay/verify (the recomputed
// tokens' extra time), perposition/verify.
//
// On the shared 2-core test machine (-benchtime 20x, bf16 weights, a
// verify pass 900 ms): save/verify 0.0027, replay/verify 0.112,
// perposition/verify 0.0156. The save costs a sixth of keeping every
// position and holds one slot a sequence instead of k+1; a rejection's
// recomputed tokens cost more than both here, where the pass is
// compute-bound, and little where decoding is bound by reading the
// weights, as on a quiet machine, since they ride in a row that runs
// anyway.
func BenchmarkHybridVerifyState(b *testing.B) {
	const prompt, k = 256, 4
	cfg := hybridref.Wide()
	cfg.HiddenSize, cfg.IntermediateSize, cfg.NumAttentionHeads = 1024, 3584, 8
	cfg.Hybrid.LinearNumKeyHeads, cfg.Hybrid.LinearNumValueHeads = 16, 16
	m := tinyHybridModel(b, "Qwen3_5ForConditionalGeneration", cfg, metal.BF16)
	blocks := make([]int32, (prompt+64)/16)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	kv := model.NewCache(m, len(blocks), 16, 2+k+1, metal.KVF32) // the sequence's slot, its spare, k+1 positions'
	toks := hybridPrompt(3)
	for len(toks) < prompt+k+3 {
		toks = append(toks, hybridPrompt(len(toks))...)
	}
	forward := func(start, n, logits int) time.Duration {
		t0 := time.Now()
		if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Start: start, Tokens: toks[start : start+n], Blocks: blocks, Logits: logits}}}, kv); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	copies := func(cs []metal.StateCopy) time.Duration {
		t0 := time.Now()
		if err := metal.CopyStates(kv.States, cs); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	save := []metal.StateCopy{{Src: 0, Dst: 1}}
	var perPosition []metal.StateCopy
	for j := range k + 1 {
		perPosition = append(perPosition, metal.StateCopy{Src: 0, Dst: int32(2 + j)})
	}
	forward(0, prompt, 1)
	var verify, saved, replay, perPos time.Duration
	b.ResetTimer()
	for range b.N {
		// The state moves on with each pass; a row's time does not depend
		// on what its state holds.
		verify += forward(prompt, k+1, k+1)
		saved += copies(save)
		replay += forward(prompt, 2+1+k, k+1)
		perPos += copies(perPosition)
	}
	v := float64(verify)
	b.ReportMetric(v/float64(b.N)/1e6, "verify-ms")
	b.ReportMetric(float64(saved)/v, "save/verify")
	b.ReportMetric(float64(replay-verify)/v, "replay/verify")
	b.ReportMetric(float64(perPos)/v, "perposition/verify")
}
