package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

func anthropicClient(ts *testServer, key string) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(ts.url), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
}

// blocks renders a message's content as "type:text|type:text".
func blocks(m *anthropic.Message) string {
	var parts []string
	for _, b := range m.Content {
		switch b.Type {
		case "thinking":
			parts = append(parts, "thinking:"+b.Thinking)
		default:
			parts = append(parts, b.Type+":"+b.Text)
		}
	}
	return strings.Join(parts, "|")
}

func TestMessages(t *testing.T) {
	ts := startServer(t, api.Options{})
	ts.engine.Cached = 3
	client := anthropicClient(ts, "unused")
	hi := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}
	tests := []struct {
		name         string
		params       anthropic.MessageNewParams
		content      string
		stopReason   anthropic.StopReason
		stopSequence string
		outputTokens int64
	}{
		{
			name:    "no thinking by default",
			params:  anthropic.MessageNewParams{Model: testModel, MaxTokens: 100, Messages: hi, System: []anthropic.TextBlockParam{{Text: "be brief"}}},
			content: "text:Hello there, this is a fake model talking.", stopReason: anthropic.StopReasonEndTurn, outputTokens: 10,
		},
		{
			name:    "thinking enabled",
			params:  anthropic.MessageNewParams{MaxTokens: 2000, Messages: hi, Thinking: anthropic.ThinkingConfigParamOfEnabled(1024)},
			content: "thinking:Let me think about it.|text:Hello there, this is a fake model talking.", stopReason: anthropic.StopReasonEndTurn, outputTokens: 18,
		},
		{
			name:    "max tokens",
			params:  anthropic.MessageNewParams{MaxTokens: 2, Messages: hi},
			content: "text:Hello there", stopReason: anthropic.StopReasonMaxTokens, outputTokens: 2,
		},
		{
			name:    "stop sequence",
			params:  anthropic.MessageNewParams{MaxTokens: 100, Messages: hi, StopSequences: []string{"is a"}},
			content: "text:Hello there, this ", stopReason: anthropic.StopReasonStopSequence, stopSequence: "is a", outputTokens: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := client.Messages.New(context.Background(), tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if got := blocks(msg); got != tt.content {
				t.Errorf("content = %q, want %q", got, tt.content)
			}
			if msg.StopReason != tt.stopReason || msg.StopSequence != tt.stopSequence {
				t.Errorf("stop = %q %q, want %q %q", msg.StopReason, msg.StopSequence, tt.stopReason, tt.stopSequence)
			}
			if msg.Usage.OutputTokens != tt.outputTokens || msg.Usage.CacheReadInputTokens != 3 || msg.Usage.InputTokens == 0 {
				t.Errorf("usage = %+v", msg.Usage)
			}
			if msg.Role != "assistant" || !strings.HasPrefix(msg.ID, "msg_") || msg.Model != testModel {
				t.Errorf("envelope %q %q %q", msg.Role, msg.ID, msg.Model)
			}
		})
	}
}

func TestMessagesStreaming(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := anthropicClient(ts, "unused")
	tests := []struct {
		name     string
		thinking anthropic.ThinkingConfigParamUnion
		content  string
	}{
		{"plain", anthropic.ThinkingConfigParamUnion{}, "text:Hello there, this is a fake model talking."},
		{"thinking", anthropic.ThinkingConfigParamOfEnabled(1024), "thinking:Let me think about it.|text:Hello there, this is a fake model talking."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
				MaxTokens: 4000, Thinking: tt.thinking,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
			})
			var msg anthropic.Message
			deltas := 0
			for stream.Next() {
				ev := stream.Current()
				if ev.Type == "content_block_delta" {
					deltas++
				}
				if err := msg.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if got := blocks(&msg); got != tt.content {
				t.Errorf("content = %q, want %q", got, tt.content)
			}
			if deltas < 10 || msg.StopReason != anthropic.StopReasonEndTurn || msg.Usage.OutputTokens == 0 {
				t.Errorf("%d deltas, stop %q, usage %+v", deltas, msg.StopReason, msg.Usage)
			}
		})
	}
}

func TestMessagesStreamWireOrder(t *testing.T) {
	ts := startServer(t, api.Options{})
	res := ts.do(t, "POST", "/v1/messages",
		`{"max_tokens":2000,"stop_sequences":["fake"],"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`)
	var names []string
	for _, ev := range parseSSE(res.body) {
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		if !strings.Contains(ev.data, `"type":"`+ev.name+`"`) {
			t.Errorf("event %s carries %s", ev.name, ev.data)
		}
	}
	want := "message_start ping content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(res.body, `"stop_reason":"stop_sequence","stop_sequence":"fake"`) {
		t.Errorf("no stop_sequence stop in %s", res.body)
	}
}

// TestMessagesStreamStartUsage: message_start waits for the engine's first
// event and reports the prompt tokens the prefix cache served, as
// Anthropic's own streams do; message_delta repeats the final usage.
func TestMessagesStreamStartUsage(t *testing.T) {
	eng := fake.New()
	eng.Cached = 3
	ts := startServer(t, api.Options{Engine: eng})
	res := ts.do(t, "POST", "/v1/messages", `{"max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	events := parseSSE(res.body)
	if len(events) == 0 || events[0].name != "message_start" {
		t.Fatalf("first event: %+v", events)
	}
	var start struct {
		Message struct {
			Usage struct {
				InputTokens          int `json:"input_tokens"`
				CacheReadInputTokens int `json:"cache_read_input_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(events[0].data), &start); err != nil {
		t.Fatal(err)
	}
	prompt := len(eng.Last().Prompt)
	if u := start.Message.Usage; u.CacheReadInputTokens != 3 || u.InputTokens != prompt-3 {
		t.Fatalf("message_start usage %+v, want 3 cached of %d", u, prompt)
	}
}

func TestCountTokens(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := anthropicClient(ts, "unused")
	res, err := client.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model:    testModel,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The fake template renders "<|user|>hi\n<|assistant|>\n<think>\n\n</think>\n\n", one token per byte.
	if want := int64(len("<|user|>hi\n<|assistant|>\n<think>\n\n</think>\n\n")); res.InputTokens != want {
		t.Errorf("input_tokens = %d, want %d", res.InputTokens, want)
	}
	_, err = client.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{Model: "nope",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("unknown model: err = %v, want a 404", err)
	}
}
