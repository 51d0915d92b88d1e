package engine_test

import (
	"fmt"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/model"
)

// toyForward stands in for model.Forward: its next token is always the
// last token plus one (mod 8), whatever the cache holds.
func toyForward(b *model.Batch) []float32 {
	const vocab = 8
	var logits []float32
	for _, r := range b.Rows {
		for j := len(r.Tokens) - r.Logits; j < len(r.Tokens); j++ {
			l := make([]float32, vocab)
			l[(r.Tokens[j]+1)%vocab] = 10
			logits = append(logits, l...)
		}
	}
	return logits
}

// Example shows one request going through the scheduler's step loop with
// n-gram speculation: the prompt repeats, so lookup drafts are accepted and
// some steps yield several tokens.
func Example() {
	s, err := engine.New(engine.Config{BlockSize: 4, NumBlocks: 16, MaxBatchTokens: 32, MaxRunning: 4, MaxDraft: 4}, spec.Ngram{})
	if err != nil {
		panic(err)
	}
	seed := uint64(1)
	smp, _ := sample.New(sample.Params{Seed: &seed, Logprobs: -1}, nil) // greedy
	if err := s.Add(engine.Request{ID: 1, Prompt: []int32{0, 1, 2, 3, 4, 5, 6, 7, 0, 1}, MaxTokens: 9}); err != nil {
		panic(err)
	}
	dec := engine.Decider{Vocab: 8}
	for {
		plan := s.Schedule()
		if plan.Empty() {
			break
		}
		logits := toyForward(plan.Batch())
		res, err := dec.Decide(plan, logits, func(uint64) *sample.Sampler { return smp })
		if err != nil {
			panic(err)
		}
		outs, err := s.Update(plan, res)
		if err != nil {
			panic(err)
		}
		for _, o := range outs {
			if o.Finished() {
				fmt.Println(o.Tokens, "finished:", o.Reason)
			} else {
				fmt.Println(o.Tokens)
			}
		}
	}
	// Output:
	// [2]
	// [3 4]
	// [5 6 7 0]
	// [1 2] finished: length
}
