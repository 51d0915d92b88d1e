package actors

import (
	"slices"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
)

// seqLogprobs are one sequence's logprobs from one step.
type seqLogprobs struct {
	gen []TokenLogprobs // one per generated token of the step
}

// logprobs computes, for the sequences that asked, each new token's
// logprob under the raw distribution and the top alternatives, before the
// logits are reused. Row i's logit vectors come in order: a decode row's
// vector j predicts its j-th new token; a completing prefill's last vector
// predicts the first generated token, and with prompt logprobs vector j
// predicts prompt token Start+j+1.
func (b *BatcherActor) logprobs(plan *engine.Plan, logits []float32, res engine.StepResult) map[uint64]seqLogprobs {
	var out map[uint64]seqLogprobs
	v := b.decider.Vocab
	off := 0
	for i := range plan.Rows {
		r := &plan.Rows[i]
		n := r.NumLogits()
		vecs := logits[off*v : (off+n)*v]
		off += n
		lr, ok := b.live[r.Seq]
		if !ok || lr.logprobs < 0 {
			continue
		}
		toks := res.Rows[i].Tokens
		first := 0 // vector of the first new token
		if r.Kind == engine.PrefillRow {
			// vectors before the last of a completing row (all of a chunk's)
			// predict prompt tokens: kept until the first generated token
			np := n
			if r.CompletesSequence {
				np = n - 1
			}
			for j := 0; j < np && r.Start+j+1 < len(lr.prompt); j++ {
				lr.promptLP = append(lr.promptLP, b.score(vecs[j*v:(j+1)*v], lr.prompt[r.Start+j+1], lr.logprobs))
			}
			first = n - 1
		}
		if len(toks) == 0 {
			continue
		}
		if out == nil {
			out = map[uint64]seqLogprobs{}
		}
		var sl seqLogprobs
		for j, t := range toks {
			sl.gen = append(sl.gen, b.score(vecs[(first+j)*v:(first+j+1)*v], t, lr.logprobs))
		}
		out[r.Seq] = sl
	}
	return out
}

// score returns tok's logprob under logits and the top k alternatives.
func (b *BatcherActor) score(logits []float32, tok int32, k int) TokenLogprobs {
	tl := TokenLogprobs{Token: tok, Logprob: sample.Logprob(logits, tok)}
	if k > 0 {
		if b.scorer == nil || b.scorer.Params().Logprobs != k {
			b.scorer, _ = sample.New(sample.Params{Logprobs: k}, b.entropy)
		}
		tl.Top = slices.Clone(b.scorer.Sample(logits).Top)
	}
	return tl
}
