package engine

import "math"

// ThinkBudget caps the tokens a request spends reasoning: once Budget tokens
// have followed the Open token (<think>), only the Close token (</think>)
// may come next, so the model closes its reasoning and goes on with the
// answer. It is a token mask for the actor runtime's hook (Mask before each
// sampled position, Accept for each kept token). Not safe for concurrent use.
type ThinkBudget struct {
	Open, Close int32
	Budget      int
	// InThink is true when the prompt already ends inside a reasoning block
	// (the template opened it).
	InThink bool

	used   int
	closed bool
}

// Mask forces Close once the budget is spent inside a reasoning block.
func (b *ThinkBudget) Mask(logits []float32) {
	if !b.InThink || b.closed || b.used < b.Budget || int(b.Close) >= len(logits) {
		return
	}
	for i := range logits {
		if int32(i) != b.Close {
			logits[i] = float32(math.Inf(-1))
		}
	}
}

// Accept records a kept token.
func (b *ThinkBudget) Accept(tok int32) {
	switch {
	case b.closed:
	case tok == b.Close:
		b.closed = true
	case tok == b.Open && !b.InThink:
		b.InThink = true
	case b.InThink:
		b.used++
	}
}
