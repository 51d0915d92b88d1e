package model_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// qwen35_0_8B is Qwen3.5-0.8B's text model: 24 layers, three Gated
// DeltaNet layers (16 key and 16 value heads of 128) to each gated
// attention layer (8 heads of 256, 2 KV heads), a dense SwiGLU MLP of
// 3584, the 248320-token embedding tied to the output.
func qwen35_0_8B() *model.Config {
	c := hybridref.Tiny("qwen3_5", true)
	c.Architecture = "Qwen3_5ForConditionalGeneration"
	c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers, c.VocabSize = 1024, 3584, 24, 248320
	c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, c.RopeTheta = 8, 2, 256, 1e7
	y := c.Hybrid
	y.LayerTypes = hybridLayerTypes(24)
	y.PartialRotaryFactor = 0.25
	y.LinearNumKeyHeads, y.LinearNumValueHeads, y.LinearKeyHeadDim, y.LinearValueHeadDim = 16, 16, 128, 128
	return c
}

// qwen35MoE35BA3BScaled is Qwen3.5-35B-A3B's text model scaled down to
// fit a benchmark: its layers' shapes (hidden 2048; Gated DeltaNet of 16
// key and 32 value heads of 128; attention of 16 heads of 256, 2 KV
// heads; experts of 512 with a shared expert of 512, top 8), but 4
// layers instead of 40, 64 experts instead of 256 and a vocabulary of
// 32768 instead of 248320, so the output projection's share of the
// active weights stays near the real model's.
func qwen35MoE35BA3BScaled() *model.Config {
	c := hybridref.TinyMoE("qwen3_5_moe")
	c.Architecture = "Qwen3_5MoeForConditionalGeneration"
	c.HiddenSize, c.NumHiddenLayers, c.VocabSize = 2048, 4, 32768
	c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, c.RopeTheta = 16, 2, 256, 1e7
	y := c.Hybrid
	y.LayerTypes = hybridLayerTypes(4)
	y.PartialRotaryFactor = 0.25
	y.LinearNumKeyHeads, y.LinearNumValueHeads, y.LinearKeyHeadDim, y.LinearValueHeadDim = 16, 32, 128, 128
	y.NumExperts, y.NumExpertsPerTok, y.MoEIntermediateSize, y.SharedExpertIntermediateSize = 64, 8, 512, 512
	return c
}

// hybridLayerTypes is n layers of three linear to one full attention.
func hybridLayerTypes(n int) []string {
	t := make([]string, n)
	for i := range t {
		t[i] = model.LayerLinearAttention
		if i%4 == 3 {
			t[i] = model.LayerFullAttention
		}
	}
	return t
}

// readCounter is the CPU backend that, while on, adds up the bytes of
// the distinct weight matrices the products read: what a forward pass
// must stream from memory (with the state and the cache) at least once.
type readCounter struct {
	*cpu.Backend
	on    bool
	seen  map[*metal.Tensor]bool
	bytes int64
}

func (c *readCounter) count(w *metal.Tensor) {
	if c.on && !c.seen[w] {
		c.seen[w] = true
		c.bytes += int64(len(w.Data))
	}
}

func (c *readCounter) MatMul(out, x []float32, rows int, w *metal.Tensor) {
	c.count(w)
	c.Backend.MatMul(out, x, rows, w)
}

func (c *readCounter) MatMuls(x []float32, rows int, ps []metal.Product) {
	for _, p := range ps {
		c.count(p.W)
	}
	c.Backend.MatMuls(x, rows, ps)
}

// weightBytes runs pass once with the counter on and returns the weight
// bytes it read.
func (c *readCounter) weightBytes(b *testing.B, pass func() error) int64 {
	c.on, c.seen, c.bytes = true, map[*metal.Tensor]bool{}, 0
	defer func() { c.on = false }()
	if err := pass(); err != nil {
		b.Fatal(err)
	}
	return c.bytes
}

// openHybridBench builds a random q4 model of cfg in memory on the CPU
// backend with SPLASH_KERNELS's kernels (benchBackend).
func openHybridBench(b *testing.B, cfg *model.Config) (*model.HybridModel, *readCounter, model.Tensors) {
	b.Helper()
	start := time.Now()
	be := &readCounter{Backend: benchBackend(b, 0)}
	b.Cleanup(be.Close)
	w := hybridref.RandomTensors(cfg, metal.Q4, 3)
	m, err := model.NewHybridModel(cfg, w, be)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %.1f s to draw and pack", cfg.Architecture, time.Since(start).Seconds())
	return m, be, w
}

// hybridDecode is a batch of rows sequences decoding one token each, and
// their states, each after a prompt of ctx tokens.
type hybridDecode struct {
	m      *model.HybridModel
	kv     *metal.KVCache
	batch  model.Batch
	states []*model.HybridState
}

func newHybridDecode(b *testing.B, m *model.HybridModel, rows, ctx, steps int) *hybridDecode {
	b.Helper()
	perSeq := (ctx + steps + benchBlockSize) / benchBlockSize
	d := &hybridDecode{m: m, kv: m.NewKVCache(rows*perSeq, benchBlockSize, benchKV(b))}
	var prompts model.Batch
	for r := range rows {
		blocks := identityBlocks(perSeq)
		for i := range blocks {
			blocks[i] += int32(r * perSeq)
		}
		prompt := benchPrompt(ctx)
		for i := range prompt {
			prompt[i] += int32(r * 7)
		}
		prompts.Rows = append(prompts.Rows, model.Row{Tokens: prompt, Blocks: blocks, Logits: 1})
		d.states = append(d.states, m.NewState())
		d.batch.Rows = append(d.batch.Rows, model.Row{Start: ctx, Tokens: []int32{0}, Blocks: blocks, Logits: 1})
	}
	if _, err := m.ForwardBatch(&prompts, d.states, d.kv); err != nil {
		b.Fatal(err)
	}
	return d
}

// step runs one decode step: every row's next token.
func (d *hybridDecode) step() error {
	for r := range d.batch.Rows {
		d.batch.Rows[r].Start = d.states[r].Pos
		d.batch.Rows[r].Tokens[0] = int32(100 + (d.states[r].Pos*31+r)%5000)
	}
	_, err := d.m.ForwardBatch(&d.batch, d.states, d.kv)
	return err
}

// decodeBound times b.N decode steps of rows sequences, each after a
// prompt of ctx tokens, against the bandwidth bound: the bytes a step must
// move (the weights its products read, counted in one step, each row's
// state read and written, the attention layers' cached keys and values
// read) over the read bandwidth, measured by reading as many bytes after
// each step (cpu.ReadProbe), so both rates are means over the same time.
func decodeBound(b *testing.B, m *model.HybridModel, be *readCounter, rows, ctx int) {
	d := newHybridDecode(b, m, rows, ctx, b.N+1)
	weights := be.weightBytes(b, d.step)
	spec := m.CacheSpec()
	state := 2 * int64(rows) * spec.StateBytes()
	kvBytes := int64(rows) * int64(ctx+b.N/2) * spec.KVBytesPerToken(benchKV(b))
	perStep := weights + state + kvBytes
	steps, bw := probedSteps(b, be.NewReadProbe(256<<20), perStep, func(int) error { return d.step() })
	sps := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(sps*float64(rows), "tokens/s")
	b.ReportMetric(float64(rows)/steps[b.N/10].Seconds(), "p10-tokens/s")
	b.ReportMetric(float64(weights)/1e6, "weightMB/step")
	b.ReportMetric(float64(state)/1e6, "stateMB/step")
	b.ReportMetric(bw/1e9, "probeGB/s")
	b.ReportMetric(sps*float64(perStep)/bw, "frac")
	b.ReportMetric(float64(perStep)/float64(steps[b.N/10])*1e9/bw, "p10frac")
}

// matrixParams is the number of weights in the products of one token of
// a prompt: every matrix of w but the embedding, the output projection (a
// prompt chunk needs one row of logits) and the convolutions; two
// floating-point operations each, as Config.LayerWeights counts a dense
// model's.
func matrixParams(w model.Tensors) int64 {
	var n int64
	for _, name := range w.Names() {
		if strings.HasSuffix(name, "embed_tokens.weight") || name == "lm_head.weight" || strings.Contains(name, "conv1d") {
			continue
		}
		t, err := w.Tensor(name)
		if err != nil {
			panic(err)
		}
		if t.Rows > 1 {
			n += int64(t.Rows) * int64(t.Cols)
		}
	}
	return n
}

// BenchmarkHybrid0_8BQ4 measures a random Qwen3.5-0.8B-shaped hybrid with
// q4 weights, built in memory (about a minute):
//
//   - decode: one sequence's decode steps after a 128-token prompt, against
//     the bandwidth bound (decodeBound); frac is the fraction of the bound
//     reached (p10frac for the 10th-percentile step), stateMB/step the
//     state read and written, stateMiB/seq the state a running sequence
//     keeps (CacheSpec.StateBytes).
//   - prefill: a 512-token prompt against the same prompt on the random
//     Qwen3-0.6B-shaped dense model (BenchmarkPrefill0_6BQ4's), passes
//     taking turns b.N times, fastest of each: hybrid and dense tokens/s,
//     their products' operations per token (2 per matrix weight:
//     matrixParams, Config.LayerWeights), and perflop, the hybrid's
//     tokens/s per operation over the dense model's: below 1 by what the
//     hybrid's delta rule, convolution and gates cost beyond its products.
//     A pair of passes takes 10-20 s on two cores: run it -benchtime 3x
//     to 5x, the decode 20x to 30x.
func BenchmarkHybrid0_8BQ4(b *testing.B) {
	m, be, w := openHybridBench(b, qwen35_0_8B())
	b.Run("decode", func(b *testing.B) {
		decodeBound(b, m, be, 1, 128)
		b.ReportMetric(float64(m.CacheSpec().StateBytes())/(1<<20), "stateMiB/seq")
	})
	b.Run("prefill", func(b *testing.B) {
		const n = 512
		dense, done := openBenchModel(b, metal.Q4, 0)
		defer done()
		dkv, dblocks := benchCache(dense, n, benchKV(b))
		hkv, hblocks := benchCache(m, n, benchKV(b))
		prompt := benchPrompt(n)
		st := m.NewState()
		passes := map[string]func() error{
			"dense": func() error {
				_, err := dense.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: dblocks, Logits: 1}}}, dkv)
				return err
			},
			"hybrid": func() error {
				st.Pos = 0
				for i := range st.Conv {
					clear(st.Conv[i])
					clear(st.Delta[i])
				}
				_, err := m.ForwardState(model.Row{Tokens: prompt, Blocks: hblocks, Logits: 1}, st, hkv)
				return err
			},
		}
		best := map[string]time.Duration{}
		b.ResetTimer()
		for range b.N {
			for _, name := range []string{"dense", "hybrid"} {
				start := time.Now()
				if err := passes[name](); err != nil {
					b.Fatal(err)
				}
				if d := time.Since(start); best[name] == 0 || d < best[name] {
					best[name] = d
				}
			}
		}
		b.StopTimer()
		dflops, hflops := 2*float64(dense.Config().LayerWeights()), 2*float64(matrixParams(w))
		dtps, htps := n/best["dense"].Seconds(), n/best["hybrid"].Seconds()
		b.ReportMetric(htps, "hybrid-tokens/s")
		b.ReportMetric(dtps, "dense-tokens/s")
		b.ReportMetric(hflops/1e9, "hybrid-GFLOP/token")
		b.ReportMetric(dflops/1e9, "dense-GFLOP/token")
		b.ReportMetric(htps*hflops/(dtps*dflops), "perflop")
	})
}

// BenchmarkHybridMoE35BA3BQ4 measures the scaled-down Qwen3.5-35B-A3B
// (qwen35MoE35BA3BScaled) with q4 weights:
//
//   - decode/rows=1 and rows=16: decode steps of 1 and 16 sequences,
//     each after a 32-token prompt, against the bandwidth bound of the weights they read (decodeBound:
//     the products counted in one step, so the experts the step's tokens
//     were routed to, each once).
//   - block/rows=16: the mixture-of-experts block of the first layer on
//     16 rows, grouped (each active expert once over the rows routed to
//     it) and per token (each row alone, its experts read again), taking
//     turns b.N times: the fastest of each and per-token/grouped.
func BenchmarkHybridMoE35BA3BQ4(b *testing.B) {
	cfg := qwen35MoE35BA3BScaled()
	m, be, _ := openHybridBench(b, cfg)
	for _, rows := range []int{1, 16} {
		b.Run(fmt.Sprintf("decode/rows=%d", rows), func(b *testing.B) {
			decodeBound(b, m, be, rows, 32)
			b.ReportMetric(float64(m.CacheSpec().StateBytes())/(1<<20), "stateMiB/seq")
		})
	}
	b.Run("block/rows=16", func(b *testing.B) {
		const rows = 16
		h := make([]float32, rows*cfg.HiddenSize)
		for i := range h {
			h[i] = float32((i*7919)%2001-1000) / 1000
		}
		x := make([]float32, len(h))
		best := map[bool]time.Duration{}
		b.ResetTimer()
		for range b.N {
			for _, perToken := range []bool{false, true} {
				copy(x, h)
				start := time.Now()
				model.MoEBlock(m, 0, x, rows, perToken)
				if d := time.Since(start); best[perToken] == 0 || d < best[perToken] {
					best[perToken] = d
				}
			}
		}
		b.ReportMetric(best[false].Seconds()*1e3, "grouped-min-ms")
		b.ReportMetric(best[true].Seconds()*1e3, "pertoken-min-ms")
		b.ReportMetric(best[true].Seconds()/best[false].Seconds(), "pertoken/grouped")
	})
}
