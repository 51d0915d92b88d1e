package api

import (
	"context"
	"errors"
	"io"

	"github.com/splash-inference/splash/actors"
)

// Engine generates tokens. It is the seam between the HTTP frontend and the
// actor runtime, served by api/actorengine over actors.Engine.
type Engine interface {
	// Generate starts one request and returns its event stream. An error
	// returned here means nothing was started (wrap ErrBusy when the engine's
	// queue is full). Otherwise the channel carries Token/Finish events for
	// each of the req.N choices and ends with exactly one event whose Done
	// is true or whose Err is set; the engine then closes the channel.
	//
	// When ctx is cancelled (the client went away) the engine stops the
	// sequences, frees their blocks and stops sending: every send must
	// select on ctx.Done() so an abandoned channel never blocks it.
	Generate(ctx context.Context, req *actors.Request) (<-chan Event, error)

	// WriteMetrics appends the engine's Prometheus text-format metrics
	// (queue length, running sequences, KV blocks, tokens/s, ...) to w.
	WriteMetrics(w io.Writer) error
}

// Errors an Engine may wrap to choose the client's status code; any other
// error from Generate or in an Event is a 500.
var (
	// ErrBusy: the engine cannot queue more work (429 with Retry-After).
	ErrBusy = errors.New("api: engine busy")
	// ErrInvalidRequest: the request cannot run on this model, e.g. a
	// logit_bias or stop token id outside the vocabulary (400).
	ErrInvalidRequest = errors.New("api: invalid request")
)

// Tokenizer turns text into the model's token ids and back.
type Tokenizer interface {
	// Encode tokenizes text. addSpecial adds the model's BOS-style tokens;
	// special token text (e.g. "<|im_start|>") is always parsed as special:
	// a raw prompt is the client's own template.
	Encode(text string, addSpecial bool) []int32
	// EncodePrompt tokenizes a rendered chat prompt, parsing special and
	// added tokens (<|im_end|>, <think>, <tool_call>, ...) only in the
	// template's text: in p.Content their text encodes as ordinary text. A
	// prompt whose content holds no such text gets Encode's ids. No BOS is
	// added (the template writes its own).
	EncodePrompt(p RenderedPrompt) []int32
	// Decode turns ids into text, dropping special tokens when skipSpecial.
	Decode(ids []int32, skipSpecial bool) string
}

// ChatTemplate renders a conversation into the prompt text the model
// expects, saying which bytes of it came from the request.
type ChatTemplate interface {
	Render(req ChatRenderRequest) (RenderedPrompt, error)
}

// RenderedPrompt is a rendered conversation.
type RenderedPrompt struct {
	Text string
	// Content are the byte ranges of Text that came from the request
	// (roles, message texts, reasoning, tool calls and results, tool
	// definitions, system prompts), sorted and disjoint; the template
	// wrote the rest, and only the rest may hold control tokens.
	Content []Span
}

// Span is the byte range [Start, End) of a text.
type Span struct{ Start, End int }

// ChatRenderRequest is the dialect-neutral conversation every chat API is
// parsed into before rendering.
type ChatRenderRequest struct {
	Messages []ChatMessage
	// Tools are tool definitions in the OpenAI function-tool shape
	// ({"type":"function","function":{...}}), passed to the template as is.
	Tools [][]byte
	// AddGenerationPrompt appends the assistant header so the model answers.
	AddGenerationPrompt bool
	// EnableThinking is the template's enable_thinking switch: false renders
	// the prompt so that the model answers without a reasoning block.
	EnableThinking bool
}

// ChatMessage is one turn of a conversation.
type ChatMessage struct {
	Role       string // "system", "developer", "user", "assistant" or "tool"
	Content    string // text; multi-part contents are joined
	Reasoning  string // an assistant turn's earlier reasoning, if sent back
	Name       string // optional participant name
	ToolCallID string // for role "tool": the call this result answers
	// ToolCalls are an assistant turn's calls in the OpenAI shape
	// ({"id","type":"function","function":{"name","arguments"}}), raw JSON.
	ToolCalls [][]byte
}

// FinishReason says why a choice ended.
type FinishReason string

const (
	FinishStop   FinishReason = "stop"   // end-of-sequence, stop string or stop token
	FinishLength FinishReason = "length" // MaxTokens reached
)

// Event is one step of a generation stream.
type Event struct {
	// Choice is the index (0..N-1) of the choice this event belongs to.
	Choice int
	// CachedPromptTokens may be set on a choice's first event: the prompt
	// tokens served from the prefix cache, known before the answer ends
	// (Anthropic streams report them in message_start).
	CachedPromptTokens int
	// Text is the new text of this choice, detokenized (UTF-8 safe) and
	// with stop strings removed. It may be empty while text is held back.
	Text string
	// Tokens are the new token ids; Logprobs is parallel to Tokens when
	// Request.Logprobs is set.
	Tokens   []int32
	Logprobs []TokenLogprob
	// PromptLogprobs is set once, on the first event, when
	// Request.PromptLogprobs is: one entry per prompt token after
	// the first (the first token has no probability).
	PromptLogprobs []TokenLogprob
	// FinishReason is set on the choice's last event.
	FinishReason FinishReason
	// StopSequence is the stop string that ended the choice, if one did.
	StopSequence string
	// Done marks the final event of the whole request; Usage is set on it.
	Done  bool
	Usage *Usage
	// Err ends the stream with a failure.
	Err error
}

// TokenLogprob is a token with its log-probability and, when requested, the
// most likely alternatives at its position (most likely first).
type TokenLogprob struct {
	ID      int32
	Token   string // the token's text (may be a partial UTF-8 sequence)
	Logprob float64
	Top     []TopLogprob
}

// TopLogprob is one alternative at a position.
type TopLogprob struct {
	ID      int32
	Token   string
	Logprob float64
}

// Usage counts the tokens of a request, summed over its choices.
type Usage struct {
	PromptTokens       int
	CompletionTokens   int
	CachedPromptTokens int // prompt tokens served from the prefix cache
	ReasoningTokens    int // completion tokens spent inside <think> blocks
}
