package api

import "github.com/goccy/go-json"

// Anthropic Messages response shapes, non-streaming and streaming.

// anthropicMessageOut is a "message" object.
type anthropicMessageOut struct {
	ID           string              `json:"id"`
	Type         string              `json:"type"`
	Role         string              `json:"role"`
	Model        string              `json:"model"`
	Content      []anthropicBlockOut `json:"content"`
	StopReason   *string             `json:"stop_reason"`
	StopSequence *string             `json:"stop_sequence"`
	Usage        anthropicUsage      `json:"usage"`
}

// anthropicBlockOut is a text, thinking or tool_use content block.
type anthropicBlockOut struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

func textBlock(s string) anthropicBlockOut { return anthropicBlockOut{Type: "text", Text: &s} }

// thinkingBlock carries an empty signature: the reasoning is the local
// model's own and nothing verifies it when sent back.
func thinkingBlock(s string) anthropicBlockOut {
	sig := ""
	return anthropicBlockOut{Type: "thinking", Thinking: &s, Signature: &sig}
}

// anthropicUsage follows Anthropic's convention: input_tokens counts only
// the prompt tokens not read from the cache.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

func toAnthropicUsage(u Usage) anthropicUsage {
	return anthropicUsage{InputTokens: u.PromptTokens - u.CachedPromptTokens, OutputTokens: u.CompletionTokens, CacheReadInputTokens: u.CachedPromptTokens}
}

// stopReason maps an engine finish to stop_reason and stop_sequence.
func stopReason(finish FinishReason, stopSequence string) (*string, *string) {
	reason := "end_turn"
	switch {
	case finish == FinishLength:
		reason = "max_tokens"
	case stopSequence != "":
		reason = "stop_sequence"
		return &reason, &stopSequence
	}
	return &reason, nil
}

// messagesResponse builds the non-streaming response.
func messagesResponse(id, model string, p *messagesPlan, r *result) anthropicMessageOut {
	c := r.choices[0]
	reasoning, answer, calls := newOutputSplitter(p.prompt.startsInThink, p.tools).feedAll(c.text)
	content := []anthropicBlockOut{}
	if reasoning != "" {
		content = append(content, thinkingBlock(reasoning))
	}
	if answer != "" || reasoning == "" && len(calls) == 0 {
		content = append(content, textBlock(answer))
	}
	for _, call := range calls {
		content = append(content, toolUseBlock(call))
	}
	reason, seq := stopReason(c.finish, c.stopSequence)
	if len(calls) > 0 && c.finish == FinishStop && seq == nil {
		r := "tool_use"
		reason = &r
	}
	return anthropicMessageOut{ID: id, Type: "message", Role: "assistant", Model: model, Content: content,
		StopReason: reason, StopSequence: seq, Usage: toAnthropicUsage(r.usage)}
}

// Stream event payloads.
type (
	messageStartEvent struct {
		Type    string              `json:"type"`
		Message anthropicMessageOut `json:"message"`
	}
	blockStartEvent struct {
		Type         string            `json:"type"`
		Index        int               `json:"index"`
		ContentBlock anthropicBlockOut `json:"content_block"`
	}
	blockDeltaEvent struct {
		Type  string     `json:"type"`
		Index int        `json:"index"`
		Delta blockDelta `json:"delta"`
	}
	blockDelta struct {
		Type        string  `json:"type"`
		Text        *string `json:"text,omitempty"`
		Thinking    *string `json:"thinking,omitempty"`
		PartialJSON *string `json:"partial_json,omitempty"`
	}
	blockStopEvent struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	messageDeltaEvent struct {
		Type  string         `json:"type"`
		Delta messageDelta   `json:"delta"`
		Usage anthropicUsage `json:"usage"`
	}
	messageDelta struct {
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
	typeOnlyEvent struct {
		Type string `json:"type"`
	}
)

// messagesStream writes Anthropic SSE: message_start, then per content
// block content_block_start / content_block_delta… / content_block_stop
// (a thinking block before the text block), message_delta with the stop
// reason and usage, message_stop; ping while idle.
type messagesStream struct {
	id, model    string
	promptTokens int
	split        *outputSplitter
	open         string // type of the open block ("thinking", "text") or ""
	index        int    // index of the open block; blocks so far when none is open
	finish       FinishReason
	stopSequence string
	started      bool // message_start went out
}

func newMessagesStream(id, model string, p *messagesPlan) *messagesStream {
	return &messagesStream{id: id, model: model, promptTokens: len(p.gen.Prompt), split: newOutputSplitter(p.prompt.startsInThink, p.tools)}
}

// begin sends nothing yet: message_start waits for the engine's first event,
// which knows how much of the prompt the prefix cache served, so its usage
// shows cache_read_input_tokens as Anthropic's does (agents such as Claude
// Code read the input side only there). A keep-alive ping while a long
// prompt is prefilled sends message_start first, without the cache count.
func (m *messagesStream) begin(*sseWriter) {}

// start sends message_start once, before anything else.
func (m *messagesStream) start(w *sseWriter, cached int) {
	if m.started {
		return
	}
	m.started = true
	w.send("message_start", messageStartEvent{Type: "message_start", Message: anthropicMessageOut{
		ID: m.id, Type: "message", Role: "assistant", Model: m.model, Content: []anthropicBlockOut{},
		Usage: anthropicUsage{InputTokens: m.promptTokens - cached, CacheReadInputTokens: cached},
	}})
	w.send("ping", typeOnlyEvent{Type: "ping"})
}

// write emits text into a block of the given type, switching blocks as needed.
func (m *messagesStream) write(w *sseWriter, blockType, text string) {
	if text == "" {
		return
	}
	if m.open != blockType {
		m.closeBlock(w)
		m.open = blockType
		start := textBlock("")
		if blockType == "thinking" {
			start = thinkingBlock("")
		}
		w.send("content_block_start", blockStartEvent{Type: "content_block_start", Index: m.index, ContentBlock: start})
	}
	delta := blockDelta{Type: "text_delta", Text: &text}
	if blockType == "thinking" {
		delta = blockDelta{Type: "thinking_delta", Thinking: &text}
	}
	w.send("content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: m.index, Delta: delta})
}

func (m *messagesStream) closeBlock(w *sseWriter) {
	if m.open == "" {
		return
	}
	w.send("content_block_stop", blockStopEvent{Type: "content_block_stop", Index: m.index})
	m.open = ""
	m.index++
}

func (m *messagesStream) event(w *sseWriter, ev Event) {
	m.start(w, ev.CachedPromptTokens)
	pieces := m.split.feed(ev.Text, ev.FinishReason != "")
	if ev.FinishReason != "" {
		m.finish, m.stopSequence = ev.FinishReason, ev.StopSequence
	}
	for _, p := range pieces {
		switch {
		case p.call != nil:
			m.callEvent(w, *p.call)
		case p.reasoning:
			m.write(w, "thinking", p.text)
		default:
			m.write(w, "text", p.text)
		}
	}
}

// callEvent streams a call as a tool_use block: content_block_start (empty
// input) when it is announced, input_json_delta as its arguments come,
// content_block_stop when it ends. Text never shares the block's index.
func (m *messagesStream) callEvent(w *sseWriter, e callEvent) {
	if e.start {
		m.closeBlock(w)
		block := toolUseBlock(chatToolCall{ID: e.id, Function: chatFunctionCall{Name: e.name}})
		block.Input = json.RawMessage("{}")
		w.send("content_block_start", blockStartEvent{Type: "content_block_start", Index: m.index, ContentBlock: block})
		m.open = "tool_use"
	}
	if e.delta != "" {
		w.send("content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: m.index,
			Delta: blockDelta{Type: "input_json_delta", PartialJSON: &e.delta}})
	}
	if e.done != nil {
		m.closeBlock(w)
	}
}

func (m *messagesStream) end(w *sseWriter, usage Usage) {
	m.start(w, usage.CachedPromptTokens)
	m.closeBlock(w)
	reason, seq := stopReason(m.finish, m.stopSequence)
	if m.split.calls() > 0 && m.finish == FinishStop && seq == nil {
		r := "tool_use"
		reason = &r
	}
	w.send("message_delta", messageDeltaEvent{Type: "message_delta", Delta: messageDelta{StopReason: reason, StopSequence: seq}, Usage: toAnthropicUsage(usage)})
	w.send("message_stop", typeOnlyEvent{Type: "message_stop"})
}

func (m *messagesStream) fail(w *sseWriter, err error) {
	w.send("error", errorBody(dialectAnthropic, asAPIError(err)))
}

func (m *messagesStream) ping(w *sseWriter) {
	if !m.started {
		m.start(w, 0) // message_start carries its own ping
		return
	}
	w.send("ping", typeOnlyEvent{Type: "ping"})
}
