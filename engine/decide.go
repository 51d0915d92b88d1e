package engine

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
)

// Decider turns the target model's logits for a plan into a StepResult:
// it samples each completing row's next token and runs speculative
// acceptance on verify rows, greedy or by rejection sampling according to
// each sequence's sampler, and fills in the logprobs requests ask for.
// Drafts are deterministic proposals (q one-hot), as spec.Ngram and
// spec.DraftModel give, unless their row carries the distributions they
// were drawn from (PlanRow.DraftProbs, spec.DFlash at temperature > 0).
// It keeps scratch between steps; it
// is not safe for concurrent use.
//
// A step of parallelRows rows or more is decided on two goroutines, each
// taking the next row left: a row's result depends only on its logits and
// its own sequence's sampler, so it is the same whichever takes it, and
// the cores are otherwise idle between forward passes (BenchmarkDecide).
type Decider struct {
	Vocab int

	parts    [2]decidePart
	samplers []*sample.Sampler
	offsets  []int
	rows     []RowResult
	errs     []error
	next     atomic.Int64
}

// parallelRows is the number of rows from which Decide uses two
// goroutines: below it the hand-off (a goroutine start and a wait) costs
// about as much as the greedy rows it would share.
const parallelRows = 4

// decidePart is one goroutine's scratch, and the tokens and logprobs of
// the rows it decided (which their RowResults point into).
type decidePart struct {
	vocab           int
	probs, residual []float32
	toks            []int32
	lps             []TokenLogprobs
	top             []sample.TokenLogprob
	prompt          []TokenLogprobs
}

// Decide fills a StepResult for p from logits (p.Batch's NumLogits vectors
// of Vocab floats, in row order). samplerOf returns each sequence's sampler,
// which records every token it emits for its penalties, or nil for a
// sequence cancelled since Schedule, whose row is then left empty. The
// result is valid until the next call.
func (d *Decider) Decide(p *Plan, logits []float32, samplerOf func(seq uint64) *sample.Sampler) (StepResult, error) {
	v := d.Vocab
	total := 0
	d.offsets, d.samplers = d.offsets[:0], d.samplers[:0]
	for i := range p.Rows {
		d.offsets = append(d.offsets, total)
		total += p.Rows[i].NumLogits()
		// samplerOf is the caller's: called here, in order, on one goroutine.
		d.samplers = append(d.samplers, samplerOf(p.Rows[i].Seq))
	}
	if len(logits) != total*v {
		return StepResult{}, fmt.Errorf("engine: %d logits for %d vectors of %d", len(logits), total, v)
	}
	for i := range d.parts {
		d.parts[i].reset(v, total)
	}
	n := len(p.Rows)
	d.rows, d.errs = slices.Grow(d.rows[:0], n)[:n], slices.Grow(d.errs[:0], n)[:n]
	clear(d.errs)
	d.next.Store(0)
	if n < parallelRows {
		d.work(&d.parts[0], p, logits)
	} else {
		var wg sync.WaitGroup
		wg.Go(func() { d.work(&d.parts[1], p, logits) })
		d.work(&d.parts[0], p, logits)
		wg.Wait()
	}
	// Hold no sampler past the step: a finished request's sampler (and its
	// vocabulary-sized scratch) is garbage once the batcher drops it.
	clear(d.samplers)
	for i, err := range d.errs {
		if err != nil {
			return StepResult{}, fmt.Errorf("engine: row %d: %w", i, err)
		}
	}
	return StepResult{Rows: d.rows}, nil
}

// work decides rows of p, taking the next one left each time, into part.
func (d *Decider) work(part *decidePart, p *Plan, logits []float32) {
	v := d.Vocab
	for {
		i := int(d.next.Add(1) - 1)
		if i >= len(p.Rows) {
			return
		}
		r := &p.Rows[i]
		n := r.NumLogits()
		vecs := logits[d.offsets[i]*v : (d.offsets[i]+n)*v]
		start, lpStart, promptStart := len(part.toks), len(part.lps), len(part.prompt)
		s := d.samplers[i]
		if r.PromptLogits && s != nil {
			part.promptLogprobs(r, vecs, s.Params().Logprobs)
		}
		switch {
		case s == nil:
		case r.Kind == PrefillRow && r.CompletesSequence:
			res := s.Sample(vecs[(n-1)*v:])
			s.Accept(res.Token)
			part.emitResult(s, res)
		case r.Kind == DecodeRow:
			d.errs[i] = part.verify(r, vecs, s)
		}
		res := RowResult{Tokens: part.toks[start:len(part.toks):len(part.toks)]}
		if len(part.lps) > lpStart {
			res.Logprobs = part.lps[lpStart:len(part.lps):len(part.lps)]
		}
		if len(part.prompt) > promptStart {
			res.PromptLogprobs = part.prompt[promptStart:len(part.prompt):len(part.prompt)]
		}
		d.rows[i] = res
	}
}

// reset empties the part and sizes its buffers for the worst case of total
// logit vectors up front, so that slices handed out never move.
func (d *decidePart) reset(vocab, total int) {
	d.vocab = vocab
	if cap(d.toks) < total {
		d.toks = make([]int32, 0, total)
		d.lps = make([]TokenLogprobs, 0, total)
		d.prompt = make([]TokenLogprobs, 0, total)
		d.top = make([]sample.TokenLogprob, 0, total*sample.MaxLogprobs)
	}
	if len(d.probs) != vocab {
		d.probs, d.residual = make([]float32, vocab), make([]float32, vocab)
	}
	d.toks, d.lps, d.top, d.prompt = d.toks[:0], d.lps[:0], d.top[:0], d.prompt[:0]
}

// emitResult appends a sampled token with the logprobs Sample computed.
func (d *decidePart) emitResult(s *sample.Sampler, res sample.Result) {
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
func (d *decidePart) emit(s *sample.Sampler, tok int32, vec []float32) {
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
// logprob of the prompt token it predicts and the top most likely
// alternatives there.
func (d *decidePart) promptLogprobs(r *PlanRow, vecs []float32, top int) {
	v := d.vocab
	for j := range r.Tokens {
		next := r.Start + j + 1
		if next >= r.seq.promptLen {
			break
		}
		start := len(d.top)
		lp, tops := sample.Logprobs(vecs[j*v:(j+1)*v], r.seq.tokens[next], top, d.top)
		d.top = tops
		d.prompt = append(d.prompt, TokenLogprobs{Logprob: lp, Top: d.top[start:len(d.top):len(d.top)]})
	}
}

// verify appends a decode row's emitted tokens: the accepted drafts and the
// target's own token.
func (d *decidePart) verify(r *PlanRow, vecs []float32, s *sample.Sampler) error {
	v := d.vocab
	vec := func(j int) []float32 { return vecs[j*v : (j+1)*v] }
	if s.Params().Temperature == 0 || len(r.Draft) == 0 {
		// Greedy, or no draft to accept (a plain decode row): sample
		// position by position so penalties see the accepted prefix; stop
		// at the first disagreement. Sample's own paths are much cheaper
		// than the full distribution rejection sampling needs
		// (BenchmarkDecide).
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
	q := func(int) []float32 { return nil }
	if r.DraftProbs != nil {
		q = func(j int) []float32 { return r.DraftProbs[j] }
	}
	n, extra, err := spec.AcceptSample(r.Draft, target, q, s.Rand(), d.residual)
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
