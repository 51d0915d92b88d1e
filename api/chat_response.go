package api

// Chat Completions response shapes, non-streaming and streaming.

// chatCompletion is the non-streaming response ("object": "chat.completion").
type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   openAIUsage  `json:"usage"`
}

type chatChoice struct {
	Index        int            `json:"index"`
	Message      chatMessageOut `json:"message"`
	Logprobs     *chatLogprobs  `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
}

type chatMessageOut struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	Refusal          *string        `json:"refusal"`
}

// chatLogprobs is a choice's "logprobs": {"content": [...]}.
type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
}

type chatTokenLogprob struct {
	Token       string           `json:"token"`
	Logprob     float64          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogprobs []chatTopLogprob `json:"top_logprobs"`
}

type chatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// openAIUsage is the "usage" object of Chat Completions and Completions.
type openAIUsage struct {
	PromptTokens            int                     `json:"prompt_tokens"`
	CompletionTokens        int                     `json:"completion_tokens"`
	TotalTokens             int                     `json:"total_tokens"`
	PromptTokensDetails     promptTokensDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails completionTokensDetails `json:"completion_tokens_details"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type completionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

func toOpenAIUsage(u Usage) openAIUsage {
	return openAIUsage{
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails:     promptTokensDetails{CachedTokens: u.CachedPromptTokens},
		CompletionTokensDetails: completionTokensDetails{ReasoningTokens: u.ReasoningTokens},
	}
}

// byteValues spells a token's UTF-8 bytes as OpenAI's "bytes" array.
func byteValues(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// toChatLogprobs converts engine logprobs; nil when there are none.
func toChatLogprobs(lps []TokenLogprob) *chatLogprobs {
	if len(lps) == 0 {
		return nil
	}
	out := make([]chatTokenLogprob, len(lps))
	for i, lp := range lps {
		top := make([]chatTopLogprob, len(lp.Top))
		for j, t := range lp.Top {
			top[j] = chatTopLogprob{Token: t.Token, Logprob: t.Logprob, Bytes: byteValues(t.Token)}
		}
		out[i] = chatTokenLogprob{Token: lp.Token, Logprob: lp.Logprob, Bytes: byteValues(lp.Token), TopLogprobs: top}
	}
	return &chatLogprobs{Content: out}
}

func optionalText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// chatResponse builds the non-streaming response from a finished generation.
func chatResponse(id, model string, created int64, p *chatPlan, r *result) chatCompletion {
	choices := make([]chatChoice, len(r.choices))
	for i, c := range r.choices {
		split := newOutputSplitter(p.prompt.startsInThink, p.tools)
		reasoning, answer, calls := split.feedAll(c.text)
		choices[i] = chatChoice{
			Index:        i,
			Message:      chatMessageOut{Role: "assistant", Content: answer, ReasoningContent: optionalText(reasoning), ToolCalls: calls},
			Logprobs:     toChatLogprobs(c.logprobs),
			FinishReason: split.finishReason(c.finish),
		}
	}
	return chatCompletion{ID: id, Object: "chat.completion", Created: created, Model: model, Choices: choices, Usage: toOpenAIUsage(r.usage)}
}

// chatChunk is one streamed "chat.completion.chunk".
type chatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *openAIUsage  `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int           `json:"index"`
	Delta        chunkDelta    `json:"delta"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

type chunkDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

// chatStream writes a chat completion as SSE: per choice a role chunk
// first, then reasoning and content deltas, then a chunk with the
// finish_reason; a usage chunk (empty choices) when asked; "data: [DONE]".
type chatStream struct {
	id, model    string
	created      int64
	includeUsage bool
	splits       []*outputSplitter // per choice
}

func newChatStream(id, model string, created int64, p *chatPlan) *chatStream {
	splits := make([]*outputSplitter, p.gen.N)
	for i := range splits {
		splits[i] = newOutputSplitter(p.prompt.startsInThink, p.tools)
	}
	return &chatStream{id: id, model: model, created: created, includeUsage: p.includeUsage, splits: splits}
}

func (c *chatStream) chunk(choices []chunkChoice, usage *openAIUsage) chatChunk {
	return chatChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model, Choices: choices, Usage: usage}
}

func (c *chatStream) begin(w *sseWriter) {
	empty := ""
	for i := range c.splits {
		w.send("", c.chunk([]chunkChoice{{Index: i, Delta: chunkDelta{Role: "assistant", Content: &empty}}}, nil))
	}
}

func (c *chatStream) event(w *sseWriter, ev Event) {
	if ev.Choice < 0 || ev.Choice >= len(c.splits) {
		return
	}
	split := c.splits[ev.Choice]
	reasoning, answer, events := joined(split.feed(ev.Text, ev.FinishReason != ""))
	var calls []chatToolCall
	for _, e := range events {
		if !e.start && e.delta == "" {
			continue
		}
		// the first delta of a call carries its id, type and name; later
		// ones only the index and more arguments (as OpenAI streams them)
		call := chatToolCall{Index: &e.index, Function: chatFunctionCall{Arguments: e.delta}}
		if e.start {
			call.ID, call.Type, call.Function.Name = e.id, "function", e.name
		}
		calls = append(calls, call)
	}
	lps := toChatLogprobs(ev.Logprobs)
	if reasoning != "" || answer != "" || lps != nil || len(calls) > 0 {
		w.send("", c.chunk([]chunkChoice{{Index: ev.Choice, Delta: chunkDelta{Content: optionalText(answer),
			ReasoningContent: optionalText(reasoning), ToolCalls: calls}, Logprobs: lps}}, nil))
	}
	if ev.FinishReason != "" {
		reason := split.finishReason(ev.FinishReason)
		w.send("", c.chunk([]chunkChoice{{Index: ev.Choice, FinishReason: &reason}}, nil))
	}
}

func (c *chatStream) end(w *sseWriter, usage Usage) {
	if c.includeUsage {
		u := toOpenAIUsage(usage)
		w.send("", c.chunk([]chunkChoice{}, &u))
	}
	w.done()
}

func (c *chatStream) fail(w *sseWriter, err error) {
	w.send("", errorBody(dialectOpenAI, asAPIError(err)))
	w.done()
}

func (c *chatStream) ping(w *sseWriter) { w.comment("ping") }
