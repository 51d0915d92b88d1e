package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splash-inference/splash/model/testmodel"
)

// The soak test: many mixed requests from concurrent clients against the
// real engine (actors, scheduler, KV pool, tiny random model) through
// `splash serve`, some clients hanging up mid-stream, then checks that the
// server returned to idle: no KV block held, no generation in flight, no
// goroutine left behind and the heap back near its baseline.
const (
	// soakRequests requests from soakClients clients at once; every tenth
	// client hangs up mid-stream. With -short, a quarter of the requests
	// from half the clients.
	soakRequests = 200
	soakClients  = 32
	// soakDisconnectAfter is how many SSE events a hanging-up client reads
	// before it closes the connection; its request asks for far more.
	soakDisconnectAfter = 4
	// soakHeapSlack is how far the live heap (the model's step scratch
	// aside, see liveHeap) may stay above its baseline after the soak. What
	// the server legitimately keeps (stored responses, prefix cache index
	// entries, pooled buffers that survive a GC) measured 0.1 to 0.5 MiB
	// after 200 requests; keeping 10 KiB per request would exceed it.
	soakHeapSlack = 2 << 20
	// soakGoroutineSlack is how many goroutines above the baseline may stay:
	// a runtime or transport helper started lazily during the soak, not one
	// per request (20 requests hang up).
	soakGoroutineSlack = 2
	// soakSettle bounds the wait for the server to become idle after the
	// last response; it is a deadline for polling, not a timing assertion.
	soakSettle = 60 * time.Second
)

// soakCase is one request of the soak.
type soakCase struct {
	index      int
	path       string
	body       string
	stream     bool
	disconnect bool // read a few events, then hang up
}

// soakCases builds the deterministic request mix: the four generation
// APIs in turn, four in five streamed, every tenth a client that hangs up
// (always a streamed one), varied prompt lengths, caps and samplers, and a
// shared system prompt so the prefix cache is exercised.
// longTokens is the completion cap of the clients that hang up: had the
// server not cancelled them, they would generate all of it.
func soakCases(n, longTokens int) []soakCase {
	const system = "You are a terse assistant used by a soak test. Answer in one short sentence."
	cases := make([]soakCase, n)
	for i := range cases {
		c := soakCase{index: i, stream: i%5 != 0, disconnect: i%10 == 7}
		maxTokens := 2 + (i*7)%16 // 2..17
		extra := ""
		if c.disconnect {
			maxTokens = longTokens
			extra = `,"ignore_eos":true`
		}
		user := fmt.Sprintf("Request %d: %s", i, strings.Repeat("tell me more ", 1+i%9))
		sampler := fmt.Sprintf(`"temperature":0.8,"seed":%d`, i)
		if i%3 == 0 {
			sampler = `"temperature":0`
		}
		stream := strconv.FormatBool(c.stream)
		switch i % 4 {
		case 0:
			c.path = "/v1/chat/completions"
			opts := ""
			if c.stream {
				opts = `,"stream_options":{"include_usage":true}`
			}
			c.body = fmt.Sprintf(`{"messages":[{"role":"system","content":%q},{"role":"user","content":%q}],"max_tokens":%d,"stream":%s%s,%s%s}`,
				system, user, maxTokens, stream, opts, sampler, extra)
		case 1:
			c.path = "/v1/completions"
			c.body = fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"stream":%s,%s%s}`, system+"\n"+user, maxTokens, stream, sampler, extra)
		case 2:
			c.path = "/v1/responses"
			c.body = fmt.Sprintf(`{"instructions":%q,"input":%q,"max_output_tokens":%d,"stream":%s,%s}`, system, user, maxTokens, stream, sampler)
		case 3:
			c.path = "/v1/messages"
			c.body = fmt.Sprintf(`{"system":%q,"messages":[{"role":"user","content":%q}],"max_tokens":%d,"stream":%s,%s}`,
				system, user, maxTokens, stream, strings.ReplaceAll(sampler, `,"seed":`+strconv.Itoa(i), ""))
		}
		cases[i] = c
	}
	return cases
}

func TestSoak(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = soakProfileRate
	dir := t.TempDir()
	// Heads of 32, so that the default --kv-cache-type auto soaks the
	// cache type it serves with on this CPU (bf16 with AVX512_BF16).
	spec := testmodel.Tiny("qwen3")
	spec.HeadDim = 32
	if err := testmodel.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []struct {
		name       string
		args       []string
		longTokens int
	}{
		// Room for every client's sequence: big batches, speculation.
		{"ample KV cache", nil, 1500},
		// 64 blocks of 8 tokens hold a quarter of what the clients'
		// sequences (prompts of 30 to 70 tokens) need at once, and a step
		// evaluates 48 tokens: requests queue for blocks, prompts are
		// prefilled in chunks, sequences are preempted.
		{"scarce KV cache", []string{"--max-context", "512", "--kv-memory", "256K", "--kv-block-size", "8", "--max-batch-tokens", "48"}, 400},
	} {
		t.Run(cfg.name, func(t *testing.T) { soak(t, dir, cfg.args, cfg.longTokens) })
	}
}

// soak serves the model in dir with the extra serve flags args, runs the
// request mix and checks the server returns to idle.
func soak(t *testing.T, dir string, args []string, longTokens int) {
	requests, clients := soakRequests, soakClients
	if testing.Short() {
		requests, clients = soakRequests/4, soakClients/2
	}
	addr, _, stop := startServe(t, append([]string{"--model", dir, "--max-running", strconv.Itoa(clients)}, args...)...)
	base := "http://" + addr
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true},
		Timeout:   3 * time.Minute, // a hang fails the test instead of stalling CI
	}
	cases := soakCases(requests, longTokens)

	// Warm up every path at full concurrency, so one-time allocations
	// (pools, connection buffers, lazily built tables) are in the baseline.
	var warm []soakCase
	for _, c := range cases {
		if !c.disconnect && len(warm) < clients {
			warm = append(warm, c)
		}
	}
	for i, err := range runSoakCases(client, base, clients, warm) {
		if err != nil {
			t.Fatalf("warm-up request %d (%s): %v", warm[i].index, warm[i].path, err)
		}
	}
	client.CloseIdleConnections()
	idle := waitSoakIdle(t, client, base)
	client.CloseIdleConnections() // the metrics scrape's connection
	waitStoppedServers(t)
	baseGoroutines := waitGoroutines(t, -1)
	baseHeap, baseScratch := liveHeap()
	baseSites := heapSites()
	t.Logf("baseline: %d goroutines, heap %.1f MiB (model scratch %.1f MiB), %d generated tokens",
		baseGoroutines, heapMiB(baseHeap), heapMiB(baseScratch), idle.generated)

	start := time.Now()
	errs := runSoakCases(client, base, clients, cases)
	elapsed := time.Since(start)
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d (%s, stream %v, disconnect %v): %v", i, cases[i].path, cases[i].stream, cases[i].disconnect, err)
		}
	}

	client.CloseIdleConnections()
	after := waitSoakIdle(t, client, base)
	client.CloseIdleConnections() // the metrics polls' connection
	goroutines := waitGoroutines(t, baseGoroutines+soakGoroutineSlack)
	heap, scratch := liveHeap()
	t.Logf("soak: %d requests from %d clients in %v; %d tokens generated; after: %d goroutines, heap %.1f MiB (model scratch %.1f MiB)",
		len(cases), clients, elapsed.Round(time.Millisecond), after.generated-idle.generated, goroutines, heapMiB(heap), heapMiB(scratch))

	// Had the abandoned requests not been cancelled, each would have run to
	// its cap; the bound allows each many hundreds of steps to notice.
	var limit int64
	for _, c := range cases {
		if c.disconnect {
			limit += int64(longTokens / 2)
		} else {
			limit += int64(maxTokensOf(c))
		}
	}
	if after.generated-idle.generated > limit {
		t.Errorf("%d tokens generated, more than %d: the requests that hung up were not cancelled", after.generated-idle.generated, limit)
	}
	if heap-scratch > baseHeap-baseScratch+soakHeapSlack {
		t.Errorf("live heap %.1f MiB after the soak (model scratch %.1f MiB), baseline %.1f MiB (%.1f MiB): more than %.0f MiB was not released",
			heapMiB(heap), heapMiB(scratch), heapMiB(baseHeap), heapMiB(baseScratch), heapMiB(soakHeapSlack))
		logHeapGrowth(t, baseSites, heapSites())
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// runSoakCases sends cases from concurrent clients and returns each
// case's error.
func runSoakCases(client *http.Client, base string, clients int, cases []soakCase) []error {
	work := make(chan int)
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range work {
				errs[i] = runSoakCase(client, base, cases[i])
			}
		})
	}
	for i := range cases {
		work <- i
	}
	close(work)
	wg.Wait()
	return errs
}

// maxTokensOf reads a case's completion cap back from its body.
func maxTokensOf(c soakCase) int {
	var caps struct {
		MaxTokens       int `json:"max_tokens"`
		MaxOutputTokens int `json:"max_output_tokens"`
	}
	json.Unmarshal([]byte(c.body), &caps)
	return max(caps.MaxTokens, caps.MaxOutputTokens)
}

// runSoakCase sends one request and checks that it ended properly; a
// disconnecting client only checks that its stream started.
func runSoakCase(client *http.Client, base string, c soakCase) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", base+c.path, strings.NewReader(c.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("status %d: %s", res.StatusCode, b)
	}
	if !c.stream {
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		return checkSoakBody(c.path, b)
	}
	events, err := readSoakEvents(res.Body, c.disconnect)
	if c.disconnect {
		// Hang up: closing the body of an unfinished response closes the
		// connection, which the server notices on its next write.
		if len(events) < soakDisconnectAfter {
			return fmt.Errorf("the stream ended after %d events, before the client hung up (%v)", len(events), err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	return checkSoakStream(c.path, events)
}

// soakEvent is one Server-Sent Event.
type soakEvent struct{ name, data string }

// readSoakEvents reads SSE events until the stream ends or, when
// disconnect is set, until soakDisconnectAfter events have arrived.
func readSoakEvents(r io.Reader, disconnect bool) ([]soakEvent, error) {
	var events []soakEvent
	var ev soakEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.data != "" || ev.name != "" {
				events = append(events, ev)
				if disconnect && len(events) >= soakDisconnectAfter {
					return events, nil
				}
			}
			ev = soakEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return events, sc.Err()
}

// checkSoakStream checks that a stream ended with its dialect's final
// event and a finish reason, and carried no error event.
func checkSoakStream(path string, events []soakEvent) error {
	if len(events) == 0 {
		return fmt.Errorf("empty stream")
	}
	for _, ev := range events {
		if ev.name == "error" || strings.HasPrefix(ev.data, `{"error"`) {
			return fmt.Errorf("error event: %s", ev.data)
		}
	}
	last := events[len(events)-1]
	switch path {
	case "/v1/chat/completions", "/v1/completions":
		if last.data != "[DONE]" {
			return fmt.Errorf("stream does not end with [DONE]: %q", last.data)
		}
		var finish string
		var usage bool
		for _, ev := range events[:len(events)-1] {
			var chunk struct {
				Choices []struct {
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
				Usage *struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(ev.data), &chunk); err != nil {
				return fmt.Errorf("chunk %q: %w", ev.data, err)
			}
			for _, ch := range chunk.Choices {
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
			usage = usage || chunk.Usage != nil
		}
		if finish != "stop" && finish != "length" {
			return fmt.Errorf("finish reason %q", finish)
		}
		if path == "/v1/chat/completions" && !usage {
			return fmt.Errorf("no usage chunk although include_usage was set")
		}
	case "/v1/responses":
		if last.name != "response.completed" && last.name != "response.incomplete" {
			return fmt.Errorf("last event %q", last.name)
		}
		var done struct {
			Response struct {
				Status string `json:"status"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(last.data), &done); err != nil {
			return err
		}
		if "response."+done.Response.Status != last.name {
			return fmt.Errorf("%s event with status %q", last.name, done.Response.Status)
		}
	case "/v1/messages":
		if last.name != "message_stop" || len(events) < 2 {
			return fmt.Errorf("last event %q", last.name)
		}
		delta := events[len(events)-2]
		var d struct {
			Delta struct {
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(delta.data), &d); err != nil || delta.name != "message_delta" {
			return fmt.Errorf("event before message_stop: %s %s", delta.name, delta.data)
		}
		if d.Delta.StopReason != "end_turn" && d.Delta.StopReason != "max_tokens" {
			return fmt.Errorf("stop reason %q", d.Delta.StopReason)
		}
	}
	return nil
}

// checkSoakBody checks a non-streamed answer's finish reason.
func checkSoakBody(path string, body []byte) error {
	var r struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Status     string `json:"status"`
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("body %s: %w", body, err)
	}
	var reason string
	var want []string
	switch path {
	case "/v1/chat/completions", "/v1/completions":
		if len(r.Choices) != 1 {
			return fmt.Errorf("%d choices: %s", len(r.Choices), body)
		}
		reason, want = r.Choices[0].FinishReason, []string{"stop", "length"}
	case "/v1/responses":
		reason, want = r.Status, []string{"completed", "incomplete"}
	case "/v1/messages":
		reason, want = r.StopReason, []string{"end_turn", "max_tokens"}
	}
	if !slices.Contains(want, reason) {
		return fmt.Errorf("finish %q, want one of %v: %s", reason, want, body)
	}
	return nil
}
