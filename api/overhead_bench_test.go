package api_test

import (
	"github.com/splash-inference/splash/actors"

	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

// The HTTP frontend's own cost, measured against the zero-delay fake
// engine so nothing but the frontend (and a Go client on loopback) is
// timed. Run with, e.g.:
//
//	go test -run '^$' -bench 'Health|StreamOverhead' -benchtime 2s ./http/

// BenchmarkHealth is /health over a keep-alive loopback connection: one
// client in turn, then as many clients as GOMAXPROCS at once.
func BenchmarkHealth(b *testing.B) {
	ts := startServer(b, api.Options{})
	b.Run("serial", func(b *testing.B) {
		client := keepAliveClient()
		defer client.CloseIdleConnections()
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			getHealth(b, client, ts.url)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	})
	b.Run("parallel", func(b *testing.B) {
		client := keepAliveClient()
		defer client.CloseIdleConnections()
		b.ReportAllocs()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				getHealth(b, client, ts.url)
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	})
}

// keepAliveClient reuses its loopback connections across requests.
func keepAliveClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
}

func getHealth(b *testing.B, client *http.Client, url string) {
	res, err := client.Get(url + "/health")
	if err != nil {
		b.Fatal(err)
	}
	// Drain the body, or the connection is not reused.
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.Fatalf("status %d", res.StatusCode)
	}
}

// overheadTokens is the length of the benchmarked generation.
const overheadTokens = 256

// BenchmarkStreamOverhead times one generation of overheadTokens tokens
// consumed (a) straight from the engine's event channel and (b) as the
// SSE stream of each dialect over loopback HTTP, with the same request the
// frontend builds. It reports both per token and the difference, the
// frontend's cost per streamed token ("overhead-us/token"; the target is
// under 50 µs), which also carries each request's fixed cost (parsing,
// templating, headers) spread over the tokens.
func BenchmarkStreamOverhead(b *testing.B) {
	words := make([]string, overheadTokens)
	for i := range words {
		words[i] = " word"
	}
	tests := []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"stream":true,"reasoning_effort":"none","max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`},
		{"messages", "/v1/messages", `{"stream":true,"max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`},
		{"responses", "/v1/responses", `{"stream":true,"reasoning":{"effort":"none"},"input":"hi"}`},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			eng := fake.New()
			eng.Words, eng.Thoughts = words, nil
			ts := startServer(b, api.Options{Engine: eng})
			client := keepAliveClient()
			defer client.CloseIdleConnections()

			// One request through HTTP captures the engine request the
			// frontend builds; replaying it directly is path (a).
			if events := streamOnce(b, client, ts.url+tt.path, tt.body); events < overheadTokens {
				b.Fatalf("the stream had %d events, fewer than its %d tokens", events, overheadTokens)
			}
			req := eng.Last()
			if tokens := drainEngine(b, eng, req); tokens != overheadTokens {
				b.Fatalf("the engine generated %d tokens, want %d", tokens, overheadTokens)
			}

			var direct, viaHTTP time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				drainEngine(b, eng, req)
				t1 := time.Now()
				streamOnce(b, client, ts.url+tt.path, tt.body)
				viaHTTP += time.Since(t1)
				direct += t1.Sub(t0)
			}
			perToken := func(d time.Duration) float64 {
				return float64(d.Nanoseconds()) / float64(b.N) / overheadTokens / 1e3
			}
			b.ReportMetric(perToken(direct), "engine-us/token")
			b.ReportMetric(perToken(viaHTTP), "http-us/token")
			b.ReportMetric(perToken(viaHTTP-direct), "overhead-us/token")
		})
	}
}

// drainEngine runs req on the engine directly and counts its tokens.
func drainEngine(b *testing.B, eng api.Engine, req *actors.Request) int {
	events, err := eng.Generate(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	tokens := 0
	for ev := range events {
		if ev.Err != nil {
			b.Fatal(ev.Err)
		}
		tokens += len(ev.Tokens)
	}
	return tokens
}

// streamOnce posts a streaming request, reads the stream to its end as an
// SSE client does (line by line) and counts its events.
func streamOnce(b *testing.B, client *http.Client, url, body string) int {
	res, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(res.Body)
		b.Fatalf("status %d: %s", res.StatusCode, msg)
	}
	events := 0
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events++
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return events
}
