package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// writeHybridCheckpoint writes cfg's random weights (bfloat16 matrices) as
// a Hugging Face checkpoint: config.json in the layout of cfg's
// architecture (Qwen3.5's text model under text_config), the convolutions
// as (channels, 1, width), plus an mtp.* and a 5-D model.visual.* tensor
// the text model must not read.
func writeHybridCheckpoint(t *testing.T, cfg *Config, arch string) (string, refWeights) {
	t.Helper()
	y := cfg.Hybrid
	text := map[string]any{
		"hidden_size": cfg.HiddenSize, "intermediate_size": cfg.IntermediateSize, "num_hidden_layers": cfg.NumHiddenLayers,
		"num_attention_heads": cfg.NumAttentionHeads, "num_key_value_heads": cfg.NumKeyValueHeads, "head_dim": cfg.HeadDim,
		"vocab_size": cfg.VocabSize, "rms_norm_eps": cfg.RMSNormEps, "layer_types": y.LayerTypes,
		"rope_parameters":        map[string]any{"rope_type": "default", "rope_theta": cfg.RopeTheta, "partial_rotary_factor": y.PartialRotaryFactor},
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
	raw, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	mt, rw := randomHybrid(cfg, metal.BF16, 3)
	var sts []STTensor
	for name, w := range mt {
		shape := []int{w.Rows, w.Cols}
		switch {
		case strings.HasSuffix(name, "conv1d.weight"):
			shape = []int{w.Rows, 1, w.Cols}
		case strings.HasSuffix(name, "experts.gate_up_proj"):
			shape = []int{y.NumExperts, 2 * y.MoEIntermediateSize, w.Cols}
		case strings.HasSuffix(name, "experts.down_proj"):
			shape = []int{y.NumExperts, cfg.HiddenSize, w.Cols}
		case w.Rows == 1:
			shape = []int{w.Cols}
		}
		sts = append(sts, STTensor{Name: name, DType: w.DType, Shape: shape, Data: w.Data})
	}
	sts = append(sts, STTensor{Name: "mtp.fc.weight", DType: metal.F32, Shape: []int{2, 2}, Data: make([]byte, 16)},
		STTensor{Name: "model.visual.patch_embed.proj.weight", DType: metal.F32, Shape: []int{2, 1, 1, 1, 2}, Data: make([]byte, 16)})
	if err := WriteSafetensors(filepath.Join(dir, "model.safetensors"), sts); err != nil {
		t.Fatal(err)
	}
	return dir, rw
}

// TestHybridCheckpointLoads opens Qwen3.5, Qwen3-Next (dense and with
// one tensor per expert) and Qwen3.5-MoE (fused 3-D expert tensors)
// checkpoints written to disk and checks that their logits match the float64
// reference of the same weights, over a prompt chunk and decode steps.
func TestHybridCheckpointLoads(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		arch string
		cfg  *Config
	}{
		{"Qwen3_5ForConditionalGeneration", tinyHybrid("qwen3_5", true)},
		{"Qwen3NextForCausalLM", tinyHybrid("qwen3_next", true)},
		{"Qwen3NextForCausalLM", tinyHybridMoE("qwen3_next")},
		{"Qwen3_5MoeForConditionalGeneration", tinyHybridMoE("qwen3_5_moe")},
	} {
		t.Run(fmt.Sprintf("%s/experts%d", tc.arch, tc.cfg.Hybrid.NumExperts), func(t *testing.T) {
			dir, rw := writeHybridCheckpoint(t, tc.cfg, tc.arch)
			src, err := Open(dir, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Tensors.Close()
			cfg := src.Config
			if cfg.Architecture != tc.arch || cfg.Hybrid == nil {
				t.Fatalf("config %+v", cfg)
			}
			m, err := NewHybridModel(cfg, src.Tensors, be)
			if err != nil {
				t.Fatal(err)
			}
			tokens := randomTokens(20, cfg.VocabSize, 8)
			want := refHybridForward(cfg, rw, tokens)
			kv, st := m.NewKVCache(8, 4, metal.KVF16), m.NewState()
			blocks := []int32{3, 1, 4, 0, 6}
			for _, s := range [][3]int{{0, 17, 17}, {17, 18, 1}, {18, 19, 1}, {19, 20, 1}} {
				logits, err := m.ForwardState(Row{Start: s[0], Tokens: tokens[s[0]:s[1]], Blocks: blocks, Logits: s[2]}, st, kv)
				if err != nil {
					t.Fatal(err)
				}
				for j := range s[2] {
					pos := s[1] - s[2] + j
					if e := relErr(logits[j*cfg.VocabSize:(j+1)*cfg.VocabSize], want[pos]); e > 1e-4 {
						t.Errorf("position %d: relative error %.3g > 1e-4", pos, e)
					}
				}
			}
		})
	}
}
