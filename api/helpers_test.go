package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

// testModel is the model id the test servers serve.
const (
	testModel   = "splash-test"
	testAlias   = "test-alias"
	testContext = 4096
)

// testServer is a Server on a random loopback port with a fake engine.
type testServer struct {
	url    string // http://127.0.0.1:port
	engine *fake.Engine
	srv    *api.Server
}

// startServer serves opts (model, tokenizer, template and fake engine
// filled in when unset) until the test ends.
func startServer(t testing.TB, opts api.Options) *testServer {
	t.Helper()
	eng, _ := opts.Engine.(*fake.Engine)
	if eng == nil {
		eng = fake.New()
		opts.Engine = eng
	}
	if opts.Tokenizer == nil {
		opts.Tokenizer = fake.Tokenizer{}
	}
	if opts.Template == nil {
		opts.Template = fake.Template{}
	}
	if opts.ModelID == "" {
		opts.ModelID, opts.Aliases = testModel, []string{testAlias}
	}
	if opts.Logger == nil {
		opts.Logger = testLogger{t}
	}
	if opts.ContextLength == 0 {
		opts.ContextLength = testContext
	}
	srv, err := api.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	srv.SetReady(true)
	return &testServer{url: "http://" + ln.Addr().String(), engine: eng, srv: srv}
}

// rawResponse is a plain HTTP exchange's outcome.
type rawResponse struct {
	status int
	header http.Header
	body   string
}

// do sends a request with optional headers ("Name: value") and reads the
// whole answer.
func (ts *testServer) do(t *testing.T, method, path, body string, headers ...string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		if strings.EqualFold(name, "Host") {
			req.Host = strings.TrimSpace(value)
			continue
		}
		req.Header.Set(name, strings.TrimSpace(value))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{status: res.StatusCode, header: res.Header, body: string(b)}
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	name string
	data string
}

// parseSSE splits a stream body into events (comments dropped).
func parseSSE(body string) []sseEvent {
	var out []sseEvent
	for _, block := range strings.Split(body, "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
		if ev.name != "" || ev.data != "" {
			out = append(out, ev)
		}
	}
	return out
}

// testLogger sends the server's connection errors to the test log.
type testLogger struct{ t testing.TB }

func (l testLogger) Printf(format string, args ...any) { l.t.Logf(format, args...) }
