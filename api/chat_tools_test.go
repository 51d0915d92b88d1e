package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

var weatherTool = openai.ChatCompletionToolUnionParam{OfFunction: &openai.ChatCompletionFunctionToolParam{
	Function: openai.FunctionDefinitionParam{Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object"}}}}

// toolEngine answers with text, then two tool calls split across tokens at
// awkward places (inside the tags and the JSON).
func toolEngine() *fake.Engine {
	e := fake.New()
	e.Words = []string{"Let me check.", "<tool", "_call>\n{\"name\": \"get_", "weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_", "call>",
		"\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>"}
	return e
}

func TestChatToolCalls(t *testing.T) {
	ts := startServer(t, api.Options{Engine: toolEngine()})
	client := openAIClient(ts, "unused")
	params := openai.ChatCompletionNewParams{
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weatherTool},
	}
	res, err := client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Choices[0].Message
	if res.Choices[0].FinishReason != "tool_calls" || strings.Contains(msg.Content, "tool_call") || len(msg.ToolCalls) != 2 {
		t.Fatalf("non-streaming: finish %q content %q calls %+v", res.Choices[0].FinishReason, msg.Content, msg.ToolCalls)
	}
	if msg.ToolCalls[0].Function.Name != "get_weather" || msg.ToolCalls[1].Function.Arguments != `{"city":"Rome"}` {
		t.Fatalf("calls %+v", msg.ToolCalls)
	}

	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	acc := openai.ChatCompletionAccumulator{}
	var content strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		for _, c := range chunk.Choices {
			content.WriteString(c.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	calls := acc.Choices[0].Message.ToolCalls
	if strings.Contains(content.String(), "tool_call") || len(calls) != 2 || calls[0].Function.Arguments != `{"city":"Paris"}` ||
		acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("streaming: content %q calls %+v finish %q", content.String(), calls, acc.Choices[0].FinishReason)
	}
	if msg.Content != content.String() {
		t.Fatalf("streaming content %q differs from non-streaming %q", content.String(), msg.Content)
	}
}

func TestChatWithoutToolsKeepsMarkupAsText(t *testing.T) {
	ts := startServer(t, api.Options{Engine: toolEngine()})
	client := openAIClient(ts, "unused")
	res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Choices[0].Message.Content, "<tool_call>") || res.Choices[0].FinishReason == "tool_calls" {
		t.Fatalf("%+v", res.Choices[0])
	}
}
