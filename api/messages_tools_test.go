package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/splash-inference/splash/api"
)

func TestMessagesToolUse(t *testing.T) {
	ts := startServer(t, api.Options{Engine: toolEngine()})
	client := anthropicClient(ts, "unused")
	params := anthropic.MessageNewParams{MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather?"))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
	}
	msg, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var inputs []string
	for _, b := range msg.Content {
		kinds = append(kinds, string(b.Type))
		if b.Type == "tool_use" {
			inputs = append(inputs, string(b.Input))
			if b.Name != "get_weather" || !strings.HasPrefix(b.ID, "toolu_") {
				t.Fatalf("tool_use block %+v", b)
			}
		}
		if b.Type == "text" && strings.Contains(b.Text, "tool_call") {
			t.Fatalf("markup in text %q", b.Text)
		}
	}
	if msg.StopReason != "tool_use" || strings.Join(kinds, ",") != "text,tool_use,tool_use" || inputs[1] != `{"city":"Rome"}` {
		t.Fatalf("stop %q blocks %v inputs %v", msg.StopReason, kinds, inputs)
	}

	stream := client.Messages.NewStreaming(context.Background(), params)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.StopReason != "tool_use" || len(acc.Content) != 3 || string(acc.Content[1].Input) != `{"city":"Paris"}` {
		t.Fatalf("streamed: stop %q content %+v", acc.StopReason, acc.Content)
	}
}
