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
// tokens has n-1 decode steps (fewer with speculation: finish counts the
// engine's), and its speed is theirs.
type generateTimings struct {
	PromptTokens          int     `json:"prompt_tokens"`
	PromptMS              float64 `json:"prompt_ms"`
	PromptTokensPerSecond float64 `json:"prompt_tokens_per_second"`
	TimeToFirstTokenMS    float64 `json:"time_to_first_token_ms"` // 0 when nothing was generated
	GeneratedTokens       int     `json:"generated_tokens"`
	DecodeSteps           int     `json:"decode_steps"`
	DecodeMS              float64 `json:"decode_ms"`
	DecodeTokensPerSecond float64 `json:"decode_tokens_per_second"` // tokens after the first a second
	// Speculation is set when a --spec mode other than off generated.
	Speculation *specSummary `json:"speculation,omitempty"`
}

// specSummary is what speculation did over a generation's decode steps
// (the engine's steps after the prompt's pass): the draft tokens proposed
// and accepted, and the mean accepted length, the tokens a step gave on
// average (its accepted proposals and the target's own token), as DFlash
// and vLLM count it: 1 is no gain.
type specSummary struct {
	Steps              int     `json:"steps"`
	Proposed           int     `json:"proposed"`
	Accepted           int     `json:"accepted"`
	MeanAcceptedLength float64 `json:"mean_accepted_length"`
}

// summarize is trace's specSummary; nil for no steps.
func summarize(trace []specStepOut) *specSummary {
	if len(trace) == 0 {
		return nil
	}
	s := &specSummary{Steps: len(trace)}
	for _, st := range trace {
		s.Proposed += len(st.Proposed)
		s.Accepted += st.Accepted
	}
	s.MeanAcceptedLength = float64(s.Steps+s.Accepted) / float64(s.Steps)
	return s
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
		t.DecodeTokensPerSecond = perSecond(c.generated-1, t.DecodeMS)
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
	if s := t.Speculation; s != nil {
		fmt.Fprintf(w, "speculation: %d of %d draft tokens accepted, mean accepted length %.2f tokens per decode step\n",
			s.Accepted, s.Proposed, s.MeanAcceptedLength)
	}
}
