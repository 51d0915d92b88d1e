package model

import (
	"encoding/json"
	"fmt"
)

// hfConfig is the subset of a Hugging Face config.json that Splash reads.
type hfConfig struct {
	Architectures         []string        `json:"architectures"`
	ModelType             string          `json:"model_type"`
	HiddenSize            int             `json:"hidden_size"`
	IntermediateSize      int             `json:"intermediate_size"`
	NumHiddenLayers       int             `json:"num_hidden_layers"`
	NumAttentionHeads     int             `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	VocabSize             int             `json:"vocab_size"`
	RMSNormEps            *float64        `json:"rms_norm_eps"`
	RopeTheta             *float64        `json:"rope_theta"`
	RopeScaling           *RopeScaling    `json:"rope_scaling"`
	MaxPositionEmbeddings int             `json:"max_position_embeddings"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	AttentionBias         bool            `json:"attention_bias"`
	BOSTokenID            json.RawMessage `json:"bos_token_id"`
	EOSTokenID            json.RawMessage `json:"eos_token_id"`
}

// ParseHFConfig reads a Hugging Face config.json, applying the library's
// defaults for absent fields: head_dim = hidden/heads, num_key_value_heads =
// heads, rope_theta 10000, rms_norm_eps 1e-6, tie_word_embeddings false (the
// default of both LlamaConfig and Qwen3Config in transformers).
func ParseHFConfig(data []byte) (*Config, error) {
	var h hfConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("model: config.json: %w", err)
	}
	if len(h.Architectures) == 0 {
		return nil, fmt.Errorf("model: config.json has no \"architectures\"")
	}
	if IsHybridArchitecture(h.Architectures[0]) {
		return ParseHybridConfig(data)
	}
	c := &Config{
		Architecture: h.Architectures[0], ModelType: h.ModelType,
		HiddenSize: h.HiddenSize, IntermediateSize: h.IntermediateSize,
		NumHiddenLayers: h.NumHiddenLayers, NumAttentionHeads: h.NumAttentionHeads,
		NumKeyValueHeads: h.NumAttentionHeads, VocabSize: h.VocabSize,
		RMSNormEps: 1e-6, RopeTheta: 10000, RopeScaling: h.RopeScaling,
		MaxPositionEmbeddings: h.MaxPositionEmbeddings, AttentionBias: h.AttentionBias,
	}
	if h.NumKeyValueHeads != nil {
		c.NumKeyValueHeads = *h.NumKeyValueHeads
	}
	if h.HeadDim != nil {
		c.HeadDim = *h.HeadDim
	} else if h.NumAttentionHeads > 0 {
		c.HeadDim = h.HiddenSize / h.NumAttentionHeads
	}
	if h.RMSNormEps != nil {
		c.RMSNormEps = *h.RMSNormEps
	}
	if h.RopeTheta != nil {
		c.RopeTheta = *h.RopeTheta
	}
	if h.TieWordEmbeddings != nil {
		c.TieWordEmbeddings = *h.TieWordEmbeddings
	}
	var err error
	if c.BOSTokenID, err = tokenIDs(h.BOSTokenID); err != nil {
		return nil, fmt.Errorf("model: config.json bos_token_id: %w", err)
	}
	if c.EOSTokenID, err = tokenIDs(h.EOSTokenID); err != nil {
		return nil, fmt.Errorf("model: config.json eos_token_id: %w", err)
	}
	return c, nil
}

// tokenIDs accepts null, an integer or a list of integers.
func tokenIDs(raw json.RawMessage) ([]int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one int
	if err := json.Unmarshal(raw, &one); err == nil {
		return []int{one}, nil
	}
	var many []int
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("want an integer or a list of integers, got %s", raw)
	}
	return many, nil
}
