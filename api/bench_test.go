package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
)

// benchmarkRequest measures one request's round trip through the server
// with the zero-delay fake engine (the frontend's overhead plus a local
// HTTP client's).
func benchmarkRequest(b *testing.B, path, body string) {
	ts := startServer(b, api.Options{})
	b.ReportAllocs()
	for b.Loop() {
		res, err := http.Post(ts.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}

func BenchmarkChatCompletion(b *testing.B) {
	benchmarkRequest(b, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`)
}

func BenchmarkChatCompletionStream(b *testing.B) {
	benchmarkRequest(b, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
}

func BenchmarkMessagesStream(b *testing.B) {
	benchmarkRequest(b, "/v1/messages", `{"stream":true,"max_tokens":100,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"}]}`)
}

func BenchmarkResponsesStream(b *testing.B) {
	benchmarkRequest(b, "/v1/responses", `{"stream":true,"input":"hi"}`)
}
