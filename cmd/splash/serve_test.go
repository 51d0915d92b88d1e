package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs `splash serve` on a free loopback port and returns its
// address, its stdout and a stop function that waits for a clean exit.
func startServe(t testing.TB, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	addr, out, _, stop := startServeLogs(t, args...)
	return addr, out, stop
}

// startServeLogs is startServe that also returns what the server writes to
// standard error (the memory plan, warnings).
func startServeLogs(t testing.TB, args ...string) (string, *syncBuffer, *syncBuffer, func() error) {
	t.Helper()
	flags := &serveFlags{}
	// Checkpoints are served in place unless a test asks for --quant; a
	// packed one would go to a temporary cache, never the user's.
	defaults := []string{"--port", "0", "--kv-memory", "64M", "--max-context", "2048", "--quant", "none", "--cache-dir", t.TempDir()}
	if err := serveFlagSet(flags).Parse(append(defaults, args...)); err != nil {
		t.Fatal(err)
	}
	out, errb := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, &stdio{in: strings.NewReader(""), out: out, err: errb}, flags, ready) }()
	select {
	case addr := <-ready:
		return addr, out, errb, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v\n%s", err, errb.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("serve did not become ready")
	}
	cancel()
	return "", nil, nil, nil
}

func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	addr, out, stop := startServe(t, "--model", dir, "--api-key", "sekret")
	if !strings.Contains(out.String(), "Ready: http://"+addr) {
		t.Fatalf("no Ready line in %q", out.String())
	}
	base := "http://" + addr
	for path, want := range map[string]int{"/health": 200, "/ready": 200, "/v1/models": 401} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}

	oc := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sekret"), option.WithMaxRetries(0))
	res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
		MaxTokens: openai.Int(6), Seed: openai.Int(1), Temperature: openai.Float(0.7),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.CompletionTokens != 6 || res.Choices[0].FinishReason != "length" || res.Usage.PromptTokens == 0 {
		t.Fatalf("response %+v", res)
	}
	// streaming through the same engine, several at once
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			stream := oc.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("request %d", i))},
				MaxTokens:     openai.Int(5),
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			var usage int64
			for stream.Next() {
				if u := stream.Current().Usage; u.CompletionTokens > 0 {
					usage = u.CompletionTokens
				}
			}
			if err := stream.Err(); err != nil {
				errs <- err
			} else if usage < 1 || usage > 5 { // unseeded sampling may draw EOS early
				errs <- fmt.Errorf("stream %d: usage %d", i, usage)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("sekret"), aoption.WithMaxRetries(0))
	msg, err := ac.Messages.New(context.Background(), anthropic.MessageNewParams{MaxTokens: 4,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Usage.OutputTokens != 4 || msg.StopReason != "max_tokens" {
		t.Fatalf("message %+v", msg)
	}

	// Completions echo+logprobs agree with splash generate's numbers.
	req, _ := http.NewRequest("POST", base+"/v1/completions", strings.NewReader(`{"prompt":[9707,11,1879,0],"max_tokens":1,"echo":true,"logprobs":1}`))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	hres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hres.Body)
	hres.Body.Close()
	if hres.StatusCode != 200 || !strings.Contains(string(body), "token_logprobs") {
		t.Fatalf("completions echo: %d %s", hres.StatusCode, body)
	}
	var comp struct {
		Choices []struct {
			Logprobs struct {
				TokenLogprobs []*float64 `json:"token_logprobs"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &comp); err != nil || len(comp.Choices) != 1 {
		t.Fatalf("completions echo body %s: %v", body, err)
	}
	gen, err := runCmd(t, "generate", "--model", dir, "--prompt-ids", "9707,11,1879,0", "--max-tokens", "0", "--echo", "--logprobs", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Tokens []struct {
			Logprob *float64 `json:"logprob"`
		} `json:"tokens"`
	}
	json.Unmarshal([]byte(gen), &want)
	got := comp.Choices[0].Logprobs.TokenLogprobs
	if len(want.Tokens) != 4 || len(got) < 4 || got[0] != nil {
		t.Fatalf("echo logprobs %v vs generate %s", got, gen)
	}
	for i := 1; i < 4; i++ {
		if math.Abs(*got[i]-*want.Tokens[i].Logprob) > 1e-4 {
			t.Fatalf("prompt token %d: server logprob %v, generate %v", i, *got[i], *want.Tokens[i].Logprob)
		}
	}
	// A token outside the vocabulary is the client's error, and fails only
	// its own request.
	req, _ = http.NewRequest("POST", base+"/v1/completions", strings.NewReader(`{"prompt":[1,2,99999999],"max_tokens":2}`))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	if hres, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(hres.Body)
	hres.Body.Close()
	if hres.StatusCode != 400 || !strings.Contains(string(body), "outside the vocabulary") {
		t.Fatalf("bad token id: %d %s", hres.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestServeRefusesImpossiblePlans(t *testing.T) {
	t.Setenv("SPLASH_CACHE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("llama")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", dir, "--kv-memory", "1K"}, "fewer than one"},
		{[]string{"--model", dir, "--max-context", "1M"}, "exceeds the model's native context"},
		{[]string{"--model", dir, "--kv-memory", "lots"}, "--kv-memory"},
		{[]string{"--model", dir, "--kv-cache-type", "q8"}, "multiple of 32"}, // heads of 16
		{[]string{"--model", dir, "--spec", "magic"}, "--spec"},
		{[]string{"--model", t.TempDir()}, "neither a Splash package"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), append([]string{"serve", "--port", "0"}, tc.args...), &stdio{in: strings.NewReader(""), out: &out, err: &errb})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in     string
		binary bool
		want   int64
	}{
		{"512M", true, 512 << 20}, {"4G", true, 4 << 30}, {"1.5G", true, 3 << 29}, {"100K", false, 100000},
		{"32768", false, 32768}, {"2GiB", true, 2 << 30},
	} {
		got, err := parseSize(tc.in, tc.binary)
		if err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "-1G", "abc", "0"} {
		if _, err := parseSize(bad, true); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

// TestPlanCountsTheDraftModel: with a draft model in use, the plan counts
// its weights and its cache (as many blocks as the target's) and fits
// fewer blocks into the same memory; with --spec ngram or off it counts
// neither.
func TestPlanCountsTheDraftModel(t *testing.T) {
	cfg, ts, err := testmodel.Random(testmodel.Tiny("qwen3"), metal.F32)
	if err != nil {
		t.Fatal(err)
	}
	dspec := testmodel.Tiny("qwen3")
	dspec.Layers, dspec.Seed = 1, 2
	dcfg, dts, err := testmodel.Random(dspec, metal.F32)
	if err != nil {
		t.Fatal(err)
	}
	m := &loadedModel{cfg: cfg, tensors: ts, draftCfg: dcfg, draft: dts}
	be := cpu.New(1)
	defer be.Close()
	target, err := model.Architectures().Build(cfg, ts, be)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := model.Architectures().Build(dcfg, dts, be)
	if err != nil {
		t.Fatal(err)
	}
	scratch := func(int) int64 { return 0 }
	bytes := func(ts model.Tensors) (n int64) {
		for _, name := range ts.Names() {
			x, _ := ts.Tensor(name)
			n += int64(len(x.Data))
		}
		return n
	}
	perToken := func(c *model.Config) int64 {
		return int64(c.NumHiddenLayers * metal.KVF16.TokenBytes(c.NumKeyValueHeads, c.HeadDim))
	}
	for _, tc := range []struct {
		spec      string
		withDraft bool
	}{{"auto", true}, {"draft", true}, {"ngram", false}, {"off", false}} {
		f := &serveFlags{spec: tc.spec, kvBlockSize: 16, maxBatchTokens: 64, maxRunning: 8, maxMemory: "256M", maxContext: "1024", kvCacheType: "f16"}
		p, err := makePlan(f, m, target, draft, 0, scratch, nil) // f16: no auto
		if err != nil {
			t.Fatal(err)
		}
		weights, kv := bytes(ts), perToken(cfg)
		if tc.withDraft {
			weights, kv = weights+bytes(dts), kv+perToken(dcfg)
		}
		if p.Weights != weights || p.KVPerToken != kv {
			t.Errorf("--spec %s: weights %d, KV per token %d; want %d and %d", tc.spec, p.Weights, p.KVPerToken, weights, kv)
		}
		if want := int((256<<20 - weights - 64*p.ScratchPerToken) / (kv * 16)); p.blocks != want {
			t.Errorf("--spec %s: %d blocks, want %d", tc.spec, p.blocks, want)
		}
	}
}

// TestServePrefillByAttention: --prefill-by-attention says how it will chunk
// prompts and serves as before; without it chunks are counted in tokens.
func TestServePrefillByAttention(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		args := []string{"--model", dir}
		if on {
			args = append(args, "--prefill-by-attention")
		}
		addr, _, logs, stop := startServeLogs(t, args...)
		said := strings.Contains(logs.String(), "prompt chunks while others decode: ")
		oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
		_, err := oc.Completions.New(context.Background(), openai.CompletionNewParams{
			Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(strings.Repeat("long prompt ", 100))}, MaxTokens: openai.Int(4)})
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatalf("on=%v: %v", on, err)
		}
		if said != on {
			t.Fatalf("on=%v: chunking line printed %v:\n%s", on, said, logs.String())
		}
	}
}

// TestServeExitsCleanlyWhenGraceRunsOut: a stream still running when the
// shutdown grace ends is cancelled and ended properly, and serve returns
// nil (exit status 0): a grace running out is not a failure.
func TestServeExitsCleanlyWhenGraceRunsOut(t *testing.T) {
	addr, _, errb, stop := startServeLogs(t, "--shutdown-grace", "1ms")
	res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"stream":true,"ignore_eos":true,"max_tokens":1900,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body := bufio.NewReader(res.Body)
	if _, err := body.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after its grace ran out: %v\n%s", err, errb.String())
	}
	rest, err := io.ReadAll(body)
	if err != nil {
		t.Errorf("the stream did not end properly: %v", err)
	}
	if !strings.Contains(string(rest), "cancelled") {
		t.Logf("the stream finished within the grace: %d bytes", len(rest))
	}
}
