package main

import (
	"encoding/base64"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/tokenizer"
)

// TestServeChatImageMatchesGenerate: a chat request with an image, served
// by a model with a vision tower, tokenizes (/tokenize) to the text's
// tokens around the image's vision start, pads and vision end, as the
// tokenizer reads /apply-template's prompt with those tokens spelled out,
// answers
// with the greedy tokens and logprobs `splash generate --image` gives
// for those ids, and, resent, is served from the prefix cache past the
// image.
func TestServeChatImageMatchesGenerate(t *testing.T) {
	// TinyVL over the Qwen3 tokenizer's whole vocabulary, so that the chat
	// template's tokens are in it, with its image tokens
	cfg := hybridref.TinyVL(true)
	cfg.VocabSize = 151936
	v := cfg.Vision
	v.ImageTokenID, v.VisionStartTokenID, v.VisionEndTokenID = 151655, 151652, 151653
	dir := t.TempDir()
	writeVLCheckpoint(t, dir, cfg)
	path := writePNG(t, dir, 12, 8, 3) // a 4×6 patch grid: 2×3 = 6 image tokens
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const generated = 6
	messages := `"messages":[{"role":"user","content":[{"type":"text","text":"look at this: "},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(data) + `"}},` +
		`{"type":"text","text":"` + strings.Repeat(" and say what you see there.", 100) + `"}]}],"reasoning_effort":"none"`

	addr, _, _, stop := startServeLogs(t, "--model", dir, "--kv-cache-type", "f32")
	url := "http://" + addr
	var tok struct{ Tokens []int32 }
	postJSON(t, url+"/tokenize", "{"+messages+"}", &tok)
	start := slices.Index(tok.Tokens, int32(v.VisionStartTokenID))
	wantRun := append(append([]int32{int32(v.VisionStartTokenID)}, slices.Repeat([]int32{int32(v.ImageTokenID)}, 6)...), int32(v.VisionEndTokenID))
	if start < 0 || start+len(wantRun) > len(tok.Tokens) || !slices.Equal(tok.Tokens[start:start+len(wantRun)], wantRun) {
		t.Fatalf("/tokenize: %v, want vision start, 6 pads and vision end", tok.Tokens)
	}
	// as the tokenizer reads the rendered prompt, image tokens spelled out
	// (what generate --prompt makes of <image>)
	var rendered struct{ Prompt string }
	postJSON(t, url+"/apply-template", "{"+messages+"}", &rendered)
	tk, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ids := tk.Encode(rendered.Prompt, true); !slices.Equal(ids, tok.Tokens) {
		t.Fatalf("/apply-template's prompt encodes to %v\n/tokenize: %v", ids, tok.Tokens)
	}
	type chatAnswer struct {
		Choices []struct {
			Logprobs struct {
				Content []struct {
					Token   string
					Logprob float64
				}
			}
		}
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		}
	}
	body := "{" + messages + `,"max_tokens":` + strconv.Itoa(generated) + `,"temperature":0,"ignore_eos":true,"logprobs":true}`
	var first, again chatAnswer
	postJSON(t, url+"/v1/chat/completions", body, &first)
	postJSON(t, url+"/v1/chat/completions", body, &again)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	ids := slices.Concat(tok.Tokens[:start], []int32{-1}, tok.Tokens[start+len(wantRun):])
	idText := make([]string, len(ids))
	for i, id := range ids {
		idText[i] = strconv.Itoa(int(id))
	}
	out, err := runCmd(t, "generate", "--model", dir, "--prompt-ids", strings.Join(idText, ","), "--image", path,
		"--max-tokens", strconv.Itoa(generated), "--logprobs", "0", "--json", "--ignore-eos", "--kv-cache-type", "f32")
	if err != nil {
		t.Fatal(err)
	}
	gen := parseGenerateJSON(t, out)
	for _, answer := range []chatAnswer{first, again} {
		if answer.Usage.PromptTokens != len(tok.Tokens) {
			t.Errorf("prompt_tokens %d, /tokenize counted %d", answer.Usage.PromptTokens, len(tok.Tokens))
		}
		if len(answer.Choices) != 1 || len(answer.Choices[0].Logprobs.Content) != generated || len(gen.Tokens) != generated {
			t.Fatalf("chat %+v\ngenerate %s", answer, out)
		}
		for i, lp := range answer.Choices[0].Logprobs.Content {
			g := gen.Tokens[i]
			if text := tk.Decode([]int32{g.ID}, false); lp.Token != text || g.Logprob == nil || math.Abs(lp.Logprob-*g.Logprob) > 1e-4 {
				t.Fatalf("token %d: chat %q %v, generate %q %v", i, lp.Token, lp.Logprob, text, g.Logprob)
			}
		}
	}
	t.Logf("prompt %d tokens, image at %d, cached on resend %d", len(tok.Tokens), start, again.Usage.PromptTokensDetails.CachedTokens)
	// the hybrid model resumes the resent prompt from a state snapshot at
	// a chunk boundary, past the image
	if c := again.Usage.PromptTokensDetails.CachedTokens; first.Usage.PromptTokensDetails.CachedTokens != 0 || c <= start+len(wantRun) {
		t.Errorf("cached_tokens %d then %d, want 0 then past the image's end at %d", first.Usage.PromptTokensDetails.CachedTokens, c, start+len(wantRun))
	}
}
