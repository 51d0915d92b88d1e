package api

import (
	"strings"

	"github.com/splash-inference/splash/engine/grammar/toolcall"
)

// Tool calls in Chat Completions: when a request declares tools, the
// model's answer is split into text and <tool_call> blocks (the Qwen/Hermes
// format) by a streaming parser; calls become "tool_calls" entries and the
// choice's finish_reason becomes "tool_calls". The markup never reaches the
// content.

// chatToolCall is one entry of a message's (or delta's) "tool_calls".
type chatToolCall struct {
	Index    *int             `json:"index,omitempty"` // streaming deltas only
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as a string
}

// toolSplitter applies the parser to one choice's answer text.
type toolSplitter struct {
	p     toolcall.Parser
	calls int // calls emitted so far
}

// feed returns the text decided so far and the calls completed.
func (t *toolSplitter) feed(text string, final bool) (string, []chatToolCall) {
	segs := t.p.Feed(text)
	if final {
		segs = append(segs, t.p.Flush()...)
	}
	var sb strings.Builder
	var calls []chatToolCall
	for _, s := range segs {
		if s.Call == nil {
			// the newlines a model puts between and after its calls are not
			// content
			if t.calls == 0 || strings.TrimSpace(s.Text) != "" {
				sb.WriteString(s.Text)
			}
			continue
		}
		calls = append(calls, chatToolCall{ID: newID("call_"), Type: "function",
			Function: chatFunctionCall{Name: s.Call.Name, Arguments: string(s.Call.Arguments)}})
		t.calls++
	}
	return sb.String(), calls
}
