package api

import (
	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/actors"
)

// completionsRequest is a POST /v1/completions body. Fields not listed
// (user, suffix, best_of, ...) are accepted and ignored.
type completionsRequest struct {
	Model            string           `json:"model"`
	Prompt           completionPrompt `json:"prompt"`
	Stream           bool             `json:"stream"`
	StreamOptions    *streamOptions   `json:"stream_options"`
	MaxTokens        *int             `json:"max_tokens"`
	Stop             stringList       `json:"stop"`
	StopTokenIDs     []int32          `json:"stop_token_ids"`
	IgnoreEOS        bool             `json:"ignore_eos"`
	N                *int             `json:"n"`
	Logprobs         *int             `json:"logprobs"`
	Echo             bool             `json:"echo"`
	AddSpecialTokens *bool            `json:"add_special_tokens"`
	samplingFields
}

// defaultCompletionTokens is the Completions API's max_tokens default.
const defaultCompletionTokens = 16

// completionPrompt is a prompt as text or as token ids. The API also allows
// a batch of prompts; one per request is supported.
type completionPrompt struct {
	text  string
	ids   []int32
	isIDs bool
	set   bool
}

func (p *completionPrompt) UnmarshalJSON(b []byte) error {
	const shape = "prompt must be a string, an array of token ids, or a one-element array of either"
	switch firstByte(b) {
	case 'n':
		return nil
	case '"':
		p.set = true
		return json.Unmarshal(b, &p.text)
	case '[':
	default:
		return invalidf("prompt", shape)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return invalidf("prompt", shape)
	}
	if len(items) == 0 {
		return invalidf("prompt", "prompt must not be empty")
	}
	switch firstByte(items[0]) {
	case '"', '[':
		if len(items) > 1 {
			return invalidf("prompt", "batched prompts are not supported: send one prompt per request")
		}
		return p.UnmarshalJSON(items[0])
	}
	p.set, p.isIDs = true, true
	if err := json.Unmarshal(b, &p.ids); err != nil {
		return invalidf("prompt", "prompt: token ids must be integers: %v", err)
	}
	return nil
}

// completionsPlan is a validated Completions request, ready for the engine.
type completionsPlan struct {
	gen          *actors.Request
	echo         string // prompt text echoed before each choice ("" without echo)
	includeUsage bool
}

// planCompletions validates a Completions request and builds the engine request.
func (s *Server) planCompletions(r *completionsRequest) (*completionsPlan, error) {
	if err := s.checkModel(r.Model); err != nil {
		return nil, err
	}
	if !r.Prompt.set {
		return nil, invalidf("prompt", "prompt: field required")
	}
	gen, err := (&generationParams{sampling: r.samplingFields, n: r.N, topLogprobs: r.Logprobs, topLogprobsParam: "logprobs", stop: r.Stop}).validate()
	if err != nil {
		return nil, err
	}
	ids, text := r.Prompt.ids, r.Prompt.text
	if r.Prompt.isIDs {
		text = s.opts.Tokenizer.Decode(ids, true)
	} else {
		ids = s.opts.Tokenizer.Encode(text, r.AddSpecialTokens == nil || *r.AddSpecialTokens)
	}
	if len(ids) == 0 {
		return nil, invalidf("prompt", "prompt must not be empty")
	}
	limit := r.MaxTokens
	if limit == nil {
		d := min(defaultCompletionTokens, s.opts.ContextLength-len(ids))
		limit = &d
	}
	maxTokens, err := s.maxTokens(len(ids), limit, "max_tokens")
	if err != nil {
		return nil, err
	}
	gen.Prompt, gen.MaxTokens, gen.StopTokens, gen.IgnoreEOS = ids, maxTokens, r.StopTokenIDs, r.IgnoreEOS
	gen.Logprobs, gen.PromptLogprobs = r.Logprobs != nil, r.Echo && r.Logprobs != nil
	plan := &completionsPlan{includeUsage: r.StreamOptions != nil && r.StreamOptions.IncludeUsage, gen: gen}
	if r.Echo {
		plan.echo = text
	}
	return plan, nil
}
