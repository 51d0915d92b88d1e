package hybridref

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// WriteCheckpoint writes cfg's random weights (Random: matrices as d) into
// dir as a Hugging Face checkpoint of architecture arch and returns their
// exact values: config.json in the layout of cfg's
// architecture (Qwen3.5's text model under text_config), the convolutions
// as (channels, 1, width), plus an mtp.* tensor the text model must not
// read. With cfg.Vision, the tower's weights (RandomVision, the patch
// embedding as its 5-D Conv3d kernel) and config join them, their values
// under the same names; without, a 5-D model.visual.* tensor the text
// model must not read.
func WriteCheckpoint(dir string, cfg *model.Config, arch string, d metal.DType, seed uint64) (Weights, error) {
	y := cfg.Hybrid
	rope := map[string]any{"rope_type": "default", "rope_theta": cfg.RopeTheta, "partial_rotary_factor": y.PartialRotaryFactor}
	if cfg.Vision != nil {
		rope["mrope_section"], rope["mrope_interleaved"] = y.MRopeSection, y.MRopeInterleaved
	}
	text := map[string]any{
		"hidden_size": cfg.HiddenSize, "intermediate_size": cfg.IntermediateSize, "num_hidden_layers": cfg.NumHiddenLayers,
		"num_attention_heads": cfg.NumAttentionHeads, "num_key_value_heads": cfg.NumKeyValueHeads, "head_dim": cfg.HeadDim,
		"vocab_size": cfg.VocabSize, "rms_norm_eps": cfg.RMSNormEps, "layer_types": y.LayerTypes,
		"rope_parameters":        rope,
		"linear_conv_kernel_dim": y.LinearConvKernelDim, "linear_num_key_heads": y.LinearNumKeyHeads,
		"linear_num_value_heads": y.LinearNumValueHeads, "linear_key_head_dim": y.LinearKeyHeadDim,
		"linear_value_head_dim": y.LinearValueHeadDim,
	}
	if cfg.IntermediateSize == 0 {
		delete(text, "intermediate_size")
	}
	text["num_experts"] = y.NumExperts
	if y.NumExperts > 0 {
		text["num_experts_per_tok"], text["moe_intermediate_size"] = y.NumExpertsPerTok, y.MoEIntermediateSize
		text["shared_expert_intermediate_size"] = y.SharedExpertIntermediateSize
		if y.ModelType == "qwen3_next" {
			text["decoder_sparse_step"], text["norm_topk_prob"] = y.DecoderSparseStep, y.NormTopKProb
		}
	}
	top := map[string]any{"architectures": []string{arch}, "tie_word_embeddings": cfg.TieWordEmbeddings}
	if y.ModelType == "qwen3_next" {
		for k, v := range text {
			top[k] = v
		}
	} else {
		top["text_config"] = text
	}
	if v := cfg.Vision; v != nil {
		top["vision_config"] = map[string]any{"depth": v.Depth, "hidden_size": v.HiddenSize, "hidden_act": v.HiddenAct,
			"intermediate_size": v.IntermediateSize, "num_heads": v.NumHeads, "in_channels": v.InChannels,
			"patch_size": v.PatchSize, "spatial_merge_size": v.SpatialMergeSize, "temporal_patch_size": v.TemporalPatchSize,
			"out_hidden_size": v.OutHiddenSize, "num_position_embeddings": v.NumPositionEmbeddings}
		top["image_token_id"], top["vision_start_token_id"], top["vision_end_token_id"] = v.ImageTokenID, v.VisionStartTokenID, v.VisionEndTokenID
	}
	raw, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		return nil, err
	}
	mt, rw := Random(cfg, d, seed)
	if v := cfg.Vision; v != nil {
		vt, vw := RandomVision(v, model.VisionPrefix, d, seed)
		for name, t := range vt {
			mt[name], rw[name] = t, vw[name]
		}
	}
	var sts []model.STTensor
	for name, w := range mt {
		shape := []int{w.Rows, w.Cols}
		switch {
		case strings.HasSuffix(name, "conv1d.weight"):
			shape = []int{w.Rows, 1, w.Cols}
		case strings.HasSuffix(name, "experts.gate_up_proj"):
			shape = []int{y.NumExperts, 2 * y.MoEIntermediateSize, w.Cols}
		case strings.HasSuffix(name, "experts.down_proj"):
			shape = []int{y.NumExperts, cfg.HiddenSize, w.Cols}
		case strings.HasSuffix(name, "patch_embed.proj.weight") && cfg.Vision != nil:
			v := cfg.Vision
			shape = []int{w.Rows, v.InChannels, v.TemporalPatchSize, v.PatchSize, v.PatchSize}
		case w.Rows == 1:
			shape = []int{w.Cols}
		}
		sts = append(sts, model.STTensor{Name: name, DType: w.DType, Shape: shape, Data: w.Data})
	}
	sts = append(sts, model.STTensor{Name: "mtp.fc.weight", DType: metal.F32, Shape: []int{2, 2}, Data: make([]byte, 16)})
	if cfg.Vision == nil {
		sts = append(sts, model.STTensor{Name: model.VisionPrefix + "patch_embed.proj.weight", DType: metal.F32, Shape: []int{2, 1, 1, 1, 2}, Data: make([]byte, 16)})
	}
	if err := model.WriteSafetensors(filepath.Join(dir, "model.safetensors"), sts); err != nil {
		return nil, err
	}
	return rw, nil
}
