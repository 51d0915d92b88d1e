package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/splash-inference/splash/actors"
	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/grammar"
	"github.com/splash-inference/splash/engine/stop"
	api "github.com/splash-inference/splash/http"
	"github.com/splash-inference/splash/tokenizer"
)

// engineAdapter serves the HTTP layer's Engine interface with the actor
// runtime: one actors request per choice, their events merged.
type engineAdapter struct {
	e     *actors.Engine
	tok   *tokenizer.Tokenizer
	eos   []int32
	vocab *grammar.Vocab // the model's tokens as bytes, for constrained decoding
}

// grammarVocab lists every token's bytes for constrained decoding; special
// tokens and ids past the tokenizer are never allowed, EOS only at the end.
func grammarVocab(tok *tokenizer.Tokenizer, modelVocab int, eos []int32) (*grammar.Vocab, error) {
	tokens := make([][]byte, modelVocab)
	for id := range tokens {
		if id < tok.VocabSize() && !tok.IsSpecial(int32(id)) {
			tokens[id] = tok.TokenBytes(int32(id))
		}
	}
	var ends []int
	for _, id := range eos {
		if int(id) < modelVocab {
			ends = append(ends, int(id))
		}
	}
	return grammar.NewVocab(tokens, ends)
}

var _ api.Engine = (*engineAdapter)(nil)

func (a *engineAdapter) WriteMetrics(w io.Writer) error {
	a.e.WriteMetrics(w)
	return nil
}

func (a *engineAdapter) Generate(ctx context.Context, req *actors.Request) (<-chan api.Event, error) {
	n := req.Choices()
	ctx, cancel := context.WithCancel(ctx)
	streams := make([]<-chan actors.Event, n)
	for i := range streams {
		gr, err := a.request(req, i)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("%w: %v", api.ErrInvalidRequest, err)
		}
		ch, err := a.e.Generate(ctx, gr)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("%w: %v", api.ErrInvalidRequest, err)
		}
		streams[i] = ch
	}
	out := make(chan api.Event, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards usage and failed
	var usage api.Usage
	var failed error
	for i, ch := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			thinking := a.newReasoningCounter(req.Prompt)
			reasoning := 0
			for ev := range ch {
				if ev.Err != nil {
					mu.Lock()
					if failed == nil {
						failed = ev.Err
					}
					mu.Unlock()
					cancel()
					continue
				}
				reasoning += thinking.count(ev.Tokens)
				e := api.Event{Choice: i, Text: ev.Text, Tokens: ev.Tokens, Logprobs: a.logprobs(ev.Logprobs)}
				if first && req.PromptLogprobs {
					e.PromptLogprobs = a.logprobs(ev.PromptLogprobs)
				}
				if first {
					e.CachedPromptTokens = ev.CachedTokens
				}
				first = false
				switch ev.Finish {
				case stop.Stop:
					e.FinishReason = api.FinishStop
				case stop.Length:
					e.FinishReason = api.FinishLength
				}
				if ev.Finish != stop.None {
					mu.Lock()
					usage.PromptTokens = ev.Usage.PromptTokens
					usage.CompletionTokens += ev.Usage.CompletionTokens
					usage.CachedPromptTokens = max(usage.CachedPromptTokens, ev.Usage.CachedTokens)
					usage.ReasoningTokens += reasoning
					mu.Unlock()
					if ev.Finish == stop.Cancelled {
						continue
					}
				}
				select {
				case out <- e:
				case <-ctx.Done():
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		last := api.Event{Done: true, Usage: &usage}
		if failed != nil {
			last = api.Event{Err: failed}
		}
		select {
		case out <- last:
		case <-ctx.Done():
		}
		close(out)
		cancel()
	}()
	return out, nil
}

// request turns choice i of an HTTP request into one sequence's request
// with its mask. A constrained output gets max_tokens as its budget, so that
// it ends as a whole document; a budget smaller than the shortest document
// is an error.
func (a *engineAdapter) request(req *actors.Request, i int) (actors.GenerateRequest, error) {
	gr := req.Sequence(i, a.eos)
	switch {
	case req.Grammar != nil:
		c := grammar.NewConstraint(a.vocab, req.Grammar)
		if err := limit(c, req.MaxTokens); err != nil {
			return gr, err
		}
		gr.Mask = c
	case req.ToolGrammar != nil:
		// the Qwen/Hermes call markup, which http parses back into tool_calls
		var w *grammar.Wrapped
		if req.ParallelToolCalls {
			w = grammar.NewWrappedRepeat(a.vocab, req.ToolGrammar, "<tool_call>\n", "\n</tool_call>", "\n")
		} else {
			w = grammar.NewWrapped(a.vocab, req.ToolGrammar, "<tool_call>\n", "\n</tool_call>")
		}
		if err := limit(w, req.MaxTokens); err != nil {
			return gr, err
		}
		gr.Mask = w
	case req.ThinkingBudget > 0:
		open, ok1 := a.tok.TokenID("<think>")
		end, ok2 := a.tok.TokenID("</think>")
		if ok1 && ok2 {
			gr.Mask = &engine.ThinkBudget{Open: open, Close: end, Budget: req.ThinkingBudget,
				InThink: a.opensThink(req.Prompt, open)}
		}
	}
	return gr, nil
}

// limit gives a constrained output its budget; 0 is no limit.
func limit(c interface{ Limit(int) error }, maxTokens int) error {
	if maxTokens <= 0 {
		return nil
	}
	return c.Limit(maxTokens)
}

// opensThink reports whether the prompt ends inside a reasoning block the
// template opened: open is its last token or is followed only by
// whitespace (Qwen3-Thinking-2507 and DeepSeek-R1 end the prompt with
// "<think>\n"), the rule the HTTP layer splits the output by.
func (a *engineAdapter) opensThink(prompt []int32, open int32) bool {
	for i := len(prompt) - 1; i >= 0; i-- {
		if prompt[i] == open {
			return true
		}
		if strings.TrimRight(a.tok.Decode(prompt[i:i+1], false), " \t\r\n") != "" {
			return false
		}
	}
	return false
}

// reasoningCounter counts a choice's reasoning tokens for usage: those of
// the <think> block its output starts with (or its prompt opened), both
// tags included, as the HTTP layer splits reasoning from the answer.
type reasoningCounter struct {
	a           *engineAdapter
	open, close int32
	phase       reasoningPhase
}

type reasoningPhase int

const (
	beforeReasoning reasoningPhase = iota // only whitespace so far: <think> may open
	inReasoning
	afterReasoning // the block closed, or the answer began without one
)

func (a *engineAdapter) newReasoningCounter(prompt []int32) *reasoningCounter {
	open, ok1 := a.tok.TokenID("<think>")
	end, ok2 := a.tok.TokenID("</think>")
	c := &reasoningCounter{a: a, open: open, close: end, phase: afterReasoning}
	switch {
	case !ok1 || !ok2:
	case a.opensThink(prompt, open):
		c.phase = inReasoning
	default:
		c.phase = beforeReasoning
	}
	return c
}

// count takes a choice's next tokens and returns how many are reasoning.
func (c *reasoningCounter) count(tokens []int32) int {
	n := 0
	for _, t := range tokens {
		switch c.phase {
		case beforeReasoning:
			if t == c.open {
				c.phase = inReasoning
				n++
			} else if strings.TrimRight(c.a.tok.Decode([]int32{t}, false), " \t\r\n") != "" {
				c.phase = afterReasoning
			}
		case inReasoning:
			n++
			if t == c.close {
				c.phase = afterReasoning
			}
		}
	}
	return n
}

func (a *engineAdapter) logprobs(in []actors.TokenLogprobs) []api.TokenLogprob {
	if len(in) == 0 {
		return nil
	}
	out := make([]api.TokenLogprob, len(in))
	for i, t := range in {
		tl := api.TokenLogprob{ID: t.Token, Token: a.tok.Decode([]int32{t.Token}, false), Logprob: float64(t.Logprob)}
		for _, alt := range t.Top {
			tl.Top = append(tl.Top, api.TopLogprob{ID: alt.Token, Token: a.tok.Decode([]int32{alt.Token}, false), Logprob: float64(alt.Logprob)})
		}
		out[i] = tl
	}
	return out
}
