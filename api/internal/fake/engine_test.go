package fake

import (
	"github.com/splash-inference/splash/actors"

	"context"
	"testing"

	"github.com/splash-inference/splash/api"
)

// run collects choice 0's text and finish of one fake generation.
func run(t *testing.T, e *Engine, req *actors.Request) (string, api.FinishReason, string, api.Usage) {
	t.Helper()
	events, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var text, stop string
	var finish api.FinishReason
	for ev := range events {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		text += ev.Text
		if ev.FinishReason != "" {
			finish, stop = ev.FinishReason, ev.StopSequence
		}
		if ev.Done {
			return text, finish, stop, *ev.Usage
		}
	}
	t.Fatal("no final event")
	return "", "", "", api.Usage{}
}

func TestEngineScript(t *testing.T) {
	prompt := Tokenizer{}.Encode("q\n<think>\n", false)
	tests := []struct {
		name   string
		req    actors.Request
		text   string
		finish api.FinishReason
		stop   string
		tokens int
	}{
		{"whole answer", actors.Request{Prompt: []int32{1}, MaxTokens: 100}, "Hello there, this is a fake model talking.", api.FinishStop, "", 10},
		{"max tokens", actors.Request{Prompt: []int32{1}, MaxTokens: 2}, "Hello there", api.FinishLength, "", 2},
		{"stop across tokens", actors.Request{Prompt: []int32{1}, MaxTokens: 100, Stop: []string{"re, th"}}, "Hello the", api.FinishStop, "re, th", 4},
		{"partial stop released at the end", actors.Request{Prompt: []int32{1}, MaxTokens: 100, Stop: []string{"talking!"}}, "Hello there, this is a fake model talking.", api.FinishStop, "", 10},
		{"stop token", actors.Request{Prompt: []int32{1}, MaxTokens: 100, StopTokens: []int32{wordID + 2}}, "Hello there", api.FinishStop, "", 3},
		{"ignore eos", actors.Request{Prompt: []int32{1}, MaxTokens: 12, IgnoreEOS: true}, "Hello there, this is a fake model talking.Hello there", api.FinishLength, "", 12},
		{"thinking budget", actors.Request{Prompt: prompt, MaxTokens: 100, ThinkingBudget: 2}, "Let me</think>\n\nHello there, this is a fake model talking.", api.FinishStop, "", 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, finish, stop, usage := run(t, New(), &tt.req)
			if text != tt.text || finish != tt.finish || stop != tt.stop || usage.CompletionTokens != tt.tokens {
				t.Errorf("got %q %s %q %d tokens, want %q %s %q %d", text, finish, stop, usage.CompletionTokens, tt.text, tt.finish, tt.stop, tt.tokens)
			}
		})
	}
}
