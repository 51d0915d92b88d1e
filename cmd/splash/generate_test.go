package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), err
}

// TestGenerateJSONLogprobs: --echo --logprobs --json prints the prompt's
// logprobs as the model computes them over the same cache type (the
// default, f16 for these heads of 16, and f32), and the generated tokens
// with their alternatives.
func TestGenerateJSONLogprobs(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		typ   metal.KVType
	}{{nil, metal.KVF16}, {[]string{"--kv-cache-type", "f32"}, metal.KVF32}} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			out, err := runCmd(t, append([]string{"generate", "--model", dir, "--prompt-ids", "9707,11,1879,0", "--max-tokens", "3",
				"--echo", "--logprobs", "2", "--json", "--ignore-eos"}, tc.flags...)...)
			if err != nil {
				t.Fatal(err)
			}
			checkGenerateLogprobs(t, dir, out, tc.typ)
		})
	}
}

// generateJSON is generate's --json output.
type generateJSON struct {
	Tokens []struct {
		ID      int32    `json:"id"`
		Logprob *float64 `json:"logprob"`
		Top     []struct {
			ID      int32   `json:"id"`
			Logprob float64 `json:"logprob"`
		} `json:"top"`
	} `json:"tokens"`
}

func parseGenerateJSON(t *testing.T, out string) generateJSON {
	t.Helper()
	var res generateJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

// checkGenerateLogprobs checks generate's --echo --logprobs 2 --json
// output out for the prompt 9707,11,1879,0 and three tokens against the
// model's own logits over a cache of type typ.
func checkGenerateLogprobs(t *testing.T, dir, out string, typ metal.KVType) {
	t.Helper()
	res := parseGenerateJSON(t, out)
	if len(res.Tokens) != 7 || res.Tokens[0].Logprob != nil || len(res.Tokens[0].Top) != 0 {
		t.Fatalf("tokens: %s", out)
	}
	// Recompute the prompt logprobs directly from the model's logits.
	src, err := model.Open(dir, model.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	be := cpu.New(1)
	defer be.Close()
	m, _ := src.Build(be)
	ids := []int32{9707, 11, 1879, 0}
	logits, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: ids, Blocks: []int32{0}, Logits: 4}}}, m.NewKVCache(1, 16, typ))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Config().VocabSize
	for i := 1; i < 4; i++ {
		want := float64(sample.Logprob(logits[(i-1)*v:i*v], ids[i]))
		got := res.Tokens[i]
		if got.ID != ids[i] || math.Abs(*got.Logprob-want) > 1e-4 || len(got.Top) != 2 || got.Top[0].Logprob < got.Top[1].Logprob {
			t.Fatalf("position %d: %+v, want logprob %v", i, got, want)
		}
	}
	for _, g := range res.Tokens[4:] {
		// greedy: the chosen token is the most likely alternative
		if g.Logprob == nil || len(g.Top) != 2 || g.Top[0].ID != g.ID {
			t.Fatalf("generated token %+v", g)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("llama")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-ids", "999999999"}, "outside the vocabulary [0, "}, // the embedded demo's
		{[]string{"--model", dir}, "exactly one"},
		{[]string{"--model", dir, "--prompt-ids", "1,x"}, "not a token id"},
		{[]string{"--model", dir, "--prompt-ids", "999999999"}, "outside the vocabulary"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--max-tokens", "100000"}, "exceeds the model's context"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--temperature", "-1"}, "temperature"},
		{[]string{"--model", t.TempDir(), "--prompt", "x"}, "neither a Splash package"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--kv-cache-type", "q4"}, "unknown KV cache type"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--kv-cache-type", "bf16"}, "multiple of 32"}, // heads of 16
		{[]string{"--model", dir, "--prompt-ids", "1", "--spec", "medusa"}, "want auto, draft, dflash, ngram or off"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--spec-trace"}, "--spec-trace needs --json"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--spec", "dflash", "--json"}, "needs a DFlash draft"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--spec", "draft", "--json"}, "needs a draft model"},
	} {
		_, err := runCmd(t, append([]string{"generate"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestGenerateWithoutModel: with no --model, generate runs the embedded
// demo and prints its tokens.
func TestGenerateWithoutModel(t *testing.T) {
	out, err := runCmd(t, "generate", "--prompt-ids", "1,2", "--max-tokens", "3", "--ignore-eos", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tokens []tokenOut `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Tokens) != 3 {
		t.Fatalf("%d tokens, want 3:\n%s", len(res.Tokens), out)
	}
}

func TestGenerateSeededSamplingIsReproducible(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	args := []string{"generate", "--model", dir, "--prompt", "Hi", "--max-tokens", "6", "--temperature", "1.5", "--seed", "42", "--json", "--ignore-eos"}
	a, err := runCmd(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := runCmd(t, args...)
	// The tokens, not the timings.
	tokens := func(out string) string {
		var res struct{ Tokens json.RawMessage }
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Tokens) == 0 {
			t.Fatalf("%q: %v", out, err)
		}
		return string(res.Tokens)
	}
	if tokens(a) != tokens(b) {
		t.Fatalf("seeded runs differ:\n%s\n%s", a, b)
	}
}

// TestGenerateMatchesServe: `splash generate` answers a greedy prompt as
// the server does with its defaults, the KV cache type included (here the
// two cache types part ways after about 28 of these 40 tokens).
func TestGenerateMatchesServe(t *testing.T) {
	dir := t.TempDir()
	spec := testmodel.Tiny("qwen3")
	spec.HeadDim = 32 // a bf16 cache where the CPU has AVX512_BF16
	if err := testmodel.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	ids := "9707,11,1879,0,5,6,7,8,9,10"
	out, err := runCmd(t, "generate", "--model", dir, "--prompt-ids", ids, "--max-tokens", "40", "--ignore-eos")
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _, stop := startServeLogs(t, "--model", dir, "--spec", "off")
	var resp struct {
		Choices []struct{ Text string }
	}
	postJSON(t, "http://"+addr+"/v1/completions", `{"prompt":[`+ids+`],"max_tokens":40,"temperature":0,"ignore_eos":true}`, &resp)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Text+"\n" != out {
		t.Fatalf("generate: %q\nserve: %+v", out, resp)
	}
}

// TestGenerateTimings: generate prints its prompt and generation speeds
// and time to first token on stderr, and with --json in a "timings"
// object: counts as the run's (the prompt's tokens, the tokens generated,
// one decode step fewer), times positive, the speeds their quotients, the
// first token no sooner than the prompt's pass; nothing generated, no
// first token and no decode speed.
func TestGenerateTimings(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		maxTokens, generated int
	}{{5, 5}, {1, 1}, {0, 0}} {
		var out, errb bytes.Buffer
		args := []string{"generate", "--model", dir, "--prompt-ids", "9707,11,1879", "--max-tokens", strconv.Itoa(tc.maxTokens), "--ignore-eos", "--json"}
		if err := run(context.Background(), args, &stdio{in: strings.NewReader(""), out: &out, err: &errb}); err != nil {
			t.Fatal(err)
		}
		var res struct{ Timings generateTimings }
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		tm := res.Timings
		steps := max(tc.generated-1, 0)
		quotient := func(n int, ms, perSecond float64) bool {
			return n == 0 && perSecond == 0 || ms > 0 && math.Abs(perSecond-float64(n)/ms*1e3) <= 1e-9*perSecond
		}
		if tm.PromptTokens != 3 || tm.GeneratedTokens != tc.generated || tm.DecodeSteps != steps ||
			!(tm.PromptMS > 0) || !quotient(3, tm.PromptMS, tm.PromptTokensPerSecond) ||
			(tc.generated > 0) != (tm.TimeToFirstTokenMS >= tm.PromptMS) || tc.generated == 0 && tm.TimeToFirstTokenMS != 0 ||
			(steps > 0) != (tm.DecodeMS > 0) || !quotient(steps, tm.DecodeMS, tm.DecodeTokensPerSecond) {
			t.Errorf("--max-tokens %d: timings %+v", tc.maxTokens, tm)
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "prompt:") || !strings.Contains(lines[0], " 3 tokens in ") ||
			!strings.Contains(lines[0], "time to first token") ||
			!strings.HasPrefix(lines[1], "generation:") || !strings.Contains(lines[1], fmt.Sprintf(" %d tokens, %d decode steps in ", tc.generated, steps)) {
			t.Errorf("--max-tokens %d: stderr %q", tc.maxTokens, errb.String())
		}
	}
}
