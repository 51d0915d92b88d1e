package actors

import (
	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/grammar"
	"github.com/splash-inference/splash/engine/sample"
)

// Request is one generation request as the HTTP layer hands it over, the
// same for every dialect: N choices sampled independently from one prompt.
// Each choice runs as its own sequence (Sequence), and the choices share the
// prompt's KV blocks through the prefix cache.
type Request struct {
	Prompt []int32 // prompt token ids, already templated and tokenized
	// Sampling is every choice's sampler. Its Seed, when set, is choice 0's
	// and choice i's is Seed+i; its Logprobs is set by Sequence from the
	// fields below.
	Sampling sample.Params
	// MaxTokens caps the completion tokens of each choice; the HTTP layer
	// has clamped it so len(Prompt)+MaxTokens fits the context length.
	MaxTokens  int
	Stop       []string // generation ends before any of these; the text never contains them
	StopTokens []int32  // generation ends at any of these (the token is not emitted as text)
	IgnoreEOS  bool     // keep going past the end-of-sequence token
	// N is the number of choices (0 means 1).
	N int
	// Logprobs asks for each sampled token's log-probability, TopLogprobs
	// for that many most likely alternatives at each position (0..20).
	Logprobs    bool
	TopLogprobs int
	// PromptLogprobs asks for the log-probability of every prompt token
	// after the first (Completions echo with logprobs).
	PromptLogprobs bool
	// Grammar, when set, constrains the output (response_format, Responses
	// text.format): every token the grammar does not allow is masked.
	Grammar *grammar.Grammar
	// ToolGrammar, when set, forces one tool call (tool_choice required or
	// named): the output must be the model family's call markup around a
	// document of this grammar ({"name": ..., "arguments": ...}).
	ToolGrammar *grammar.Grammar
	// ParallelToolCalls lets a forced call be followed by more calls
	// (parallel_tool_calls, the default; Anthropic's
	// disable_parallel_tool_use turns it off): one or more, instead of one.
	ParallelToolCalls bool
	// ThinkingBudget caps the tokens spent inside a <think> block; when it
	// is spent the closing tag is forced and the model goes on with its
	// answer. 0 means no cap.
	ThinkingBudget int
	// Images are the prompt's images (engine.Image: where their pad tokens
	// are, their patches or embeddings, a content hash), for a model with a
	// vision tower (Config.Vision); every choice reads them.
	Images []engine.Image
}

// Choices is the number of sequences the request runs.
func (r *Request) Choices() int { return max(r.N, 1) }

// Sequence returns choice i as one sequence's request, which also ends at
// eos unless IgnoreEOS. Its Mask is left to the caller: grammars and the
// thinking budget are built over the tokenizer's vocabulary.
func (r *Request) Sequence(i int, eos []int32) GenerateRequest {
	p := r.Sampling
	p.Logprobs = -1
	if r.Logprobs || r.PromptLogprobs {
		p.Logprobs = r.TopLogprobs
	}
	if r.Sampling.Seed != nil {
		seed := *r.Sampling.Seed + uint64(i) // each choice its own stream, all reproducible
		p.Seed = &seed
	}
	stops := append([]int32(nil), r.StopTokens...)
	if !r.IgnoreEOS {
		stops = append(stops, eos...)
	}
	return GenerateRequest{Prompt: r.Prompt, Sampling: p, MaxTokens: r.MaxTokens, Stop: r.Stop,
		StopTokens: stops, PromptLogprobs: r.PromptLogprobs, Images: r.Images}
}
