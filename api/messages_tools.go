package api

import (
	"strings"

	"github.com/goccy/go-json"
)

// Tool use in Anthropic Messages: with tools declared, the answer is split
// by the same streaming <tool_call> parser as Chat Completions; each call
// becomes a "tool_use" content block (streamed as content_block_start with
// empty input, one input_json_delta, content_block_stop) and stop_reason
// becomes "tool_use". Text never lands in a tool_use block's index.

// anthropicToolChoice is {"type": "auto" | "any" | "tool" | "none", "name",
// "disable_parallel_tool_use"}.
type anthropicToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

// choice maps Anthropic's tool_choice onto the OpenAI one the grammar uses.
func (c *anthropicToolChoice) choice() (*toolChoice, error) {
	if c == nil {
		return nil, nil
	}
	switch c.Type {
	case "auto", "":
		return &toolChoice{Mode: "auto"}, nil
	case "none":
		return &toolChoice{Mode: "none"}, nil
	case "any":
		return &toolChoice{Mode: "required"}, nil
	case "tool":
		if c.Name == "" {
			return nil, invalidf("tool_choice.name", "tool_choice type \"tool\" needs a name")
		}
		return &toolChoice{Mode: "required", Name: c.Name}, nil
	}
	return nil, invalidf("tool_choice.type", "tool_choice type %q is not one of auto, any, tool, none", c.Type)
}

// toolUseBlock is a tool_use content block; input is the call's arguments.
// A call cut by max_tokens has truncated arguments: its input is what they
// held, closed into valid JSON (the stop reason says it was cut), as the
// Anthropic API returns an incomplete tool_use block in that case.
func toolUseBlock(call chatToolCall) anthropicBlockOut {
	input := json.RawMessage(call.Function.Arguments)
	if !json.Valid(input) {
		input = json.RawMessage(closeTruncatedJSON(call.Function.Arguments))
	}
	return anthropicBlockOut{Type: "tool_use", ID: "toolu_" + call.ID[len("call_"):], Name: call.Function.Name, Input: input}
}

// closeTruncatedJSON completes a JSON object cut short: an open string is
// closed, a trailing key without its value (or a dangling comma or colon)
// is dropped, and open arrays and objects are closed. It returns "{}" when
// that still does not give valid JSON.
func closeTruncatedJSON(s string) string {
	inStr, esc := false, false
	lastSafe := 0 // length of the longest prefix ending between values
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[', '}', ']':
			lastSafe = i + 1
		case ',':
			lastSafe = i
		}
	}
	// Try the whole text with its string closed, then the text cut back to
	// the last point between values.
	for _, cut := range []string{s, s[:lastSafe]} {
		body := cut
		if cut == s && inStr {
			body += `"`
		}
		body = strings.TrimRight(body, " \t\r\n,:")
		var tail strings.Builder
		depth := open(body)
		for i := len(depth) - 1; i >= 0; i-- {
			if depth[i] == '{' {
				tail.WriteByte('}')
			} else {
				tail.WriteByte(']')
			}
		}
		if out := body + tail.String(); json.Valid([]byte(out)) {
			return out
		}
	}
	return "{}"
}

// open is the stack of brackets s leaves open.
func open(s string) []byte {
	var stack []byte
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			stack = append(stack, c)
		case (c == '}' || c == ']') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	return stack
}
