package model_test

import (
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// TestDFlashHybridMatchesReference is TestDFlashMatchesReference over
// hybrid targets (Qwen3.5, dense and MoE): their captured features (a
// Gated DeltaNet layer's and an attention layer's outputs) against
// hybridref's, and the draft's proposals and logits against the float64
// reference over hybridref's features.
func TestDFlashHybridMatchesReference(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		name string
		cfg  *model.Config
		arch string
		kind model.DFlashKind
	}{
		{"qwen3_5-dflash", hybridref.Tiny("qwen3_5", true), "Qwen3_5ForConditionalGeneration", model.DFlash},
		{"qwen3_5-dflash2", hybridref.Tiny("qwen3_5", false), "Qwen3_5ForConditionalGeneration", model.DFlash2},
		{"qwen3_5_moe-dflash", hybridref.TinyMoE("qwen3_5_moe"), "Qwen3_5MoeForConditionalGeneration", model.DFlash},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *tc.cfg
			c.Architecture = tc.arch
			mt, rw := hybridref.Random(&c, metal.F32, 23)
			target, err := model.Architectures().Build(&c, mt, be)
			if err != nil {
				t.Fatal(err)
			}
			embed := rw[c.Hybrid.TextPrefix+"embed_tokens.weight"]
			head := rw["lm_head.weight"]
			if c.TieWordEmbeddings {
				head = embed
			}
			ref := model.DFlashTargetRef{Embed: embed, Head: head, FeatureTol: 1e-4,
				Features: func(tokens []int32, layers []int) [][]float64 {
					_, feats := hybridref.ForwardFeatures(&c, rw, tokens, metal.KVF32, layers)
					return feats
				}}
			model.CheckDFlashReference(t, be, target, ref, tc.kind, false)
		})
	}
}
