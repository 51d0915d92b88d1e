package sample

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSample151936 samples over a Qwen-sized vocabulary: random
// logits (N(0, 3): flat, so a top-p nucleus holds much of the
// vocabulary), and peaked ones as a model's usually are (a dozen tokens
// 10-20 nats above that), where it holds a few.
func BenchmarkSample151936(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	logits := randomLogits(rng, 151936)
	peaked := randomLogits(rng, 151936)
	for i := range 12 {
		peaked[rng.IntN(len(peaked))] = 20 - float32(i)
	}
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
		for _, l := range []struct {
			name   string
			logits []float32
		}{{"", logits}, {"-peaked", peaked}} {
			b.Run(tc.name+l.name, func(b *testing.B) {
				s := mustNew(b, tc.p)
				s.Accept(5)
				b.ReportAllocs()
				for b.Loop() {
					s.Sample(l.logits)
				}
			})
		}
	}
}
