package model

import (
	"math"
	"testing"
)

func TestLayerNorm(t *testing.T) {
	// Row (1, 2, 3, 6): mean 3, variance (4+1+0+9)/4 = 3.5.
	x := []float32{1, 2, 3, 6, 5, 5, 5, 5}
	w := []float32{1, 2, 1, 1}
	b := []float32{0, 0, 1, -1}
	layerNorm(x, w, b, 4, 0)
	s := math.Sqrt(3.5)
	want := []float64{-2 / s, 2 * -1 / s, 0 + 1, 3/s - 1, 0, 0, 1, -1} // a constant row is its bias
	for i, v := range x {
		if math.Abs(float64(v)-want[i]) > 1e-6 {
			t.Errorf("value %d = %v, want %v", i, v, want[i])
		}
	}
}

func TestGELUs(t *testing.T) {
	tests := []struct {
		x, tanh, erf float64
	}{
		{0, 0, 0},
		// Φ(1) = 0.841344746; tanh form: 0.5·(1 + tanh(0.79788456·1.044715)).
		{1, 0.8411919906, 0.8413447461},
		{-1, -0.1588080094, -0.1586552539},
		{3, 2.9963626, 2.9959502},
	}
	for _, tc := range tests {
		a, b := []float32{float32(tc.x)}, []float32{float32(tc.x)}
		geluTanh(a)
		geluErf(b)
		if math.Abs(float64(a[0])-tc.tanh) > 1e-6 || math.Abs(float64(b[0])-tc.erf) > 1e-6 {
			t.Errorf("gelu(%v): tanh form %v (want %v), erf form %v (want %v)", tc.x, a[0], tc.tanh, b[0], tc.erf)
		}
	}
}

// TestRope2D: pair i of a head turns by its row's angle in the first
// quarter of the pairs and by its column's in the second.
func TestRope2D(t *testing.T) {
	const hd = 8 // 4 pairs: 0, 1 by row; 2, 3 by column
	inv := []float32{1, 0.5}
	x := []float32{1, 1, 1, 1, 0, 0, 0, 0}
	rope2D(x, []int{2}, []int{3}, 1, hd, inv)
	angles := []float64{2 * 1, 2 * 0.5, 3 * 1, 3 * 0.5}
	for i, a := range angles {
		if math.Abs(float64(x[i])-math.Cos(a)) > 1e-6 || math.Abs(float64(x[i+4])-math.Sin(a)) > 1e-6 {
			t.Errorf("pair %d = (%v, %v), want (cos %v, sin %v)", i, x[i], x[i+4], a, a)
		}
	}
}

func TestLinspace32(t *testing.T) {
	tests := []struct {
		end   float32
		steps int
		want  []float32
	}{
		{47, 1, []float32{0}},
		{47, 2, []float32{0, 47}},
		{3, 7, []float32{0, 0.5, 1, 1.5, 2, 2.5, 3}},
	}
	for _, tc := range tests {
		got := linspace32(tc.end, tc.steps)
		for i := range tc.want {
			if got[i] != tc.want[i] {
				t.Errorf("linspace32(%v, %d) = %v, want %v", tc.end, tc.steps, got, tc.want)
				break
			}
		}
	}
}
