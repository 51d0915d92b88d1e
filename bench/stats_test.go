package bench

import (
	"math"
	"testing"
)

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	// Expected values are numpy.percentile(xs, p) with the default method.
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"single", []float64{7}, 99, 7},
		{"median of even count", []float64{1, 2, 3, 4}, 50, 2.5},
		{"p90 of 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9.1},
		{"p99 of 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 9.91},
		{"p0 is min", []float64{3, 5, 9}, 0, 3},
		{"p100 is max", []float64{3, 5, 9}, 100, 9},
		{"p90 of uneven gaps", []float64{10, 20, 40, 80, 160}, 90, 128},
		{"empty", nil, 50, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.xs, tt.p); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarizeSortsAndAverages(t *testing.T) {
	got := summarize([]float64{4, 1, 3, 2})
	want := Latency{Mean: 2.5, P50: 2.5, P90: 3.7, P99: 3.97}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", got.Mean, want.Mean}, {"p50", got.P50, want.P50}, {"p90", got.P90, want.P90}, {"p99", got.P99, want.P99}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if (summarize(nil) != Latency{}) {
		t.Errorf("summarize(nil) = %+v, want zero", summarize(nil))
	}
}
