package api_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

// waitFor polls cond until it holds. The ten seconds are a hang guard,
// not a speed check: a passing wait ends as soon as cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTooManyWaiting(t *testing.T) {
	eng := fake.New()
	eng.Hold = make(chan struct{})
	ts := startServer(t, api.Options{Engine: eng, MaxRunning: 1, MaxWaiting: 1})
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Go(func() { statuses[i] = ts.do(t, "POST", "/v1/chat/completions", body).status })
	}
	waitFor(t, "two requests in the engine", func() bool { return eng.Running() == 2 })
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		res := ts.do(t, "POST", path, body)
		if res.status != 429 || res.header.Get("Retry-After") != "1" {
			t.Errorf("%s: status %d Retry-After %q, want 429 and 1", path, res.status, res.header.Get("Retry-After"))
		}
		if typ, _, _ := errorShape(t, path, res.body); typ != "rate_limit_error" {
			t.Errorf("%s: error type %s", path, typ)
		}
	}
	close(eng.Hold)
	wg.Wait()
	if statuses[0] != 200 || statuses[1] != 200 {
		t.Errorf("held requests ended with %v", statuses)
	}
	if res := ts.do(t, "POST", "/v1/chat/completions", body); res.status != 200 {
		t.Errorf("after the queue drained: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "GET", "/metrics", ""); !strings.Contains(res.body, "splash_http_rejected_total 2") {
		t.Errorf("metrics do not count the rejections:\n%s", res.body)
	}
}

func TestEngineBusy(t *testing.T) {
	eng := fake.New()
	eng.Busy = true
	ts := startServer(t, api.Options{Engine: eng})
	res := ts.do(t, "POST", "/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 429 || res.header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q", res.status, res.header.Get("Retry-After"))
	}
}

// openStream starts a streaming request and reads its first line.
func openStream(t *testing.T, ctx context.Context, ts *testServer, path, body string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if _, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
}

// sendAndForget posts a request and drops it when ctx ends.
func sendAndForget(ctx context.Context, ts *testServer, path, body string) {
	req, err := http.NewRequestWithContext(ctx, "POST", ts.url+path, strings.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}

func TestClientDisconnectCancels(t *testing.T) {
	tests := []struct {
		name, path, body string
		hold             bool // the engine produces nothing: only keep-alive pings notice
	}{
		{"chat while generating", "/v1/chat/completions", `{"stream":true,"ignore_eos":true,"messages":[{"role":"user","content":"hi"}]}`, false},
		{"messages while generating", "/v1/messages", `{"stream":true,"max_tokens":3000,"messages":[{"role":"user","content":"hi"}]}`, false},
		{"responses during prefill", "/v1/responses", `{"stream":true,"input":"hi"}`, true},
		{"non-streamed chat", "/v1/chat/completions", `{"ignore_eos":true,"messages":[{"role":"user","content":"hi"}]}`, false},
		{"non-streamed messages during prefill", "/v1/messages", `{"max_tokens":3000,"messages":[{"role":"user","content":"hi"}]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := fake.New()
			eng.Delay = 5 * time.Millisecond
			if tt.hold {
				eng.Hold = make(chan struct{})
			}
			if tt.path == "/v1/messages" {
				eng.Words = make([]string, 3000) // an endless answer without ignore_eos
				for i := range eng.Words {
					eng.Words[i] = " w"
				}
			}
			ts := startServer(t, api.Options{Engine: eng, KeepAlive: 10 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			if strings.Contains(tt.body, `"stream":true`) {
				openStream(t, ctx, ts, tt.path, tt.body)
			} else {
				go sendAndForget(ctx, ts, tt.path, tt.body)
				waitFor(t, "the generation to start", func() bool { return eng.Running() == 1 })
			}
			cancel()
			waitFor(t, "the generation to be cancelled", func() bool { return eng.Cancelled() == 1 && eng.Running() == 0 })
			waitFor(t, "the admission slot to be released", func() bool {
				return strings.Contains(ts.do(t, "GET", "/metrics", "").body, "splash_http_generations_in_flight 0")
			})
		})
	}
}

func TestEngineFailsMidStream(t *testing.T) {
	eng := fake.New()
	eng.FailAfter = 3
	ts := startServer(t, api.Options{Engine: eng})
	oc := openAIClient(ts, "")
	stream := oc.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	for stream.Next() {
	}
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "failing after 3 tokens") {
		t.Errorf("openai stream error = %v", err)
	}
	ac := anthropicClient(ts, "")
	astream := ac.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{MaxTokens: 50,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	for astream.Next() {
	}
	if err := astream.Err(); err == nil || !strings.Contains(err.Error(), "failing after 3 tokens") {
		t.Errorf("anthropic stream error = %v", err)
	}
	res := ts.do(t, "POST", "/v1/responses", `{"input":"hi"}`)
	if res.status != 500 || !strings.Contains(res.body, "failing after 3 tokens") {
		t.Errorf("non-streamed: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "GET", "/health", ""); res.status != 200 {
		t.Errorf("server no longer serves: %d", res.status)
	}
}

func TestHealthReadyModelsMetrics(t *testing.T) {
	ts := startServer(t, api.Options{})
	ts.srv.SetReady(false)
	if res := ts.do(t, "GET", "/ready", ""); res.status != 503 {
		t.Errorf("/ready while loading: %d", res.status)
	}
	if res := ts.do(t, "GET", "/health", ""); res.status != 200 {
		t.Errorf("/health while loading: %d", res.status)
	}
	ts.srv.SetReady(true)
	if res := ts.do(t, "GET", "/ready", ""); res.status != 200 {
		t.Errorf("/ready when loaded: %d", res.status)
	}
	client := openAIClient(ts, "")
	models, err := client.Models.List(context.Background())
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != testModel {
		t.Errorf("models = %+v, %v", models, err)
	}
	res := ts.do(t, "GET", "/metrics", "")
	for _, want := range []string{"# TYPE splash_http_responses_total counter", `splash_http_responses_total{code="2xx"}`, "splash_ready 1", "splash_fake_running 0"} {
		if !strings.Contains(res.body, want) {
			t.Errorf("metrics lack %q:\n%s", want, res.body)
		}
	}
	if !strings.HasPrefix(res.header.Get("Content-Type"), "text/plain") {
		t.Errorf("metrics content type %q", res.header.Get("Content-Type"))
	}
}

func TestKeepAlivePingsDoNotDisturbClients(t *testing.T) {
	eng := fake.New()
	eng.Delay = 15 * time.Millisecond
	ts := startServer(t, api.Options{Engine: eng, KeepAlive: 2 * time.Millisecond})
	oc := openAIClient(ts, "")
	stream := oc.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, MaxTokens: openai.Int(3)})
	var text strings.Builder
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil || text.String() != "" {
		// three tokens are all reasoning: "Let me think"
		t.Errorf("openai: %v, content %q", err, text.String())
	}
	ac := anthropicClient(ts, "")
	astream := ac.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{MaxTokens: 3,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var msg anthropic.Message
	for astream.Next() {
		if err := msg.Accumulate(astream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := astream.Err(); err != nil || blocks(&msg) != "text:Hello there," {
		t.Errorf("anthropic: %v, %q", err, blocks(&msg))
	}
	res := ts.do(t, "POST", "/v1/chat/completions", `{"stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`)
	if !strings.Contains(res.body, ": ping\n\n") {
		t.Errorf("no keep-alive comment in a slow stream:\n%s", res.body)
	}
}

// TestHeadProbes: clients probe with HEAD (Claude Code sends HEAD / before
// its first request); every GET route answers it with the GET status and
// no body.
func TestHeadProbes(t *testing.T) {
	ts := startServer(t, api.Options{})
	for _, tc := range []struct {
		path   string
		status int
	}{{"/", 200}, {"/health", 200}, {"/ready", 200}, {"/v1/models", 200}, {"/metrics", 200}, {"/v1/responses/resp_missing", 404}, {"/nowhere", 404}} {
		res := ts.do(t, "HEAD", tc.path, "")
		if res.status != tc.status || res.body != "" {
			t.Errorf("HEAD %s: %d with %d body bytes, want %d and none", tc.path, res.status, len(res.body), tc.status)
		}
	}
	if res := ts.do(t, "HEAD", "/v1/chat/completions", ""); res.status != 405 {
		t.Errorf("HEAD on a POST route: %d, want 405", res.status)
	}
}

// TestAdmissionCountsSequences checks that a request's n choices take n of
// the MaxRunning+MaxWaiting slots: each is a sequence the engine runs.
func TestAdmissionCountsSequences(t *testing.T) {
	eng := fake.New()
	eng.Hold = make(chan struct{})
	ts := startServer(t, api.Options{Engine: eng, MaxRunning: 2, MaxWaiting: 2})
	body := func(n int) string {
		return fmt.Sprintf(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"n":%d}`, n)
	}
	var wg sync.WaitGroup
	var held [2]int
	wg.Go(func() { held[0] = ts.do(t, "POST", "/v1/chat/completions", body(3)).status })
	waitFor(t, "three sequences in flight", func() bool { return eng.Running() == 1 })
	// Refused requests answer at once; one admitted by mistake is held
	// until the end, then fails the status check instead of hanging.
	refused := []struct {
		path, body string
		status     int
	}{
		{"/v1/chat/completions", body(2), 429},
		{"/v1/completions", `{"prompt":"hi","max_tokens":2,"n":2}`, 429},
		{"/v1/chat/completions", body(5), 400},
	}
	got := make([]int, len(refused))
	var answered atomic.Int32
	for i, tc := range refused {
		wg.Go(func() {
			got[i] = ts.do(t, "POST", tc.path, tc.body).status
			answered.Add(1)
		})
	}
	waitFor(t, "the refusals", func() bool { return int(answered.Load()) == len(refused) || eng.Running() > 1 })
	if eng.Running() == 1 {
		wg.Go(func() { held[1] = ts.do(t, "POST", "/v1/chat/completions", body(1)).status })
		waitFor(t, "the fourth sequence in flight", func() bool { return eng.Running() == 2 })
		if res := ts.do(t, "GET", "/metrics", ""); !strings.Contains(res.body, "splash_http_generations_in_flight 4") {
			t.Errorf("metrics do not count four sequences in flight:\n%s", res.body)
		}
	}
	close(eng.Hold)
	wg.Wait()
	for i, tc := range refused {
		if got[i] != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.path, tc.body, got[i], tc.status)
		}
	}
	if held != [2]int{200, 200} {
		t.Errorf("held requests ended with %v", held)
	}
	if res := ts.do(t, "POST", "/v1/chat/completions", body(4)); res.status != 200 {
		t.Errorf("after the queue drained, n=4: %d %s", res.status, res.body)
	}
}
