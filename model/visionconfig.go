package model

import (
	"encoding/json"
	"fmt"
	"math"
)

// VisionConfig is a checkpoint's "vision_config": the vision tower of
// Qwen3.5 and Qwen3.5-MoE (transformers' Qwen3_5VisionConfig, which is
// Qwen3VLVisionConfig without DeepStack). The field names are config.json's.
type VisionConfig struct {
	Depth                 int    `json:"depth"`                   // transformer blocks
	HiddenSize            int    `json:"hidden_size"`             // width of a patch's embedding
	HiddenAct             string `json:"hidden_act"`              // the blocks' MLP activation: gelu_pytorch_tanh or gelu
	IntermediateSize      int    `json:"intermediate_size"`       // the blocks' MLP width
	NumHeads              int    `json:"num_heads"`               // attention heads of HiddenSize/NumHeads
	InChannels            int    `json:"in_channels"`             // 3 (RGB)
	PatchSize             int    `json:"patch_size"`              // pixels a side of a patch
	SpatialMergeSize      int    `json:"spatial_merge_size"`      // patches a side merged into one token
	TemporalPatchSize     int    `json:"temporal_patch_size"`     // frames a patch spans (a still image is repeated)
	OutHiddenSize         int    `json:"out_hidden_size"`         // the language model's hidden size
	NumPositionEmbeddings int    `json:"num_position_embeddings"` // a square grid of learned positions
	// DeepstackVisualIndexes are Qwen3-VL's DeepStack layers; Qwen3.5 has
	// none, and a tower with some is refused.
	DeepstackVisualIndexes []int `json:"deepstack_visual_indexes,omitempty"`

	// The top level's special tokens around and inside an image's tokens.
	ImageTokenID       int `json:"image_token_id"`
	VisionStartTokenID int `json:"vision_start_token_id"`
	VisionEndTokenID   int `json:"vision_end_token_id"`
}

// Vision tower activations (VisionConfig.HiddenAct).
const (
	ActGELUTanh = "gelu_pytorch_tanh" // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
	ActGELU     = "gelu"              // 0.5·x·(1 + erf(x/√2))
)

// defaultVision is transformers' Qwen3_5VisionConfig defaults.
func defaultVision() VisionConfig {
	return VisionConfig{Depth: 27, HiddenSize: 1152, HiddenAct: ActGELUTanh, IntermediateSize: 4304, NumHeads: 16,
		InChannels: 3, PatchSize: 16, SpatialMergeSize: 2, TemporalPatchSize: 2, OutHiddenSize: 3584,
		NumPositionEmbeddings: 2304}
}

// visionTokens are the top-level keys naming the image tokens.
type visionTokens struct {
	ImageTokenID       *int `json:"image_token_id"`
	VisionStartTokenID *int `json:"vision_start_token_id"`
	VisionEndTokenID   *int `json:"vision_end_token_id"`
}

// ParseVisionConfig reads the vision tower's part of a config.json: its
// "vision_config" (absent keys take transformers' defaults) and the top
// level's image_token_id, vision_start_token_id and vision_end_token_id,
// and checks them. A config without "vision_config" has no tower: nil, nil.
func ParseVisionConfig(data []byte) (*VisionConfig, error) {
	var top struct {
		VisionConfig json.RawMessage `json:"vision_config"`
		visionTokens
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("model: config.json: %w", err)
	}
	if len(top.VisionConfig) == 0 || string(top.VisionConfig) == "null" {
		return nil, nil
	}
	tok := top.visionTokens
	v := defaultVision()
	if err := json.Unmarshal(top.VisionConfig, &v); err != nil {
		return nil, fmt.Errorf("model: config.json vision_config: %w", err)
	}
	for _, t := range []struct {
		key string
		src *int
		dst *int
	}{{"image_token_id", tok.ImageTokenID, &v.ImageTokenID}, {"vision_start_token_id", tok.VisionStartTokenID, &v.VisionStartTokenID},
		{"vision_end_token_id", tok.VisionEndTokenID, &v.VisionEndTokenID}} {
		if t.src == nil {
			return nil, fmt.Errorf("model: config.json has a vision_config but no %q", t.key)
		}
		*t.dst = *t.src
	}
	if err := v.Check(); err != nil {
		return nil, err
	}
	return &v, nil
}

// Check reports a vision config the tower cannot run: dimensions out of
// 1…2^20, patches or merged tokens wider than 2^24, heads that do not divide the width, a head too narrow for 2-D
// rotary (a multiple of 4), a position grid that is not square, DeepStack.
func (v *VisionConfig) Check() error {
	const maxDim = 1 << 20
	for _, d := range []struct {
		name string
		v    int
	}{{"depth", v.Depth}, {"hidden_size", v.HiddenSize}, {"intermediate_size", v.IntermediateSize},
		{"num_heads", v.NumHeads}, {"in_channels", v.InChannels}, {"patch_size", v.PatchSize},
		{"spatial_merge_size", v.SpatialMergeSize}, {"temporal_patch_size", v.TemporalPatchSize},
		{"out_hidden_size", v.OutHiddenSize}, {"num_position_embeddings", v.NumPositionEmbeddings}} {
		if d.v <= 0 || d.v > maxDim {
			return fmt.Errorf("model: vision_config %s = %d, want 1…%d", d.name, d.v, maxDim)
		}
	}
	if v.PatchSize > 1<<10 || v.TemporalPatchSize > 1<<10 || v.SpatialMergeSize > 1<<10 {
		return fmt.Errorf("model: vision_config patch_size %d, temporal_patch_size %d, spatial_merge_size %d: each at most 1024",
			v.PatchSize, v.TemporalPatchSize, v.SpatialMergeSize)
	}
	const maxWidth = 1 << 24 // a patch's values, a merged token's: far above real towers, far below overflow
	if v.PatchDim() > maxWidth || v.HiddenSize*v.SpatialMergeSize*v.SpatialMergeSize > maxWidth {
		return fmt.Errorf("model: vision_config: a patch of %d values or a merged token of %d exceeds %d",
			v.PatchDim(), v.HiddenSize*v.SpatialMergeSize*v.SpatialMergeSize, maxWidth)
	}
	if v.HiddenSize%v.NumHeads != 0 || (v.HiddenSize/v.NumHeads)%4 != 0 {
		return fmt.Errorf("model: vision_config hidden_size %d over %d heads: a head's width must be a whole multiple of 4 (2-D rotary)", v.HiddenSize, v.NumHeads)
	}
	if s := v.gridSide(); s*s != v.NumPositionEmbeddings {
		return fmt.Errorf("model: vision_config num_position_embeddings %d is not a square", v.NumPositionEmbeddings)
	}
	if v.HiddenAct != ActGELUTanh && v.HiddenAct != ActGELU {
		return fmt.Errorf("model: vision_config hidden_act %q is not supported (want %s or %s)", v.HiddenAct, ActGELUTanh, ActGELU)
	}
	if len(v.DeepstackVisualIndexes) > 0 {
		return fmt.Errorf("model: vision_config deepstack_visual_indexes %v: DeepStack (Qwen3-VL) is not supported", v.DeepstackVisualIndexes)
	}
	return nil
}

// gridSide is the side of the learned position grid, transformers'
// num_grid_per_side = int(num_position_embeddings**0.5).
func (v *VisionConfig) gridSide() int {
	s := int(math.Sqrt(float64(v.NumPositionEmbeddings)))
	for s*s > v.NumPositionEmbeddings {
		s--
	}
	for (s+1)*(s+1) <= v.NumPositionEmbeddings {
		s++
	}
	return s
}

// HeadDim is the width of an attention head.
func (v *VisionConfig) HeadDim() int { return v.HiddenSize / v.NumHeads }

// PatchDim is the width of a patch as the processor lays it out:
// channels·temporal_patch_size·patch_size².
func (v *VisionConfig) PatchDim() int {
	return v.InChannels * v.TemporalPatchSize * v.PatchSize * v.PatchSize
}

// vision attaches a Qwen3.5 checkpoint's vision tower (ParseVisionConfig)
// to c with its M-RoPE layout: mrope_section from rope parameters or
// Qwen3.5's default, interleaved unless mrope_interleaved is false
// (transformers' Qwen3.5 always interleaves; the key is vLLM's).
func (c *Config) vision(data []byte, params ...*hfRopeParams) error {
	v, err := ParseVisionConfig(data)
	if err != nil || v == nil {
		return err
	}
	y := c.Hybrid
	if y.ModelType != "qwen3_5" && y.ModelType != "qwen3_5_moe" {
		return fmt.Errorf("model: config.json has a vision_config, but %s has no vision tower", y.ModelType)
	}
	c.Vision = v
	if y.MRopeSection == nil {
		y.MRopeSection = []int{11, 11, 10} // Qwen3_5TextRotaryEmbedding's default
	}
	y.MRopeInterleaved = true
	for _, p := range params {
		if p != nil && p.MRopeInterleaved != nil {
			y.MRopeInterleaved = *p.MRopeInterleaved
		}
	}
	return nil
}

// checkVision reports a vision tower the language model cannot take: its
// own config's faults, embeddings of another width than the text model's,
// image token ids outside the vocabulary, an M-RoPE layout that does not
// cover the rotary frequencies.
func (c *Config) checkVision() error {
	v := c.Vision
	if err := v.Check(); err != nil {
		return err
	}
	if c.Hybrid == nil {
		return fmt.Errorf("model: %s has a vision tower but is not a hybrid model", c.Architecture)
	}
	if v.OutHiddenSize != c.HiddenSize {
		return fmt.Errorf("model: vision_config out_hidden_size %d differs from the text model's hidden_size %d", v.OutHiddenSize, c.HiddenSize)
	}
	for _, id := range []int{v.ImageTokenID, v.VisionStartTokenID, v.VisionEndTokenID} {
		if id < 0 || id >= c.VocabSize {
			return fmt.Errorf("model: image token id %d is outside the vocabulary [0, %d)", id, c.VocabSize)
		}
	}
	s, half := c.Hybrid.MRopeSection, c.Hybrid.RotaryDim(c.HeadDim)/2
	if len(s) != 3 || s[0] < 0 || s[1] < 0 || s[2] < 0 || s[0]+s[1]+s[2] != half {
		return fmt.Errorf("model: config mrope_section %v must be three counts summing to rotary_dim/2 = %d", s, half)
	}
	return nil
}
