package api

import (
	"bytes"

	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/engine/grammar"
)

// toolChoice is OpenAI's "tool_choice": "none", "auto", "required", or
// {"type": "function", "function": {"name": ...}}.
type toolChoice struct {
	Mode string // none, auto, required, or "" when absent
	Name string // a named function
}

func (c *toolChoice) UnmarshalJSON(b []byte) error {
	if firstByte(b) == '"' {
		if err := json.Unmarshal(b, &c.Mode); err != nil {
			return err
		}
		switch c.Mode {
		case "none", "auto", "required":
			return nil
		}
		return invalidf("tool_choice", "tool_choice %q is not one of none, auto, required", c.Mode)
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &obj); err != nil || obj.Function.Name == "" {
		return invalidf("tool_choice", "tool_choice must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
	}
	c.Mode, c.Name = "required", obj.Function.Name
	return nil
}

// checkToolsAllowed refuses tools the model cannot call: with no tool-call
// parser for its format (Options.NoToolCalls), offering tools is a 400
// unless tool_choice is none. vLLM answers the same way without
// --tool-call-parser.
func (s *Server) checkToolsAllowed(n int, choice *toolChoice) error {
	if n == 0 || !s.opts.NoToolCalls || (choice != nil && choice.Mode == "none") {
		return nil
	}
	return invalidf("tools", "model %s does not support tool calling: its chat template does not render tools in a format "+
		"Splash parses (the Qwen/Hermes <tool_call> format); send tool_choice \"none\", or start the server with --tool-parser hermes "+
		"if the model does use that format", s.opts.ModelID)
}

// forcedToolGrammar returns, for tool_choice required or a named function,
// the grammar of one call's JSON body — {"name": N, "arguments": <that
// tool's parameters schema>} — which decoding then enforces inside the
// model's <tool_call> markup. It returns nil when the model may answer
// freely.
func forcedToolGrammar(gs *grammars, choice *toolChoice, tools []json.RawMessage) (*grammar.Grammar, error) {
	if choice == nil || choice.Mode != "required" {
		return nil, nil
	}
	if len(tools) == 0 {
		return nil, invalidf("tool_choice", "tool_choice %q needs tools", choice.Mode)
	}
	var alts []json.RawMessage
	for _, raw := range tools {
		var t struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || t.Function.Name == "" {
			return nil, invalidf("tools", "each tool must be {\"type\": \"function\", \"function\": {\"name\": ...}}")
		}
		if choice.Name != "" && t.Function.Name != choice.Name {
			continue
		}
		params := t.Function.Parameters
		if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object"}`)
		}
		name, _ := json.Marshal(t.Function.Name)
		alts = append(alts, json.RawMessage(`{"type":"object","properties":{"name":{"const":`+string(name)+
			`},"arguments":`+string(params)+`},"required":["name","arguments"],"additionalProperties":false}`))
	}
	if len(alts) == 0 {
		return nil, invalidf("tool_choice", "tool_choice names function %q, which is not among the tools", choice.Name)
	}
	schema := alts[0]
	if len(alts) > 1 {
		list, _ := json.Marshal(alts)
		schema = json.RawMessage(`{"anyOf":` + string(list) + `}`)
	}
	g, err := gs.compile(schema)
	if err != nil {
		return nil, invalidf("tools", "a tool's parameters cannot be enforced: %v", err)
	}
	return g, nil
}
