package main

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/model/testmodel"
)

// TestGenerateHybridMatchesReference: `splash generate --echo --logprobs 5
// --json` on random checkpoints of the three hybrid layouts (dense and
// mixture-of-experts, f32 and bf16 weights) with an f32 KV cache gives
// the float64 reference's logprobs (hybridref, written from transformers)
// within 1e-4 of the logits' range, for the prompt's tokens and 32
// greedily generated ones, each of which is the reference's most likely
// token up to that tolerance.
func TestGenerateHybridMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		arch string
		cfg  *model.Config
		d    metal.DType
	}{
		{"Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true), metal.F32},
		{"Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", false), metal.BF16},
		{"Qwen3NextForCausalLM", hybridref.Tiny("qwen3_next", false), metal.F32},
		{"Qwen3NextForCausalLM", hybridref.TinyMoE("qwen3_next"), metal.BF16},
		{"Qwen3_5MoeForConditionalGeneration", hybridref.TinyMoE("qwen3_5_moe"), metal.F32},
		{"Qwen3_5MoeForConditionalGeneration", hybridref.TinyMoE("qwen3_5_moe"), metal.BF16},
	} {
		t.Run(tc.cfg.Hybrid.ModelType+"/experts"+strconv.Itoa(tc.cfg.Hybrid.NumExperts)+"/"+tc.d.String(), func(t *testing.T) {
			dir := t.TempDir()
			w, err := hybridref.WriteCheckpoint(dir, tc.cfg, tc.arch, tc.d, 11)
			if err != nil {
				t.Fatal(err)
			}
			if err := testmodel.CopyTokenizer(dir, "qwen3"); err != nil {
				t.Fatal(err)
			}
			prompt := make([]string, 70) // past one of the delta rule's chunks
			for i := range prompt {
				prompt[i] = strconv.Itoa((i*37 + i*i) % tc.cfg.VocabSize)
			}
			const generated = 32
			out, err := runCmd(t, "generate", "--model", dir, "--prompt-ids", strings.Join(prompt, ","), "--max-tokens", strconv.Itoa(generated),
				"--echo", "--logprobs", "5", "--json", "--ignore-eos", "--kv-cache-type", "f32")
			if err != nil {
				t.Fatal(err)
			}
			res := parseGenerateJSON(t, out)
			if len(res.Tokens) != len(prompt)+generated {
				t.Fatalf("%d tokens, want %d", len(res.Tokens), len(prompt)+generated)
			}
			ids := make([]int32, len(res.Tokens))
			for i, tok := range res.Tokens {
				ids[i] = tok.ID
			}
			checkReferenceLogprobs(t, res, hybridref.Forward(tc.cfg, w, ids[:len(ids)-1], metal.KVF32), len(prompt), 5)
		})
	}
}

// checkReferenceLogprobs checks generate's --echo --logprobs top --json
// output against the reference's logits at each position but the last:
// every token's logprob and its alternatives' within 1e-4 of the logits'
// range, and each generated token (after the prompt's promptLen) the
// reference's most likely up to that tolerance.
func checkReferenceLogprobs(t *testing.T, res generateJSON, ref [][]float64, promptLen, top int) {
	t.Helper()
	ids := make([]int32, len(res.Tokens))
	for i, tok := range res.Tokens {
		ids[i] = tok.ID
	}
	for i := 1; i < len(ids); i++ {
		lse, scale := 0.0, 0.0
		logits := ref[i-1]
		best := 0
		for j, v := range logits {
			scale = math.Max(scale, math.Abs(v))
			if v > logits[best] {
				best = j
			}
		}
		for _, v := range logits {
			lse += math.Exp(v - logits[best])
		}
		lse = logits[best] + math.Log(lse)
		tol := 1e-4 * scale
		got := res.Tokens[i]
		if got.Logprob == nil || math.Abs(*got.Logprob-(logits[ids[i]]-lse)) > tol {
			t.Fatalf("position %d: logprob %v, reference %v", i, got.Logprob, logits[ids[i]]-lse)
		}
		if len(got.Top) != top {
			t.Fatalf("position %d: %d alternatives", i, len(got.Top))
		}
		for _, alt := range got.Top {
			if math.Abs(alt.Logprob-(logits[alt.ID]-lse)) > tol {
				t.Fatalf("position %d: alternative %d logprob %v, reference %v", i, alt.ID, alt.Logprob, logits[alt.ID]-lse)
			}
		}
		if i >= promptLen && logits[ids[i]] < logits[best]-tol {
			t.Fatalf("generated position %d: token %d (%v), the reference's best is %d (%v)", i, ids[i], logits[ids[i]], best, logits[best])
		}
	}
}

// TestServeHybrid: `splash serve` loads a hybrid checkpoint and its
// package, prints the memory plan with the state per sequence (and a spare
// each unless --spec off), answers a greedy prompt as `splash generate`
// does with speculation or without, and serves a resent long prompt from
// a state snapshot with the same answer.
func TestServeHybrid(t *testing.T) {
	src := t.TempDir()
	cfg := hybridref.TinyMoE("qwen3_5_moe")
	if _, err := hybridref.WriteCheckpoint(src, cfg, "Qwen3_5MoeForConditionalGeneration", metal.BF16, 12); err != nil {
		t.Fatal(err)
	}
	if err := testmodel.CopyTokenizer(src, "qwen3"); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(t.TempDir(), "pkg")
	if _, err := runCmd(t, "pack", src, pkg, "--quant", "bf16"); err != nil {
		t.Fatal(err)
	}
	ids := "1,5,9,80,3,3,17,42,11,60,2,7"
	for _, run := range []struct{ dir, spec string }{{src, "auto"}, {pkg, "ngram"}, {pkg, "off"}} {
		dir := run.dir
		out, err := runCmd(t, "generate", "--model", dir, "--prompt-ids", ids, "--max-tokens", "24", "--ignore-eos")
		if err != nil {
			t.Fatal(err)
		}
		addr, _, logs, stop := startServeLogs(t, "--model", dir, "--spec", run.spec)
		var resp struct {
			Choices []struct{ Text string }
		}
		postJSON(t, "http://"+addr+"/v1/completions", `{"prompt":[`+ids+`],"max_tokens":24,"temperature":0,"ignore_eos":true}`, &resp)
		// A resent 601-token prompt resumes from the state snapshot at its
		// last chunk boundary, 576.
		long := strings.Repeat(ids+",", 50) + "1"
		var first, again struct {
			Choices []struct{ Text string }
			Usage   struct {
				PromptTokensDetails struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			}
		}
		body := `{"prompt":[` + long + `],"max_tokens":8,"temperature":0,"ignore_eos":true}`
		postJSON(t, "http://"+addr+"/v1/completions", body, &first)
		postJSON(t, "http://"+addr+"/v1/completions", body, &again)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if c := again.Usage.PromptTokensDetails.CachedTokens; c != 576 || len(again.Choices) != 1 || len(first.Choices) != 1 || again.Choices[0].Text != first.Choices[0].Text {
			t.Errorf("%s: resent prompt: %d tokens cached (want 576), %+v against %+v", dir, c, again.Choices, first.Choices)
		}
		if len(resp.Choices) != 1 || resp.Choices[0].Text+"\n" != out {
			t.Fatalf("%s: generate: %q\nserve: %+v", dir, out, resp)
		}
		if !strings.Contains(logs.String(), "state per sequence") {
			t.Errorf("%s: the memory plan shows no state:\n%s", dir, logs.String())
		}
		if spares := strings.Contains(logs.String(), "a spare each"); spares != (run.spec != "off") {
			t.Errorf("%s --spec %s: spare state slots in the plan %v:\n%s", dir, run.spec, spares, logs.String())
		}
	}
}
