package api_test

import (
	"testing"

	"github.com/splash-inference/splash/api"
)

func TestTokenizeDetokenizeApplyTemplate(t *testing.T) {
	ts := startServer(t, api.Options{})
	user := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, path, body, want string
	}{
		{"text gets BOS", "/tokenize", `{"text":"hi"}`, `{"tokens":[256,104,105],"count":3}`},
		{"content", "/tokenize", `{"content":"hi"}`, `{"tokens":[256,104,105],"count":3}`},
		{"prompt without special tokens", "/tokenize", `{"prompt":"hi","add_special_tokens":false}`, `{"tokens":[104,105],"count":2}`},
		{"empty text", "/tokenize", `{"text":"","add_special_tokens":false}`, `{"tokens":[],"count":0}`},
		{"messages are rendered", "/tokenize", `{"messages":[{"role":"user","content":"A"}],"add_generation_prompt":false}`,
			`{"tokens":[60,124,117,115,101,114,124,62,65,10],"count":10}`},
		{"detokenize", "/detokenize", `{"tokens":[256,104,105]}`, `{"prompt":"<s>hi"}`},
		{"detokenize skipping special", "/detokenize", `{"tokens":[256,104,105],"skip_special_tokens":true}`, `{"prompt":"hi"}`},
		{"template, thinking by default", "/apply-template", `{` + user + `}`, `{"prompt":"<|user|>hi\n<|assistant|>\n<think>\n"}`},
		{"template, reasoning none", "/apply-template", `{` + user + `,"reasoning_effort":"none"}`,
			`{"prompt":"<|user|>hi\n<|assistant|>\n<think>\n\n</think>\n\n"}`},
		{"template, enable_thinking wins", "/apply-template", `{` + user + `,"reasoning_effort":"none","chat_template_kwargs":{"enable_thinking":true}}`,
			`{"prompt":"<|user|>hi\n<|assistant|>\n<think>\n"}`},
		{"template with tools, no generation prompt", "/apply-template", `{` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"add_generation_prompt":false}`,
			`{"prompt":"<|tools|>{\"type\":\"function\",\"function\":{\"name\":\"f\"}}\n<|user|>hi\n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, "POST", tt.path, tt.body)
			if res.status != 200 || res.body != tt.want {
				t.Errorf("%d %s\nwant %s", res.status, res.body, tt.want)
			}
		})
	}
}

func TestReasoningControl(t *testing.T) {
	ts := startServer(t, api.Options{})
	tests := []struct {
		name, path, body string
		budget           int
		thinking         bool
	}{
		{"chat default", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}`, 0, true},
		{"chat none", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"reasoning_effort":"none"}`, 0, false},
		{"chat low", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"reasoning_effort":"low"}`, 1024, true},
		{"chat medium", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"reasoning_effort":"medium"}`, 4096, true},
		{"chat high", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"reasoning_effort":"high"}`, 16384, true},
		{"chat xhigh", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"reasoning_effort":"xhigh"}`, 32768, true},
		{"responses high", "/v1/responses", `{"input":"hi","max_output_tokens":1,"reasoning":{"effort":"high"}}`, 16384, true},
		{"anthropic default off", "/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}`, 0, false},
		{"anthropic enabled", "/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3000,"thinking":{"type":"enabled","budget_tokens":1500}}`, 1500, true},
		{"anthropic disabled", "/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3000,"thinking":{"type":"disabled"}}`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := ts.do(t, "POST", tt.path, tt.body); res.status != 200 {
				t.Fatalf("%d %s", res.status, res.body)
			}
			last := ts.engine.Last()
			prompt := string(fakeText(last.Prompt))
			thinking := len(prompt) >= 8 && prompt[len(prompt)-8:] == "<think>\n"
			if last.ThinkingBudget != tt.budget || thinking != tt.thinking {
				t.Errorf("budget %d thinking %v, want %d %v", last.ThinkingBudget, thinking, tt.budget, tt.thinking)
			}
		})
	}
}

// fakeText turns byte-level token ids back into bytes.
func fakeText(ids []int32) []byte {
	b := make([]byte, 0, len(ids))
	for _, id := range ids {
		if id < 256 {
			b = append(b, byte(id))
		}
	}
	return b
}
