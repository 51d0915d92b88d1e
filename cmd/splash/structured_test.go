package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/splash-inference/splash/model/testmodel"
)

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string","maxLength":12},
"temp":{"type":"integer"},"unit":{"enum":["c","f"]},"ok":{"type":"boolean"}},
"required":["city","temp","unit"],"additionalProperties":false}`

func compileSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStructuredOutput: a random-weight model, which follows no
// instructions, answers json_schema (strict) and json_object requests
// through the official SDK with output that parses and validates, in every
// one of the seeded requests; an unsupported schema is a 400 naming it.
func TestStructuredOutput(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startServe(t, "--model", dir)
	defer stop()
	oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	validator := compileSchema(t, weatherSchema)
	var schema map[string]any
	json.Unmarshal([]byte(weatherSchema), &schema)
	const runs = 100
	for i := 0; i < runs; i++ {
		res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris as JSON?")},
			MaxTokens:   openai.Int(300),
			Seed:        openai.Int(int64(i)),
			Temperature: openai.Float(1.0),
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
				JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather", Schema: schema, Strict: openai.Bool(true)}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Choices[0].Message.Content
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
		if err != nil {
			t.Fatalf("request %d (finish %s): %q does not parse: %v", i, res.Choices[0].FinishReason, text, err)
		}
		if err := validator.Validate(inst); err != nil {
			t.Fatalf("request %d: %q does not validate: %v", i, text, err)
		}
	}
	// the same through the Responses API's text.format
	for i := 0; i < runs; i++ {
		r, err := oc.Responses.New(context.Background(), responses.ResponseNewParams{
			Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("JSON please")},
			MaxOutputTokens: openai.Int(300), Temperature: openai.Float(1.0),
			Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
				OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "weather", Schema: schema, Strict: openai.Bool(true)}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(r.OutputText())))
		if err != nil || validator.Validate(inst) != nil {
			t.Fatalf("responses text.format %d: %q: %v", i, r.OutputText(), err)
		}
	}
	// json_object: any object; its strings are unbounded, but the budget
	// closes them in time: the output is a whole object within max_tokens.
	res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Messages:       []openai.ChatCompletionMessageParamUnion{openai.UserMessage("JSON please")},
		MaxTokens:      openai.Int(40),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &openai.ResponseFormatJSONObjectParam{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if text := res.Choices[0].Message.Content; json.Unmarshal([]byte(text), &obj) != nil || res.Choices[0].FinishReason != "stop" {
		t.Fatalf("json_object output %q, finish %q", text, res.Choices[0].FinishReason)
	}
	hres, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"bad","schema":{"type":"string","pattern":"^a+$"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hres.Body)
	hres.Body.Close()
	if hres.StatusCode != 400 || !strings.Contains(string(body), "pattern is not supported") {
		t.Fatalf("unsupported schema: %d %s", hres.StatusCode, body)
	}
}

// TestForcedToolCalls: tool_choice "required" and a named function make a
// random-weight model emit well-formed calls whose arguments validate
// against the tool's schema, in every one of 100 seeded requests: exactly
// one call with parallel_tool_calls false, one or more by default.
func TestForcedToolCalls(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startServe(t, "--model", dir)
	defer stop()
	oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	params := map[string]string{
		"get_weather": `{"type":"object","properties":{"unit":{"enum":["c","f"]},"days":{"type":"integer"},"city":{"type":"string","maxLength":10}},"required":["unit","city"],"additionalProperties":false}`,
		"set_alarm":   `{"type":"object","properties":{"hour":{"type":"integer"},"on":{"type":"boolean"}},"required":["hour"]}`,
	}
	validators := map[string]*jsonschema.Schema{}
	var tools []openai.ChatCompletionToolUnionParam
	for _, name := range []string{"get_weather", "set_alarm"} {
		var p map[string]any
		json.Unmarshal([]byte(params[name]), &p)
		validators[name] = compileSchema(t, params[name])
		tools = append(tools, openai.ChatCompletionToolUnionParam{OfFunction: &openai.ChatCompletionFunctionToolParam{
			Function: openai.FunctionDefinitionParam{Name: name, Parameters: openai.FunctionParameters(p)}}})
	}
	calls := map[int]int{}
	for i := 0; i < 100; i++ {
		choice := openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
		if i%4 == 3 {
			choice = openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
				Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "set_alarm"}}}
		}
		parallel := i%2 == 0
		res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Messages:   []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Do something useful.")},
			Tools:      tools,
			ToolChoice: choice, ParallelToolCalls: openai.Bool(parallel),
			MaxTokens: openai.Int(1000), Seed: openai.Int(int64(i)), Temperature: openai.Float(1.0),
		})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Choices[0]
		if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) == 0 || (!parallel && len(c.Message.ToolCalls) != 1) {
			t.Fatalf("request %d (parallel %v): finish %q, message %+v", i, parallel, c.FinishReason, c.Message)
		}
		calls[min(len(c.Message.ToolCalls), 2)]++
		for _, tc := range c.Message.ToolCalls {
			call := tc.Function
			v, ok := validators[call.Name]
			if !ok || (i%4 == 3 && call.Name != "set_alarm") {
				t.Fatalf("request %d: called %q", i, call.Name)
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(call.Arguments))
			if err != nil || v.Validate(inst) != nil {
				t.Fatalf("request %d: arguments %q do not validate (%v)", i, call.Arguments, err)
			}
		}
	}
	t.Logf("requests by calls made (2 = two or more): %v", calls)
}

// TestForcedToolUseAnthropic: Anthropic tool_choice "any" gives tool_use
// blocks whose input validates, through the official SDK, in 100 of 100
// requests: exactly one with disable_parallel_tool_use.
func TestForcedToolUseAnthropic(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startServe(t, "--model", dir)
	defer stop()
	ac := anthropic.NewClient(aoption.WithBaseURL("http://"+addr), aoption.WithAPIKey("x"), aoption.WithMaxRetries(0))
	schema := `{"type":"object","properties":{"hour":{"type":"integer"},"on":{"type":"boolean"}},"required":["hour"]}`
	v := compileSchema(t, schema)
	for i := 0; i < 100; i++ {
		msg, err := ac.Messages.New(context.Background(), anthropic.MessageNewParams{MaxTokens: 1000,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Wake me up."))},
			Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "set_alarm",
				InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"hour": map[string]any{"type": "integer"},
					"on": map[string]any{"type": "boolean"}}, Required: []string{"hour"}}}}},
			ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: anthropic.Bool(i%2 == 0)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var blocks []anthropic.ContentBlockUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				blocks = append(blocks, b)
			}
		}
		// Without a seed (the Anthropic API has none) a run of parallel
		// calls may rarely reach max_tokens inside a later call: every call
		// before it must still be whole and valid.
		if msg.StopReason == "max_tokens" && i%2 == 1 && len(blocks) > 1 {
			blocks = blocks[:len(blocks)-1]
			msg.StopReason = "tool_use"
		}
		uses := len(blocks)
		for _, b := range blocks {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b.Input)))
			if b.Name != "set_alarm" || err != nil || v.Validate(inst) != nil {
				t.Fatalf("request %d: tool_use %s %s (%v)", i, b.Name, b.Input, err)
			}
		}
		if uses == 0 || (i%2 == 0 && uses != 1) || msg.StopReason != "tool_use" {
			t.Fatalf("request %d: %d tool_use blocks, stop %q", i, uses, msg.StopReason)
		}
	}
}
