package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
)

// The reasoning budget end to end: HTTP request → reasoning effort or
// budget_tokens → engine token mask → the real model's output. A random
// model almost never writes <think> or </think> itself, so the test serves
// it with a chat template whose generation prompt opens the reasoning
// block (as Qwen3-Thinking-2507's and DeepSeek-R1's do): the output then
// starts inside <think>, and only the budget mask can end it. The usage's
// reasoning_tokens, which the engine adapter counts, is checked on the way.

// minimalBudget is the thinking budget of reasoning_effort "minimal"
// (api/reasoning.go).
const minimalBudget = 256

// thinkingTemplateModel writes the tiny Qwen3 test model with its chat
// template's assistant header followed by opening, which then starts every
// answer while thinking is enabled.
func thinkingTemplateModel(t *testing.T, opening string) string {
	t.Helper()
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tokenizer_config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	tpl, _ := cfg["chat_template"].(string)
	const header = `{{- '<|im_start|>assistant\n' }}`
	if strings.Count(tpl, header) != 1 {
		t.Fatalf("the Qwen3 template no longer has one %s", header)
	}
	jinjaOpening := strings.ReplaceAll(opening, "\n", `\n`)
	cfg["chat_template"] = strings.Replace(tpl, header,
		header+`{%- if not (enable_thinking is defined and enable_thinking is false) %}{{- '`+jinjaOpening+`' }}{%- endif %}`, 1)
	if raw, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// postJSON posts body and decodes the 200 answer into out.
func postJSON(t *testing.T, url, body string, out any) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: status %d: %s", url, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("POST %s: %v: %s", url, err, b)
	}
}

// chatAnswer is the part of a chat completion the budget test reads.
type chatAnswer struct {
	Choices []struct {
		Message struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"message"`
		Logprobs struct {
			Content []struct {
				Token   string  `json:"token"`
				Logprob float64 `json:"logprob"`
			} `json:"content"`
		} `json:"logprobs"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
}

// closeAt is the position of the first </think> among the tokens, or -1.
func (a chatAnswer) closeAt() (int, float64) {
	for i, lp := range a.Choices[0].Logprobs.Content {
		if lp.Token == "</think>" {
			return i, lp.Logprob
		}
	}
	return -1, 0
}

func TestThinkingBudgetEndToEnd(t *testing.T) {
	for _, tt := range []struct {
		name, opening string
		control       bool // also run without a budget
		anthropic     bool // also check thinking.budget_tokens on /v1/messages
	}{
		{"prompt ends with <think>", "<think>", false, true},
		{"prompt ends with <think> and a newline", "<think>\n", true, false}, // Qwen3-Thinking-2507, DeepSeek-R1
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr, _, stop := startServe(t, "--model", thinkingTemplateModel(t, tt.opening))
			defer func() {
				if err := stop(); err != nil {
					t.Errorf("shutdown: %v", err)
				}
			}()
			base := "http://" + addr
			const maxTokens = minimalBudget + 40
			chat := func(effort string) chatAnswer {
				var a chatAnswer
				postJSON(t, base+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Why is the sky blue?"}],`+
					`"max_tokens":`+strconv.Itoa(maxTokens)+`,"ignore_eos":true,"temperature":0,"logprobs":true`+effort+`}`, &a)
				if len(a.Choices) != 1 || len(a.Choices[0].Logprobs.Content) != maxTokens {
					t.Fatalf("want one choice of %d tokens with logprobs: %+v", maxTokens, a)
				}
				return a
			}

			capped := chat(`,"reasoning_effort":"minimal"`)
			i, lp := capped.closeAt()
			if i != minimalBudget || lp != 0 {
				t.Fatalf("reasoning_effort minimal: </think> at token %d with logprob %v; want the engine to force it (logprob 0) after %d reasoning tokens",
					i, lp, minimalBudget)
			}
			// The block's tokens, both tags included: the prompt's <think>
			// is not a completion token, the forced </think> is.
			if got := capped.Usage.CompletionTokensDetails.ReasoningTokens; got != minimalBudget+1 {
				t.Errorf("usage reasoning_tokens %d, want %d", got, minimalBudget+1)
			}
			msg := capped.Choices[0].Message
			if msg.ReasoningContent == "" || msg.Content == "" || strings.Contains(msg.Content, "</think>") {
				t.Errorf("after the budget the answer goes to content: reasoning %q, content %q", msg.ReasoningContent, msg.Content)
			}
			if tt.control {
				// With no cap the model never leaves the block, so the close
				// comes from the budget; before it the mask changes nothing.
				free := chat("")
				if i, _ := free.closeAt(); i >= 0 || free.Choices[0].Message.Content != "" || free.Choices[0].Message.ReasoningContent == "" {
					t.Fatalf("without a budget: </think> at %d, content %q; the control needs a model that keeps reasoning",
						i, free.Choices[0].Message.Content)
				}
				if got := free.Usage.CompletionTokensDetails.ReasoningTokens; got != maxTokens {
					t.Errorf("without a budget: usage reasoning_tokens %d, want all %d", got, maxTokens)
				}
				for k := range minimalBudget {
					if free.Choices[0].Logprobs.Content[k].Token != capped.Choices[0].Logprobs.Content[k].Token {
						t.Fatalf("token %d differs with and without the budget", k)
					}
				}
			}
			if !tt.anthropic {
				return
			}

			// Anthropic thinking.budget_tokens: the thinking block is closed
			// after the budget and a text block follows.
			var m struct {
				Content []struct {
					Type     string `json:"type"`
					Thinking string `json:"thinking"`
					Text     string `json:"text"`
				} `json:"content"`
				StopReason string `json:"stop_reason"`
				Usage      struct {
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			}
			postJSON(t, base+"/v1/messages", `{"max_tokens":1030,"temperature":0,"thinking":{"type":"enabled","budget_tokens":1024},`+
				`"messages":[{"role":"user","content":"Why is the sky blue?"}]}`, &m)
			if len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[0].Thinking == "" || m.Content[1].Type != "text" || m.Content[1].Text == "" {
				t.Fatalf("budget_tokens 1024: want a thinking block then a text block, got %+v (stop %s, %d tokens)", m.Content, m.StopReason, m.Usage.OutputTokens)
			}
		})
	}
}
