package main

import (
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/splash-inference/splash/model/testmodel"
)

// TestCachedPromptTokensReported: a resent conversation reports the prompt
// tokens the prefix cache served, in OpenAI usage (cached_tokens) and in an
// Anthropic stream's message_start (cache_read_input_tokens), through the
// real engine.
func TestCachedPromptTokensReported(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startServe(t, "--model", dir)
	defer stop()
	system := strings.Repeat("You are a careful coding agent. ", 20)

	oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	var cached []int64
	for range 2 {
		res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage("hello")},
			MaxTokens: openai.Int(2),
		})
		if err != nil {
			t.Fatal(err)
		}
		cached = append(cached, res.Usage.PromptTokensDetails.CachedTokens)
	}
	if cached[0] != 0 || cached[1] < 100 {
		t.Fatalf("cached_tokens of a cold then a resent prompt: %v", cached)
	}

	ac := anthropic.NewClient(aoption.WithBaseURL("http://"+addr), aoption.WithAPIKey("x"), aoption.WithMaxRetries(0))
	params := anthropic.MessageNewParams{MaxTokens: 2, System: []anthropic.TextBlockParam{{Text: system + "Anthropic."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}}
	var reads []int64
	for range 2 {
		stream := ac.Messages.NewStreaming(context.Background(), params)
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "message_start" {
				reads = append(reads, ev.Message.Usage.CacheReadInputTokens)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(reads) != 2 || reads[1] < 100 {
		t.Fatalf("message_start cache_read_input_tokens: %v", reads)
	}
}
