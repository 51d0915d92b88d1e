package api_test

import (
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/splash-inference/splash/api"
)

// errorShape checks a body is an error in the dialect of path and returns
// its message.
func errorShape(t *testing.T, path, body string) (typ, message, param string) {
	t.Helper()
	if strings.HasPrefix(path, "/v1/messages") {
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Type != "error" || e.Error.Message == "" {
			t.Fatalf("not an Anthropic error: %s", body)
		}
		return e.Error.Type, e.Error.Message, ""
	}
	var e struct {
		Error struct {
			Type    string  `json:"type"`
			Message string  `json:"message"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("not an OpenAI error: %s", body)
	}
	if e.Error.Param != nil {
		param = *e.Error.Param
	}
	return e.Error.Type, e.Error.Message, param
}

func TestBadInput(t *testing.T) {
	ts := startServer(t, api.Options{ContextLength: 100})
	const chat, msgs, cmpl, resp = "/v1/chat/completions", "/v1/messages", "/v1/completions", "/v1/responses"
	user := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, path, body string
		status           int
		typ              string
		msgHas           string // the message must contain this
	}{
		{"empty body", chat, ``, 400, "invalid_request_error", "empty"},
		{"malformed json", chat, `{"messages":[`, 400, "invalid_request_error", "malformed JSON"},
		{"not an object", chat, `[1,2]`, 400, "invalid_request_error", ""},
		{"wrong type", chat, `{"messages":"hi"}`, 400, "invalid_request_error", "messages"},
		{"wrong number type", chat, `{` + user + `,"max_tokens":"ten"}`, 400, "invalid_request_error", "max_tokens"},
		{"empty messages", chat, `{"messages":[]}`, 400, "invalid_request_error", "must not be empty"},
		{"missing messages", chat, `{}`, 400, "invalid_request_error", "must not be empty"},
		{"unknown role", chat, `{"messages":[{"role":"wizard","content":"hi"}]}`, 400, "invalid_request_error", `"wizard"`},
		{"image part", chat, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "invalid_request_error", "text-only"},
		{"temperature range", chat, `{` + user + `,"temperature":2.5}`, 400, "invalid_request_error", "temperature"},
		{"top_p zero", chat, `{` + user + `,"top_p":0}`, 400, "invalid_request_error", "top_p"},
		{"top_k", chat, `{` + user + `,"top_k":-2}`, 400, "invalid_request_error", "top_k"},
		{"min_p", chat, `{` + user + `,"min_p":1.5}`, 400, "invalid_request_error", "min_p"},
		{"presence penalty", chat, `{` + user + `,"presence_penalty":3}`, 400, "invalid_request_error", "presence_penalty"},
		{"frequency penalty", chat, `{` + user + `,"frequency_penalty":-3}`, 400, "invalid_request_error", "frequency_penalty"},
		{"logit bias key", chat, `{` + user + `,"logit_bias":{"abc":1}}`, 400, "invalid_request_error", "logit_bias"},
		{"logit bias outside the vocabulary", chat, `{` + user + `,"logit_bias":{"5000":1}}`, 400, "invalid_request_error", "outside the vocabulary"},
		{"logit bias value", chat, `{` + user + `,"logit_bias":{"5":101}}`, 400, "invalid_request_error", "logit_bias"},
		{"n zero", chat, `{` + user + `,"n":0}`, 400, "invalid_request_error", "n must"},
		{"top_logprobs", chat, `{` + user + `,"logprobs":true,"top_logprobs":21}`, 400, "invalid_request_error", "top_logprobs"},
		{"max_tokens zero", chat, `{` + user + `,"max_tokens":0}`, 400, "invalid_request_error", "max_tokens"},
		{"stop list type", chat, `{` + user + `,"stop":[1]}`, 400, "invalid_request_error", "stop"},
		{"empty stop", chat, `{` + user + `,"stop":[""]}`, 400, "invalid_request_error", "stop"},
		{"reasoning effort", chat, `{` + user + `,"reasoning_effort":"max"}`, 400, "invalid_request_error", "reasoning_effort"},
		{"unknown model", chat, `{"model":"gpt-9",` + user + `}`, 404, "not_found_error", "gpt-9"},
		{"tool not an object", chat, `{` + user + `,"tools":[1]}`, 400, "invalid_request_error", "tools[0] must be an object"},
		{"tool without a function", chat, `{` + user + `,"tools":[{"type":"function"}]}`, 400, "invalid_request_error", "tools[0].function.name"},
		{"tool without a name", chat, `{` + user + `,"tools":[{"type":"function","function":{"parameters":{}}}]}`, 400, "invalid_request_error", "tools[0].function.name"},
		{"tool type", chat, `{` + user + `,"tools":[{"type":"retrieval","function":{"name":"f"}}]}`, 400, "invalid_request_error", `"retrieval"`},
		// The fake prompt for "hi" is 33 tokens: 33 + 80 > 100.
		{"prompt fills context", chat, `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 100) + `"}]}`, 400, "invalid_request_error", "no room"},
		{"template failure", chat, `{"messages":[{"role":"assistant","content":"hi"}]}`, 400, "invalid_request_error", "template"},

		{"anthropic malformed", msgs, `{"max_tokens":`, 400, "invalid_request_error", "malformed JSON"},
		{"anthropic max_tokens required", msgs, `{` + user + `}`, 400, "invalid_request_error", "max_tokens"},
		{"anthropic empty", msgs, `{"max_tokens":5,"messages":[]}`, 400, "invalid_request_error", "must not be empty"},
		{"anthropic role", msgs, `{"max_tokens":5,"messages":[{"role":"wizard","content":"hi"}]}`, 400, "invalid_request_error", `"wizard"`},
		{"anthropic temperature", msgs, `{"max_tokens":5,"temperature":1.5,` + user + `}`, 400, "invalid_request_error", "temperature"},
		{"anthropic top_p", msgs, `{"max_tokens":5,"top_p":0,` + user + `}`, 400, "invalid_request_error", "top_p must be in (0, 1]"},
		{"anthropic empty stop sequence", msgs, `{"max_tokens":5,"stop_sequences":["x",""],` + user + `}`, 400, "invalid_request_error", "stop_sequences[1] is empty"},
		{"anthropic thinking budget", msgs, `{"max_tokens":5000,"thinking":{"type":"enabled","budget_tokens":10},` + user + `}`, 400, "invalid_request_error", "budget_tokens"},
		{"anthropic thinking type", msgs, `{"max_tokens":5,"thinking":{"type":"sometimes"},` + user + `}`, 400, "invalid_request_error", "thinking.type"},
		{"anthropic block type", msgs, `{"max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`, 400, "invalid_request_error", "image"},
		{"anthropic tool without a name", msgs, `{"max_tokens":5,"tools":[{"input_schema":{"type":"object"}}],` + user + `}`, 400, "invalid_request_error", "tools[0].name"},
		{"anthropic second tool without a name", msgs, `{"max_tokens":5,"tools":[{"name":"f"},{"name":""}],` + user + `}`, 400, "invalid_request_error", "tools[1].name"},
		{"anthropic model", msgs, `{"model":"claude-x","max_tokens":5,` + user + `}`, 404, "not_found_error", "claude-x"},
		{"count_tokens empty", msgs + "/count_tokens", `{"messages":[]}`, 400, "invalid_request_error", "must not be empty"},

		{"completions no prompt", cmpl, `{}`, 400, "invalid_request_error", "prompt"},
		{"completions batch", cmpl, `{"prompt":["a","b"]}`, 400, "invalid_request_error", "batched"},
		{"completions empty array", cmpl, `{"prompt":[]}`, 400, "invalid_request_error", "empty"},
		{"completions bad ids", cmpl, `{"prompt":[1,"a"]}`, 400, "invalid_request_error", "prompt"},
		{"completions logprobs", cmpl, `{"prompt":"x","logprobs":30}`, 400, "invalid_request_error", "logprobs"},
		{"completions logprobs named as sent", cmpl, `{"prompt":"x","logprobs":30}`, 400, "invalid_request_error", "logprobs must be in [0, 20], got 30"},
		{"completions n", cmpl, `{"prompt":"x","n":17}`, 400, "invalid_request_error", "n must be in [1, 16], got 17"},
		{"completions empty stop", cmpl, `{"prompt":"x","stop":[""]}`, 400, "invalid_request_error", "stop[0] is empty"},
		{"completions temperature", cmpl, `{"prompt":"x","temperature":2.5}`, 400, "invalid_request_error", "temperature must be in [0, 2], got 2.5"},
		{"completions prompt fills context", cmpl, `{"prompt":"` + strings.Repeat("x", 100) + `"}`, 400, "invalid_request_error", "no room"},

		{"responses empty", resp, `{"input":[]}`, 400, "invalid_request_error", "empty"},
		{"responses item type", resp, `{"input":[{"type":"web_search_call"}]}`, 400, "invalid_request_error", "web_search_call"},
		{"responses role", resp, `{"input":[{"role":"tool","content":"x"}]}`, 400, "invalid_request_error", "role"},
		{"responses effort", resp, `{"input":"x","reasoning":{"effort":"huge"}}`, 400, "invalid_request_error", "reasoning.effort"},
		{"responses top_logprobs", resp, `{"input":"x","top_logprobs":21}`, 400, "invalid_request_error", "top_logprobs must be in [0, 20], got 21"},
		{"responses temperature", resp, `{"input":"x","temperature":-1}`, 400, "invalid_request_error", "temperature must be in [0, 2], got -1"},
		{"responses tool without name", resp, `{"input":"x","tools":[{"type":"function"}]}`, 400, "invalid_request_error", "needs a name"},
		{"responses tool without type", resp, `{"input":"x","tools":[{"name":"f"}]}`, 400, "invalid_request_error", "needs a type"},
		{"responses nested namespace", resp, `{"input":"x","tools":[{"type":"namespace","name":"a","tools":[{"type":"namespace","name":"b"}]}]}`, 400, "invalid_request_error", "do not nest"},
		{"responses hosted tool_choice", resp, `{"input":"x","tools":[{"type":"web_search"}],"tool_choice":{"type":"web_search"}}`, 400, "invalid_request_error", "hosted tool"},
		{"responses tool_choice unknown name", resp, `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`, 400, "invalid_request_error", `"g"`},
		{"responses tool_choice string", resp, `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":"sometimes"}`, 400, "invalid_request_error", "sometimes"},

		{"tokenize two inputs", "/tokenize", `{"text":"a","prompt":"b"}`, 400, "invalid_request_error", "exactly one"},
		{"tokenize nothing", "/tokenize", `{}`, 400, "invalid_request_error", "exactly one"},
		{"detokenize missing", "/detokenize", `{}`, 400, "invalid_request_error", "tokens"},
		{"detokenize negative", "/detokenize", `{"tokens":[1,-1]}`, 400, "invalid_request_error", "negative"},
		{"apply-template role", "/apply-template", `{"messages":[{"role":"x"}]}`, 400, "invalid_request_error", "role"},
		{"unknown route", "/v1/embeddings", `{}`, 404, "not_found_error", "no route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, "POST", tt.path, tt.body)
			if res.status != tt.status {
				t.Errorf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			typ, msg, _ := errorShape(t, tt.path, res.body)
			if typ != tt.typ || !strings.Contains(msg, tt.msgHas) {
				t.Errorf("error %s %q, want %s containing %q", typ, msg, tt.typ, tt.msgHas)
			}
		})
	}
	// After all that the server still serves.
	if res := ts.do(t, "POST", chat, `{`+user+`,"max_tokens":2}`); res.status != 200 {
		t.Errorf("server no longer serves: %d %s", res.status, res.body)
	}
}

func TestModelNotFoundCode(t *testing.T) {
	ts := startServer(t, api.Options{})
	res := ts.do(t, "POST", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 404 || !strings.Contains(res.body, `"code":"model_not_found"`) || !strings.Contains(res.body, `"param":"model"`) {
		t.Errorf("%d %s", res.status, res.body)
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := startServer(t, api.Options{MaxBodyBytes: 1024})
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 2048) + `"}]}`
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		res := ts.do(t, "POST", path, big)
		if res.status != 413 {
			t.Errorf("%s: status %d, want 413: %s", path, res.status, res.body)
			continue
		}
		typ, msg, _ := errorShape(t, path, res.body)
		if !strings.Contains(msg, "1024") || (path == "/v1/messages" && typ != "request_too_large") {
			t.Errorf("%s: %s %q", path, typ, msg)
		}
	}
	if res := ts.do(t, "GET", "/health", ""); res.status != 200 {
		t.Errorf("server no longer serves: %d", res.status)
	}
}
