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
// less than q8, llama.cpp's q8_0 cache, and far less than q8 weights.
func TestKVRoundingCost(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	cfg := &Config{
		Architecture: "Qwen3ForCausalLM", HiddenSize: 256, IntermediateSize: 512, NumHiddenLayers: 4,
		NumAttentionHeads: 8, NumKeyValueHeads: 4, HeadDim: 64, VocabSize: 512,
		RMSNormEps: 1e-6, RopeTheta: 10000, MaxPositionEmbeddings: 4096, TieWordEmbeddings: true,
	}
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
	if !(kl["f16"] < kl["bf16"] && kl["bf16"] < kl["q8"] && 10*kl["bf16"] < kl["q8 weights"]) {
		t.Fatalf("mean KL divergence from the exact logits: %v; want f16 < bf16 < q8 and bf16 under a tenth of q8 weights'", kl)
	}
}

// klDivergence is KL(softmax(want) ‖ softmax(got)).
func klDivergence(want []float64, got []float32) float64 {
	logSumExp := func(x func(i int) float64) float64 {
		m := math.Inf(-1)
		for i := range want {
			m = math.Max(m, x(i))
		}
		s := 0.0
		for i := range want {
			s += math.Exp(x(i) - m)
		}
		return m + math.Log(s)
	}
	lw := logSumExp(func(i int) float64 { return want[i] })
	lg := logSumExp(func(i int) float64 { return float64(got[i]) })
	d := 0.0
	for i := range want {
		a, b := want[i]-lw, float64(got[i])-lg
		d += math.Exp(a) * (a - b)
	}
	return d
}
