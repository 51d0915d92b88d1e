package model_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// qwen3NextConfig is Qwen3-Next-80B-A3B's config.json, trimmed to the keys
// Splash reads: the text model at the top level, full_attention_interval
// instead of layer_types, a MoE in every layer.
const qwen3NextConfig = `{
  "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
  "hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 48,
  "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
  "vocab_size": 151936, "rms_norm_eps": 1e-06, "rope_theta": 10000000,
  "partial_rotary_factor": 0.25, "rope_scaling": null, "hidden_act": "silu",
  "max_position_embeddings": 262144, "tie_word_embeddings": false,
  "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
  "linear_key_head_dim": 128, "linear_value_head_dim": 128,
  "linear_num_key_heads": 16, "linear_num_value_heads": 32,
  "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
  "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1,
  "norm_topk_prob": true, "mlp_only_layers": [], "eos_token_id": 151645
}`

// qwen35Config is shaped like a Qwen3.5 dense checkpoint: the text model
// under text_config with rope_parameters (M-RoPE sections) and layer_types,
// tie_word_embeddings at the top level.
const qwen35Config = `{
  "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
  "tie_word_embeddings": true,
  "text_config": {
    "model_type": "qwen3_5_text", "hidden_size": 1024, "intermediate_size": 3584,
    "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 2,
    "head_dim": 256, "vocab_size": 248320, "rms_norm_eps": 1e-06,
    "attn_output_gate": true, "hidden_act": "silu",
    "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention",
      "linear_attention", "linear_attention", "linear_attention", "full_attention"],
    "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 16,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25,
      "mrope_section": [11, 11, 10], "mrope_interleaved": true},
    "eos_token_id": 248044
  },
  "vision_config": {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "num_heads": 12, "out_hidden_size": 1024},
  "image_token_id": 248056, "vision_start_token_id": 248053, "vision_end_token_id": 248054
}`

// qwen35MoEConfig is shaped like Qwen3.5-35B-A3B: experts in every layer,
// no intermediate_size, no norm_topk_prob (its router always renormalises).
const qwen35MoEConfig = `{
  "architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
  "text_config": {
    "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
    "num_key_value_heads": 2, "head_dim": 256, "vocab_size": 248320,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32,
    "num_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25}
  }
}`

func layerPattern(n, interval int) []string {
	t := make([]string, n)
	for i := range t {
		t[i] = model.LayerLinearAttention
		if (i+1)%interval == 0 {
			t[i] = model.LayerFullAttention
		}
	}
	return t
}

// TestParseHybridConfig parses the three layouts through ParseHFConfig
// (which hands them to ParseHybridConfig) and checks every field, the
// layer kinds and the per-sequence state, worked by hand.
func TestParseHybridConfig(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		dense      model.Config
		hybrid     model.Hybrid
		moeLayers  int
		stateBytes int64
	}{
		{"qwen3_next", qwen3NextConfig,
			model.Config{Architecture: "Qwen3NextForCausalLM", ModelType: "qwen3_next", HiddenSize: 2048, IntermediateSize: 5120,
				NumHiddenLayers: 48, NumAttentionHeads: 16, NumKeyValueHeads: 2, HeadDim: 256, VocabSize: 151936,
				RMSNormEps: 1e-6, RopeTheta: 1e7, MaxPositionEmbeddings: 262144, EOSTokenID: []int{151645}},
			model.Hybrid{ModelType: "qwen3_next", TextPrefix: "model.", LayerTypes: layerPattern(48, 4), PartialRotaryFactor: 0.25,
				LinearConvKernelDim: 4, LinearNumKeyHeads: 16, LinearNumValueHeads: 32, LinearKeyHeadDim: 128, LinearValueHeadDim: 128,
				NumExperts: 512, NumExpertsPerTok: 10, MoEIntermediateSize: 512, SharedExpertIntermediateSize: 512,
				NormTopKProb: true, DecoderSparseStep: 1},
			// 36 linear layers × 4 bytes × (3 × (2·16·128 + 32·128) + 32·128·128)
			48, 36 * 4 * (3*8192 + 32*128*128)},
		{"qwen3_5", qwen35Config,
			model.Config{Architecture: "Qwen3_5ForConditionalGeneration", ModelType: "qwen3_5", HiddenSize: 1024, IntermediateSize: 3584,
				NumHiddenLayers: 8, NumAttentionHeads: 8, NumKeyValueHeads: 2, HeadDim: 256, VocabSize: 248320,
				RMSNormEps: 1e-6, RopeTheta: 1e7, TieWordEmbeddings: true, EOSTokenID: []int{248044},
				Vision: &model.VisionConfig{Depth: 12, HiddenSize: 768, HiddenAct: model.ActGELUTanh, IntermediateSize: 3072, NumHeads: 12,
					InChannels: 3, PatchSize: 16, SpatialMergeSize: 2, TemporalPatchSize: 2, OutHiddenSize: 1024,
					NumPositionEmbeddings: 2304, ImageTokenID: 248056, VisionStartTokenID: 248053, VisionEndTokenID: 248054}},
			model.Hybrid{ModelType: "qwen3_5", TextPrefix: "model.language_model.", LayerTypes: layerPattern(8, 4), PartialRotaryFactor: 0.25,
				MRopeSection: []int{11, 11, 10}, MRopeInterleaved: true,
				LinearConvKernelDim: 4, LinearNumKeyHeads: 16, LinearNumValueHeads: 16, LinearKeyHeadDim: 128, LinearValueHeadDim: 128,
				NormTopKProb: true, DecoderSparseStep: 1},
			0, 6 * 4 * (3*(2*16*128+16*128) + 16*128*128)},
		{"qwen3_5_moe", qwen35MoEConfig,
			model.Config{Architecture: "Qwen3_5MoeForConditionalGeneration", ModelType: "qwen3_5_moe", HiddenSize: 2048,
				NumHiddenLayers: 40, NumAttentionHeads: 16, NumKeyValueHeads: 2, HeadDim: 256, VocabSize: 248320,
				RMSNormEps: 1e-6, RopeTheta: 1e7},
			model.Hybrid{ModelType: "qwen3_5_moe", TextPrefix: "model.language_model.", LayerTypes: layerPattern(40, 4), PartialRotaryFactor: 0.25,
				LinearConvKernelDim: 4, LinearNumKeyHeads: 16, LinearNumValueHeads: 32, LinearKeyHeadDim: 128, LinearValueHeadDim: 128,
				NumExperts: 256, NumExpertsPerTok: 8, MoEIntermediateSize: 512, SharedExpertIntermediateSize: 512,
				NormTopKProb: true, DecoderSparseStep: 1},
			40, 30 * 4 * (3*8192 + 32*128*128)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := model.ParseHFConfig([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			y := c.Hybrid
			if y == nil {
				t.Fatal("Hybrid is nil")
			}
			dense := *c
			dense.Hybrid = nil
			if !reflect.DeepEqual(dense, tc.dense) {
				t.Errorf("dense fields\n got %+v\nwant %+v", dense, tc.dense)
			}
			if !reflect.DeepEqual(*y, tc.hybrid) {
				t.Errorf("hybrid fields\n got %+v\nwant %+v", *y, tc.hybrid)
			}
			moe := 0
			for i := range c.NumHiddenLayers {
				if y.IsMoE(i) {
					moe++
				}
				if y.IsLinear(i) != ((i+1)%4 != 0) {
					t.Errorf("layer %d: IsLinear = %v", i, y.IsLinear(i))
				}
			}
			if moe != tc.moeLayers {
				t.Errorf("%d MoE layers, want %d", moe, tc.moeLayers)
			}
			if got := y.RotaryDim(c.HeadDim); got != 64 {
				t.Errorf("RotaryDim = %d, want 64", got)
			}
			if got, want := y.DeltaDims(), (metal.DeltaDims{KeyHeads: y.LinearNumKeyHeads, ValueHeads: y.LinearNumValueHeads, KeyDim: 128, ValueDim: 128}); got != want {
				t.Errorf("DeltaDims = %+v, want %+v", got, want)
			}
			if got := y.StateBytes(); got != tc.stateBytes {
				t.Errorf("StateBytes = %d, want %d", got, tc.stateBytes)
			}
			// The config round-trips through a package manifest's JSON.
			raw, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var back model.Config
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if err := back.Check(); err != nil || !reflect.DeepEqual(back.Hybrid, c.Hybrid) {
				t.Errorf("after a JSON round trip: Check = %v, Hybrid %+v", err, back.Hybrid)
			}
		})
	}
}

// TestParseHybridConfigRefuses: each edit of a valid config is refused
// with an error naming what is wrong.
func TestParseHybridConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, base string
		edit       func(top, text map[string]any)
		want       string
	}{
		{"unknown layer type", qwen35Config, func(_, x map[string]any) {
			x["layer_types"].([]any)[3] = "sliding_attention"
			delete(x, "full_attention_interval")
		}, `layer_types[3] = "sliding_attention" is not supported`},
		{"layer_types length", qwen35Config, func(_, x map[string]any) {
			x["layer_types"] = []any{"full_attention"}
		}, "layer_types has 1 entries for 8 layers"},
		{"layer_types against the interval", qwen35Config, func(_, x map[string]any) { x["full_attention_interval"] = 2 },
			"layer_types and full_attention_interval 2 disagree"},
		{"linear heads", qwen3NextConfig, func(x, _ map[string]any) { x["linear_num_value_heads"] = 24; x["linear_num_key_heads"] = 16 },
			"linear_num_value_heads 24 is not a multiple of linear_num_key_heads 16"},
		{"attention heads", qwen3NextConfig, func(x, _ map[string]any) { x["num_key_value_heads"] = 3 },
			"num_attention_heads 16 is not a multiple of num_key_value_heads 3"},
		{"missing linear key head dim", qwen35Config, func(_, x map[string]any) { delete(x, "linear_key_head_dim") },
			`no "linear_key_head_dim"`},
		{"vision width", qwen35Config, func(top, _ map[string]any) { top["vision_config"].(map[string]any)["out_hidden_size"] = 2048 },
			"out_hidden_size 2048 differs from the text model's hidden_size 1024"},
		{"M-RoPE sections", qwen35Config, func(_, x map[string]any) {
			x["rope_parameters"].(map[string]any)["mrope_section"] = []int{16, 8, 16}
		}, "mrope_section [16 8 16] must be three counts summing to rotary_dim/2 = 32"},
		{"image token outside the vocabulary", qwen35Config, func(top, _ map[string]any) { top["image_token_id"] = 248320 },
			"image token id 248320 is outside the vocabulary"},
		{"vision without image tokens", qwen35Config, func(top, _ map[string]any) { delete(top, "vision_start_token_id") },
			`no "vision_start_token_id"`},
		{"zero linear value heads", qwen3NextConfig, func(x, _ map[string]any) { x["linear_num_value_heads"] = 0 },
			"linear_num_value_heads = 0, must be in [1, 1048576]"},
		{"huge key heads", qwen3NextConfig, func(x, _ map[string]any) { x["linear_key_head_dim"] = 1 << 40 },
			"linear_key_head_dim = 1099511627776, must be in [1, 1048576]"},
		{"huge experts", qwen35MoEConfig, func(_, x map[string]any) { x["num_experts"] = 1 << 21 },
			"num_experts = 2097152, must be in [1, 1048576]"},
		{"missing head_dim", qwen3NextConfig, func(x, _ map[string]any) { delete(x, "head_dim") }, `no "head_dim"`},
		{"qwen3_next without num_experts", qwen3NextConfig, func(x, _ map[string]any) { delete(x, "num_experts") },
			`no "num_experts"`},
		{"qwen3_5 with experts", qwen35Config, func(_, x map[string]any) { x["num_experts"] = 8 },
			"num_experts = 8, but qwen3_5 has no experts"},
		{"qwen3_5 without intermediate_size", qwen35Config, func(_, x map[string]any) { delete(x, "intermediate_size") },
			"intermediate_size = 0, must be in [1, 1048576] (layer 0 has a dense MLP)"},
		{"top-k above the experts", qwen35MoEConfig, func(_, x map[string]any) { x["num_experts_per_tok"] = 300 },
			"num_experts_per_tok 300 exceeds num_experts 256"},
		{"moe without its expert size", qwen35MoEConfig, func(_, x map[string]any) { delete(x, "moe_intermediate_size") },
			`no "moe_intermediate_size"`},
		{"qwen3_5_moe not renormalising", qwen35MoEConfig, func(_, x map[string]any) { x["norm_topk_prob"] = false },
			"norm_topk_prob = false"},
		{"qwen3_5_moe sparse step", qwen35MoEConfig, func(_, x map[string]any) { x["decoder_sparse_step"] = 2 },
			"every qwen3_5_moe layer is MoE"},
		{"mlp_only_layers out of range", qwen3NextConfig, func(x, _ map[string]any) { x["mlp_only_layers"] = []any{48} },
			"mlp_only_layers has layer 48 of 48"},
		{"odd rotary dims", qwen3NextConfig, func(x, _ map[string]any) { x["partial_rotary_factor"] = 0.1 },
			"partial_rotary_factor 0.1 gives 25 rotary dimensions"},
		{"rope type", qwen35MoEConfig, func(_, x map[string]any) {
			x["rope_parameters"].(map[string]any)["rope_type"] = "yarn"
		}, `rope_parameters type "yarn" is not supported`},
		{"no rope theta", qwen3NextConfig, func(x, _ map[string]any) { delete(x, "rope_theta") }, "no rope_theta"},
		{"activation", qwen3NextConfig, func(x, _ map[string]any) { x["hidden_act"] = "gelu" }, `hidden_act "gelu"`},
		{"ungated attention", qwen35Config, func(_, x map[string]any) { x["attn_output_gate"] = false }, "attn_output_gate = false"},
		{"interval zero", qwen3NextConfig, func(x, _ map[string]any) { x["full_attention_interval"] = 0 },
			"full_attention_interval = 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var top map[string]any
			if err := json.Unmarshal([]byte(tc.base), &top); err != nil {
				t.Fatal(err)
			}
			text, _ := top["text_config"].(map[string]any)
			tc.edit(top, text)
			raw, err := json.Marshal(top)
			if err != nil {
				t.Fatal(err)
			}
			_, err = model.ParseHFConfig(raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestHybridMoELayers: Qwen3-Next's decoder_sparse_step and
// mlp_only_layers choose which layers have experts
// (Qwen3NextDecoderLayer), and num_experts 0 makes every MLP dense.
func TestHybridMoELayers(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit map[string]any
		moe  []int
	}{
		{"every second but layer 1", map[string]any{"decoder_sparse_step": 2, "mlp_only_layers": []int{1}}, []int{3, 5, 7}},
		{"no experts", map[string]any{"num_experts": 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var top map[string]any
			if err := json.Unmarshal([]byte(qwen3NextConfig), &top); err != nil {
				t.Fatal(err)
			}
			top["num_hidden_layers"] = 8
			for k, v := range tc.edit {
				top[k] = v
			}
			raw, _ := json.Marshal(top)
			c, err := model.ParseHybridConfig(raw)
			if err != nil {
				t.Fatal(err)
			}
			var moe []int
			for i := range c.NumHiddenLayers {
				if c.Hybrid.IsMoE(i) {
					moe = append(moe, i)
				}
			}
			if !reflect.DeepEqual(moe, tc.moe) {
				t.Errorf("MoE layers %v, want %v", moe, tc.moe)
			}
		})
	}
}

// FuzzParseHybridConfig: any config.json is parsed or refused with an
// error, never a panic, and one that parses passes Check and has a
// consistent layer plan and state size.
func FuzzParseHybridConfig(f *testing.F) {
	for _, s := range []string{qwen3NextConfig, qwen35Config, qwen35MoEConfig, `{"architectures":["Qwen3NextForCausalLM"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := model.ParseHybridConfig(data)
		if err != nil {
			return
		}
		if err := c.Check(); err != nil {
			t.Fatalf("parsed but Check: %v", err)
		}
		y := c.Hybrid
		if len(y.LayerTypes) != c.NumHiddenLayers || y.StateBytes() < 0 {
			t.Fatalf("%d layer types for %d layers, state %d bytes", len(y.LayerTypes), c.NumHiddenLayers, y.StateBytes())
		}
		for i := range c.NumHiddenLayers {
			y.IsLinear(i)
			y.IsMoE(i)
		}
	})
}
