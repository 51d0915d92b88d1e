package api

import (
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
func toolUseBlock(call chatToolCall) anthropicBlockOut {
	input := json.RawMessage(call.Function.Arguments)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return anthropicBlockOut{Type: "tool_use", ID: "toolu_" + call.ID[len("call_"):], Name: call.Function.Name, Input: input}
}
