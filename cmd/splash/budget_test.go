package main

import (
	"context"
	"encoding/json"
	"fmt"
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

// Schemas with unbounded strings, numbers and arrays: a rambling model
// would run past any max_tokens inside one of them.
const (
	reportSchema = `{"type":"object","properties":{"title":{"type":"string"},"score":{"type":"number"},
"tags":{"type":"array","items":{"type":"string"}},"count":{"type":"integer"},"ok":{"type":"boolean"}},
"required":["title","score","tags"],"additionalProperties":false}`
	lookupSchema = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},
"unit":{"enum":["celsius","fahrenheit"]},"notes":{"type":"array","items":{"type":"string"}}},
"required":["city","unit"],"additionalProperties":false}`
)

// budgetTokens is the max_tokens of every request in
// TestStructuredOutputWithinBudget.
const budgetTokens = 48

// TestStructuredOutputWithinBudget: a random-weight model at temperature 1
// answers 100 requests of each constrained kind at max_tokens 48, and every
// output is a whole document that the jsonschema library validates, with
// the finish reason of a complete answer (never "length"): json_schema
// (strict), a required tool call, a named tool call (streamed and not),
// Anthropic tool_choice any, and the Responses API's text.format.
func TestStructuredOutputWithinBudget(t *testing.T) {
	dir := t.TempDir()
	// Smaller than Tiny: the output layer over the real Qwen3 vocabulary
	// is most of each token's cost.
	spec := testmodel.Spec{Arch: "qwen3", Hidden: 16, Intermediate: 32, Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 8, Tied: true, Seed: 1}
	if err := testmodel.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startServe(t, "--model", dir)
	defer stop()
	oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	ac := anthropic.NewClient(aoption.WithBaseURL("http://"+addr), aoption.WithAPIKey("x"), aoption.WithMaxRetries(0))
	report, lookup := compileSchema(t, reportSchema), compileSchema(t, lookupSchema)
	reportParams, lookupParams := schemaMap(t, reportSchema), schemaMap(t, lookupSchema)
	tools := []openai.ChatCompletionToolUnionParam{
		{OfFunction: &openai.ChatCompletionFunctionToolParam{Function: openai.FunctionDefinitionParam{Name: "lookup", Parameters: lookupParams}}},
		{OfFunction: &openai.ChatCompletionFunctionToolParam{Function: openai.FunctionDefinitionParam{Name: "report", Parameters: reportParams}}},
	}
	validators := map[string]*jsonschema.Schema{"lookup": lookup, "report": report}
	ctx := context.Background()
	user := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Go on, at length.")}
	chat := func(seed int, choice openai.ChatCompletionToolChoiceOptionUnionParam) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Messages: user, Tools: tools, ToolChoice: choice, ParallelToolCalls: openai.Bool(seed%2 == 0),
			MaxTokens: openai.Int(budgetTokens), Seed: openai.Int(int64(seed)), Temperature: openai.Float(1)}
	}
	named := openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
		Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "report"}}}
	kinds := []struct {
		name string
		run  func(seed int) error // nil when the output is whole and valid
	}{
		{"json_schema", func(seed int) error {
			res, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Messages: user,
				MaxTokens: openai.Int(budgetTokens), Seed: openai.Int(int64(seed)), Temperature: openai.Float(1),
				ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
					JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "report", Schema: reportParams, Strict: openai.Bool(true)}}},
			})
			if err != nil {
				return err
			}
			return validDoc(report, res.Choices[0].Message.Content, string(res.Choices[0].FinishReason), "stop")
		}},
		{"required tool call", func(seed int) error {
			res, err := oc.Chat.Completions.New(ctx, chat(seed, openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}))
			if err != nil {
				return err
			}
			return validCalls(validators, "", res.Choices[0].Message.ToolCalls, string(res.Choices[0].FinishReason))
		}},
		{"named tool call", func(seed int) error {
			res, err := oc.Chat.Completions.New(ctx, chat(seed, named))
			if err != nil {
				return err
			}
			return validCalls(validators, "report", res.Choices[0].Message.ToolCalls, string(res.Choices[0].FinishReason))
		}},
		{"named tool call streamed", func(seed int) error {
			stream := oc.Chat.Completions.NewStreaming(ctx, chat(seed, named))
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				return err
			}
			if len(acc.Choices) != 1 {
				return fmt.Errorf("%d choices", len(acc.Choices))
			}
			return validCalls(validators, "report", acc.Choices[0].Message.ToolCalls, string(acc.Choices[0].FinishReason))
		}},
		{"anthropic tool_choice any", func(seed int) error {
			msg, err := ac.Messages.New(ctx, anthropic.MessageNewParams{MaxTokens: budgetTokens,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Go on, at length."))},
				Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "lookup",
					InputSchema: anthropic.ToolInputSchemaParam{Properties: lookupParams["properties"], Required: []string{"city", "unit"},
						ExtraFields: map[string]any{"additionalProperties": false}}}}},
				ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: anthropic.Bool(seed%2 == 0)}},
			})
			if err != nil {
				return err
			}
			if msg.StopReason != "tool_use" {
				return fmt.Errorf("stop reason %q, content %+v", msg.StopReason, msg.Content)
			}
			uses := 0
			for _, b := range msg.Content {
				if b.Type == "tool_use" {
					uses++
					if err := validDoc(lookup, string(b.Input), "tool_use", "tool_use"); err != nil || b.Name != "lookup" {
						return fmt.Errorf("tool_use %s: %v", b.Name, err)
					}
				}
			}
			if uses == 0 {
				return fmt.Errorf("no tool_use block in %+v", msg.Content)
			}
			return nil
		}},
		{"responses text.format", func(seed int) error {
			r, err := oc.Responses.New(ctx, responses.ResponseNewParams{
				Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("Go on, at length.")},
				MaxOutputTokens: openai.Int(budgetTokens), Temperature: openai.Float(1),
				Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
					OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "report", Schema: reportParams, Strict: openai.Bool(true)}}},
			})
			if err != nil {
				return err
			}
			return validDoc(report, r.OutputText(), string(r.Status), "completed")
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for seed := range 100 {
				if err := k.run(seed); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		})
	}
}

func schemaMap(t *testing.T, schema string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(schema), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// validDoc checks that text parses and validates and that the request
// finished as wanted.
func validDoc(s *jsonschema.Schema, text, finish, want string) error {
	if finish != want {
		return fmt.Errorf("finished %q, want %q: %q", finish, want, text)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("%q does not parse: %v", text, err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("%q does not validate: %v", text, err)
	}
	return nil
}

// validCalls checks that there is at least one call, each to a known tool
// (name, when set) with arguments that validate, and that the request
// finished with tool_calls.
func validCalls(validators map[string]*jsonschema.Schema, name string, calls []openai.ChatCompletionMessageToolCallUnion, finish string) error {
	if len(calls) == 0 || finish != "tool_calls" {
		return fmt.Errorf("%d calls, finished %q", len(calls), finish)
	}
	for _, c := range calls {
		v, ok := validators[c.Function.Name]
		if !ok || (name != "" && c.Function.Name != name) {
			return fmt.Errorf("called %q", c.Function.Name)
		}
		if err := validDoc(v, c.Function.Arguments, finish, "tool_calls"); err != nil {
			return fmt.Errorf("%s: %v", c.Function.Name, err)
		}
	}
	return nil
}

// TestBudgetBelowSchemaMinimum: a max_tokens that even the schema's
// shortest output exceeds is a 400 up front, in each dialect's error shape.
func TestBudgetBelowSchemaMinimum(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startServe(t, "--model", dir)
	defer stop()
	user := `"messages":[{"role":"user","content":"x"}]`
	tests := []struct {
		name, path, body, shape string
	}{
		{"json_schema", "/v1/chat/completions", `{` + user + `,"max_tokens":4,"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":` + reportSchema + `}}}`,
			`"error":{"message":`},
		{"required tool call", "/v1/chat/completions", `{` + user + `,"max_tokens":10,"tool_choice":"required","tools":[{"type":"function","function":{"name":"lookup","parameters":` + lookupSchema + `}}]}`,
			`"error":{"message":`},
		{"anthropic any", "/v1/messages", `{` + user + `,"max_tokens":10,"tool_choice":{"type":"any"},"tools":[{"name":"lookup","input_schema":` + lookupSchema + `}]}`,
			`"type":"error"`},
		{"responses text.format", "/v1/responses", `{"input":"x","max_output_tokens":4,"text":{"format":{"type":"json_schema","name":"r","schema":` + reportSchema + `}}}`,
			`"error":{"message":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := http.Post("http://"+addr+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 400 || !strings.Contains(string(body), "shortest output the schema allows") || !strings.Contains(string(body), tt.shape) {
				t.Fatalf("got %d %s", res.StatusCode, body)
			}
		})
	}
}
