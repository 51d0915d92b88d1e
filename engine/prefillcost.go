package engine

import "math"

// prefillBudget is what a step has left for prompt chunks: tokens, of
// Config.MaxBatchTokens after the decode rows, and, when the step decodes
// and Config.MaxPrefillWithDecode is set, cost in that cap's units.
//
// A chunk's cost is its tokens at the start of a prompt, where a token is
// its matrix products; further in, every token's attention reads every
// position before it, so with C = Config.AttentionBreakEven (the context at
// which a token's attention costs as much as its products) a chunk of n
// tokens from position c costs n·(1 + (c + n/2)/C). Charging that keeps the
// time a chunk holds the decoding streams up about the same however deep
// in its prompt it is (BenchmarkPrefillChunk0_6BQ4 measures how much
// deeper chunks cost). It is opt-in (splash serve
// --prefill-by-attention): the smaller, more numerous steps cost the agent
// workload throughput.
type prefillBudget struct {
	tokens    int
	capped    bool
	cost      float64 // left, when capped
	breakEven float64 // C; 0 charges n
	taken     bool    // a chunk has been charged
}

// prefillBudget starts a step's prompt allowance with tokens left of the
// batch, capped when the step carries decode rows.
func (s *Scheduler) prefillBudget(tokens int, decodes bool) prefillBudget {
	return s.cfg.prefillBudget(tokens, decodes)
}

func (c *Config) prefillBudget(tokens int, decodes bool) prefillBudget {
	pb := prefillBudget{tokens: tokens, breakEven: float64(c.AttentionBreakEven)}
	if decodes && c.MaxPrefillWithDecode > 0 {
		pb.capped, pb.cost = true, float64(c.MaxPrefillWithDecode)
	}
	return pb
}

// PrefillChunkAt is how many tokens of a prompt at position context one
// step takes while other sequences decode, when it is the only prompt.
func (c *Config) PrefillChunkAt(context int) int {
	pb := c.prefillBudget(c.MaxBatchTokens, true)
	return pb.chunk(context, c.MaxBatchTokens, prefillNeed{})
}

// spent reports whether no chunk fits any more.
func (pb *prefillBudget) spent() bool { return pb.tokens <= 0 || (pb.capped && pb.cost <= 0) }

// costOf is what n tokens from position start cost.
func (pb *prefillBudget) costOf(start, n int) float64 {
	if pb.breakEven <= 0 {
		return float64(n)
	}
	return float64(n) * (1 + (float64(start)+float64(n)/2)/pb.breakEven)
}

// prefillNeed is what prompts want of a step: tokens, and their cost.
type prefillNeed struct {
	tokens int
	cost   float64
}

// prefillWant is a running prompt's need, or with q nil the first
// waiting one's.
type prefillWant struct {
	q    *sequence
	need prefillNeed
}

// need is what n tokens from position start want.
func (pb *prefillBudget) need(start, n int) prefillNeed {
	return prefillNeed{n, pb.costOf(start, n)}
}

func (a prefillNeed) plus(b prefillNeed) prefillNeed {
	return prefillNeed{a.tokens + b.tokens, a.cost + b.cost}
}

// chunk is how many of want tokens from position start fit, after leaving
// aside what later prompts want, up to half of what is left. The step's
// first chunk has at least one token while any cost is left, so that a
// prompt deep enough that one token costs more than the whole cap still
// moves (a step overshoots the cap by at most one token); later ones stop
// where the cap does, rather than trickle in a token a step.
func (pb *prefillBudget) chunk(start, want int, later prefillNeed) int {
	tokens := pb.tokens - min(later.tokens, pb.tokens/2)
	cost := pb.cost - min(later.cost, pb.cost/2)
	n := min(want, tokens)
	if !pb.capped || n <= 0 {
		return max(n, 0)
	}
	a := pb.affordable(start, cost)
	if a == 0 && !pb.taken && pb.cost > 0 {
		a = 1
	}
	return min(n, a)
}

// affordable is the most tokens from position start that cost at most
// cost: the root of n²/2C + n·(1 + start/C) = cost, rounded down.
func (pb *prefillBudget) affordable(start int, cost float64) int {
	if cost <= 0 {
		return 0
	}
	if pb.breakEven <= 0 {
		return int(cost)
	}
	c, a := pb.breakEven, 1+float64(start)/pb.breakEven
	n := int(c * (math.Sqrt(a*a+2*cost/c) - a))
	for n > 0 && pb.costOf(start, n) > cost {
		n-- // the square root's rounding
	}
	for pb.costOf(start, n+1) <= cost {
		n++
	}
	return n
}

// take charges a chunk of n tokens from position start.
func (pb *prefillBudget) take(start, n int) {
	pb.taken = true
	pb.tokens -= n
	if pb.capped {
		pb.cost -= pb.costOf(start, n)
	}
}
