package api

import "github.com/splash-inference/splash/actors"

// generationParams are the request fields every dialect validates the same
// way: sampling, the number of choices, top logprobs and stop strings, each
// checked and reported under the name its dialect gives it. The token
// budget is checked after templating (Server.maxTokens), when the prompt's
// length is known.
type generationParams struct {
	sampling samplingFields
	// maxTemperature bounds temperature: 2 for the OpenAI dialects (the
	// zero value), 1 for Anthropic's.
	maxTemperature float64
	n              *int // nil: one choice
	topLogprobs    *int
	// topLogprobsParam names topLogprobs: "top_logprobs" (the zero value);
	// Completions calls it "logprobs".
	topLogprobsParam string
	stop             []string
	// stopParam names stop: "stop" (the zero value); Anthropic calls it
	// "stop_sequences".
	stopParam string
}

// validate checks the fields, in the order above, and returns the engine
// request they make; the dialect adds the prompt, the token budget and its
// own switches.
func (p *generationParams) validate() (*actors.Request, error) {
	maxTemp, topParam, stopParam := p.maxTemperature, p.topLogprobsParam, p.stopParam
	if maxTemp == 0 {
		maxTemp = openAIMaxTemperature
	}
	if topParam == "" {
		topParam = "top_logprobs"
	}
	if stopParam == "" {
		stopParam = "stop"
	}
	sampling, err := p.sampling.sampling(maxTemp)
	if err != nil {
		return nil, err
	}
	n, err := choiceCount(p.n)
	if err != nil {
		return nil, err
	}
	top, err := topLogprobs(topParam, p.topLogprobs)
	if err != nil {
		return nil, err
	}
	stops, err := stopStrings(stopParam, p.stop)
	if err != nil {
		return nil, err
	}
	return &actors.Request{Sampling: sampling, N: n, TopLogprobs: top, Stop: stops}, nil
}
