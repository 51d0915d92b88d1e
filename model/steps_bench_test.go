package model_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// stepTimer is the CPU backend with the wall time of each kind of step
// added up: where a forward pass spends its time, step by step, with the
// real kernels and the real hand-offs between them.
type stepTimer struct {
	*cpu.Backend
	vocab int // the rows of the vocabulary projection
	spent map[string]time.Duration
}

func (s *stepTimer) time(step string, run func()) {
	start := time.Now()
	run()
	s.spent[step] += time.Since(start)
}

func (s *stepTimer) MatMul(out, x []float32, rows int, w *metal.Tensor) {
	step := "matmul"
	if w.Rows == s.vocab {
		step = "lmhead" // the vocabulary projection, reported on its own
	}
	s.time(step, func() { s.Backend.MatMul(out, x, rows, w) })
}

func (s *stepTimer) MatMuls(x []float32, rows int, ps []metal.Product) {
	s.time("matmul", func() { s.Backend.MatMuls(x, rows, ps) })
}

func (s *stepTimer) RMSNorm(out, x, weight []float32, dim int, eps float32) {
	s.time("rmsnorm", func() { s.Backend.RMSNorm(out, x, weight, dim, eps) })
}

func (s *stepTimer) RoPE(x []float32, pos []int32, heads, headDim int, invFreq []float32) {
	s.time("rope", func() { s.Backend.RoPE(x, pos, heads, headDim, invFreq) })
}

func (s *stepTimer) SiLUMul(gate, up []float32) {
	s.time("silu", func() { s.Backend.SiLUMul(gate, up) })
}

func (s *stepTimer) Add(dst, src []float32) { s.time("add", func() { s.Backend.Add(dst, src) }) }

func (s *stepTimer) WriteKV(kv *metal.KVLayer, k, v []float32, slots []int32) {
	s.time("writekv", func() { s.Backend.WriteKV(kv, k, v, slots) })
}

func (s *stepTimer) Attention(out, q []float32, kv *metal.KVLayer, rows []metal.AttnRow, heads, kvHeads, headDim int) {
	s.time("attention", func() { s.Backend.Attention(out, q, kv, rows, heads, kvHeads, headDim) })
}

// BenchmarkVerifySteps0_6BQ4 is BenchmarkVerifyRow0_6BQ4 (k = 0 and 4)
// with each kind of backend step's milliseconds per pass reported
// separately (the mean and the fastest pass), to see what a verify pass
// adds to a decode pass; "other" is what the model does between backend
// calls.
func BenchmarkVerifySteps0_6BQ4(b *testing.B) {
	m, be, done := openStepTimer(b)
	defer done()
	kv, blocks := benchCache(m, 512, benchKV(b))
	prompt := benchPrompt(256)
	if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: blocks, Logits: 1}}}, kv); err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{0, 4} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			batch := &model.Batch{Rows: []model.Row{{Start: 256, Tokens: make([]int32, k+1), Blocks: blocks, Logits: k + 1}}}
			reportSteps(b, m, be, kv, func(int) *model.Batch { return batch })
		})
	}
}

// BenchmarkBatchSteps0_6BQ4 is BenchmarkVerifySteps0_6BQ4 for decode
// steps of 1 and 16 sequences, one token each, at contexts of 128 to 255
// (the i-th pass at 128 + i mod 128; actors.BenchmarkForwardRows times
// such passes whole): where a batched decode step spends the time one
// row's step does not. Its cache is touched first (testmodel.TouchKV):
// before that, the page faults of decode positions moving into fresh pages
// were most of the 16-row step's cache writes, 8.1 ms a pass on average
// against a fastest 0.55.
func BenchmarkBatchSteps0_6BQ4(b *testing.B) {
	m, be, done := openStepTimer(b)
	defer done()
	const ctx, perSeq = 128, 256 / benchBlockSize
	for _, rows := range []int{1, 16} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			kv, batch, err := testmodel.DecodeBatch(m, rows, perSeq, benchBlockSize, ctx)
			if err != nil {
				b.Fatal(err)
			}
			reportSteps(b, m, be, kv, func(i int) *model.Batch {
				for r := range batch.Rows {
					batch.Rows[r].Start = ctx + i%ctx
				}
				return batch
			})
		})
	}
}

// openStepTimer is the random Qwen3-0.6B-shaped q4 model over a stepTimer.
func openStepTimer(b *testing.B) (model.Model, *stepTimer, func()) {
	src := openBenchPackage(b, metal.Q4)
	be := &stepTimer{Backend: benchBackend(b, 0), vocab: src.Config.VocabSize, spent: map[string]time.Duration{}}
	m, err := src.Build(be)
	if err != nil {
		b.Fatal(err)
	}
	return m, be, func() { be.Close(); src.Close() }
}

// reportSteps runs b.N forward passes, the i-th over pass(i), and reports
// each kind of step's milliseconds per pass: the mean, and the fastest pass
// (on shared cores a step is only ever slowed down, so the minimums are
// what the code costs).
func reportSteps(b *testing.B, m model.Model, be *stepTimer, kv *metal.KVCache, pass func(i int) *model.Batch) {
	total, fastest := map[string]time.Duration{}, map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(be.spent)
		start := time.Now()
		if _, err := m.Forward(pass(i), kv); err != nil {
			b.Fatal(err)
		}
		other := time.Since(start)
		for _, d := range be.spent {
			other -= d
		}
		be.spent["other"] = other
		for step, d := range be.spent {
			total[step] += d
			if f, ok := fastest[step]; !ok || d < f {
				fastest[step] = d
			}
		}
	}
	for step, d := range total {
		b.ReportMetric(d.Seconds()*1e3/float64(b.N), step+"-ms")
		b.ReportMetric(fastest[step].Seconds()*1e3, step+"-min-ms")
	}
}

// BenchmarkPrefillSteps0_6BQ4 is BenchmarkVerifySteps0_6BQ4 for a prompt
// chunk of 512 tokens at the start of a sequence and 2048 tokens in: how
// a chunk's time splits between its matrix products, which cost the same
// anywhere, and its attention, which grows with the context.
func BenchmarkPrefillSteps0_6BQ4(b *testing.B) {
	m, be, done := openStepTimer(b)
	defer done()
	for _, start := range []int{0, 2048} {
		b.Run(fmt.Sprintf("start=%d", start), func(b *testing.B) {
			kv, blocks := benchCache(m, start+512, benchKV(b))
			testmodel.TouchKV(kv)
			batch := &model.Batch{Rows: []model.Row{{Start: start, Tokens: benchPrompt(512), Blocks: blocks, Logits: 1}}}
			reportSteps(b, m, be, kv, func(int) *model.Batch { return batch })
		})
	}
}
