package engine

import (
	"fmt"
	"time"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
)

// StepResult is what the caller learned from running a plan: one RowResult
// per plan row, in order.
type StepResult struct {
	Rows []RowResult
	// Elapsed is the step's wall time, draft proposals and forward pass
	// (0: not timed). Steps of decode rows alone teach the scheduler what a
	// verified draft token costs (spec.StepCost).
	Elapsed time.Duration
}

// RowResult is one row's outcome.
type RowResult struct {
	// Tokens: for a decode row, the accepted draft tokens followed by the
	// target's own next token (1 to 1+len(Draft) tokens, the first n−1 equal
	// to Draft[:n−1]); for a prefill row with CompletesSequence, the one
	// sampled next token; for other prefill rows, none.
	Tokens []int32
	// Logprobs, filled by Decider when the request asks for them: one per
	// token of Tokens. Update does not read them.
	Logprobs []TokenLogprobs
	// PromptLogprobs, filled by Decider for rows with prompt logits: the
	// raw logprob of each prompt token the row's positions predict, in
	// order, with the request's Logprobs most likely alternatives (none
	// when it asks for none).
	PromptLogprobs []TokenLogprobs
}

// TokenLogprobs is one emitted token's raw logprob and the most likely
// alternatives at its position.
type TokenLogprobs struct {
	Logprob float32
	Top     []sample.TokenLogprob
}

// Output reports one sequence's progress in a step.
type Output struct {
	ID     uint64
	Tokens []int32 // new tokens; read-only, valid indefinitely
	Reason stop.Reason
	// Drafted and Accepted count a verify row's draft tokens and how many
	// were kept, for a proposer run by the caller (spec.Observer).
	Drafted, Accepted int
	// CachedTokens, on a sequence's first Output, counts its prompt tokens
	// the prefix cache served (usage's cached_tokens).
	CachedTokens int
}

// Finished reports whether the sequence ended in this step.
func (o *Output) Finished() bool { return o.Reason != stop.None }

// Update applies a step's result to the plan it was scheduled from: it
// advances each sequence's computed count, appends accepted tokens, checks
// stop conditions, rolls back the KV positions of rejected drafts, commits
// full blocks to the prefix index and frees finished sequences. It returns
// one Output per sequence that gained tokens or finished, valid until the
// next Update. Rows of sequences cancelled since Schedule are ignored.
// A malformed result changes nothing and returns an error.
func (s *Scheduler) Update(p *Plan, res StepResult) ([]Output, error) {
	if p != &s.plan || p.step != s.step {
		return nil, fmt.Errorf("engine: Update with a plan that is not the outstanding one")
	}
	if len(res.Rows) != len(p.Rows) {
		return nil, fmt.Errorf("engine: result has %d rows, plan %d", len(res.Rows), len(p.Rows))
	}
	for i := range p.Rows {
		if p.Rows[i].seq.state == Finished {
			continue // cancelled since Schedule: its result is ignored
		}
		if err := checkRow(&p.Rows[i], res.Rows[i].Tokens); err != nil {
			return nil, fmt.Errorf("engine: row %d (sequence %d): %w", i, p.Rows[i].Seq, err)
		}
	}
	if res.Elapsed > 0 && p.onlyDecodeRows() {
		s.cost.Observe(p.NumTokens(), res.Elapsed.Seconds())
	}
	s.outs = s.outs[:0]
	for i := range p.Rows {
		r := &p.Rows[i]
		q := r.seq
		if q.state == Finished {
			continue // cancelled while the step ran; its blocks are already free
		}
		toks := res.Rows[i].Tokens
		switch r.Kind {
		case PrefillRow:
			q.computed += len(r.Tokens)
			if r.PromptLogits {
				q.promptDone = q.computed
			}
			if q.computed >= q.promptLen {
				q.wantPrompt = false
			}
		case DecodeRow:
			accepted := len(toks) - 1
			q.computed = r.Start + len(r.Tokens) + accepted
			q.draftK.Observe(len(r.Draft), accepted)
			s.peers.Observe(len(r.Draft), accepted)
			if o, ok := s.proposer.(spec.Observer); ok && len(r.Draft) > 0 {
				o.Observe(q.id, len(r.Draft), accepted)
			}
		}
		written := r.Start + len(r.Tokens) + len(r.Draft)
		kept, err := s.kv.Settle(&q.blocks, r.saved(), written, q.computed)
		if err != nil {
			return nil, fmt.Errorf("engine: %w", err) // Update commits only computed tokens, and verify rows save the state: a bug
		}
		q.computed = kept
		if end := r.Start + len(r.Tokens); r.Kind == PrefillRow && end <= q.promptLen {
			// A prompt chunk's end: the state there is any sequence's with
			// the same prefix (chunks are cut at Config.StateChunk), so it
			// may be kept for prefix hits.
			if err := s.kv.Commit(&q.blocks, q.cacheKeys(), s.committable(q)); err != nil {
				return nil, fmt.Errorf("engine: %w", err)
			}
			s.kv.Snapshot(&q.blocks, end, end == s.lastCut(q))
		}
		if q.warm {
			if q.computed >= q.promptLen {
				s.finish(q, stop.Length) // its state is kept; nobody waits for tokens
			}
			continue
		}
		s.appendTokens(q, toks)
		if n := len(s.outs); r.Kind == DecodeRow && n > 0 && s.outs[n-1].ID == q.id {
			s.outs[n-1].Drafted, s.outs[n-1].Accepted = len(r.Draft), len(toks)-1
		}
	}
	s.plan.step = 0 // consumed
	return s.outs, nil
}

// checkRow validates a row's result against its plan row.
func checkRow(r *PlanRow, toks []int32) error {
	switch {
	case r.Kind == PrefillRow && r.CompletesSequence && len(toks) != 1:
		return fmt.Errorf("a completing prefill row needs 1 token, got %d", len(toks))
	case r.Kind == PrefillRow && !r.CompletesSequence && len(toks) != 0:
		return fmt.Errorf("a prefill chunk takes no tokens, got %d", len(toks))
	case r.Kind == DecodeRow && (len(toks) < 1 || len(toks) > 1+len(r.Draft)):
		return fmt.Errorf("a decode row with %d drafts needs 1 to %d tokens, got %d", len(r.Draft), 1+len(r.Draft), len(toks))
	}
	if r.Kind == DecodeRow {
		for j := 0; j < len(toks)-1; j++ {
			if toks[j] != r.Draft[j] {
				return fmt.Errorf("accepted token %d at %d differs from draft token %d", toks[j], j, r.Draft[j])
			}
		}
	}
	return nil
}

// appendTokens adds generated tokens up to the first that ends q, commits
// computed blocks and records the output.
func (s *Scheduler) appendTokens(q *sequence, toks []int32) {
	start := len(q.tokens)
	reason := stop.None
	for _, t := range toks {
		q.tokens = append(q.tokens, t)
		if q.keys != nil {
			q.keys = append(q.keys, t)
		}
		if reason = q.cond.Check(t, q.generated(), len(q.tokens)); reason != stop.None {
			break
		}
	}
	// A stop among accepted drafts drops the tokens after it, whose
	// positions were computed: they no longer count.
	q.computed = min(q.computed, len(q.tokens))
	if err := s.kv.Commit(&q.blocks, q.cacheKeys(), s.committable(q)); err != nil {
		panic(err) // computed never exceeds the tokens
	}
	end := len(q.tokens)
	if end == start && reason == stop.None {
		return
	}
	out := Output{ID: q.id, Tokens: q.tokens[start:end:end], Reason: reason}
	if !q.reported {
		out.CachedTokens, q.reported = max(q.cachedPrompt, 0), true
	}
	s.outs = append(s.outs, out)
	if reason != stop.None {
		s.finish(q, reason)
	}
}

// committable is how many of q's computed positions may go to the prefix
// index: all of them, except for a model with state layers whose results
// depend on how its calls split a sequence (Config.StateChunk), where only
// those up to the prompt's last chunk boundary (lastCut) hold the keys and
// values that any prompt with those tokens computes; the rest (the
// prompt's last partial chunk, decoded tokens) would hand a later prefix
// hit other bits than a cold run's. A warming sequence's prompt ends at a
// chunk boundary, so its answer's blocks are indexed as a prompt's.
func (s *Scheduler) committable(q *sequence) int {
	if s.cfg.StateSlots > 0 && s.cfg.StateChunk > 0 {
		return min(q.computed, s.lastCut(q))
	}
	return q.computed
}
