package api

import (
	"math"
	"strconv"

	"github.com/splash-inference/splash/engine/sample"
)

// samplingFields are the sampler parameters shared by the OpenAI-style
// request bodies (Chat Completions, Completions), embedded in each.
type samplingFields struct {
	Temperature       *float64           `json:"temperature"`
	TopP              *float64           `json:"top_p"`
	TopK              *int               `json:"top_k"`
	MinP              *float64           `json:"min_p"`
	PresencePenalty   *float64           `json:"presence_penalty"`
	FrequencyPenalty  *float64           `json:"frequency_penalty"`
	RepetitionPenalty *float64           `json:"repetition_penalty"`
	LogitBias         map[string]float64 `json:"logit_bias"`
	Seed              *int64             `json:"seed"`
}

// Sampler defaults when a request leaves a field out (OpenAI's defaults).
const (
	defaultTemperature = 1.0
	maxLogitBias       = 100
	// Temperature's upper bound in the OpenAI dialects; Anthropic's is 1.
	openAIMaxTemperature = 2
)

// rangeCheck validates an optional number against [lo, hi]; loOpen
// excludes lo itself.
func rangeCheck(param string, v *float64, lo, hi float64, loOpen bool) error {
	if v == nil {
		return nil
	}
	x := *v
	if math.IsNaN(x) || x < lo || x > hi || (loOpen && x == lo) {
		open := "["
		if loOpen {
			open = "("
		}
		return invalidf(param, "%s must be in %s%g, %g], got %g", param, open, lo, hi, x)
	}
	return nil
}

func valueOr(v *float64, def float64) float64 {
	if v == nil {
		return def
	}
	return *v
}

// sampling validates the fields, temperature up to maxTemperature, and returns the engine's settings: the one
// place a request's JSON numbers become the sampler's float32s.
func (f *samplingFields) sampling(maxTemperature float64) (sample.Params, error) {
	checks := []error{
		rangeCheck("temperature", f.Temperature, 0, maxTemperature, false),
		rangeCheck("top_p", f.TopP, 0, 1, true),
		rangeCheck("min_p", f.MinP, 0, 1, false),
		rangeCheck("presence_penalty", f.PresencePenalty, -2, 2, false),
		rangeCheck("frequency_penalty", f.FrequencyPenalty, -2, 2, false),
		rangeCheck("repetition_penalty", f.RepetitionPenalty, 0, 10, true),
	}
	for _, err := range checks {
		if err != nil {
			return sample.Params{}, err
		}
	}
	topK := 0
	if f.TopK != nil {
		if *f.TopK < -1 {
			return sample.Params{}, invalidf("top_k", "top_k must be -1 or 0 (off) or positive, got %d", *f.TopK)
		}
		topK = max(*f.TopK, 0)
	}
	bias, err := parseLogitBias(f.LogitBias)
	if err != nil {
		return sample.Params{}, err
	}
	p := sample.Params{
		Temperature:       float32(valueOr(f.Temperature, defaultTemperature)),
		TopP:              float32(valueOr(f.TopP, 1)),
		TopK:              topK,
		MinP:              float32(valueOr(f.MinP, 0)),
		PresencePenalty:   float32(valueOr(f.PresencePenalty, 0)),
		FrequencyPenalty:  float32(valueOr(f.FrequencyPenalty, 0)),
		RepetitionPenalty: float32(valueOr(f.RepetitionPenalty, 1)),
		LogitBias:         bias,
		Logprobs:          -1,
	}
	if f.Seed != nil {
		seed := uint64(*f.Seed)
		p.Seed = &seed
	}
	return p, nil
}

// parseLogitBias turns {"token id": bias} into the engine's map.
func parseLogitBias(in map[string]float64) (map[int32]float32, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[int32]float32, len(in))
	for k, v := range in {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return nil, invalidf("logit_bias", "logit_bias keys must be token ids, got %q", k)
		}
		if math.IsNaN(v) || v < -maxLogitBias || v > maxLogitBias {
			return nil, invalidf("logit_bias", "logit_bias values must be in [-100, 100], got %g for token %d", v, id)
		}
		out[int32(id)] = float32(v)
	}
	return out, nil
}
