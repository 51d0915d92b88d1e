package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/splash-inference/splash/api"
)

func TestCompletions(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := openAIClient(ts, "unused")
	tests := []struct {
		name      string
		params    openai.CompletionNewParams
		text      []string
		finish    string
		nTokens   int    // logprob entries of choice 0 (0: no logprobs)
		tokenJSON string // the raw token_logprobs must start like this
	}{
		{
			name:   "string prompt, default max_tokens 16",
			params: openai.CompletionNewParams{Model: testModel, Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say:")}},
			text:   []string{"Hello there, this is a fake model talking."}, finish: "stop",
		},
		{
			name:   "token ids prompt",
			params: openai.CompletionNewParams{Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{72, 105}}, MaxTokens: openai.Int(2)},
			text:   []string{"Hello there"}, finish: "length",
		},
		{
			name:   "n and stop",
			params: openai.CompletionNewParams{Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")}, N: openai.Int(2), Stop: openai.CompletionNewParamsStopUnion{OfString: openai.String(" is")}},
			text:   []string{"Hello there, this", " there, this"}, finish: "stop",
		},
		{
			name:   "logprobs",
			params: openai.CompletionNewParams{Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")}, MaxTokens: openai.Int(3), Logprobs: openai.Int(2)},
			text:   []string{"Hello there,"}, finish: "length",
			nTokens: 3, tokenJSON: "[-0.25,",
		},
		{
			name:   "echo with logprobs scores the prompt",
			params: openai.CompletionNewParams{Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Hi!")}, MaxTokens: openai.Int(1), Logprobs: openai.Int(1), Echo: openai.Bool(true)},
			text:   []string{"Hi!Hello"}, finish: "length",
			nTokens: 5, tokenJSON: "[null,-1,-1,-1,-0.25]", // BOS, H, i, !, Hello
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := client.Completions.New(context.Background(), tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Choices) != len(tt.text) {
				t.Fatalf("%d choices, want %d", len(res.Choices), len(tt.text))
			}
			for i, c := range res.Choices {
				if c.Text != tt.text[i] || string(c.FinishReason) != tt.finish {
					t.Errorf("choice %d = %q (%s), want %q (%s)", i, c.Text, c.FinishReason, tt.text[i], tt.finish)
				}
			}
			lp := res.Choices[0].Logprobs
			if len(lp.Tokens) != tt.nTokens || len(lp.TextOffset) != tt.nTokens || len(lp.TopLogprobs) != tt.nTokens {
				t.Errorf("logprobs = %+v, want %d entries", lp, tt.nTokens)
			}
			if tt.tokenJSON != "" && !strings.HasPrefix(lp.JSON.TokenLogprobs.Raw(), tt.tokenJSON) {
				t.Errorf("token_logprobs = %s, want prefix %s", lp.JSON.TokenLogprobs.Raw(), tt.tokenJSON)
			}
			if res.Object != "text_completion" || res.Usage.CompletionTokens == 0 {
				t.Errorf("object %q usage %+v", res.Object, res.Usage)
			}
		})
	}
}

func TestCompletionsStreaming(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := openAIClient(ts, "unused")
	stream := client.Completions.NewStreaming(context.Background(), openai.CompletionNewParams{
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Hi")}, Echo: openai.Bool(true), MaxTokens: openai.Int(4),
		Logprobs: openai.Int(0), StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var text strings.Builder
	var offsets []int64
	finish, usage := "", int64(0)
	for stream.Next() {
		c := stream.Current()
		if c.Usage.TotalTokens > 0 {
			usage = c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Text)
			offsets = append(offsets, ch.Logprobs.TextOffset...)
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "HiHello there, this" || finish != "length" || usage != 4 {
		t.Errorf("text %q finish %q completion tokens %d", text.String(), finish, usage)
	}
	// BOS "<s>", "H", "i", then Hello, " there", ",", " this".
	want := []int64{0, 3, 4, 5, 10, 16, 17}
	if len(offsets) != len(want) {
		t.Fatalf("offsets %v, want %v", offsets, want)
	}
	for i := range want {
		if offsets[i] != want[i] {
			t.Errorf("offsets %v, want %v", offsets, want)
			break
		}
	}
}
