package model

import (
	"math"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// TestKVRoundingCost measures what each KV cache type's rounding costs the
// logits, against an exact float64 forward pass, beside what quantized
// weights cost: the ground for serve's --kv-cache-type auto choosing bf16
// where it is faster. On this random Qwen3-shaped model the mean KL
// divergence from the exact distribution was 7e-6 for an f16 cache, 1e-3
// for bf16 and 5e-3 for q8 (float32 weights), and 6e-2 for q8 weights on
// an f16 cache. The test holds that order: bf16 costs more than f16 and
// less than q8, llama.cpp's q8_0 cache, and far less than q8 weights; an
// f32 cache, which rounds nothing, costs less than f16.
func TestKVRoundingCost(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	cfg := qualityConfig()
	const n, blockSize = 96, 8
	tokens := randomTokens(n, cfg.VocabSize, 3)
	_, exactWeights := randomModel(cfg, metal.F32, 7, true)
	exact := refForward(cfg, exactWeights, true, tokens, kvExact)
	blocks := make([]int32, n/blockSize)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	kl := map[string]float64{}
	for _, c := range []struct {
		name    string
		weights metal.DType
		kv      metal.KVType
	}{
		{"f32", metal.F32, metal.KVF32},
		{"f16", metal.F32, metal.KVF16},
		{"bf16", metal.F32, metal.KVBF16},
		{"q8", metal.F32, metal.KVQ8},
		{"q8 weights", metal.Q8, metal.KVF16},
	} {
		ts, _ := randomModel(cfg, c.weights, 7, true)
		m, err := Architectures().Build(cfg, ts, be)
		if err != nil {
			t.Fatal(err)
		}
		logits, err := m.Forward(&Batch{Rows: []Row{{Tokens: tokens, Blocks: blocks, Logits: n}}}, m.NewKVCache(len(blocks), blockSize, c.kv))
		if err != nil {
			t.Fatal(err)
		}
		v := cfg.VocabSize
		for p := range n {
			kl[c.name] += klDivergence(exact[p], logits[p*v:(p+1)*v]) / n
		}
	}
	t.Logf("mean KL divergence from the exact logits: %v", kl)
	if !(kl["f32"] < kl["f16"] && kl["f16"] < kl["bf16"] && kl["bf16"] < kl["q8"] && 10*kl["bf16"] < kl["q8 weights"]) {
		t.Fatalf("mean KL divergence from the exact logits: %v; want f32 < f16 < bf16 < q8 and bf16 under a tenth of q8 weights'", kl)
	}
}

// TestF32CacheMatchesExact: with a float32 KV cache, a float32
// checkpoint's logits at every position of a 96-token prompt are within
// 1e-4 of an exact float64 forward pass (relative to the largest, as
// relErr), and so are its likely tokens' log-probabilities (absolute), for
// each architecture, with the prompt fed in chunks, as decode steps and
// as verify rows. An f16 cache's rounding alone moves them further (on
// these models: logits 1e-3 and 6e-3, log-probabilities 4e-2 and 3e-2,
// against f32's 1e-6 and 5e-6, 5e-5 and 3e-5), which the test requires:
// the reference tells the two apart. So a test or a user chasing a
// quality question has a reference mode. (The Llama model is narrower:
// without Qwen3's norms of queries and keys, random weights at 256 wide
// make scores so large that float32 arithmetic alone moved its logits by
// 8e-5.)
func TestF32CacheMatchesExact(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	qwen := qualityConfig()
	llama := *qwen
	llama.Architecture, llama.TieWordEmbeddings, llama.RopeTheta = "LlamaForCausalLM", false, 500000
	llama.HiddenSize, llama.NumAttentionHeads, llama.NumKeyValueHeads, llama.HeadDim = 64, 2, 1, 32
	llama.RopeScaling = &RopeScaling{RopeType: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 64}
	const n, blockSize, tol = 96, 16, 1e-4
	// steps: positions start..end-1 fed in one row.
	steps := [][2]int{{0, 40}, {40, 64}, {64, 65}, {65, 66}, {66, 71}, {71, 80}, {80, 96}}
	for _, cfg := range []*Config{qwen, &llama} {
		t.Run(cfg.Architecture, func(t *testing.T) {
			qk := cfg.Architecture == "Qwen3ForCausalLM"
			ts, w := randomModel(cfg, metal.F32, 7, qk)
			m, err := Architectures().Build(cfg, ts, be)
			if err != nil {
				t.Fatal(err)
			}
			tokens := randomTokens(n, cfg.VocabSize, 3)
			exact := refForward(cfg, w, qk, tokens, kvExact)
			worst := map[metal.KVType]float64{}
			rel := map[metal.KVType]float64{}
			for _, typ := range []metal.KVType{metal.KVF32, metal.KVF16} {
				kv := m.NewKVCache(n/blockSize+2, blockSize, typ)
				blocks := shuffledBlocks(n/blockSize, n/blockSize+2, 5)
				for _, s := range steps {
					row := Row{Start: s[0], Tokens: tokens[s[0]:s[1]], Blocks: blocks, Logits: s[1] - s[0]}
					logits, err := m.Forward(&Batch{Rows: []Row{row}}, kv)
					if err != nil {
						t.Fatal(err)
					}
					v := cfg.VocabSize
					for p := s[0]; p < s[1]; p++ {
						j := p - s[0]
						worst[typ] = max(worst[typ], logProbErr(exact[p], logits[j*v:(j+1)*v], 1e-4))
						rel[typ] = max(rel[typ], relErr(logits[j*v:(j+1)*v], exact[p]))
					}
				}
			}
			t.Logf("from the exact pass: logits' relative error f32 cache %.3g, f16 %.3g; likely tokens' log-probabilities f32 %.3g, f16 %.3g",
				rel[metal.KVF32], rel[metal.KVF16], worst[metal.KVF32], worst[metal.KVF16])
			if rel[metal.KVF32] > tol || worst[metal.KVF32] > tol {
				t.Errorf("f32 cache: logits' relative error %.3g, log-probabilities %.3g from the exact pass, more than %g", rel[metal.KVF32], worst[metal.KVF32], tol)
			}
			if !(worst[metal.KVF32] < worst[metal.KVF16] && rel[metal.KVF32] < rel[metal.KVF16]) {
				t.Errorf("f32 cache %.3g (%.3g) from the exact pass, f16 %.3g (%.3g): want f32 closer", worst[metal.KVF32], rel[metal.KVF32], worst[metal.KVF16], rel[metal.KVF16])
			}
		})
	}
}

// logProbErr is the largest absolute difference between the
// log-probabilities of want's and got's logits, over the tokens want
// gives a probability of at least likely (those a sampler or a client's
// top logprobs see; the rest sit at log-probabilities of -100 and less,
// where float32 logits are a few ulps of that apart whatever the cache).
func logProbErr(want []float64, got []float32, likely float64) float64 {
	lw, lg := logSumExp(len(want), func(i int) float64 { return want[i] }), logSumExp(len(got), func(i int) float64 { return float64(got[i]) })
	d := 0.0
	for i := range want {
		if want[i]-lw >= math.Log(likely) {
			d = math.Max(d, math.Abs((want[i]-lw)-(float64(got[i])-lg)))
		}
	}
	return d
}

// logSumExp is log Σ exp x(i) over i < n.
func logSumExp(n int, x func(i int) float64) float64 {
	m := math.Inf(-1)
	for i := range n {
		m = math.Max(m, x(i))
	}
	s := 0.0
	for i := range n {
		s += math.Exp(x(i) - m)
	}
	return m + math.Log(s)
}

// qualityConfig is the random Qwen3-shaped model the cache types' costs
// are measured on.
func qualityConfig() *Config {
	return &Config{
		Architecture: "Qwen3ForCausalLM", HiddenSize: 256, IntermediateSize: 512, NumHiddenLayers: 4,
		NumAttentionHeads: 8, NumKeyValueHeads: 4, HeadDim: 64, VocabSize: 512,
		RMSNormEps: 1e-6, RopeTheta: 10000, MaxPositionEmbeddings: 4096, TieWordEmbeddings: true,
	}
}

// klDivergence is KL(softmax(want) ‖ softmax(got)).
func klDivergence(want []float64, got []float32) float64 {
	lw := logSumExp(len(want), func(i int) float64 { return want[i] })
	lg := logSumExp(len(want), func(i int) float64 { return float64(got[i]) })
	d := 0.0
	for i := range want {
		a, b := want[i]-lw, float64(got[i])-lg
		d += math.Exp(a) * (a - b)
	}
	return d
}
