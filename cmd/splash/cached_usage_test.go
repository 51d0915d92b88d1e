package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
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

// TestServeKVCacheTypes: --kv-cache-type q8, bf16 and f32 serve through
// the real engine (greedy answers repeat, a resent prompt is served from
// the prefix cache), and the memory plan fits 1.88 times the tokens of a
// float16 cache into the same --kv-memory with q8 (1.0625 bytes a value
// against 2), as many with bf16, half as many with f32 (4 bytes a value).
func TestServeKVCacheTypes(t *testing.T) {
	dir := t.TempDir()
	spec := testmodel.Tiny("qwen3")
	spec.HeadDim = 32 // whole groups of 32
	if err := testmodel.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	blocks := map[string]int{}
	for _, typ := range []string{"f16", "q8", "bf16", "f32"} {
		addr, _, logs, stop := startServeLogs(t, "--model", dir, "--kv-memory", "16M", "--kv-cache-type", typ)
		plan := logs.String()
		if !strings.Contains(plan, "("+typ+")") {
			stop()
			t.Fatalf("%s: the plan does not name the cache type:\n%s", typ, plan)
		}
		var n, bs int
		for _, line := range strings.Split(plan, "\n") {
			if strings.HasPrefix(line, "KV cache ") {
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "KV cache")), "%d blocks × %d tokens", &n, &bs)
			}
		}
		blocks[typ] = n
		if typ == "f16" {
			stop()
			continue
		}
		oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
		system := strings.Repeat("You are a careful coding agent. ", 20)
		var answers []string
		var cached []int64
		for range 2 {
			res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Messages:  []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage("hello")},
				MaxTokens: openai.Int(8), Temperature: openai.Float(0),
			})
			if err != nil {
				stop()
				t.Fatal(err)
			}
			answers = append(answers, res.Choices[0].Message.Content)
			cached = append(cached, res.Usage.PromptTokensDetails.CachedTokens)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if answers[0] != answers[1] || cached[0] != 0 || cached[1] < 100 {
			t.Fatalf("%s: answers %q, cached tokens %v", typ, answers, cached)
		}
	}
	if blocks["bf16"] != blocks["f16"] {
		t.Fatalf("KV blocks in 16 MiB: %v, want as many bf16 as f16", blocks)
	}
	if r := float64(blocks["f32"]) / float64(blocks["f16"]); blocks["f16"] == 0 || r < 0.49 || r > 0.51 {
		t.Fatalf("KV blocks in 16 MiB: %v (f32/f16 %.3f, want 1/2)", blocks, r)
	}
	if r := float64(blocks["q8"]) / float64(blocks["f16"]); blocks["f16"] == 0 || r < 1.85 || r > 1.9 {
		t.Fatalf("KV blocks in 16 MiB: %v (q8/f16 %.3f, want 2/1.0625 = 1.88)", blocks, r)
	}
}

// TestServeKVCacheTypeAuto: without --kv-cache-type the plan names the
// type auto chose and why: bf16 for heads of 32 where this CPU's kernels
// compute bf16 attention faster, f16 for heads of 16 and with the portable
// kernels; and the server answers on it.
func TestServeKVCacheTypeAuto(t *testing.T) {
	be := cpu.New(1)
	fastBF16 := be.AttentionSpeedup(metal.KVBF16) > 1
	be.Close()
	for _, tc := range []struct {
		headDim int
		args    []string
		want    string
	}{
		{32, nil, map[bool]string{true: "bf16", false: "f16"}[fastBF16]},
		{32, []string{"--portable-kernels"}, "f16"},
		{16, nil, "f16"},
	} {
		dir := t.TempDir()
		spec := testmodel.Tiny("qwen3")
		spec.HeadDim = tc.headDim
		if err := testmodel.Write(dir, spec); err != nil {
			t.Fatal(err)
		}
		addr, _, logs, stop := startServeLogs(t, append([]string{"--model", dir}, tc.args...)...)
		var resp struct {
			Choices []struct{ Text string }
			Usage   struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		postJSON(t, "http://"+addr+"/v1/completions", `{"prompt":"hello","max_tokens":4,"temperature":0,"ignore_eos":true}`, &resp)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "KV cache type      "+tc.want+" (auto: ") {
			t.Errorf("heads of %d %v: want a %s cache chosen by auto in the plan:\n%s", tc.headDim, tc.args, tc.want, logs.String())
		}
		if len(resp.Choices) != 1 || resp.Usage.CompletionTokens != 4 {
			t.Errorf("heads of %d %v: completion %+v", tc.headDim, tc.args, resp)
		}
	}
}

// TestServeWarnsOfPortableBF16: a bf16 cache served by kernels without
// bf16 attention loops (here the portable ones) says so in the plan.
func TestServeWarnsOfPortableBF16(t *testing.T) {
	dir := t.TempDir()
	spec := testmodel.Tiny("qwen3")
	spec.HeadDim = 32
	if err := testmodel.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"bf16", "f16"} {
		_, _, logs, stop := startServeLogs(t, "--model", dir, "--kv-memory", "16M", "--kv-cache-type", typ, "--portable-kernels")
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if warned := strings.Contains(logs.String(), "no bf16 attention loops"); warned != (typ == "bf16") {
			t.Fatalf("--kv-cache-type %s --portable-kernels: warned %v:\n%s", typ, warned, logs.String())
		}
	}
}
