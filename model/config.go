package model

import (
	"fmt"
	"math"
)

// Config is the architecture and dimensions of a model, with fields named as
// in the Hugging Face config.json.
type Config struct {
	Architecture          string       `json:"architecture"` // e.g. "Qwen3ForCausalLM", from config.json "architectures"[0]
	ModelType             string       `json:"model_type,omitempty"`
	HiddenSize            int          `json:"hidden_size"`
	IntermediateSize      int          `json:"intermediate_size"`
	NumHiddenLayers       int          `json:"num_hidden_layers"`
	NumAttentionHeads     int          `json:"num_attention_heads"`
	NumKeyValueHeads      int          `json:"num_key_value_heads"`
	HeadDim               int          `json:"head_dim"` // hidden_size/num_attention_heads when absent
	VocabSize             int          `json:"vocab_size"`
	RMSNormEps            float64      `json:"rms_norm_eps"`
	RopeTheta             float64      `json:"rope_theta"`
	RopeScaling           *RopeScaling `json:"rope_scaling,omitempty"`
	MaxPositionEmbeddings int          `json:"max_position_embeddings"`
	TieWordEmbeddings     bool         `json:"tie_word_embeddings"`
	AttentionBias         bool         `json:"attention_bias,omitempty"` // q/k/v projection biases (not supported yet: rejected)
	BOSTokenID            []int        `json:"bos_token_id,omitempty"`
	EOSTokenID            []int        `json:"eos_token_id,omitempty"`
	Hybrid                *Hybrid      `json:"hybrid,omitempty"` // hybrid models' linear layers and experts (hybridconfig.go)
	// Vision is the vision tower of a checkpoint that has one (Qwen3.5's
	// "vision_config" and image token ids); nil for a text-only model.
	Vision *VisionConfig `json:"vision,omitempty"`
}

// RopeScaling is config.json's "rope_scaling". Only rope_type "llama3" (and
// "default"/absent) is supported.
type RopeScaling struct {
	RopeType                      string  `json:"rope_type"`
	Factor                        float64 `json:"factor"`
	LowFreqFactor                 float64 `json:"low_freq_factor"`
	HighFreqFactor                float64 `json:"high_freq_factor"`
	OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings"`
}

// KVDim is the width of one token's keys (and of its values) in one layer.
func (c *Config) KVDim() int { return c.NumKeyValueHeads * c.HeadDim }

// QDim is the width of one token's queries in one layer.
func (c *Config) QDim() int { return c.NumAttentionHeads * c.HeadDim }

// LayerWeights is the weights of every layer's seven matrix products: the
// multiply-adds one token costs in them.
func (c *Config) LayerWeights() int64 {
	h, q, kv, in := int64(c.HiddenSize), int64(c.QDim()), int64(c.KVDim()), int64(c.IntermediateSize)
	return int64(c.NumHiddenLayers) * (2*h*q + 2*h*kv + 3*h*in)
}

// AttentionMACs is the multiply-adds one token's attention costs per
// cached position it sees: a score and a weighted value for every query
// head of every layer.
func (c *Config) AttentionMACs() int64 {
	return 2 * int64(c.NumHiddenLayers) * int64(c.QDim())
}

// AttentionBreakEven is the context at which a token's attention costs as
// much as its matrix products, on a backend whose matrix kernels do
// speedup multiply-adds in the time its attention does one (at least 1).
func (c *Config) AttentionBreakEven(speedup float64) int {
	return max(1, int(float64(c.LayerWeights())/(float64(c.AttentionMACs())*speedup)+0.5))
}

// Check reports the first inconsistency in the dimensions, naming it.
func (c *Config) Check() error {
	if c.Hybrid != nil {
		return c.checkHybrid()
	}
	if c.Vision != nil {
		return fmt.Errorf("model: %s has a vision tower but is not a hybrid model", c.Architecture)
	}
	pos := []struct {
		name string
		v    int
	}{
		{"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumHiddenLayers}, {"num_attention_heads", c.NumAttentionHeads},
		{"num_key_value_heads", c.NumKeyValueHeads}, {"head_dim", c.HeadDim}, {"vocab_size", c.VocabSize},
	}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("model: config %s = %d, must be positive", p.name, p.v)
		}
	}
	if c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
		return fmt.Errorf("model: config num_attention_heads %d is not a multiple of num_key_value_heads %d",
			c.NumAttentionHeads, c.NumKeyValueHeads)
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("model: config head_dim %d must be even for RoPE", c.HeadDim)
	}
	if c.RMSNormEps <= 0 || c.RMSNormEps >= 1 {
		return fmt.Errorf("model: config rms_norm_eps %g must be in (0, 1)", c.RMSNormEps)
	}
	if c.RopeTheta <= 1 {
		return fmt.Errorf("model: config rope_theta %g must be above 1 (RoPE's wavelengths grow with it)", c.RopeTheta)
	}
	// Positions are int32 in batches and caches; the context itself drives
	// no allocation (the served context is the memory plan's).
	if c.MaxPositionEmbeddings < 0 || c.MaxPositionEmbeddings > math.MaxInt32 {
		return fmt.Errorf("model: config max_position_embeddings %d must be in [0, %d]", c.MaxPositionEmbeddings, math.MaxInt32)
	}
	if c.AttentionBias {
		return fmt.Errorf("model: config attention_bias = true is not supported")
	}
	if s := c.RopeScaling; s != nil {
		switch s.RopeType {
		case "", "default":
		case "llama3":
			switch {
			case s.Factor < 1:
				return fmt.Errorf("model: config rope_scaling.factor %g must be at least 1", s.Factor)
			case s.LowFreqFactor <= 0 || s.HighFreqFactor <= s.LowFreqFactor:
				return fmt.Errorf("model: config rope_scaling.low_freq_factor %g and high_freq_factor %g must satisfy 0 < low < high",
					s.LowFreqFactor, s.HighFreqFactor)
			case s.OriginalMaxPositionEmbeddings <= 0 || s.OriginalMaxPositionEmbeddings > math.MaxInt32:
				return fmt.Errorf("model: config rope_scaling.original_max_position_embeddings %d must be in [1, %d]",
					s.OriginalMaxPositionEmbeddings, math.MaxInt32)
			}
		default:
			return fmt.Errorf("model: rope_scaling type %q is not supported (want llama3)", s.RopeType)
		}
	}
	return nil
}
