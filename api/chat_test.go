package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/splash-inference/splash/api"
)

func openAIClient(ts *testServer, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(ts.url+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func TestChatCompletions(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := openAIClient(ts, "unused")
	user := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("hi")}
	tests := []struct {
		name      string
		params    openai.ChatCompletionNewParams
		content   []string // per choice
		reasoning string
		finish    string
		tokens    int64 // completion tokens
	}{
		{
			name:      "reasoning by default",
			params:    openai.ChatCompletionNewParams{Model: testModel, Messages: user},
			content:   []string{"Hello there, this is a fake model talking."},
			reasoning: "Let me think about it.",
			finish:    "stop", tokens: 18,
		},
		{
			name:    "reasoning none",
			params:  openai.ChatCompletionNewParams{Messages: user, ReasoningEffort: shared.ReasoningEffortNone},
			content: []string{"Hello there, this is a fake model talking."},
			finish:  "stop", tokens: 10,
		},
		{
			name:    "max tokens",
			params:  openai.ChatCompletionNewParams{Model: testAlias, Messages: user, ReasoningEffort: shared.ReasoningEffortNone, MaxTokens: openai.Int(3)},
			content: []string{"Hello there,"},
			finish:  "length", tokens: 3,
		},
		{
			name: "stop string",
			params: openai.ChatCompletionNewParams{Messages: user, ReasoningEffort: shared.ReasoningEffortNone,
				Stop: openai.ChatCompletionNewParamsStopUnion{OfString: openai.String(" fake")}},
			content: []string{"Hello there, this is a"},
			finish:  "stop", tokens: 7,
		},
		{
			name:    "n choices",
			params:  openai.ChatCompletionNewParams{Messages: user, ReasoningEffort: shared.ReasoningEffortNone, N: openai.Int(2), MaxCompletionTokens: openai.Int(2)},
			content: []string{"Hello there", " there,"},
			finish:  "length", tokens: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := client.Chat.Completions.New(context.Background(), tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Choices) != len(tt.content) {
				t.Fatalf("got %d choices, want %d", len(res.Choices), len(tt.content))
			}
			for i, c := range res.Choices {
				if c.Message.Content != tt.content[i] || c.FinishReason != tt.finish || c.Index != int64(i) {
					t.Errorf("choice %d = %q (%s), want %q (%s)", i, c.Message.Content, c.FinishReason, tt.content[i], tt.finish)
				}
			}
			if got := rawString(res.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw()); got != tt.reasoning {
				t.Errorf("reasoning_content = %q, want %q", got, tt.reasoning)
			}
			if res.Usage.CompletionTokens != tt.tokens || res.Usage.PromptTokens == 0 ||
				res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
				t.Errorf("usage = %+v, want %d completion tokens", res.Usage, tt.tokens)
			}
			if res.Object != "chat.completion" || !strings.HasPrefix(res.ID, "chatcmpl-") || res.Model != testModel {
				t.Errorf("envelope = %q %q %q", res.Object, res.ID, res.Model)
			}
		})
	}
}

// rawString unquotes a raw JSON string value ("" for absent or null).
func rawString(raw string) string {
	if raw == "" || raw == "null" {
		return ""
	}
	var s string
	if err := jsonUnmarshal([]byte(raw), &s); err != nil {
		return "!" + raw
	}
	return s
}

func TestChatCompletionsStreaming(t *testing.T) {
	ts := startServer(t, api.Options{})
	ts.engine.Cached = 5
	client := openAIClient(ts, "unused")
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		Logprobs:      openai.Bool(true), TopLogprobs: openai.Int(2),
	})
	var content, reasoning strings.Builder
	var roles, finishes []string
	var usage openai.CompletionUsage
	chunks, logprobs := 0, 0
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		if chunk.Usage.TotalTokens > 0 {
			usage = chunk.Usage
			if len(chunk.Choices) != 0 {
				t.Errorf("usage chunk has %d choices", len(chunk.Choices))
			}
		}
		for _, c := range chunk.Choices {
			if c.Delta.Role != "" {
				roles = append(roles, c.Delta.Role)
			}
			content.WriteString(c.Delta.Content)
			reasoning.WriteString(rawString(c.Delta.JSON.ExtraFields["reasoning_content"].Raw()))
			if c.FinishReason != "" {
				finishes = append(finishes, c.FinishReason)
			}
			for _, lp := range c.Logprobs.Content {
				logprobs++
				if len(lp.TopLogprobs) != 2 {
					t.Errorf("token %q has %d top logprobs, want 2", lp.Token, len(lp.TopLogprobs))
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks < 10 {
		t.Errorf("only %d chunks: not streamed token by token", chunks)
	}
	if content.String() != "Hello there, this is a fake model talking." || reasoning.String() != "Let me think about it." {
		t.Errorf("content %q, reasoning %q", content.String(), reasoning.String())
	}
	if len(roles) != 1 || roles[0] != "assistant" || len(finishes) != 1 || finishes[0] != "stop" {
		t.Errorf("roles %v, finishes %v", roles, finishes)
	}
	if usage.CompletionTokens != 18 || usage.PromptTokensDetails.CachedTokens != 5 || usage.CompletionTokensDetails.ReasoningTokens != 7 {
		t.Errorf("usage = %+v", usage)
	}
	if logprobs != 18 {
		t.Errorf("got %d token logprobs, want 18", logprobs)
	}
}

func TestChatStreamWireOrder(t *testing.T) {
	ts := startServer(t, api.Options{})
	res := ts.do(t, "POST", "/v1/chat/completions",
		`{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":2,"reasoning_effort":"none","n":2}`)
	events := parseSSE(res.body)
	if res.status != 200 || !strings.HasPrefix(res.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.status, res.header.Get("Content-Type"))
	}
	if last := events[len(events)-1].data; last != "[DONE]" {
		t.Errorf("last event %q, want [DONE]", last)
	}
	for i, want := range []string{`"index":0,"delta":{"role":"assistant","content":""}`, `"index":1,"delta":{"role":"assistant","content":""}`} {
		if !strings.Contains(events[i].data, want) {
			t.Errorf("event %d = %s, want role chunk %s", i, events[i].data, want)
		}
	}
	finals := 0
	for _, ev := range events {
		if strings.Contains(ev.data, `"finish_reason":"length"`) {
			finals++
		}
	}
	if finals != 2 {
		t.Errorf("%d finish chunks, want 2:\n%s", finals, res.body)
	}
}
