package sample

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSample151936 samples over a Qwen-sized vocabulary.
func BenchmarkSample151936(b *testing.B) {
	logits := randomLogits(rand.New(rand.NewPCG(1, 2)), 151936)
	for _, tc := range []struct {
		name string
		p    Params
	}{
		{"greedy-nologprobs", Params{Logprobs: -1}},
		{"greedy-logprob", Params{}},
		{"greedy-top5", Params{Logprobs: 5}},
		{"temp0.7-topk40", Params{Temperature: 0.7, TopK: 40, Logprobs: -1}},
		{"temp0.7-topp0.9", Params{Temperature: 0.7, TopP: 0.9, Logprobs: -1}},
		{"temp0.7-topk40-topp0.9-penalties", Params{Temperature: 0.7, TopK: 40, TopP: 0.9, PresencePenalty: 0.5, Logprobs: -1}},
		{"temp1-minp0.05", Params{Temperature: 1, MinP: 0.05, Logprobs: -1}},
		{"temp1", Params{Temperature: 1, Logprobs: -1}},
		{"temp0.6-topk20-topp0.95", Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Logprobs: -1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := mustNew(b, tc.p)
			s.Accept(5)
			b.ReportAllocs()
			for b.Loop() {
				s.Sample(logits)
			}
		})
	}
}
