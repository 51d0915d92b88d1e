package actorengine

import "strings"

// reasoningCounter counts a choice's reasoning tokens for usage: those of
// the <think> block its output starts with (or its prompt opened), both
// tags included, as the HTTP layer splits reasoning from the answer.
type reasoningCounter struct {
	a           *Engine
	open, close int32
	phase       reasoningPhase
}

type reasoningPhase int

const (
	beforeReasoning reasoningPhase = iota // only whitespace so far: <think> may open
	inReasoning
	afterReasoning // the block closed, or the answer began without one
)

func (a *Engine) newReasoningCounter(prompt []int32) *reasoningCounter {
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
