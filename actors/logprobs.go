package actors

import (
	"slices"

	"github.com/splash-inference/splash/engine"
)

// logprobs gathers, for the sequences that asked, the logprobs of the step
// as the Decider computed them: each new token's raw logprob and top
// alternatives, and the prompt tokens' (copied: the Decider reuses its
// scratch). A prefill row's prompt logprob j is for prompt token
// Start+j+1. Prompt logprobs are kept on the request until its first
// TokensGenerated message.
func (b *BatcherActor) logprobs(plan *engine.Plan, res engine.StepResult) map[uint64][]TokenLogprobs {
	var out map[uint64][]TokenLogprobs
	for i := range plan.Rows {
		r := &plan.Rows[i]
		lr, ok := b.live[r.Seq]
		if !ok {
			continue
		}
		row := res.Rows[i]
		for j, lp := range row.PromptLogprobs {
			lr.promptLP = append(lr.promptLP, tokenLogprobs(lr.prompt[r.Start+j+1], lp))
		}
		if len(row.Tokens) == 0 || len(row.Logprobs) != len(row.Tokens) {
			continue
		}
		if out == nil {
			out = map[uint64][]TokenLogprobs{}
		}
		gen := make([]TokenLogprobs, len(row.Tokens))
		for j, t := range row.Tokens {
			gen[j] = tokenLogprobs(t, row.Logprobs[j])
		}
		out[r.Seq] = gen
	}
	return out
}

// tokenLogprobs is tok's logprobs from the Decider's, copied.
func tokenLogprobs(tok int32, lp engine.TokenLogprobs) TokenLogprobs {
	return TokenLogprobs{Token: tok, Logprob: lp.Logprob, Top: slices.Clone(lp.Top)}
}
