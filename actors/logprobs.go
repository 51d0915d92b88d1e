package actors

import (
	"slices"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
)

// logprobs gathers, for the sequences that asked, the logprobs of the step:
// each new token's raw logprob and top alternatives as the Decider computed
// them while sampling (copied: the Decider reuses its scratch), and the
// prompt tokens' logprobs with their top alternatives, which the Decider
// does not rank. Row i's logit vectors come in order; a prefill row's
// vector j predicts prompt token Start+j+1, and a completing row's last
// vector predicts the first generated token. Prompt logprobs are kept on
// the request until its first TokensGenerated message.
func (b *BatcherActor) logprobs(plan *engine.Plan, logits []float32, res engine.StepResult) map[uint64][]TokenLogprobs {
	var out map[uint64][]TokenLogprobs
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
		if r.Kind == engine.PrefillRow {
			np := n
			if r.CompletesSequence {
				np = n - 1
			}
			for j := 0; j < np && r.Start+j+1 < len(lr.prompt); j++ {
				lr.promptLP = append(lr.promptLP, b.score(vecs[j*v:(j+1)*v], lr.prompt[r.Start+j+1], lr.logprobs))
			}
		}
		row := res.Rows[i]
		if len(row.Tokens) == 0 || len(row.Logprobs) != len(row.Tokens) {
			continue
		}
		if out == nil {
			out = map[uint64][]TokenLogprobs{}
		}
		gen := make([]TokenLogprobs, len(row.Tokens))
		for j, t := range row.Tokens {
			gen[j] = TokenLogprobs{Token: t, Logprob: row.Logprobs[j].Logprob, Top: slices.Clone(row.Logprobs[j].Top)}
		}
		out[r.Seq] = gen
	}
	return out
}

// score returns a prompt token's logprob under logits and the top k
// alternatives.
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
