package engine

import (
	"testing"

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
