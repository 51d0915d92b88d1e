package api_test

import (
	"testing"

	"github.com/splash-inference/splash/api"
)

// TestMaxTokensClampedToContext: a completion cap larger than what the
// context has left after the prompt is clamped to that rest, in every
// dialect (agents send fixed large caps), while a prompt that fills the
// context is still a 400.
func TestMaxTokensClampedToContext(t *testing.T) {
	ts := startServer(t, api.Options{ContextLength: 100})
	user := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, path, body string
		requested        int // 0: none sent
	}{
		{"chat max_tokens", "/v1/chat/completions", `{` + user + `,"max_tokens":1000}`, 1000},
		{"chat max_completion_tokens", "/v1/chat/completions", `{` + user + `,"max_completion_tokens":32000}`, 32000},
		{"chat fits", "/v1/chat/completions", `{` + user + `,"max_tokens":5}`, 5},
		{"chat absent", "/v1/chat/completions", `{` + user + `}`, 0},
		{"messages", "/v1/messages", `{"max_tokens":32000,` + user + `}`, 32000},
		{"completions", "/v1/completions", `{"prompt":"x","max_tokens":100}`, 100},
		{"responses", "/v1/responses", `{"input":"hi","max_output_tokens":5000}`, 5000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.do(t, "POST", tc.path, tc.body)
			if res.status != 200 {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			req := ts.engine.Last()
			room := 100 - len(req.Prompt)
			want := room
			if tc.requested > 0 && tc.requested < room {
				want = tc.requested
			}
			if req.MaxTokens != want {
				t.Fatalf("engine got max tokens %d for a %d-token prompt, want %d", req.MaxTokens, len(req.Prompt), want)
			}
		})
	}
}
