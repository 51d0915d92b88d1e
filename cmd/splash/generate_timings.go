package main

import (
	"fmt"
	"io"
	"time"
)

// generateTimings are a generation's speeds, as llama-cli prints its own:
// the prompt's pass, the time to the first generated token, and the decode
// steps after it. The clock starts as the prompt's pass does (the model
// loaded, the prompt tokenized). The first generated token comes from the
// prompt's pass; each one after it is a decode step, so a generation of n
// tokens has n-1 decode steps, and its speed is theirs.
type generateTimings struct {
	PromptTokens          int     `json:"prompt_tokens"`
	PromptMS              float64 `json:"prompt_ms"`
	PromptTokensPerSecond float64 `json:"prompt_tokens_per_second"`
	TimeToFirstTokenMS    float64 `json:"time_to_first_token_ms"` // 0 when nothing was generated
	GeneratedTokens       int     `json:"generated_tokens"`
	DecodeSteps           int     `json:"decode_steps"`
	DecodeMS              float64 `json:"decode_ms"`
	DecodeTokensPerSecond float64 `json:"decode_tokens_per_second"` // decode steps a second
}

// generateClock measures a generation for generateTimings.
type generateClock struct {
	start, promptDone, first, last time.Time
	prompt, generated              int
}

// startPrompt starts the clock on a prompt of n tokens; prompted stops
// its pass.
func (c *generateClock) startPrompt(n int) { c.start, c.prompt = time.Now(), n }
func (c *generateClock) prompted()         { c.promptDone = time.Now() }

// token counts a generated token, as it is emitted.
func (c *generateClock) token() {
	c.last = time.Now()
	if c.generated == 0 {
		c.first = c.last
	}
	c.generated++
}

// timings are the clock's readings.
func (c *generateClock) timings() generateTimings {
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	perSecond := func(n int, ms float64) float64 {
		if n == 0 || ms <= 0 {
			return 0
		}
		return float64(n) / ms * 1e3
	}
	t := generateTimings{PromptTokens: c.prompt, PromptMS: ms(c.promptDone.Sub(c.start)), GeneratedTokens: c.generated}
	t.PromptTokensPerSecond = perSecond(t.PromptTokens, t.PromptMS)
	if c.generated > 0 {
		t.TimeToFirstTokenMS = ms(c.first.Sub(c.start))
		t.DecodeSteps, t.DecodeMS = c.generated-1, ms(c.last.Sub(c.first))
		t.DecodeTokensPerSecond = perSecond(t.DecodeSteps, t.DecodeMS)
	}
	return t
}

// write prints the timings on w, a line for the prompt and one for the
// generated tokens.
func (t generateTimings) write(w io.Writer) {
	fmt.Fprintf(w, "prompt:     %d tokens in %.2f ms, %.2f tokens/s; time to first token %.2f ms\n",
		t.PromptTokens, t.PromptMS, t.PromptTokensPerSecond, t.TimeToFirstTokenMS)
	fmt.Fprintf(w, "generation: %6d tokens, %d decode steps in %.2f ms, %.2f tokens/s\n",
		t.GeneratedTokens, t.DecodeSteps, t.DecodeMS, t.DecodeTokensPerSecond)
}
