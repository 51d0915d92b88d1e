package engine

import (
	"math"
	"testing"
)

func TestThinkBudget(t *testing.T) {
	const open, close = 7, 8
	for _, tc := range []struct {
		name    string
		inThink bool
		tokens  []int32 // accepted before the check
		forced  bool    // whether the next position may only be Close
	}{
		{"answer without reasoning", false, []int32{1, 2, 3, 4, 5}, false},
		{"reasoning within budget", false, []int32{open, 1, 2}, false},
		{"reasoning at budget", false, []int32{open, 1, 2, 3}, true},
		{"template opened the block", true, []int32{1, 2, 3}, true},
		{"closed already", false, []int32{open, 1, 2, 3, close, 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &ThinkBudget{Open: open, Close: close, Budget: 3, InThink: tc.inThink}
			for _, tok := range tc.tokens {
				b.Accept(tok)
			}
			logits := make([]float32, 10)
			b.Mask(logits)
			forced := math.IsInf(float64(logits[1]), -1)
			if forced != tc.forced || math.IsInf(float64(logits[close]), -1) {
				t.Fatalf("forced = %v, want %v (logits %v)", forced, tc.forced, logits)
			}
		})
	}
}
