package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

func tinyConfig(arch string, tied bool) *Config {
	c := &Config{
		Architecture: arch, HiddenSize: 64, IntermediateSize: 96, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 16, VocabSize: 96,
		RMSNormEps: 1e-6, RopeTheta: 10000, MaxPositionEmbeddings: 4096, TieWordEmbeddings: tied,
	}
	if arch == "LlamaForCausalLM" {
		c.HeadDim = 32
		c.NumAttentionHeads, c.NumKeyValueHeads = 2, 1
		c.RopeTheta = 500000
		c.RopeScaling = &RopeScaling{RopeType: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 64}
	}
	return c
}

func buildModel(t testing.TB, cfg *Config, d metal.DType, be metal.Backend) (Model, refWeights) {
	t.Helper()
	qk := cfg.Architecture == "Qwen3ForCausalLM"
	mt, rw := randomModel(cfg, d, 7, qk)
	m, err := Architectures().Build(cfg, mt, be)
	if err != nil {
		t.Fatal(err)
	}
	return m, rw
}

func randomTokens(n, vocab int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(rng.IntN(vocab))
	}
	return out
}

// shuffledBlocks returns a block table of n blocks drawn from a pool of
// total, in a scrambled order, so consecutive positions cross non-adjacent
// pages.
func shuffledBlocks(n, total int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	perm := rng.Perm(total)
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(perm[i])
	}
	return out
}

func relErr(got []float32, want []float64) float64 {
	maxDiff, maxRef := 0.0, 0.0
	for i := range want {
		maxDiff = math.Max(maxDiff, math.Abs(float64(got[i])-want[i]))
		maxRef = math.Max(maxRef, math.Abs(want[i]))
	}
	return maxDiff / maxRef
}

// TestForwardMatchesReference runs a sequence through the paged model in the
// shapes the scheduler uses — prompt chunks, single decode tokens and a
// multi-token verify row — and compares every logit vector with the float64
// reference, whose keys and values are rounded as the cache's type rounds
// them. (Against a reference without the q8 rounding, a q8 cache's logits
// were 1-4% of the largest off on this random model.)
func TestForwardMatchesReference(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		arch   string
		tied   bool
		kvType metal.KVType
		tol    float64
	}{
		{"Qwen3ForCausalLM", true, metal.KVF16, 1e-4},
		{"Qwen3ForCausalLM", false, metal.KVF16, 1e-4},
		{"LlamaForCausalLM", false, metal.KVF16, 1e-4},
		{"LlamaForCausalLM", true, metal.KVF16, 1e-4},
		{"LlamaForCausalLM", false, metal.KVQ8, 1e-4}, // heads of 32
		{"LlamaForCausalLM", false, metal.KVBF16, 1e-4},
		// Against the exact reference: nothing rounded.
		{"Qwen3ForCausalLM", true, metal.KVF32, 1e-4},
		{"Qwen3ForCausalLM", false, metal.KVF32, 1e-4},
		{"LlamaForCausalLM", false, metal.KVF32, 1e-4},
		{"LlamaForCausalLM", true, metal.KVF32, 1e-4},
	} {
		t.Run(tc.arch+"/"+tc.kvType.String(), func(t *testing.T) {
			cfg := tinyConfig(tc.arch, tc.tied)
			m, rw := buildModel(t, cfg, metal.F32, be)
			blockSize := 4
			if tc.kvType == metal.KVBF16 {
				blockSize = metal.BF16Positions
			}
			tokens := randomTokens(23, cfg.VocabSize, 3)
			want := refForward(cfg, rw, cfg.Architecture == "Qwen3ForCausalLM", tokens, tc.kvType)
			kv := m.NewKVCache(16, blockSize, tc.kvType)
			blocks := shuffledBlocks(6, 16, 5)
			// steps: [start, end, logits]; positions start..end-1 are fed.
			steps := []struct{ start, end, logits int }{
				{0, 7, 0},   // first prompt chunk, no logits
				{7, 13, 6},  // second chunk, all logits (prompt logprobs)
				{13, 14, 1}, // decode
				{14, 15, 1}, // decode across a page boundary (pos 15 ends block 3)
				{15, 19, 4}, // verify row of 4 tokens
				{19, 23, 4}, // another verify row ending mid-page
			}
			worst := 0.0
			for _, s := range steps {
				b := &Batch{Rows: []Row{{Start: s.start, Tokens: tokens[s.start:s.end], Blocks: blocks, Logits: s.logits}}}
				logits, err := m.Forward(b, kv)
				if err != nil {
					t.Fatal(err)
				}
				if len(logits) != s.logits*cfg.VocabSize {
					t.Fatalf("step %v: got %d logits, want %d", s, len(logits), s.logits*cfg.VocabSize)
				}
				for j := 0; j < s.logits; j++ {
					pos := s.end - s.logits + j
					got := logits[j*cfg.VocabSize : (j+1)*cfg.VocabSize]
					e := relErr(got, want[pos])
					if e > tc.tol {
						t.Errorf("step %v position %d: relative error %.3g > %g", s, pos, e, tc.tol)
					}
					worst = max(worst, e)
				}
			}
			t.Logf("largest relative error %.3g", worst)
		})
	}
}

// TestForwardBatchInvariant checks that a row's logits are bit-identical
// alone and beside other rows of different kinds, and whether its cache
// pages are contiguous or scattered.
func TestForwardBatchInvariant(t *testing.T) {
	for _, d := range []metal.DType{metal.F32, metal.BF16, metal.Q8, metal.Q4} {
		t.Run(d.String(), func(t *testing.T) {
			be1, be2 := cpu.New(1), cpu.New(2)
			defer be1.Close()
			defer be2.Close()
			cfg := tinyConfig("Qwen3ForCausalLM", true)
			alone, _ := buildModel(t, cfg, d, be1)
			batched, _ := buildModel(t, cfg, d, be2)
			const bs = 4
			a := randomTokens(13, cfg.VocabSize, 11)
			other := randomTokens(20, cfg.VocabSize, 12)

			// alone, contiguous blocks, one thread: prefill 10, verify 3
			kv1 := alone.NewKVCache(8, bs, metal.KVF16)
			contig := []int32{0, 1, 2, 3}
			if _, err := alone.Forward(&Batch{Rows: []Row{{Start: 0, Tokens: a[:10], Blocks: contig}}}, kv1); err != nil {
				t.Fatal(err)
			}
			l1, err := alone.Forward(&Batch{Rows: []Row{{Start: 10, Tokens: a[10:], Blocks: contig, Logits: 3}}}, kv1)
			if err != nil {
				t.Fatal(err)
			}
			ref := append([]float32(nil), l1...)

			// batched, scattered blocks, two threads, beside a prefill row and a decode row
			kv2 := batched.NewKVCache(16, bs, metal.KVF16)
			pa, pb, pc := []int32{9, 2, 14, 5}, []int32{0, 1, 3, 4, 6}, []int32{7, 8, 10}
			if _, err := batched.Forward(&Batch{Rows: []Row{
				{Start: 0, Tokens: other[:9], Blocks: pc},
				{Start: 0, Tokens: a[:10], Blocks: pa},
			}}, kv2); err != nil {
				t.Fatal(err)
			}
			l2, err := batched.Forward(&Batch{Rows: []Row{
				{Start: 0, Tokens: other, Blocks: pb, Logits: 2},
				{Start: 10, Tokens: a[10:], Blocks: pa, Logits: 3},
				{Start: 9, Tokens: other[9:10], Blocks: pc, Logits: 1},
			}}, kv2)
			if err != nil {
				t.Fatal(err)
			}
			got := l2[2*cfg.VocabSize : 5*cfg.VocabSize]
			for i := range ref {
				if math.Float32bits(ref[i]) != math.Float32bits(got[i]) {
					t.Fatalf("logit %d differs: alone %v, batched %v", i, ref[i], got[i])
				}
			}
		})
	}
}

func TestForwardRejectsBadBatches(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	cfg := tinyConfig("Qwen3ForCausalLM", true)
	m, _ := buildModel(t, cfg, metal.F32, be)
	kv := m.NewKVCache(4, 4, metal.KVF16)
	for _, tc := range []struct {
		name string
		row  Row
	}{
		{"empty row", Row{Blocks: []int32{0}}},
		{"token beyond vocab", Row{Tokens: []int32{int32(cfg.VocabSize)}, Blocks: []int32{0}}},
		{"negative token", Row{Tokens: []int32{-1}, Blocks: []int32{0}}},
		{"table too short", Row{Start: 3, Tokens: []int32{1, 2}, Blocks: []int32{0}}},
		{"block out of range", Row{Tokens: []int32{1}, Blocks: []int32{4}}},
		{"too many logits", Row{Tokens: []int32{1}, Blocks: []int32{0}, Logits: 2}},
		{"negative start", Row{Start: -1, Tokens: []int32{1}, Blocks: []int32{0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := m.Forward(&Batch{Rows: []Row{tc.row}}, kv); err == nil {
				t.Fatal("no error")
			}
		})
	}
	// A cache of the model's KV width cut into other heads.
	ok := Row{Tokens: []int32{1}, Blocks: []int32{0}}
	other := metal.NewKVCache(metal.KVF16, cfg.NumHiddenLayers, 4, 4, cfg.NumKeyValueHeads*2, cfg.HeadDim/2)
	if _, err := m.Forward(&Batch{Rows: []Row{ok}}, other); err == nil {
		t.Fatal("a cache of other KV heads: no error")
	}
	if _, err := m.Forward(&Batch{Rows: []Row{ok}}, kv); err != nil {
		t.Fatalf("the model's own cache: %v", err)
	}
}

func TestBuildRejectsInconsistentWeights(t *testing.T) {
	cfg := tinyConfig("Qwen3ForCausalLM", true)
	mt, _ := randomModel(cfg, metal.F32, 1, true)
	be := cpu.New(1)
	defer be.Close()
	for _, tc := range []struct {
		name   string
		mutate func(c *Config, m memTensors)
		want   string
	}{
		{"unknown architecture", func(c *Config, m memTensors) { c.Architecture = "GPT2LMHeadModel" }, "not supported"},
		{"missing tensor", func(c *Config, m memTensors) { delete(m, "model.layers.1.mlp.up_proj.weight") }, "model.layers.1.mlp.up_proj.weight"},
		{"wrong shape", func(c *Config, m memTensors) { c.IntermediateSize = 64 }, "mlp.gate_proj.weight"},
		{"bad head ratio", func(c *Config, m memTensors) { c.NumKeyValueHeads = 3 }, "num_key_value_heads"},
		{"untied without lm_head", func(c *Config, m memTensors) { c.TieWordEmbeddings = false }, "lm_head.weight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *cfg
			m := memTensors{}
			for k, v := range mt {
				m[k] = v
			}
			tc.mutate(&c, m)
			_, err := Architectures().Build(&c, m, be)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
