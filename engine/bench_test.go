package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/stop"
)

// BenchmarkScheduleUpdate64 measures the scheduler's own cost per step with
// 64 decoding sequences (no model: each row gets one fixed token back).
func BenchmarkScheduleUpdate64(b *testing.B) {
	for _, tc := range []struct {
		name  string
		draft int
	}{{"decode", 0}, {"verify-k4", 4}} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := New(Config{BlockSize: 16, NumBlocks: 64 * 64, MaxBatchTokens: 64 * 5, MaxRunning: 64, MaxDraft: tc.draft}, nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := range uint64(64) {
				if err := s.Add(Request{ID: i, Prompt: prompt(200, int32(i))}); err != nil {
					b.Fatal(err)
				}
			}
			rows := make([]RowResult, 0, 64)
			tok := []int32{3}
			step := func() {
				p := s.Schedule()
				rows = rows[:0]
				for i := range p.Rows {
					r := &p.Rows[i]
					if r.Kind == DecodeRow || r.CompletesSequence {
						rows = append(rows, RowResult{Tokens: tok})
					} else {
						rows = append(rows, RowResult{})
					}
				}
				if _, err := s.Update(p, StepResult{Rows: rows}); err != nil {
					b.Fatal(err)
				}
			}
			for s.Stats().Waiting > 0 || s.plan.Rows[0].Kind != DecodeRow {
				step() // prefill everything first
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				step()
				if s.Stats().Running != 64 {
					b.Fatal("a sequence finished or was preempted")
				}
			}
			b.StopTimer()
			for i := range uint64(64) {
				s.Cancel(i, stop.Cancelled)
			}
			if err := s.kv.CheckLeaks(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkDecide is a step of 16 decode rows at temperature 1 over
// Qwen3's vocabulary of 151,936: plain rows (k=0), and verify rows of four
// drafts each, every draft a random token (so mostly rejected: the
// residual's draw at the first position, as a poor proposer costs).
//
// Measured when the Decider took two goroutines (min of three alternating
// runs): plain rows 2.8 → 1.55 ms, verify rows 10.1 → 5.3 ms. Plain rows
// go through Sampler.Sample, not the full distribution rejection sampling
// needs: 16 of them on one thread took 2.8 ms that way, 8.2 ms through
// Probs and AcceptSample.
func BenchmarkDecide(b *testing.B) {
	const vocab = 151936
	for _, k := range []int{0, 4} {
		b.Run(fmt.Sprintf("rows=16/k=%d", k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			p := &Plan{}
			samplers := map[uint64]*sample.Sampler{}
			for i := range 16 {
				draft := make([]int32, k)
				for j := range draft {
					draft[j] = int32(rng.IntN(vocab))
				}
				p.Rows = append(p.Rows, PlanRow{Seq: uint64(i), Kind: DecodeRow, Tokens: []int32{1}, Draft: draft})
				s, err := sample.New(sample.Params{Temperature: 1, Logprobs: -1}, rand.NewPCG(uint64(i), 3))
				if err != nil {
					b.Fatal(err)
				}
				samplers[uint64(i)] = s
			}
			logits := make([]float32, 16*(k+1)*vocab)
			for i := range logits {
				logits[i] = float32(rng.NormFloat64()) * 3
			}
			d := &Decider{Vocab: vocab}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := d.Decide(p, logits, func(id uint64) *sample.Sampler { return samplers[id] }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
