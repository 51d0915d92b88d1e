package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/splash-inference/splash/api"
)

// functionCalls are a response's function_call output items.
func functionCalls(r *responses.Response) []responses.ResponseOutputItemUnion {
	var out []responses.ResponseOutputItemUnion
	for _, item := range r.Output {
		if item.Type == "function_call" {
			out = append(out, item)
		}
	}
	return out
}

// TestResponsesFunctionCalls: the model's <tool_call> markup comes back as
// function_call output items, streamed as output_item.added, argument
// deltas, function_call_arguments.done and output_item.done; streaming and
// not give the same calls, and the markup never reaches the message text.
func TestResponsesFunctionCalls(t *testing.T) {
	ts := startServer(t, api.Options{Engine: toolEngine()})
	client := openAIClient(ts, "unused")
	params := responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather?")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
	}
	res, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	calls := functionCalls(res)
	if len(calls) != 2 || calls[0].Name != "get_weather" || calls[0].Arguments.OfString != `{"city":"Paris"}` ||
		calls[1].Arguments.OfString != `{"city":"Rome"}` || calls[0].CallID == "" || calls[0].CallID == calls[1].CallID ||
		calls[0].Status != "completed" {
		t.Fatalf("calls %+v", calls)
	}
	if out := res.OutputText(); strings.Contains(out, "tool_call") || !strings.Contains(out, "Let me check.") {
		t.Fatalf("message text %q", out)
	}

	stream := client.Responses.NewStreaming(context.Background(), params)
	var kinds []string
	args := map[string]string{}
	var final *responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_item.added", "response.output_item.done":
			kinds = append(kinds, ev.Type+":"+ev.Item.Type)
		case "response.function_call_arguments.delta":
			args[ev.ItemID] += ev.Delta
		case "response.function_call_arguments.done":
			if args[ev.ItemID] != ev.Arguments {
				t.Errorf("deltas %q != done %q", args[ev.ItemID], ev.Arguments)
			}
		case "response.completed":
			r := ev.Response
			final = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := "response.output_item.added:message response.output_item.done:message response.output_item.added:function_call " +
		"response.output_item.done:function_call response.output_item.added:function_call response.output_item.done:function_call"
	if got := strings.Join(kinds, " "); !strings.HasSuffix(got, want) {
		t.Fatalf("item events %q, want them to end with %q", got, want)
	}
	if final == nil {
		t.Fatal("no response.completed")
	}
	sc := functionCalls(final)
	if len(sc) != 2 || sc[0].Arguments.OfString != calls[0].Arguments.OfString || sc[1].Arguments.OfString != calls[1].Arguments.OfString {
		t.Fatalf("streamed calls %+v differ from %+v", sc, calls)
	}
}

// TestResponsesCodexToolShapes: the tool list Codex sends — functions, a
// namespace of functions and a hosted web_search — is accepted; a call to a
// namespaced function carries its namespace back.
func TestResponsesCodexToolShapes(t *testing.T) {
	eng := toolEngine()
	eng.Words = []string{"<tool_call>\n{\"name\": \"close_agent\", \"arguments\": {\"id\": \"a1\"}}\n</tool_call>"}
	ts := startServer(t, api.Options{Engine: eng})
	body := `{"model":"splash-test","stream":false,"tool_choice":"auto","parallel_tool_calls":true,
		"reasoning":{"summary":"auto"},"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k",
		"client_metadata":{"thread_id":"t"},"instructions":"be useful",
		"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},
		         {"type":"message","role":"user","content":[{"type":"input_text","text":"close it"}]}],
		"tools":[{"type":"function","name":"exec_command","description":"run","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}},
		         {"type":"namespace","name":"multi_agent_v1","description":"agents","tools":[{"type":"function","name":"close_agent","parameters":{"type":"object"}}]},
		         {"type":"web_search","external_web_access":false}]}`
	res := ts.do(t, "POST", "/v1/responses", body)
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	for _, want := range []string{`"type":"function_call"`, `"name":"close_agent"`, `"namespace":"multi_agent_v1"`, `"arguments":"{\"id\":\"a1\"}"`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("response lacks %s: %s", want, res.body)
		}
	}
	// The prompt offered both functions and not the hosted tool.
	prompt := ts.engine.LastText()
	if !strings.Contains(prompt, "exec_command") || !strings.Contains(prompt, "close_agent") || strings.Contains(prompt, "web_search") {
		t.Errorf("prompt tools: %q", prompt)
	}
}

// TestResponsesFunctionCallRoundTrip: function_call and
// function_call_output input items reach the template as an assistant turn
// with tool_calls and a tool message.
func TestResponsesFunctionCallRoundTrip(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := openAIClient(ts, "unused")
	_, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("weather in Paris?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_1", "get_weather"),
			functionCallOutput("call_1", "sunny"),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	prompt := ts.engine.LastText()
	for _, want := range []string{"get_weather", `\"city\"`, "sunny<|for call_1|>"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q: %q", want, prompt)
		}
	}
}

func functionCallOutput(callID, output string) responses.ResponseInputItemUnionParam {
	item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	item.OfFunctionCallOutput.CallID = openai.String(callID)
	return item
}

// TestNoToolParser: a model without a tool-call parser refuses tools in
// every dialect (unless tool_choice is none), naming the flag.
func TestNoToolParser(t *testing.T) {
	ts := startServer(t, api.Options{NoToolCalls: true})
	fn := `{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}`
	tests := []struct {
		path, body string
		status     int
	}{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"tools":[` + fn + `]}`, 400},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"tools":[` + fn + `],"tool_choice":"none"}`, 200},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, 200},
		{"/v1/responses", `{"input":"x","tools":[{"type":"function","name":"f"}]}`, 400},
		{"/v1/responses", `{"input":"x","tools":[{"type":"web_search"}]}`, 200},
		{"/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`, 400},
		{"/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"none"}}`, 200},
	}
	for _, tc := range tests {
		res := ts.do(t, "POST", tc.path, tc.body)
		if res.status != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.path, tc.body, res.status, tc.status, res.body)
			continue
		}
		if tc.status == 400 {
			if _, msg, _ := errorShape(t, tc.path, res.body); !strings.Contains(msg, "--tool-parser") {
				t.Errorf("%s: message %q does not name --tool-parser", tc.path, msg)
			}
		}
	}
}
