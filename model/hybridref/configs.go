package hybridref

import "github.com/splash-inference/splash/model"

// Tiny is a small hybrid text model: five layers (linear, linear,
// attention, linear, attention), partial RoPE over half of each head,
// Gated DeltaNet layers of two key heads shared by four value heads.
func Tiny(modelType string, tied bool) *model.Config {
	prefix := "model.language_model."
	if modelType == "qwen3_next" {
		prefix = "model."
	}
	L, A := model.LayerLinearAttention, model.LayerFullAttention
	return &model.Config{
		Architecture: "tiny-" + modelType, ModelType: modelType, HiddenSize: 64, IntermediateSize: 96,
		NumHiddenLayers: 5, NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 16, VocabSize: 96,
		RMSNormEps: 1e-6, RopeTheta: 10000, TieWordEmbeddings: tied,
		Hybrid: &model.Hybrid{ModelType: modelType, TextPrefix: prefix, LayerTypes: []string{L, L, A, L, A},
			PartialRotaryFactor: 0.5, LinearConvKernelDim: 4, LinearNumKeyHeads: 2, LinearNumValueHeads: 4,
			LinearKeyHeadDim: 16, LinearValueHeadDim: 8, DecoderSparseStep: 1, NormTopKProb: true},
	}
}

// TinyMoE is Tiny with experts: Qwen3-Next's in every second
// layer (decoder_sparse_step 2), one tensor per expert, top-k weights as
// the router gives them; Qwen3.5-MoE's in every layer, fused, renormalised.
func TinyMoE(modelType string) *model.Config {
	c := Tiny(modelType, false)
	y := c.Hybrid
	y.NumExperts, y.NumExpertsPerTok, y.MoEIntermediateSize, y.SharedExpertIntermediateSize = 8, 3, 32, 48
	if modelType == "qwen3_next" {
		y.DecoderSparseStep, y.NormTopKProb = 2, false
	} else {
		c.IntermediateSize = 0
	}
	return c
}

// Wide is a Qwen3.5 text model with the real models' head shapes
// (attention heads of 256 rotated over their first 64, Gated DeltaNet
// heads of 128) on a small hidden size.
func Wide() *model.Config {
	c := Tiny("qwen3_5", false)
	c.HeadDim, c.Hybrid.PartialRotaryFactor = 256, 0.25
	c.Hybrid.LinearKeyHeadDim, c.Hybrid.LinearValueHeadDim = 128, 128
	return c
}

// TinyVL is Tiny's Qwen3.5 with a TinyVision tower: the vocabulary's last
// three ids are the image pad, vision start and vision end tokens, and
// M-RoPE splits the 4 rotary pairs into sections [2, 1, 1], interleaved
// (pairs T, H, W, T) unless chunked (T, T, H, W).
func TinyVL(interleaved bool) *model.Config {
	c := Tiny("qwen3_5", false)
	v := TinyVision(c.HiddenSize)
	v.ImageTokenID, v.VisionStartTokenID, v.VisionEndTokenID = c.VocabSize-3, c.VocabSize-2, c.VocabSize-1
	c.Vision = v
	c.Architecture = "Qwen3_5ForConditionalGeneration"
	c.Hybrid.MRopeSection, c.Hybrid.MRopeInterleaved = []int{2, 1, 1}, interleaved
	return c
}
