package api_test

import (
	"context"
	"net"
	"testing"
	"time"

	api "github.com/splash-inference/splash/http"
	"github.com/splash-inference/splash/http/internal/fake"
)

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
	ts := &testServer{url: "http://" + ln.Addr().String(), engine: eng, srv: srv}

	openStream(t, context.Background(), ts, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); err == nil {
		t.Error("Shutdown returned nil with a stream still open past the deadline")
	}
	waitFor(t, "the held generation to be cancelled", func() bool { return eng.Cancelled() == 1 })
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
