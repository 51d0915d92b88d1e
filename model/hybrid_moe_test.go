package model_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// TestMoEGroupedMatchesPerToken runs a mixture-of-experts block over n
// rows at once, where each active expert multiplies all the rows routed
// to it as one matrix (its weights read once), and each row alone, and
// wants the same bits: a row's expert outputs are added in the same
// order either way and every product is batch-invariant. Experts are q4,
// q8 or f32, one tensor per expert (Qwen3-Next's layout, and a packed
// Qwen3.5-MoE's) or fused gate_up_proj/down_proj read in place
// (Qwen3.5-MoE's checkpoints), on two threads.
func TestMoEGroupedMatchesPerToken(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		modelType string // qwen3_5_moe's float experts are fused
		d         metal.DType
	}{
		{"qwen3_next", metal.Q4}, {"qwen3_next", metal.Q8}, {"qwen3_next", metal.F32},
		{"qwen3_5_moe", metal.Q4}, {"qwen3_5_moe", metal.F32}, {"qwen3_5_moe", metal.BF16},
	} {
		cfg := hybridref.TinyMoE(tc.modelType)
		cfg.Hybrid.SharedExpertIntermediateSize = 64 // whole groups of 32 for q4 and q8
		mt, _ := hybridref.Random(cfg, tc.d, 21)
		_, fused := mt[cfg.Hybrid.TextPrefix+"layers.1.mlp.experts.gate_up_proj"]
		m, err := model.NewHybridModel(cfg, mt, be)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 3, 16, 64} {
			t.Run(fmt.Sprintf("%s/%s/fused=%v/n=%d", tc.modelType, tc.d, fused, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), 5))
				h := make([]float32, n*cfg.HiddenSize)
				for i := range h {
					h[i] = float32(rng.NormFloat64())
				}
				grouped, perToken := append([]float32(nil), h...), append([]float32(nil), h...)
				model.MoEBlock(m, 1, grouped, n, false)
				model.MoEBlock(m, 1, perToken, n, true)
				changed := 0
				for i := range h {
					if math.Float32bits(grouped[i]) != math.Float32bits(perToken[i]) {
						t.Fatalf("row %d column %d: grouped %v, per token %v", i/cfg.HiddenSize, i%cfg.HiddenSize, grouped[i], perToken[i])
					}
					if grouped[i] != h[i] {
						changed++
					}
				}
				if changed < len(h)/2 {
					t.Errorf("the block changed %d of %d values", changed, len(h))
				}
			})
		}
	}
}
