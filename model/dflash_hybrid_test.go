package model_test

import (
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/model/testmodel"
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

// TestPackDFlashDraftOfHybrid: a DFlash draft packs with a hybrid
// (Qwen3.5) target, checked against it, and the package's draft proposes
// what the checkpoint's does over the packaged target.
func TestPackDFlashDraftOfHybrid(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	src, draftDir := t.TempDir(), t.TempDir()
	cfg := hybridref.Tiny("qwen3_5", true)
	if _, err := hybridref.WriteCheckpoint(src, cfg, "Qwen3_5ForConditionalGeneration", metal.F32, 3); err != nil {
		t.Fatal(err)
	}
	if err := testmodel.CopyTokenizer(src, "qwen3"); err != nil {
		t.Fatal(err)
	}
	spec := testmodel.Spec{Arch: "qwen3", Hidden: cfg.HiddenSize, Intermediate: 96, Layers: cfg.NumHiddenLayers, Heads: 4, KVHeads: 2, HeadDim: 16,
		Vocab: cfg.VocabSize, MaxContext: 4096}
	if err := testmodel.WriteDFlash(draftDir, testmodel.DFlashSpec{Target: spec, TargetLayerIDs: []int{1, 2}, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if pkg := packProposesAsCheckpoint(t, be, src, draftDir); pkg.DraftKind != "dflash" {
		t.Errorf("draft kind %q", pkg.DraftKind)
	}
}
