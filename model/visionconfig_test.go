package model

import (
	"reflect"
	"strings"
	"testing"
)

// qwen35VisionConfig is shaped like a small Qwen3.5 checkpoint's
// config.json: the text model elided, the vision tower given in full.
const qwen35VisionConfig = `{
  "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
  "image_token_id": 248056, "vision_start_token_id": 248053, "vision_end_token_id": 248054,
  "text_config": {"hidden_size": 1024},
  "vision_config": {"model_type": "qwen3_5", "depth": 12, "hidden_size": 768, "hidden_act": "gelu_pytorch_tanh",
    "intermediate_size": 3072, "num_heads": 12, "in_channels": 3, "patch_size": 16, "spatial_merge_size": 2,
    "temporal_patch_size": 2, "out_hidden_size": 1024, "num_position_embeddings": 2304,
    "deepstack_visual_indexes": []}
}`

func TestParseVisionConfig(t *testing.T) {
	v, err := ParseVisionConfig([]byte(qwen35VisionConfig))
	if err != nil {
		t.Fatal(err)
	}
	want := VisionConfig{Depth: 12, HiddenSize: 768, HiddenAct: ActGELUTanh, IntermediateSize: 3072, NumHeads: 12,
		InChannels: 3, PatchSize: 16, SpatialMergeSize: 2, TemporalPatchSize: 2, OutHiddenSize: 1024,
		NumPositionEmbeddings: 2304, DeepstackVisualIndexes: []int{},
		ImageTokenID: 248056, VisionStartTokenID: 248053, VisionEndTokenID: 248054}
	if !reflect.DeepEqual(*v, want) {
		t.Fatalf("parsed %+v\nwant   %+v", *v, want)
	}
	if v.HeadDim() != 64 || v.PatchDim() != 3*2*16*16 || v.gridSide() != 48 {
		t.Fatalf("head dim %d, patch dim %d, grid side %d", v.HeadDim(), v.PatchDim(), v.gridSide())
	}

	none, err := ParseVisionConfig([]byte(`{"architectures": ["Qwen3_5ForCausalLM"], "hidden_size": 8}`))
	if none != nil || err != nil {
		t.Fatalf("a config without vision_config: %v, %v", none, err)
	}

	// Absent keys take Qwen3_5VisionConfig's defaults.
	d, err := ParseVisionConfig([]byte(`{"image_token_id": 1, "vision_start_token_id": 2, "vision_end_token_id": 3, "vision_config": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Depth != 27 || d.HiddenSize != 1152 || d.IntermediateSize != 4304 || d.OutHiddenSize != 3584 {
		t.Fatalf("defaults %+v", *d)
	}
}

func TestParseVisionConfigRefuses(t *testing.T) {
	tokens := `"image_token_id": 1, "vision_start_token_id": 2, "vision_end_token_id": 3`
	tests := []struct {
		name, json, want string
	}{
		{"no image token", `{"vision_config": {}}`, `no "image_token_id"`},
		{"deepstack", `{` + tokens + `, "vision_config": {"deepstack_visual_indexes": [3, 7]}}`, "DeepStack"},
		{"activation", `{` + tokens + `, "vision_config": {"hidden_act": "quick_gelu"}}`, "hidden_act"},
		{"heads", `{` + tokens + `, "vision_config": {"hidden_size": 100, "num_heads": 16}}`, "multiple of 4"},
		{"positions", `{` + tokens + `, "vision_config": {"num_position_embeddings": 2300}}`, "not a square"},
		{"zero depth", `{` + tokens + `, "vision_config": {"depth": 0}}`, "depth = 0"},
		{"huge patch", `{` + tokens + `, "vision_config": {"patch_size": 100000}}`, "at most 1024"},
		{"wide patch", `{` + tokens + `, "vision_config": {"patch_size": 1024, "temporal_patch_size": 1024}}`, "exceeds"},
		{"not json", `{"vision_config": [}`, "config.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseVisionConfig([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzParseVisionConfig: no config.json makes ParseVisionConfig panic, and
// every config it accepts passes Check with a patch width of at most 2^24
// (so no size computed from it overflows).
func FuzzParseVisionConfig(f *testing.F) {
	f.Add([]byte(qwen35VisionConfig))
	f.Add([]byte(`{"image_token_id": 1, "vision_start_token_id": 2, "vision_end_token_id": 3, "vision_config": {}}`))
	f.Add([]byte(`{"vision_config": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVisionConfig(data)
		if err != nil || v == nil {
			return
		}
		if err := v.Check(); err != nil {
			t.Fatalf("accepted a config Check refuses: %v", err)
		}
		if v.PatchDim() <= 0 || v.PatchDim() > 1<<24 {
			t.Fatalf("patch width %d", v.PatchDim())
		}
	})
}
