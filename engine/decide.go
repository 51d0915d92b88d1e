package engine

import (
	"fmt"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
)

// Decider turns the target model's logits for a plan into a StepResult:
// it samples each completing row's next token and runs speculative
// acceptance on verify rows, greedy or by rejection sampling according to
// each sequence's sampler, and fills in the logprobs requests ask for.
// Drafts are treated as deterministic proposals (q one-hot), which is what
// spec.Ngram and spec.DraftModel give. It keeps scratch between steps; it
// is not safe for concurrent use.
type Decider struct {
	Vocab int

	probs, residual []float32
	toks            []int32
	lps             []TokenLogprobs
	top             []sample.TokenLogprob
	prompt          []float32
	rows            []RowResult
}

// Decide fills a StepResult for p from logits (p.Batch's NumLogits vectors
// of Vocab floats, in row order). samplerOf returns each sequence's sampler,
// which records every token it emits for its penalties, or nil for a
// sequence cancelled since Schedule, whose row is then left empty. The
// result is valid until the next call.
func (d *Decider) Decide(p *Plan, logits []float32, samplerOf func(seq uint64) *sample.Sampler) (StepResult, error) {
	v := d.Vocab
	total := 0
	for i := range p.Rows {
		total += p.Rows[i].NumLogits()
	}
	if len(logits) != total*v {
		return StepResult{}, fmt.Errorf("engine: %d logits for %d vectors of %d", len(logits), total, v)
	}
	// Size every buffer for the worst case up front, so slices handed out
	// below never move.
	if cap(d.toks) < total {
		d.toks = make([]int32, 0, total)
		d.lps = make([]TokenLogprobs, 0, total)
		d.prompt = make([]float32, 0, total)
		d.top = make([]sample.TokenLogprob, 0, total*sample.MaxLogprobs)
	}
	if len(d.probs) != v {
		d.probs, d.residual = make([]float32, v), make([]float32, v)
	}
	d.toks, d.lps, d.top, d.prompt, d.rows = d.toks[:0], d.lps[:0], d.top[:0], d.prompt[:0], d.rows[:0]
	off := 0
	for i := range p.Rows {
		r := &p.Rows[i]
		n := r.NumLogits()
		vecs := logits[off*v : (off+n)*v]
		off += n
		start, lpStart, promptStart := len(d.toks), len(d.lps), len(d.prompt)
		s := samplerOf(r.Seq)
		if r.PromptLogits && s != nil {
			d.promptLogprobs(r, vecs)
		}
		switch {
		case s == nil:
		case r.Kind == PrefillRow && r.CompletesSequence:
			res := s.Sample(vecs[(n-1)*v:])
			s.Accept(res.Token)
			d.emitResult(s, res)
		case r.Kind == DecodeRow:
			if err := d.verify(r, vecs, s); err != nil {
				return StepResult{}, fmt.Errorf("engine: row %d: %w", i, err)
			}
		}
		res := RowResult{Tokens: d.toks[start:len(d.toks):len(d.toks)]}
		if len(d.lps) > lpStart {
			res.Logprobs = d.lps[lpStart:len(d.lps):len(d.lps)]
		}
		if len(d.prompt) > promptStart {
			res.PromptLogprobs = d.prompt[promptStart:len(d.prompt):len(d.prompt)]
		}
		d.rows = append(d.rows, res)
	}
	return StepResult{Rows: d.rows}, nil
}

// emitResult appends a sampled token with the logprobs Sample computed.
func (d *Decider) emitResult(s *sample.Sampler, res sample.Result) {
	d.toks = append(d.toks, res.Token)
	if s.Params().Logprobs < 0 {
		return
	}
	start := len(d.top)
	d.top = append(d.top, res.Top...)
	d.lps = append(d.lps, TokenLogprobs{Logprob: res.Logprob, Top: d.top[start:len(d.top):len(d.top)]})
}

// emit appends a chosen token and, if its request wants them, its logprobs
// at the position whose logits are vec.
func (d *Decider) emit(s *sample.Sampler, tok int32, vec []float32) {
	d.toks = append(d.toks, tok)
	n := s.Params().Logprobs
	if n < 0 {
		return
	}
	start := len(d.top)
	lp, top := sample.Logprobs(vec, tok, n, d.top)
	d.top = top
	d.lps = append(d.lps, TokenLogprobs{Logprob: lp, Top: d.top[start:len(d.top):len(d.top)]})
}

// promptLogprobs records, for each position of a prompt-logits row, the
// logprob of the prompt token it predicts.
func (d *Decider) promptLogprobs(r *PlanRow, vecs []float32) {
	v := d.Vocab
	for j := range r.Tokens {
		next := r.Start + j + 1
		if next >= r.seq.promptLen {
			break
		}
		lp, _ := sample.Logprobs(vecs[j*v:(j+1)*v], r.seq.tokens[next], 0, nil)
		d.prompt = append(d.prompt, lp)
	}
}

// verify appends a decode row's emitted tokens: the accepted drafts and the
// target's own token.
func (d *Decider) verify(r *PlanRow, vecs []float32, s *sample.Sampler) error {
	v := d.Vocab
	vec := func(j int) []float32 { return vecs[j*v : (j+1)*v] }
	if s.Params().Temperature == 0 {
		// Greedy: sample position by position so penalties see the
		// accepted prefix; stop at the first disagreement.
		for j := 0; j <= len(r.Draft); j++ {
			res := s.Sample(vec(j))
			s.Accept(res.Token)
			d.emitResult(s, res)
			if j == len(r.Draft) || res.Token != r.Draft[j] {
				break
			}
		}
		return nil
	}
	target := func(j int) []float32 {
		if j > 0 {
			s.Accept(r.Draft[j-1])
		}
		s.Probs(vec(j), d.probs)
		return d.probs
	}
	n, extra, err := spec.AcceptSample(r.Draft, target, func(int) []float32 { return nil }, s.Rand(), d.residual)
	if err != nil {
		return err
	}
	s.Accept(extra)
	for j, tok := range r.Draft[:n] {
		d.emit(s, tok, vec(j))
	}
	d.emit(s, extra, vec(n))
	return nil
}
