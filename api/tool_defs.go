package api

import (
	"bytes"

	"github.com/goccy/go-json"
)

// checkChatTools checks each Chat Completions tool is a function tool with
// a name, as OpenAI and vLLM require: anything else ("tools": [1]) would
// reach the chat template as nonsense.
func checkChatTools(tools []json.RawMessage) error {
	for i, raw := range tools {
		var t struct {
			Type     *string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &t) != nil {
			return invalidf("tools", "tools[%d] must be an object {\"type\": \"function\", \"function\": {\"name\": ...}}", i)
		}
		if t.Type != nil && *t.Type != "function" {
			return invalidf("tools", "tools[%d].type %s is not supported (function only)", i, quote(*t.Type))
		}
		if t.Function == nil || t.Function.Name == "" {
			return invalidf("tools", "tools[%d].function.name is required", i)
		}
	}
	return nil
}
