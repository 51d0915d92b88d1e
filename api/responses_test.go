package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

// reasoningText joins the reasoning items' text of a response.
func reasoningText(r *responses.Response) string {
	var b strings.Builder
	for _, item := range r.Output {
		if item.Type == "reasoning" {
			for _, c := range item.Content {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

func TestResponses(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := openAIClient(ts, "unused")
	hi := responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}
	tests := []struct {
		name      string
		params    responses.ResponseNewParams
		text      string
		reasoning string
		status    responses.ResponseStatus
		output    int64
	}{
		{
			name:   "reasoning by default",
			params: responses.ResponseNewParams{Model: testModel, Input: hi, Instructions: openai.String("be brief")},
			text:   "Hello there, this is a fake model talking.", reasoning: "Let me think about it.", status: "completed", output: 18,
		},
		{
			name:   "reasoning none",
			params: responses.ResponseNewParams{Input: hi, Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortNone}},
			text:   "Hello there, this is a fake model talking.", status: "completed", output: 10,
		},
		{
			name:   "max output tokens",
			params: responses.ResponseNewParams{Input: hi, MaxOutputTokens: openai.Int(16), Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortNone}},
			text:   "Hello there, this is a fake model talking.", status: "completed", output: 10,
		},
		{
			name:   "incomplete",
			params: responses.ResponseNewParams{Input: hi, MaxOutputTokens: openai.Int(16)},
			text:   "Hello there, this is a fake model", reasoning: "Let me think about it.", status: "incomplete", output: 16,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := client.Responses.New(context.Background(), tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if res.OutputText() != tt.text || reasoningText(res) != tt.reasoning || res.Status != tt.status {
				t.Errorf("got %q / %q (%s), want %q / %q (%s)", res.OutputText(), reasoningText(res), res.Status, tt.text, tt.reasoning, tt.status)
			}
			if res.Usage.OutputTokens != tt.output || res.Usage.TotalTokens != res.Usage.InputTokens+res.Usage.OutputTokens {
				t.Errorf("usage = %+v, want %d output tokens", res.Usage, tt.output)
			}
			got, err := client.Responses.Get(context.Background(), res.ID, responses.ResponseGetParams{})
			if err != nil || got.OutputText() != tt.text {
				t.Errorf("stored response: %v, %q", err, got.OutputText())
			}
		})
	}
}

func TestResponsesPreviousResponseID(t *testing.T) {
	ts := startServer(t, api.Options{StoredResponses: 2})
	client := openAIClient(ts, "unused")
	none := shared.ReasoningParam{Effort: shared.ReasoningEffortNone}
	first, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("first question")}, Reasoning: none})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Responses.New(context.Background(), responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("second question")}, Reasoning: none,
		PreviousResponseID: openai.String(first.ID)})
	if err != nil {
		t.Fatal(err)
	}
	prompt := fake.Tokenizer{}.Decode(ts.engine.Last().Prompt, true)
	want := "<|user|>first question\n<|assistant|>Hello there, this is a fake model talking.\n<|user|>second question\n"
	if !strings.HasPrefix(prompt, want) {
		t.Errorf("continued prompt = %q, want prefix %q", prompt, want)
	}
	// The store holds two responses: a third evicts the first.
	for range 2 {
		if _, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}, Reasoning: none}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = client.Responses.Get(context.Background(), first.ID, responses.ResponseGetParams{})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("evicted response: err = %v, want 404", err)
	}
	_, err = client.Responses.New(context.Background(), responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}, PreviousResponseID: openai.String(first.ID)})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "previous_response_id" {
		t.Errorf("unknown previous_response_id: err = %v, want 400", err)
	}
}

func TestResponsesStreaming(t *testing.T) {
	ts := startServer(t, api.Options{})
	client := openAIClient(ts, "unused")
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}, Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortLow}})
	var types []string
	var text, reasoning strings.Builder
	var final responses.Response
	seq := int64(0)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("%s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.reasoning_text.delta":
			reasoning.WriteString(ev.Delta)
		case "response.completed":
			final = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
		"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed"}, " ")
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if text.String() != "Hello there, this is a fake model talking." || reasoning.String() != "Let me think about it." {
		t.Errorf("text %q reasoning %q", text.String(), reasoning.String())
	}
	if final.OutputText() != text.String() || final.Usage.OutputTokensDetails.ReasoningTokens != 7 {
		t.Errorf("final response %q usage %+v", final.OutputText(), final.Usage)
	}
	if ts.engine.Last().ThinkingBudget != 1024 {
		t.Errorf("thinking budget for effort low = %d, want 1024", ts.engine.Last().ThinkingBudget)
	}
}
