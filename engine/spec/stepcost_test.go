package spec

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestStepCost(t *testing.T) {
	linear := func(x int) float64 { return 0.020 + 0.010*float64(x) } // 20 ms fixed, 10 ms a token
	for _, tc := range []struct {
		name     string
		steps    []int // tokens per step, timed by linear
		extra    func(c *StepCost)
		rows     int
		want     float64
		wantsFit bool
	}{
		{name: "no steps: the default", rows: 1, want: DefaultCost},
		{name: "equal steps cannot be fitted", steps: []int{1, 1, 1, 1, 1, 1, 1, 1}, rows: 1, want: DefaultCost},
		{name: "too few steps", steps: []int{1, 5}, rows: 1, want: DefaultCost},
		{name: "one row", steps: []int{1, 2, 5, 1, 3, 1}, rows: 1, want: 1.0 / 3, wantsFit: true},
		{name: "sixteen rows share the fixed part", steps: []int{16, 20, 32, 16, 24, 17}, rows: 16, want: 0.010 / (0.020/16 + 0.010), wantsFit: true},
		{name: "keeps its fit through a long run of equal steps", steps: append([]int{1, 2, 5, 1, 3, 1}, make1s(300)...), rows: 1, want: 1.0 / 3, wantsFit: true},
		{name: "ignores untimed steps", steps: []int{1, 2, 5, 1, 3, 1},
			extra: func(c *StepCost) { c.Observe(4, 0); c.Observe(0, 1); c.Observe(3, math.NaN()) }, rows: 1, want: 1.0 / 3, wantsFit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c StepCost
			for _, x := range tc.steps {
				c.Observe(x, linear(x))
			}
			if tc.extra != nil {
				tc.extra(&c)
			}
			if got := c.Cost(tc.rows); math.Abs(got-tc.want) > 1e-6 {
				t.Fatalf("Cost(%d) = %g, want %g", tc.rows, got, tc.want)
			}
			fixed, perToken, ok := c.Fit()
			if ok != tc.wantsFit {
				t.Fatalf("fitted = %v, want %v", ok, tc.wantsFit)
			}
			if ok && (math.Abs(fixed-0.020) > 1e-6 || math.Abs(perToken-0.010) > 1e-6) {
				t.Fatalf("fit %g + %g·x, want 0.02 + 0.01·x", fixed, perToken)
			}
		})
	}
}

func make1s(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func TestStepCostNoiseAndFloor(t *testing.T) {
	t.Run("noise without a trend is not a fit", func(t *testing.T) {
		var c StepCost
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range 200 {
			c.Observe(1+i%2, 0.010+0.020*rng.Float64())
		}
		if _, _, ok := c.Fit(); ok {
			t.Fatalf("fitted noise: Cost(1) = %g", c.Cost(1))
		}
	})
	t.Run("a trend through noise is fitted", func(t *testing.T) {
		var c StepCost
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range 200 {
			x := 1 + i%5
			c.Observe(x, 0.020+0.010*float64(x)+0.004*(rng.Float64()-0.5))
		}
		if got := c.Cost(1); math.Abs(got-1.0/3) > 0.05 {
			t.Fatalf("Cost(1) = %g, want about 1/3", got)
		}
	})
	t.Run("a tiny per-token cost is floored", func(t *testing.T) {
		var c StepCost
		for _, x := range []int{1, 2, 5, 1, 3, 1} {
			c.Observe(x, 1+0.0001*float64(x))
		}
		if _, _, ok := c.Fit(); !ok || c.Cost(1) != MinCost {
			t.Fatalf("fitted %v, Cost(1) = %g, want the floor %g", ok, c.Cost(1), MinCost)
		}
	})
}
