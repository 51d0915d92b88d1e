package model

import (
	"encoding/json"
	"fmt"
	"math"
)

// DFlashKind tells the block-diffusion draft architectures apart.
type DFlashKind string

const (
	// DFlash is DFlashDraftModel (z-lab/dflash dflash/model.py): Qwen3
	// layers whose attention sees the target's fused features as context.
	DFlash DFlashKind = "dflash"
	// DFlash2 is DFlash2DraftModel (vLLM qwen3_dflash2.py): DFlash plus a
	// dynamic grouped convolution around each attention and MLP, and a
	// candidate selector choosing the block's path among the top-k tokens.
	DFlash2 DFlashKind = "dflash2"
)

// dflashKind returns the kind config.json's architectures[0] names.
func dflashKind(arch string) (DFlashKind, bool) {
	switch arch {
	case "DFlashDraftModel":
		return DFlash, true
	case "DFlash2DraftModel":
		return DFlash2, true
	}
	return "", false
}

// IsDFlashArchitecture reports whether arch names a DFlash or DFlash2 draft.
func IsDFlashArchitecture(arch string) bool {
	_, ok := dflashKind(arch)
	return ok
}

// DFlashConfig is a DFlash or DFlash2 draft's config.json: the draft's own
// layers (Layers, Qwen3-shaped: no embeddings or head, it uses the
// target's) and its dflash_config.
type DFlashConfig struct {
	Kind DFlashKind `json:"kind"`
	// Layers is in a package manifest the draft's WeightsManifest.Config.
	Layers Config `json:"-"`
	// TargetLayerIDs are the target layers whose outputs, concatenated,
	// feed fc.
	TargetLayerIDs []int `json:"target_layer_ids"`
	// NumTargetLayers is the target's layer count the draft was trained
	// on (0 when the config does not say).
	NumTargetLayers int `json:"num_target_layers,omitempty"`
	// MaskTokenID is the token whose embedding fills the block after its
	// anchor.
	MaskTokenID int `json:"mask_token_id"`
	// BlockSize is the anchor plus the proposed tokens.
	BlockSize int `json:"block_size"`
	// Causal makes the block's queries see only the block's earlier
	// tokens; the context is always seen whole.
	Causal bool `json:"causal,omitempty"`

	// DFlash2 only.
	ConvTaps            int     `json:"conv_kernel_size,omitempty"`
	ConvGroupSize       int     `json:"conv_group_size,omitempty"`
	SelectorRank        int     `json:"selector_rank,omitempty"`
	SelectorTopK        int     `json:"selector_top_k,omitempty"`
	InputEmbeddingScale float64 `json:"input_embedding_scale,omitempty"` // 1 when absent
	OutputMultiplier    float64 `json:"output_multiplier,omitempty"`     // 1 when absent
	LogitSoftcap        float64 `json:"final_logit_softcapping,omitempty"`
}

// dflashJSON is the part of a DFlash config.json beyond the Qwen3 fields.
type dflashJSON struct {
	Architectures   []string         `json:"architectures"`
	BlockSize       *int             `json:"block_size"`
	NumTargetLayers int              `json:"num_target_layers"`
	IsCausal        *bool            `json:"is_causal"`
	IsNeoxStyle     *bool            `json:"is_neox_style"`
	LayerTypes      []string         `json:"layer_types"`
	TargetHidden    int              `json:"target_hidden_size"`
	DFlash          *json.RawMessage `json:"dflash_config"`
}

type dflashSection struct {
	TargetLayerIDs      []int    `json:"target_layer_ids"`
	MaskTokenID         *int     `json:"mask_token_id"`
	BlockSize           *int     `json:"block_size"`
	Causal              *bool    `json:"causal"`
	UseSWA              bool     `json:"use_swa"`
	AttentionSinkBias   bool     `json:"attention_sink_bias"`
	ConvTaps            int      `json:"conv_kernel_size"`
	ConvGroupSize       int      `json:"conv_group_size"`
	SelectorRank        int      `json:"selector_rank"`
	SelectorTopK        int      `json:"selector_top_k"`
	InputEmbeddingScale *float64 `json:"input_embedding_scale"`
	OutputMultiplier    *float64 `json:"output_multiplier"`
	LogitSoftcap        *float64 `json:"final_logit_softcapping"`
}

// ParseDFlashConfig reads a DFlash or DFlash2 draft's config.json. The
// draft's layers are read as a Qwen3 config (ParseHFConfig's defaults);
// dflash_config must give mask_token_id, and block_size there or at the
// top level; target_layer_ids default as in z-lab/dflash
// build_target_layer_ids. Attention is non-causal unless is_causal or
// dflash_config.causal says otherwise (vLLM qwen3_dflash.py
// _dflash_layer_causal). Features Splash does not run (sliding windows,
// attention sinks, interleaved RoPE) are refused by name.
func ParseDFlashConfig(data []byte) (*DFlashConfig, error) {
	var top dflashJSON
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("model: dflash config.json: %w", err)
	}
	if len(top.Architectures) == 0 || !IsDFlashArchitecture(top.Architectures[0]) {
		return nil, fmt.Errorf("model: config.json architectures %v is not a DFlash draft (want DFlashDraftModel or DFlash2DraftModel)", top.Architectures)
	}
	if top.DFlash == nil {
		return nil, fmt.Errorf("model: dflash config.json has no dflash_config")
	}
	var sec dflashSection
	if err := json.Unmarshal(*top.DFlash, &sec); err != nil {
		return nil, fmt.Errorf("model: dflash config.json dflash_config: %w", err)
	}
	layers, err := ParseHFConfig(data)
	if err != nil {
		return nil, err
	}
	c := &DFlashConfig{
		Layers:          *layers,
		NumTargetLayers: top.NumTargetLayers, TargetLayerIDs: sec.TargetLayerIDs,
		InputEmbeddingScale: 1, OutputMultiplier: 1,
	}
	c.Kind, _ = dflashKind(top.Architectures[0])
	switch {
	case sec.MaskTokenID == nil:
		return nil, fmt.Errorf("model: dflash_config has no mask_token_id")
	case sec.BlockSize != nil:
		c.BlockSize = *sec.BlockSize
	case top.BlockSize != nil:
		c.BlockSize = *top.BlockSize
	default:
		return nil, fmt.Errorf("model: dflash config.json gives no block_size")
	}
	c.MaskTokenID = *sec.MaskTokenID
	if top.IsCausal != nil {
		c.Causal = *top.IsCausal
	} else if sec.Causal != nil {
		c.Causal = *sec.Causal
	}
	for _, t := range top.LayerTypes {
		if t == "sliding_attention" {
			return nil, fmt.Errorf("model: dflash layer_types has sliding_attention, which is not supported")
		}
	}
	if sec.UseSWA {
		return nil, fmt.Errorf("model: dflash_config use_swa (sliding-window draft attention) is not supported")
	}
	if sec.AttentionSinkBias {
		return nil, fmt.Errorf("model: dflash_config attention_sink_bias is not supported")
	}
	if top.IsNeoxStyle != nil && !*top.IsNeoxStyle {
		return nil, fmt.Errorf("model: dflash is_neox_style = false (interleaved RoPE) is not supported")
	}
	if top.TargetHidden != 0 && top.TargetHidden != layers.HiddenSize {
		return nil, fmt.Errorf("model: dflash target_hidden_size %d differs from hidden_size %d, which is not supported", top.TargetHidden, layers.HiddenSize)
	}
	if c.TargetLayerIDs == nil {
		if c.NumTargetLayers <= 0 {
			return nil, fmt.Errorf("model: dflash_config has no target_layer_ids and config.json no num_target_layers")
		}
		c.TargetLayerIDs = defaultTargetLayerIDs(c.NumTargetLayers, layers.NumHiddenLayers)
	}
	if c.Kind == DFlash2 {
		c.ConvTaps, c.ConvGroupSize = sec.ConvTaps, sec.ConvGroupSize
		c.SelectorRank, c.SelectorTopK = sec.SelectorRank, sec.SelectorTopK
		if sec.InputEmbeddingScale != nil {
			c.InputEmbeddingScale = *sec.InputEmbeddingScale
		}
		if sec.OutputMultiplier != nil {
			c.OutputMultiplier = *sec.OutputMultiplier
		}
		if sec.LogitSoftcap != nil && *sec.LogitSoftcap > 0 {
			c.LogitSoftcap = *sec.LogitSoftcap
		}
	}
	return c, c.Check()
}

// defaultTargetLayerIDs spreads n draft layers' features over a target of
// t layers: the middle layer for one, else evenly from layer 1 to t-3,
// rounded half to even (z-lab/dflash dflash/model.py
// build_target_layer_ids, which uses Python's round).
func defaultTargetLayerIDs(t, n int) []int {
	if n == 1 {
		return []int{t / 2}
	}
	start, span := 1.0, float64(t-3-1)
	ids := make([]int, n)
	for i := range ids {
		ids[i] = int(math.RoundToEven(start + float64(i)*span/float64(n-1)))
	}
	return ids
}

// Check reports the first inconsistency of the draft's own dimensions.
func (c *DFlashConfig) Check() error {
	if err := c.Layers.Check(); err != nil {
		return fmt.Errorf("model: dflash draft: %w", err)
	}
	if c.BlockSize < 2 || c.BlockSize > 1024 {
		return fmt.Errorf("model: dflash block_size %d must be in [2, 1024]", c.BlockSize)
	}
	if len(c.TargetLayerIDs) == 0 {
		return fmt.Errorf("model: dflash target_layer_ids is empty")
	}
	if c.MaskTokenID < 0 || c.MaskTokenID >= c.Layers.VocabSize {
		return fmt.Errorf("model: dflash mask_token_id %d is outside the vocabulary [0, %d)", c.MaskTokenID, c.Layers.VocabSize)
	}
	if c.Kind != DFlash2 {
		return nil
	}
	h := c.Layers.HiddenSize
	switch {
	case c.ConvTaps < 1 || c.ConvTaps > c.BlockSize:
		return fmt.Errorf("model: dflash2 conv_kernel_size %d must be in [1, block_size %d]", c.ConvTaps, c.BlockSize)
	case c.ConvGroupSize < 1 || h%c.ConvGroupSize != 0:
		return fmt.Errorf("model: dflash2 conv_group_size %d must divide hidden_size %d", c.ConvGroupSize, h)
	case c.SelectorRank < 1:
		return fmt.Errorf("model: dflash2 selector_rank %d must be positive", c.SelectorRank)
	case c.SelectorTopK < 1 || c.SelectorTopK > c.Layers.VocabSize:
		return fmt.Errorf("model: dflash2 selector_top_k %d must be in [1, vocab_size %d]", c.SelectorTopK, c.Layers.VocabSize)
	}
	return nil
}

// CheckTarget reports the first way the draft does not fit target: the
// hidden width and vocabulary it shares with the target's embeddings and
// head, and the target layers it reads.
func (c *DFlashConfig) CheckTarget(target *Config) error {
	if c.Layers.HiddenSize != target.HiddenSize {
		return fmt.Errorf("model: dflash draft hidden_size %d differs from the target's %d", c.Layers.HiddenSize, target.HiddenSize)
	}
	if c.Layers.VocabSize != target.VocabSize {
		return fmt.Errorf("model: dflash draft vocab_size %d differs from the target's %d", c.Layers.VocabSize, target.VocabSize)
	}
	if c.NumTargetLayers != 0 && c.NumTargetLayers != target.NumHiddenLayers {
		return fmt.Errorf("model: dflash draft was trained on a target of %d layers, this target has %d", c.NumTargetLayers, target.NumHiddenLayers)
	}
	seen := map[int]bool{}
	for _, id := range c.TargetLayerIDs {
		if id < 0 || id >= target.NumHiddenLayers {
			return fmt.Errorf("model: dflash target_layer_ids has layer %d, outside the target's %d layers", id, target.NumHiddenLayers)
		}
		if seen[id] {
			return fmt.Errorf("model: dflash target_layer_ids has layer %d twice", id)
		}
		seen[id] = true
	}
	return nil
}
