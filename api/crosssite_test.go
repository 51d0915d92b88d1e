package api_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

// TestCrossSite: a page of another site cannot get a generation out of a
// keyless server, neither with a "simple" POST (text/plain or a form,
// which needs no preflight) nor with an Origin the server does not allow;
// the server's own page and allowed origins can.
func TestCrossSite(t *testing.T) {
	const allowed = "http://localhost:3000"
	ts := startServer(t, api.Options{AllowedOrigins: []string{allowed + "/"}})
	self := "http://" + strings.TrimPrefix(ts.url, "http://")
	chat := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}`
	msgs := `{"max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		bodyHas                  string
	}{
		{"text/plain", "POST", "/v1/chat/completions", chat, []string{"Content-Type: text/plain"}, 415, `"type":"invalid_request_error"`},
		{"form", "POST", "/v1/messages", msgs, []string{"Content-Type: application/x-www-form-urlencoded"}, 415, `{"type":"error","error":{"type":"invalid_request_error"`},
		{"multipart", "POST", "/v1/completions", `{"prompt":"x"}`, []string{"Content-Type: multipart/form-data; boundary=x"}, 415, "application/json"},
		{"no content type", "POST", "/tokenize", `{"text":"x"}`, []string{"Content-Type:"}, 415, "application/json"},
		{"json with charset", "POST", "/v1/chat/completions", chat, []string{"Content-Type: application/json; charset=utf-8"}, 200, "chat.completion"},
		{"json in capitals", "POST", "/v1/chat/completions", chat, []string{"Content-Type: Application/JSON"}, 200, "chat.completion"},
		{"foreign origin", "POST", "/v1/chat/completions", chat, []string{"Origin: https://evil.example"}, 403, `"type":"permission_error"`},
		{"foreign origin, anthropic", "POST", "/v1/messages", msgs, []string{"Origin: https://evil.example"}, 403, `{"type":"error","error":{"type":"permission_error"`},
		{"foreign origin on a GET", "GET", "/v1/models", "", []string{"Origin: http://evil.example"}, 403, "--allowed-origin"},
		{"null origin", "POST", "/v1/chat/completions", chat, []string{"Origin: null"}, 403, "permission_error"},
		{"origin on another port", "POST", "/v1/chat/completions", chat, []string{"Origin: http://127.0.0.1:1"}, 403, "permission_error"},
		{"the server's own page", "POST", "/v1/chat/completions", chat, []string{"Origin: " + self}, 200, "chat.completion"},
		{"allowed origin", "POST", "/v1/chat/completions", chat, []string{"Origin: " + allowed}, 200, "chat.completion"},
		{"preflight of a foreign origin", "OPTIONS", "/v1/chat/completions", "", []string{"Origin: https://evil.example", "Access-Control-Request-Method: POST"}, 403, "permission_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, tt.method, tt.path, tt.body, tt.headers...)
			if res.status != tt.status || !strings.Contains(res.body, tt.bodyHas) {
				t.Errorf("%d %s, want %d containing %s", res.status, res.body, tt.status, tt.bodyHas)
			}
			if got := res.header.Get("Access-Control-Allow-Origin"); got != "" && tt.name != "allowed origin" {
				t.Errorf("Access-Control-Allow-Origin %q for a request not from an allowed origin", got)
			}
		})
	}
	t.Run("allowed origin's answer", func(t *testing.T) {
		res := ts.do(t, "POST", "/v1/chat/completions", chat, "Origin: "+allowed)
		if got := res.header.Get("Access-Control-Allow-Origin"); got != allowed {
			t.Errorf("Access-Control-Allow-Origin %q, want %q", got, allowed)
		}
	})
	t.Run("preflight of an allowed origin", func(t *testing.T) {
		res := ts.do(t, "OPTIONS", "/v1/messages", "", "Origin: "+allowed, "Access-Control-Request-Method: POST",
			"Access-Control-Request-Headers: x-stainless-os, content-type")
		if res.status != 204 || res.header.Get("Access-Control-Allow-Origin") != allowed {
			t.Fatalf("%d %v", res.status, res.header)
		}
		h := res.header.Get("Access-Control-Allow-Headers")
		for _, want := range []string{"authorization", "x-api-key", "anthropic-version", "content-type", "x-stainless-os"} {
			if !strings.Contains(h, want) {
				t.Errorf("Access-Control-Allow-Headers %q lacks %s", h, want)
			}
		}
		if m := res.header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") {
			t.Errorf("Access-Control-Allow-Methods %q", m)
		}
	})
}

func TestAllowedOriginsAreChecked(t *testing.T) {
	for _, bad := range []string{"*", "localhost:3000", "http://host/path", "ftp://host", "http://"} {
		t.Run(bad, func(t *testing.T) {
			_, err := api.New(api.Options{Engine: fake.New(), Tokenizer: fake.Tokenizer{}, Template: fake.Template{},
				ModelID: testModel, ContextLength: testContext, AllowedOrigins: []string{bad}})
			if err == nil || !strings.Contains(err.Error(), "scheme://host") {
				t.Errorf("allowed origin %q: %v", bad, err)
			}
		})
	}
}

// TestAmbiguousFraming: a request declaring both a Content-Length and a
// chunked body is refused in its dialect's shape, whichever comes first.
func TestAmbiguousFraming(t *testing.T) {
	ts := startServer(t, api.Options{})
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}`
	chunked := fmt.Sprintf("%x\r\n", len(body)) + body + "\r\n0\r\n\r\n"
	tests := []struct {
		name, path, headers, want string
	}{
		{"length first", "/v1/chat/completions", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", `"type":"invalid_request_error"`},
		{"chunked first", "/v1/messages", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", `{"type":"error","error":{"type":"invalid_request_error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got := rawExchange(t, ts, "POST "+tt.path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+tt.headers+"\r\n"+chunked)
			if !strings.HasPrefix(status, "HTTP/1.1 400") || !strings.Contains(got, tt.want) || !strings.Contains(got, "Transfer-Encoding") {
				t.Errorf("%s %s", status, got)
			}
		})
	}
}

// rawExchange writes a request as is on a new connection and returns the
// status line and everything after it until the server closes.
func rawExchange(t *testing.T, ts *testServer, request string) (status, rest string) {
	t.Helper()
	c := dial(t, ts)
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	status, rest, _ = strings.Cut(untilClosed(t, c), "\r\n")
	return status, rest
}
