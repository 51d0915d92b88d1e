package model_test

import (
	"testing"

	"github.com/splash-inference/splash/model"
)

// TestCostShape checks the per-token costs of Qwen3-0.6B's shape, worked by
// hand: 28 layers of q (1024→2048), k and v (1024→1024), o (2048→1024)
// and the MLP (3 × 1024·3072), against 2 × 16 heads × 128 per position.
func TestCostShape(t *testing.T) {
	c := &model.Config{HiddenSize: 1024, IntermediateSize: 3072, NumHiddenLayers: 28, NumAttentionHeads: 16, NumKeyValueHeads: 8, HeadDim: 128}
	if got, want := c.LayerWeights(), int64(28*(2*1024*2048+2*1024*1024+3*1024*3072)); got != want {
		t.Errorf("LayerWeights = %d, want %d", got, want)
	}
	if got, want := c.AttentionMACs(), int64(2*28*16*128); got != want {
		t.Errorf("AttentionMACs = %d, want %d", got, want)
	}
	for _, tc := range []struct {
		speedup float64
		want    int
	}{{1, 3840}, {3.8, 1011}, {1e9, 1}} {
		if got := c.AttentionBreakEven(tc.speedup); got != tc.want {
			t.Errorf("AttentionBreakEven(%g) = %d, want %d", tc.speedup, got, tc.want)
		}
	}
}
