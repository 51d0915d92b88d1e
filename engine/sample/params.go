package sample

import (
	"fmt"
	"math"
)

// Params are one request's sampling settings, as the API dialects give them.
// The zero value is greedy decoding with the sampled token's logprob.
type Params struct {
	Temperature       float32 // 0: greedy
	TopP              float32 // nucleus mass in (0, 1]; 0 means 1 (off)
	TopK              int     // keep the k most likely; 0: off
	MinP              float32 // keep p ≥ MinP·p_max, in [0, 1]; 0: off
	PresencePenalty   float32 // subtracted once from every token already generated
	FrequencyPenalty  float32 // subtracted per occurrence in the generated tokens
	RepetitionPenalty float32 // > 0; 1 or 0: off
	LogitBias         map[int32]float32
	Seed              *uint64 // nil: seeded from the caller's source
	// Logprobs: < 0 computes no logprobs; 0 the sampled token's; n > 0 also
	// the n most likely tokens as alternatives.
	Logprobs int
}

// MaxLogprobs bounds Params.Logprobs (the OpenAI limit).
const MaxLogprobs = 20

// Validate reports the first setting out of range, naming it.
func (p *Params) Validate() error {
	switch {
	case p.Temperature < 0 || isBad(p.Temperature):
		return fmt.Errorf("sample: temperature %g must be ≥ 0", p.Temperature)
	case p.TopP < 0 || p.TopP > 1 || isBad(p.TopP):
		return fmt.Errorf("sample: top_p %g must be in (0, 1]", p.TopP)
	case p.TopK < 0:
		return fmt.Errorf("sample: top_k %d must be ≥ 0", p.TopK)
	case p.MinP < 0 || p.MinP > 1 || isBad(p.MinP):
		return fmt.Errorf("sample: min_p %g must be in [0, 1]", p.MinP)
	case p.RepetitionPenalty < 0 || isBad(p.RepetitionPenalty):
		return fmt.Errorf("sample: repetition_penalty %g must be > 0", p.RepetitionPenalty)
	case isBad(p.PresencePenalty) || isBad(p.FrequencyPenalty):
		return fmt.Errorf("sample: presence and frequency penalties must be finite")
	case p.Logprobs > MaxLogprobs:
		return fmt.Errorf("sample: logprobs %d exceeds %d", p.Logprobs, MaxLogprobs)
	}
	for tok, b := range p.LogitBias {
		if tok < 0 || isBad(b) {
			return fmt.Errorf("sample: logit_bias entry %d: %g is not a valid token and finite bias", tok, b)
		}
	}
	return nil
}

func isBad(x float32) bool { return math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) }

func (p *Params) greedy() bool { return p.Temperature == 0 }

func (p *Params) hasPenalties() bool {
	return p.PresencePenalty != 0 || p.FrequencyPenalty != 0 || p.repetition() != 1 || len(p.LogitBias) > 0
}

func (p *Params) repetition() float32 {
	if p.RepetitionPenalty == 0 {
		return 1
	}
	return p.RepetitionPenalty
}

func (p *Params) topP() float32 {
	if p.TopP == 0 {
		return 1
	}
	return p.TopP
}
