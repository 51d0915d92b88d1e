package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model/testmodel"
)

// BenchmarkConstrainedDecode compares decode throughput end to end (HTTP,
// engine, Qwen3-0.6B-shaped q4 package with the real 151,936-token
// vocabulary) with and without a json_schema mask, greedy, speculation off
// for both (masked requests never speculate). The target: masked
// at ≥ 0.9× the unmasked tokens/s, reported as constrained/free from one
// run (both prompts are the same, so their prefill weighs alike):
//
//	go test -run '^$' -bench ConstrainedDecode -benchtime 8x ./cmd/splash/
func BenchmarkConstrainedDecode(b *testing.B) {
	dir, err := testmodel.Package(os.TempDir(), testmodel.Qwen3_0_6B(), metal.Q4)
	if err != nil {
		b.Fatal(err)
	}
	addr, _, stop := startServe(b, "--model", dir, "--spec", "off", "--kv-memory", "512M")
	defer stop()
	oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"notes": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}, "required": []string{"notes"}}
	formats := []struct {
		name   string
		format openai.ChatCompletionNewParamsResponseFormatUnion
	}{
		{"free", openai.ChatCompletionNewParamsResponseFormatUnion{}},
		{"json_schema", openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "notes", Schema: schema, Strict: openai.Bool(true)}}}},
	}
	// The two kinds alternate request by request, so the machine's load
	// (shared and noisy) falls on both alike.
	tokens := make([]int64, len(formats))
	elapsed := make([]time.Duration, len(formats))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, f := range formats {
			start := time.Now()
			res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Messages:       []openai.ChatCompletionMessageParamUnion{openai.UserMessage("List some notes.")},
				MaxTokens:      openai.Int(48),
				Temperature:    openai.Float(0),
				ResponseFormat: f.format,
			})
			if err != nil {
				b.Fatal(err)
			}
			elapsed[k] += time.Since(start)
			tokens[k] += res.Usage.CompletionTokens
		}
	}
	rate := func(k int) float64 { return float64(tokens[k]) / elapsed[k].Seconds() }
	for k, f := range formats {
		b.ReportMetric(rate(k), f.name+"-tokens/s")
	}
	b.ReportMetric(rate(1)/rate(0), "constrained/free")
}
