package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/splash-inference/splash/api"
)

func TestAPIKey(t *testing.T) {
	ts := startServer(t, api.Options{APIKey: "s3cret"})
	chat := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}`
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		bodyHas                  string
	}{
		{"health is public", "GET", "/health", "", nil, 200, `"ok"`},
		{"ready is public", "GET", "/ready", "", nil, 200, `"ready"`},
		{"models needs the key", "GET", "/v1/models", "", nil, 401, `"type":"authentication_error"`},
		{"metrics needs the key", "GET", "/metrics", "", nil, 401, `authentication_error`},
		{"bearer", "POST", "/v1/chat/completions", chat, []string{"Authorization: Bearer s3cret"}, 200, `chat.completion`},
		{"bearer lower case scheme", "POST", "/v1/chat/completions", chat, []string{"Authorization: bearer s3cret"}, 200, `chat.completion`},
		{"x-api-key", "POST", "/v1/chat/completions", chat, []string{"x-api-key: s3cret"}, 200, `chat.completion`},
		{"wrong bearer", "POST", "/v1/chat/completions", chat, []string{"Authorization: Bearer s3cre"}, 401, `{"error":{"message":`},
		{"key as basic auth", "POST", "/v1/chat/completions", chat, []string{"Authorization: Basic s3cret"}, 401, `authentication_error`},
		{"anthropic shape", "POST", "/v1/messages", `{}`, []string{"x-api-key: nope"}, 401, `{"type":"error","error":{"type":"authentication_error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, tt.method, tt.path, tt.body, tt.headers...)
			if res.status != tt.status || !strings.Contains(res.body, tt.bodyHas) {
				t.Errorf("%d %s, want %d containing %s", res.status, res.body, tt.status, tt.bodyHas)
			}
		})
	}
	t.Run("sdks", func(t *testing.T) {
		wrongOpenAI, rightOpenAI := openAIClient(ts, "wrong"), openAIClient(ts, "s3cret")
		wrongAnthropic, rightAnthropic := anthropicClient(ts, "wrong"), anthropicClient(ts, "s3cret")
		_, err := wrongOpenAI.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		var oErr *openai.Error
		if !errors.As(err, &oErr) || oErr.StatusCode != 401 || oErr.Type != "authentication_error" {
			t.Errorf("openai with wrong key: %v", err)
		}
		if _, err := rightOpenAI.Models.List(context.Background()); err != nil {
			t.Errorf("openai with key: %v", err)
		}
		_, err = wrongAnthropic.Messages.New(context.Background(), anthropic.MessageNewParams{MaxTokens: 5,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
		var aErr *anthropic.Error
		if !errors.As(err, &aErr) || aErr.StatusCode != 401 {
			t.Errorf("anthropic with wrong key: %v", err)
		}
		if _, err := rightAnthropic.Messages.New(context.Background(), anthropic.MessageNewParams{MaxTokens: 5,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}); err != nil {
			t.Errorf("anthropic with key: %v", err)
		}
	})
}

func TestHostAllowlist(t *testing.T) {
	ts := startServer(t, api.Options{AllowedHosts: []string{"box.lan", "Other.Example:9000"}})
	tests := []struct {
		host   string
		status int
	}{
		{"127.0.0.1:8000", 200},
		{"127.0.0.1", 200},
		{"localhost:1234", 200},
		{"LOCALHOST", 200},
		{"[::1]:8000", 200},
		{"box.lan:8000", 200},
		{"other.example", 200},
		{"evil.example", 403},
		{"evil.example:8000", 403},
		{"127.0.0.1.evil.example", 403},
		{"localhost.evil.example:80", 403},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			res := ts.do(t, "GET", "/v1/models", "", "Host: "+tt.host)
			if res.status != tt.status {
				t.Errorf("Host %q: %d %s, want %d", tt.host, res.status, res.body, tt.status)
			}
			if tt.status == 403 && !strings.Contains(res.body, `"type":"permission_error"`) {
				t.Errorf("403 body %s", res.body)
			}
		})
	}
	res := ts.do(t, "POST", "/v1/messages", "{}", "Host: evil.example")
	if res.status != 403 || !strings.Contains(res.body, `{"type":"error","error":{"type":"permission_error"`) {
		t.Errorf("anthropic path: %d %s", res.status, res.body)
	}
}
