package api_test

import (
	"bufio"
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

// TestShutdownCancelsStreamsAfterDeadline: when the grace runs out, the
// held stream is cancelled and ended with an error event and a proper end
// of body, and Shutdown reports a complete shutdown (nil: serve exits 0).
func TestShutdownCancelsStreamsAfterDeadline(t *testing.T) {
	eng := fake.New()
	eng.Hold = make(chan struct{}) // the stream never finishes on its own
	srv, err := api.New(api.Options{Engine: eng, Tokenizer: fake.Tokenizer{}, Template: fake.Template{},
		ModelID: testModel, ContextLength: testContext, Logger: testLogger{t}, KeepAlive: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	res, err := http.Post("http://"+ln.Addr().String()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body := bufio.NewReader(res.Body)
	if _, err := body.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown after the grace ran out: %v, want nil", err)
	}
	waitFor(t, "the held generation to be cancelled", func() bool { return eng.Cancelled() == 1 })
	rest, err := io.ReadAll(body)
	if err != nil {
		t.Errorf("the cut stream did not end properly: %v", err)
	}
	if !strings.Contains(string(rest), `"error"`) {
		t.Errorf("the cut stream has no error event: %q", rest)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("Serve did not return after Shutdown")
	}
}

func TestNewRejectsIncompleteOptions(t *testing.T) {
	full := api.Options{Engine: fake.New(), Tokenizer: fake.Tokenizer{}, Template: fake.Template{}, ModelID: "m", ContextLength: 8}
	tests := []struct {
		name   string
		change func(o *api.Options)
	}{
		{"engine", func(o *api.Options) { o.Engine = nil }},
		{"tokenizer", func(o *api.Options) { o.Tokenizer = nil }},
		{"template", func(o *api.Options) { o.Template = nil }},
		{"model id", func(o *api.Options) { o.ModelID = "" }},
		{"context length", func(o *api.Options) { o.ContextLength = 0 }},
	}
	if _, err := api.New(full); err != nil {
		t.Fatalf("complete options rejected: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := full
			tt.change(&o)
			if _, err := api.New(o); err == nil {
				t.Error("accepted")
			}
		})
	}
}
