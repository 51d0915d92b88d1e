package testmodel

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// DFlashSpec describes a random DFlash or DFlash2 draft for a target Spec:
// it shares the target's hidden width and vocabulary.
type DFlashSpec struct {
	Kind           model.DFlashKind // model.DFlash (default) or model.DFlash2
	Target         Spec
	Layers         int   // default 1
	BlockSize      int   // default 4
	TargetLayerIDs []int // default: the target's middle layer
	MaskTokenID    int   // default: the vocabulary's last token
	Causal         bool
	Seed           uint64
	// DFlash2 only (defaults 2, 16, 16, 16 as the published drafter).
	ConvTaps, ConvGroupSize, SelectorRank, SelectorTopK int
}

func (s DFlashSpec) withDefaults() DFlashSpec {
	s.Target = s.Target.withDefaults()
	if s.Kind == "" {
		s.Kind = model.DFlash
	}
	if s.Layers == 0 {
		s.Layers = 1
	}
	if s.BlockSize == 0 {
		s.BlockSize = 4
	}
	if s.TargetLayerIDs == nil {
		s.TargetLayerIDs = []int{s.Target.Layers / 2}
	}
	if s.MaskTokenID == 0 {
		s.MaskTokenID = s.Target.Vocab - 1
	}
	if s.ConvTaps == 0 {
		s.ConvTaps = 2
	}
	for _, p := range []*int{&s.ConvGroupSize, &s.SelectorRank, &s.SelectorTopK} {
		if *p == 0 {
			*p = 16
		}
	}
	return s
}

// Config returns the config.json contents of the draft checkpoint of s.
func (s DFlashSpec) Config() map[string]any {
	s = s.withDefaults()
	t := s.Target
	arch := "DFlashDraftModel"
	sec := map[string]any{"mask_token_id": s.MaskTokenID, "target_layer_ids": s.TargetLayerIDs, "causal": s.Causal}
	if s.Kind == model.DFlash2 {
		arch = "DFlash2DraftModel"
		sec["conv_kernel_size"], sec["conv_group_size"] = s.ConvTaps, s.ConvGroupSize
		sec["selector_rank"], sec["selector_top_k"] = s.SelectorRank, s.SelectorTopK
	}
	return map[string]any{
		"architectures": []string{arch}, "model_type": "qwen3",
		"hidden_size": t.Hidden, "intermediate_size": t.Intermediate, "num_hidden_layers": s.Layers,
		"num_attention_heads": t.Heads, "num_key_value_heads": t.KVHeads, "head_dim": t.HeadDim,
		"vocab_size": t.Vocab, "rms_norm_eps": 1e-6, "rope_theta": t.RopeTheta,
		"max_position_embeddings": t.MaxContext, "block_size": s.BlockSize,
		"num_target_layers": t.Layers, "dflash_config": sec,
	}
}

// dflashShapes lists every weight of the draft of s.
func dflashShapes(s DFlashSpec) []tensorShape {
	h, q, kv, in := s.Target.Hidden, s.Target.Heads*s.Target.HeadDim, s.Target.KVHeads*s.Target.HeadDim, s.Target.Intermediate
	sd := func(n int) float64 { return 1 / math.Sqrt(float64(n)) }
	out := []tensorShape{
		{"fc.weight", []int{h, len(s.TargetLayerIDs) * h}, sd(len(s.TargetLayerIDs) * h)},
		{"hidden_norm.weight", []int{h}, 0}, {"norm.weight", []int{h}, 0},
	}
	for i := range s.Layers {
		p := fmt.Sprintf("layers.%d.", i)
		out = append(out,
			tensorShape{p + "input_layernorm.weight", []int{h}, 0},
			tensorShape{p + "self_attn.q_proj.weight", []int{q, h}, sd(h)},
			tensorShape{p + "self_attn.k_proj.weight", []int{kv, h}, sd(h)},
			tensorShape{p + "self_attn.v_proj.weight", []int{kv, h}, sd(h)},
			tensorShape{p + "self_attn.o_proj.weight", []int{h, q}, sd(q) / 2},
			tensorShape{p + "self_attn.q_norm.weight", []int{s.Target.HeadDim}, 0},
			tensorShape{p + "self_attn.k_norm.weight", []int{s.Target.HeadDim}, 0},
			tensorShape{p + "post_attention_layernorm.weight", []int{h}, 0},
			tensorShape{p + "mlp.gate_proj.weight", []int{in, h}, sd(h)},
			tensorShape{p + "mlp.up_proj.weight", []int{in, h}, sd(h)},
			tensorShape{p + "mlp.down_proj.weight", []int{h, in}, sd(in) / 2},
		)
		if s.Kind == model.DFlash2 {
			for _, c := range []string{"attention_conv.", "mlp_conv."} {
				out = append(out,
					tensorShape{p + c + "base_kernel", []int{2, s.ConvTaps, h}, 0.5},
					tensorShape{p + c + "kernel_projection.weight", []int{2 * s.ConvTaps * (h / s.ConvGroupSize), h}, sd(h) / 4})
			}
		}
	}
	if s.Kind == model.DFlash2 {
		out = append(out,
			tensorShape{"candidate_selector.predecessor_codebook", []int{s.Target.Vocab, s.SelectorRank}, 0.5},
			tensorShape{"candidate_selector.successor_codebook", []int{s.Target.Vocab, s.SelectorRank}, 0.5},
			tensorShape{"candidate_selector.hidden_projection.weight", []int{s.SelectorRank, h}, sd(h)})
	}
	return out
}

// WriteDFlash writes the draft checkpoint of s (config.json and
// model.safetensors, in the target's dtype) into dir (created if needed).
func WriteDFlash(dir string, s DFlashSpec) error {
	s = s.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg, _ := json.MarshalIndent(s.Config(), "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		return err
	}
	var ts []model.STTensor
	err := randomShapes(dflashShapes(s), s.Seed, s.Target.DType, func(name string, shape []int, t *metal.Tensor) error {
		ts = append(ts, model.STTensor{Name: name, DType: s.Target.DType, Shape: shape, Data: t.Data})
		return nil
	})
	if err != nil {
		return err
	}
	return model.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts)
}
