package model

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/splash-inference/splash/metal"
)

// Layer types of a hybrid model's config.json "layer_types".
const (
	LayerFullAttention   = "full_attention"
	LayerLinearAttention = "linear_attention"
)

// Hybrid is what a hybrid model's config.json (Qwen3-Next, Qwen3.5,
// Qwen3.5-MoE) says beyond a dense model's fields, which stay in Config
// (for Qwen3.5 both come from "text_config"). The specification is
// transformers' models/qwen3_next/configuration_qwen3_next.py,
// models/qwen3_5/modular_qwen3_5.py and
// models/qwen3_5_moe/configuration_qwen3_5_moe.py.
type Hybrid struct {
	ModelType string `json:"model_type"` // "qwen3_next", "qwen3_5" or "qwen3_5_moe"
	// TextPrefix starts the text model's tensor names: "model." or, for
	// the *ForConditionalGeneration checkpoints, "model.language_model."
	// (whose "model.visual.*" and "mtp.*" tensors are not read).
	TextPrefix string   `json:"text_prefix"`
	LayerTypes []string `json:"layer_types"` // one per layer: LayerFullAttention or LayerLinearAttention
	// PartialRotaryFactor is the fraction of each attention head's leading
	// dimensions that RoPE rotates (M-RoPE's sections are all the text
	// position for text, so it is 1-D RoPE).
	PartialRotaryFactor float64 `json:"partial_rotary_factor"`
	// MRopeSection splits the rotary frequencies among M-RoPE's temporal,
	// height and width positions (rope_parameters "mrope_section", summing
	// to rotary_dim/2), interleaved T,H,W,T,H,W,… (Qwen3-VL's
	// apply_interleaved_mrope) when MRopeInterleaved, else in three runs.
	// Only image tokens have different positions in the three; set for a
	// model with a vision tower.
	MRopeSection     []int `json:"mrope_section,omitempty"`
	MRopeInterleaved bool  `json:"mrope_interleaved,omitempty"`

	// The Gated DeltaNet layers.
	LinearConvKernelDim int `json:"linear_conv_kernel_dim"`
	LinearNumKeyHeads   int `json:"linear_num_key_heads"`
	LinearNumValueHeads int `json:"linear_num_value_heads"`
	LinearKeyHeadDim    int `json:"linear_key_head_dim"`
	LinearValueHeadDim  int `json:"linear_value_head_dim"`

	// Mixture of experts; NumExperts 0 for a dense MLP in every layer.
	NumExperts                   int  `json:"num_experts,omitempty"`
	NumExpertsPerTok             int  `json:"num_experts_per_tok,omitempty"`
	MoEIntermediateSize          int  `json:"moe_intermediate_size,omitempty"`
	SharedExpertIntermediateSize int  `json:"shared_expert_intermediate_size,omitempty"`
	NormTopKProb                 bool `json:"norm_topk_prob,omitempty"` // renormalise the top-k router weights to sum 1
	// Qwen3-Next: layer i is MoE when (i+1)%DecoderSparseStep == 0 and i is
	// not in MLPOnlyLayers. Qwen3.5-MoE: every layer.
	DecoderSparseStep int   `json:"decoder_sparse_step,omitempty"`
	MLPOnlyLayers     []int `json:"mlp_only_layers,omitempty"`
}

// hybridArchitecture returns the model type and text prefix of the
// architectures Hybrid describes.
func hybridArchitecture(arch string) (modelType, prefix string, ok bool) {
	switch arch {
	case "Qwen3NextForCausalLM":
		return "qwen3_next", "model.", true
	case "Qwen3_5ForConditionalGeneration":
		return "qwen3_5", "model.language_model.", true
	case "Qwen3_5ForCausalLM":
		return "qwen3_5", "model.", true
	case "Qwen3_5MoeForConditionalGeneration":
		return "qwen3_5_moe", "model.language_model.", true
	case "Qwen3_5MoeForCausalLM":
		return "qwen3_5_moe", "model.", true
	}
	return "", "", false
}

// IsHybridArchitecture reports whether arch is parsed by ParseHybridConfig.
func IsHybridArchitecture(arch string) bool {
	_, _, ok := hybridArchitecture(arch)
	return ok
}

// hfHybrid is the subset of a hybrid config.json (or of its "text_config")
// that Splash reads. Pointers tell absent keys from zeros: keys whose
// defaults differ between transformers and mlx-lm must be present.
type hfHybrid struct {
	Architectures         []string        `json:"architectures"`
	TextConfig            json.RawMessage `json:"text_config"`
	HiddenSize            *int            `json:"hidden_size"`
	IntermediateSize      *int            `json:"intermediate_size"`
	NumHiddenLayers       *int            `json:"num_hidden_layers"`
	NumAttentionHeads     *int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	VocabSize             *int            `json:"vocab_size"`
	RMSNormEps            *float64        `json:"rms_norm_eps"`
	RopeTheta             *float64        `json:"rope_theta"`
	PartialRotaryFactor   *float64        `json:"partial_rotary_factor"`
	RopeParameters        *hfRopeParams   `json:"rope_parameters"`
	RopeScaling           *hfRopeParams   `json:"rope_scaling"`
	MaxPositionEmbeddings int             `json:"max_position_embeddings"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	AttentionBias         bool            `json:"attention_bias"`
	AttnOutputGate        *bool           `json:"attn_output_gate"`
	HiddenAct             *string         `json:"hidden_act"`
	BOSTokenID            json.RawMessage `json:"bos_token_id"`
	EOSTokenID            json.RawMessage `json:"eos_token_id"`

	LayerTypes            []string `json:"layer_types"`
	FullAttentionInterval *int     `json:"full_attention_interval"`
	LinearConvKernelDim   *int     `json:"linear_conv_kernel_dim"`
	LinearNumKeyHeads     *int     `json:"linear_num_key_heads"`
	LinearNumValueHeads   *int     `json:"linear_num_value_heads"`
	LinearKeyHeadDim      *int     `json:"linear_key_head_dim"`
	LinearValueHeadDim    *int     `json:"linear_value_head_dim"`

	NumExperts                   *int  `json:"num_experts"`
	NumExpertsPerTok             *int  `json:"num_experts_per_tok"`
	MoEIntermediateSize          *int  `json:"moe_intermediate_size"`
	SharedExpertIntermediateSize *int  `json:"shared_expert_intermediate_size"`
	NormTopKProb                 *bool `json:"norm_topk_prob"`
	DecoderSparseStep            *int  `json:"decoder_sparse_step"`
	MLPOnlyLayers                []int `json:"mlp_only_layers"`
}

// hfRopeParams is "rope_parameters" (transformers v5) or the legacy
// "rope_scaling".
type hfRopeParams struct {
	RopeType            string   `json:"rope_type"`
	Type                string   `json:"type"`
	RopeTheta           *float64 `json:"rope_theta"`
	PartialRotaryFactor *float64 `json:"partial_rotary_factor"`
	MRopeSection        []int    `json:"mrope_section"`
	MRopeInterleaved    *bool    `json:"mrope_interleaved"`
}

// ParseHybridConfig reads the config.json of a hybrid checkpoint into a
// Config whose Hybrid is set, and checks it (Config.Check). The text model's
// keys are read from "text_config" when there is one, else from the top
// level; tie_word_embeddings, bos_token_id and eos_token_id from the top
// level when present there. Defaults are transformers' where it and
// mlx-lm agree (rms_norm_eps 1e-6, partial_rotary_factor 0.25,
// full_attention_interval 4, decoder_sparse_step 1, norm_topk_prob true,
// tie_word_embeddings false); every dimension must be given.
func ParseHybridConfig(data []byte) (*Config, error) {
	var top hfHybrid
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("model: config.json: %w", err)
	}
	if len(top.Architectures) == 0 {
		return nil, fmt.Errorf("model: config.json has no \"architectures\"")
	}
	arch := top.Architectures[0]
	modelType, prefix, ok := hybridArchitecture(arch)
	if !ok {
		return nil, fmt.Errorf("model: architecture %q is not a hybrid architecture", arch)
	}
	h := top
	if len(top.TextConfig) > 0 && string(top.TextConfig) != "null" {
		h = hfHybrid{}
		if err := json.Unmarshal(top.TextConfig, &h); err != nil {
			return nil, fmt.Errorf("model: config.json text_config: %w", err)
		}
		if top.TieWordEmbeddings != nil {
			h.TieWordEmbeddings = top.TieWordEmbeddings
		}
		if len(top.BOSTokenID) > 0 {
			h.BOSTokenID = top.BOSTokenID
		}
		if len(top.EOSTokenID) > 0 {
			h.EOSTokenID = top.EOSTokenID
		}
	}
	c, err := h.config(arch, modelType, prefix)
	if err != nil {
		return nil, err
	}
	if err := c.vision(data, h.RopeScaling, h.RopeParameters); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// config fills a Config from h; missing required keys are named.
func (h *hfHybrid) config(arch, modelType, prefix string) (*Config, error) {
	c := &Config{Architecture: arch, ModelType: modelType, RMSNormEps: 1e-6,
		MaxPositionEmbeddings: h.MaxPositionEmbeddings, AttentionBias: h.AttentionBias}
	y := &Hybrid{ModelType: modelType, TextPrefix: prefix, PartialRotaryFactor: 0.25, DecoderSparseStep: 1, NormTopKProb: true}
	c.Hybrid = y
	required := []requiredInt{
		{"hidden_size", h.HiddenSize, &c.HiddenSize},
		{"num_hidden_layers", h.NumHiddenLayers, &c.NumHiddenLayers},
		{"num_attention_heads", h.NumAttentionHeads, &c.NumAttentionHeads},
		{"num_key_value_heads", h.NumKeyValueHeads, &c.NumKeyValueHeads},
		{"head_dim", h.HeadDim, &c.HeadDim},
		{"vocab_size", h.VocabSize, &c.VocabSize},
		{"linear_conv_kernel_dim", h.LinearConvKernelDim, &y.LinearConvKernelDim},
		{"linear_num_key_heads", h.LinearNumKeyHeads, &y.LinearNumKeyHeads},
		{"linear_num_value_heads", h.LinearNumValueHeads, &y.LinearNumValueHeads},
		{"linear_key_head_dim", h.LinearKeyHeadDim, &y.LinearKeyHeadDim},
		{"linear_value_head_dim", h.LinearValueHeadDim, &y.LinearValueHeadDim},
	}
	// Qwen3.5 has no experts, Qwen3.5-MoE has them in every layer, and
	// Qwen3-Next must say how many (transformers' default is 512, mlx-lm
	// has none): 0 makes every layer's MLP dense.
	switch {
	case modelType == "qwen3_5":
		if h.NumExperts != nil && *h.NumExperts != 0 {
			return nil, fmt.Errorf("model: config num_experts = %d, but qwen3_5 has no experts (qwen3_5_moe has)", *h.NumExperts)
		}
	case modelType == "qwen3_next" && h.NumExperts != nil && *h.NumExperts == 0:
	default:
		required = append(required, []requiredInt{
			{"num_experts", h.NumExperts, &y.NumExperts},
			{"num_experts_per_tok", h.NumExpertsPerTok, &y.NumExpertsPerTok},
			{"moe_intermediate_size", h.MoEIntermediateSize, &y.MoEIntermediateSize},
			{"shared_expert_intermediate_size", h.SharedExpertIntermediateSize, &y.SharedExpertIntermediateSize},
		}...)
	}
	for _, r := range required {
		if r.src == nil {
			return nil, fmt.Errorf("model: config.json has no %q (%s needs it)", r.name, modelType)
		}
		*r.dst = *r.src
	}
	override(&c.IntermediateSize, h.IntermediateSize)
	override(&c.RMSNormEps, h.RMSNormEps)
	override(&c.TieWordEmbeddings, h.TieWordEmbeddings)
	if err := h.rope(c); err != nil {
		return nil, err
	}
	if h.HiddenAct != nil && *h.HiddenAct != "silu" {
		return nil, fmt.Errorf("model: config hidden_act %q is not supported (want silu)", *h.HiddenAct)
	}
	if h.AttnOutputGate != nil && !*h.AttnOutputGate {
		return nil, fmt.Errorf("model: config attn_output_gate = false is not supported (%s's attention is gated)", modelType)
	}
	if err := h.layers(c); err != nil {
		return nil, err
	}
	if modelType == "qwen3_5_moe" {
		// Qwen3_5MoeTopKRouter (Qwen3VLMoeTextTopKRouter) always
		// renormalises and every layer is MoE: the keys that say otherwise
		// would build another model.
		if h.NormTopKProb != nil && !*h.NormTopKProb {
			return nil, fmt.Errorf("model: config norm_topk_prob = false, but the qwen3_5_moe router always renormalises")
		}
		if (h.DecoderSparseStep != nil && *h.DecoderSparseStep != 1) || len(h.MLPOnlyLayers) > 0 {
			return nil, fmt.Errorf("model: config decoder_sparse_step/mlp_only_layers: every qwen3_5_moe layer is MoE")
		}
	} else if modelType == "qwen3_next" {
		override(&y.NormTopKProb, h.NormTopKProb)
		override(&y.DecoderSparseStep, h.DecoderSparseStep)
		if len(h.MLPOnlyLayers) > 0 {
			y.MLPOnlyLayers = h.MLPOnlyLayers
		}
	}
	for _, k := range []struct {
		key string
		raw json.RawMessage
		ids *[]int
	}{{"bos_token_id", h.BOSTokenID, &c.BOSTokenID}, {"eos_token_id", h.EOSTokenID, &c.EOSTokenID}} {
		ids, err := tokenIDs(k.raw)
		if err != nil {
			return nil, fmt.Errorf("model: config.json %s: %w", k.key, err)
		}
		*k.ids = ids
	}
	return c, nil
}

// requiredInt is an integer key config.json must have: its name, where
// it was read and where it goes.
type requiredInt struct {
	name     string
	src, dst *int
}

// override sets *dst to *src when the key src was read from was present.
func override[T any](dst, src *T) {
	if src != nil {
		*dst = *src
	}
}

// rope reads rope_theta and partial_rotary_factor from rope_parameters or
// the top level (rope_parameters wins); only the default rope type is
// supported.
func (h *hfHybrid) rope(c *Config) error {
	override(&c.RopeTheta, h.RopeTheta)
	override(&c.Hybrid.PartialRotaryFactor, h.PartialRotaryFactor)
	for _, p := range []struct {
		key string
		v   *hfRopeParams
	}{{"rope_scaling", h.RopeScaling}, {"rope_parameters", h.RopeParameters}} {
		if p.v == nil {
			continue
		}
		t := p.v.RopeType
		if t == "" {
			t = p.v.Type
		}
		if t != "" && t != "default" {
			return fmt.Errorf("model: config %s type %q is not supported (want default)", p.key, t)
		}
		override(&c.RopeTheta, p.v.RopeTheta)
		override(&c.Hybrid.PartialRotaryFactor, p.v.PartialRotaryFactor)
		if p.v.MRopeSection != nil {
			c.Hybrid.MRopeSection = slices.Clone(p.v.MRopeSection)
		}
		if p.v.MRopeInterleaved != nil {
			c.Hybrid.MRopeInterleaved = *p.v.MRopeInterleaved
		}
	}
	if c.RopeTheta == 0 {
		return fmt.Errorf("model: config.json has no rope_theta (at the top level or in rope_parameters)")
	}
	return nil
}

// layers reads layer_types, or makes them from full_attention_interval
// (every interval-th layer full attention, the rest linear); with both
// present they must agree, since transformers reads the first and mlx-lm
// the second.
func (h *hfHybrid) layers(c *Config) error {
	n := c.NumHiddenLayers
	if n <= 0 {
		return fmt.Errorf("model: config num_hidden_layers = %d, must be positive", n)
	}
	interval := 4
	if h.FullAttentionInterval != nil {
		interval = *h.FullAttentionInterval
		if interval <= 0 {
			return fmt.Errorf("model: config full_attention_interval = %d, must be positive", interval)
		}
	}
	fromInterval := make([]string, n)
	for i := range fromInterval {
		fromInterval[i] = LayerLinearAttention
		if (i+1)%interval == 0 {
			fromInterval[i] = LayerFullAttention
		}
	}
	if h.LayerTypes == nil {
		c.Hybrid.LayerTypes = fromInterval
		return nil
	}
	if len(h.LayerTypes) != n {
		return fmt.Errorf("model: config layer_types has %d entries for %d layers", len(h.LayerTypes), n)
	}
	if h.FullAttentionInterval != nil && !slices.Equal(h.LayerTypes, fromInterval) {
		return fmt.Errorf("model: config layer_types and full_attention_interval %d disagree", interval)
	}
	c.Hybrid.LayerTypes = slices.Clone(h.LayerTypes)
	return nil
}

// hybridMaxDim bounds every dimension of a hybrid config, so that no
// product of a few of them (a state's floats, a tensor's bytes) overflows
// an int or asks for absurd memory before a tensor is even read.
const hybridMaxDim = 1 << 20

// checkHybrid is Check for a hybrid model: the dense dimensions it uses
// and the hybrid ones, naming the first that is wrong.
func (c *Config) checkHybrid() error {
	y := c.Hybrid
	pos := []struct {
		name string
		v    int
	}{
		{"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.NumHiddenLayers},
		{"num_attention_heads", c.NumAttentionHeads}, {"num_key_value_heads", c.NumKeyValueHeads},
		{"head_dim", c.HeadDim}, {"vocab_size", c.VocabSize},
		{"linear_conv_kernel_dim", y.LinearConvKernelDim}, {"linear_num_key_heads", y.LinearNumKeyHeads},
		{"linear_num_value_heads", y.LinearNumValueHeads}, {"linear_key_head_dim", y.LinearKeyHeadDim},
		{"linear_value_head_dim", y.LinearValueHeadDim},
	}
	if y.NumExperts > 0 {
		pos = append(pos, []struct {
			name string
			v    int
		}{{"num_experts", y.NumExperts}, {"num_experts_per_tok", y.NumExpertsPerTok}, {"moe_intermediate_size", y.MoEIntermediateSize},
			{"shared_expert_intermediate_size", y.SharedExpertIntermediateSize}, {"decoder_sparse_step", y.DecoderSparseStep}}...)
	}
	for _, p := range pos {
		if p.v <= 0 || p.v > hybridMaxDim {
			return fmt.Errorf("model: config %s = %d, must be in [1, %d]", p.name, p.v, hybridMaxDim)
		}
	}
	switch {
	case c.NumAttentionHeads%c.NumKeyValueHeads != 0:
		return fmt.Errorf("model: config num_attention_heads %d is not a multiple of num_key_value_heads %d",
			c.NumAttentionHeads, c.NumKeyValueHeads)
	case y.LinearNumValueHeads%y.LinearNumKeyHeads != 0:
		return fmt.Errorf("model: config linear_num_value_heads %d is not a multiple of linear_num_key_heads %d",
			y.LinearNumValueHeads, y.LinearNumKeyHeads)
	case y.NumExpertsPerTok > y.NumExperts:
		return fmt.Errorf("model: config num_experts_per_tok %d exceeds num_experts %d", y.NumExpertsPerTok, y.NumExperts)
	case c.RMSNormEps <= 0:
		return fmt.Errorf("model: config rms_norm_eps %g must be positive", c.RMSNormEps)
	case c.RopeTheta <= 0:
		return fmt.Errorf("model: config rope_theta %g must be positive", c.RopeTheta)
	case c.AttentionBias:
		return fmt.Errorf("model: config attention_bias = true is not supported")
	case len(y.LayerTypes) != c.NumHiddenLayers:
		return fmt.Errorf("model: config layer_types has %d entries for %d layers", len(y.LayerTypes), c.NumHiddenLayers)
	}
	if r := y.RotaryDim(c.HeadDim); r <= 0 || r%2 != 0 || r > c.HeadDim {
		return fmt.Errorf("model: config partial_rotary_factor %g gives %d rotary dimensions of head_dim %d, want an even number in (0, head_dim]",
			y.PartialRotaryFactor, r, c.HeadDim)
	}
	for i, t := range y.LayerTypes {
		if t != LayerFullAttention && t != LayerLinearAttention {
			return fmt.Errorf("model: config layer_types[%d] = %q is not supported (want %s or %s)", i, t, LayerFullAttention, LayerLinearAttention)
		}
	}
	for _, i := range y.MLPOnlyLayers {
		if i < 0 || i >= c.NumHiddenLayers {
			return fmt.Errorf("model: config mlp_only_layers has layer %d of %d", i, c.NumHiddenLayers)
		}
	}
	for i := range c.NumHiddenLayers {
		if !y.IsMoE(i) && (c.IntermediateSize <= 0 || c.IntermediateSize > hybridMaxDim) {
			return fmt.Errorf("model: config intermediate_size = %d, must be in [1, %d] (layer %d has a dense MLP)", c.IntermediateSize, hybridMaxDim, i)
		}
	}
	if c.Vision != nil {
		return c.checkVision()
	}
	return nil
}

// IsLinear reports whether layer i is a Gated DeltaNet layer.
func (y *Hybrid) IsLinear(i int) bool { return y.LayerTypes[i] == LayerLinearAttention }

// IsMoE reports whether layer i's MLP is a mixture of experts
// (Qwen3NextDecoderLayer's rule; every layer of Qwen3.5-MoE, whose
// DecoderSparseStep is 1 with no MLPOnlyLayers).
func (y *Hybrid) IsMoE(i int) bool {
	return y.NumExperts > 0 && (i+1)%y.DecoderSparseStep == 0 && !slices.Contains(y.MLPOnlyLayers, i)
}

// RotaryDim is how many leading dimensions of each attention head RoPE
// rotates: int(head_dim · partial_rotary_factor), as transformers.
func (y *Hybrid) RotaryDim(headDim int) int { return int(float64(headDim) * y.PartialRotaryFactor) }

// DeltaDims are the Gated DeltaNet layers' head counts and sizes.
func (y *Hybrid) DeltaDims() metal.DeltaDims {
	return metal.DeltaDims{KeyHeads: y.LinearNumKeyHeads, ValueHeads: y.LinearNumValueHeads,
		KeyDim: y.LinearKeyHeadDim, ValueDim: y.LinearValueHeadDim}
}

// ConvStateLen is the float32s of one sequence's convolution state in one
// linear layer: the last kernel-1 tokens' queries, keys and values.
func (y *Hybrid) ConvStateLen() int { return (y.LinearConvKernelDim - 1) * y.DeltaDims().QKVDim() }

// StateBytes is the memory of one sequence's state over every linear
// layer, in float32: the convolution windows and the recurrent matrices.
// Unlike a KV cache it does not grow with the sequence.
func (y *Hybrid) StateBytes() int64 {
	n := 0
	for i := range y.LayerTypes {
		if y.IsLinear(i) {
			n++
		}
	}
	return 4 * int64(n) * int64(y.ConvStateLen()+y.DeltaDims().StateLen())
}
