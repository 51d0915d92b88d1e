package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/splash-inference/splash/bench/sse"
)

// IgnoreEOS says whether requests carry "ignore_eos": true, which makes
// servers that accept it (vLLM, llama.cpp, Splash) generate exactly
// max_tokens tokens.
type IgnoreEOS string

// The IgnoreEOS modes.
const (
	IgnoreEOSAuto IgnoreEOS = "auto" // send it; stop sending it if the server rejects the field
	IgnoreEOSOn   IgnoreEOS = "on"
	IgnoreEOSOff  IgnoreEOS = "off"
)

// ParseIgnoreEOS checks an IgnoreEOS mode.
func ParseIgnoreEOS(s string) (IgnoreEOS, error) {
	switch m := IgnoreEOS(s); m {
	case IgnoreEOSAuto, IgnoreEOSOn, IgnoreEOSOff:
		return m, nil
	}
	return "", fmt.Errorf("bench: unknown ignore-eos mode %q (want auto, on or off)", s)
}

// Target is the server under test.
type Target struct {
	BaseURL   string // e.g. http://127.0.0.1:8080 or http://127.0.0.1:8080/v1
	APIKey    string
	Model     string
	API       API
	IgnoreEOS IgnoreEOS
	Timeout   time.Duration // per request, from send to end of stream; 0 for none
}

// Client sends streamed requests to one target and times them. It is safe
// for concurrent use.
type Client struct {
	target Target
	url    string
	http   *http.Client

	// ignoreEOS is cleared when, in auto mode, the server rejects the field.
	ignoreEOS atomic.Bool
}

// NewClient returns a client for target. Its transport keeps one idle
// connection per concurrent request, so a sweep step does not pay connection
// set-up on every request, and never compresses (compression buffers streams).
func NewClient(target Target) *Client {
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0, // no global limit
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	c := &Client{target: target, url: target.API.endpoint(target.BaseURL), http: &http.Client{Transport: transport}}
	c.ignoreEOS.Store(target.IgnoreEOS != IgnoreEOSOff)
	return c
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// result is one timed request: its sample and the text it generated.
type result struct {
	Sample
	answer string
}

// send runs one streamed request with the whole conversation in history and
// returns its timings. It never returns an error: failures are recorded in
// the sample's OK, ErrorKind and Error fields.
func (c *Client) send(ctx context.Context, history []Message, maxTokens int) result {
	r := c.sendOnce(ctx, history, maxTokens)
	if c.target.IgnoreEOS == IgnoreEOSAuto && rejectsIgnoreEOS(r) && c.ignoreEOS.CompareAndSwap(true, false) {
		r = c.sendOnce(ctx, history, maxTokens)
	}
	return r
}

// rejectsIgnoreEOS reports whether a request failed because the server does
// not accept the ignore_eos field (OpenAI-strict servers answer 400 or 422
// naming it).
func rejectsIgnoreEOS(r result) bool {
	return (r.HTTPStatus == http.StatusBadRequest || r.HTTPStatus == http.StatusUnprocessableEntity) &&
		strings.Contains(r.Error, "ignore_eos")
}

func (c *Client) sendOnce(ctx context.Context, history []Message, maxTokens int) result {
	r := result{Sample: Sample{MaxTokens: maxTokens}}
	body, err := c.target.API.requestBody(c.target.Model, history, maxTokens, c.ignoreEOS.Load())
	if err != nil {
		return r.fail(ErrBadResponse, err)
	}
	if c.target.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.target.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(string(body)))
	if err != nil {
		return r.fail(ErrConnect, fmt.Errorf("bench: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	c.target.API.setAuth(req.Header, c.target.APIKey)

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return r.fail(classify(ctx, err, ErrConnect), fmt.Errorf("bench: %w", err))
	}
	defer resp.Body.Close()
	r.HTTPStatus = resp.StatusCode
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return r.fail(fmt.Sprintf(errHTTPStatusFm, resp.StatusCode),
			fmt.Errorf("bench: HTTP %s: %s", resp.Status, strings.TrimSpace(string(msg))))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		return r.fail(ErrBadResponse, errors.New("bench: server answered with JSON, not an event stream"))
	}
	return c.readStream(ctx, resp.Body, start, history, r)
}

// readStream times the events of one response. Timestamps are taken when an
// event has been fully read, as a client would see it.
func (c *Client) readStream(ctx context.Context, body io.Reader, start time.Time, history []Message, r result) result {
	var (
		events       = sse.NewReader(body)
		answer       strings.Builder
		last         time.Time // time of the last chunk with text
		done         bool
		promptTokens int
		outputTokens int
	)
	for !done {
		ev, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("bench: stream ended without its end marker")
			}
			return r.fail(classify(ctx, err, ErrDisconnect), err)
		}
		now := time.Now()
		u, err := c.target.API.decodeEvent(ev.Type, ev.Data)
		if err != nil {
			kind := ErrBadResponse
			if errors.Is(err, errStreamError) {
				kind = ErrStream
			}
			return r.fail(kind, err)
		}
		if u.text != "" {
			if r.Chunks == 0 {
				r.TTFTMs = ms(now.Sub(start))
			} else {
				r.ITLMs = append(r.ITLMs, ms(now.Sub(last)))
			}
			last = now
			r.Chunks++
			answer.WriteString(u.text)
		}
		if u.promptTokens > 0 {
			promptTokens = u.promptTokens
		}
		if u.outputTokens > 0 {
			outputTokens = u.outputTokens
		}
		done = u.done
	}
	r.E2EMs = ms(time.Since(start))
	r.answer = answer.String()
	if r.Chunks == 0 {
		return r.fail(ErrNoOutput, errors.New("bench: stream generated no text"))
	}

	r.OutputTokens, r.OutputTokensSource = outputTokens, SourceUsage
	if outputTokens == 0 {
		r.OutputTokens, r.OutputTokensSource = r.Chunks, SourceChunks
	}
	r.PromptTokens, r.PromptTokensSource = promptTokens, SourceUsage
	if promptTokens == 0 {
		r.PromptTokens, r.PromptTokensSource = historyWords(history), SourceEstimate
	}
	if r.OutputTokens > 1 {
		r.TPOTMs = (r.E2EMs - r.TTFTMs) / float64(r.OutputTokens-1)
	}
	r.OK = true
	return r
}

func (r result) fail(kind string, err error) result {
	r.OK = false
	r.ErrorKind = kind
	r.Error = err.Error()
	return r
}

// classify names a transport error: the per-request timeout, the run being
// cancelled, or else fallback.
func classify(ctx context.Context, err error, fallback string) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ErrTimeout
	case errors.Is(ctx.Err(), context.Canceled):
		return ErrCancelled
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout
	}
	return fallback
}

func historyWords(history []Message) int {
	n := 0
	for _, m := range history {
		n += countWords(m.Content)
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
