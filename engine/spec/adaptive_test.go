package spec

import (
	"testing"
)

func TestAdaptiveKAfterHistory(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history [][2]int // proposed, accepted
		cost    float64
		want    int
	}{
		{"prior, cheap verification", nil, 0.25, 1},
		{"prior, dear verification: a first probe", nil, 0.8, 1},
		{"always accepted grows to max", repeat([2]int{4, 4}, 10), 0.25, 6},
		{"always accepted grows to max even when dear", repeat([2]int{4, 4}, 10), 0.9, 6},
		{"always rejected backs off to 0", repeat([2]int{4, 0}, 10), 0.25, 0},
		{"always rejected, even when verification is cheap", repeat([2]int{1, 0}, 10), 0.1, 0},
		{"half accepted, cheap verification", alternate([2]int{1, 1}, [2]int{1, 0}, 20), 0.1, 2},
		{"half accepted, dear verification", alternate([2]int{1, 1}, [2]int{1, 0}, 20), 0.6, 0},
		{"first guess right, second wrong", repeat([2]int{2, 1}, 20), 0.6, 1},
		{"first guess right, second wrong, very cheap", repeat([2]int{2, 1}, 20), 0.05, 2}, // r₂ ≈ 0.15 > 0.05
		{"four right, fifth wrong", repeat([2]int{5, 4}, 20), 0.25, 4},
		{"four right, fifth wrong, dear verification", repeat([2]int{5, 4}, 20), 0.5, 4},
		{"recovers after a bad patch", append(repeat([2]int{4, 0}, 10), repeat([2]int{6, 6}, 10)...), 0.25, 6},
		{"empty proposals ignored", append(repeat([2]int{4, 4}, 10), repeat([2]int{0, 0}, 10)...), 0.25, 6},
		{"slow start doubles after a fully accepted row", [][2]int{{1, 1}, {2, 2}}, 0.5, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := AdaptiveK{Max: 6}
			for _, h := range tc.history {
				a.Observe(h[0], h[1])
			}
			if got := a.Next(tc.cost); got != tc.want {
				t.Fatalf("Next(%g) = %d (rate %.3f), want %d", tc.cost, got, a.Rate(), tc.want)
			}
		})
	}
	if (&AdaptiveK{}).Next(0.1) != 0 {
		t.Fatal("Max 0 must disable speculation")
	}
}

// alternate is n verifications alternating between x and y.
func alternate(x, y [2]int, n int) [][2]int {
	out := make([][2]int, n)
	for i := range out {
		out[i] = x
		if i%2 == 1 {
			out[i] = y
		}
	}
	return out
}

// simulate runs steps of decoding with a draft whose guess at (step, j) is
// right when right(step, j) says so, and returns the k of every step and the
// number of guesses verified.
func simulate(a *AdaptiveK, cost float64, steps int, right func(step, j int) bool) (ks []int, guesses int) {
	for s := range steps {
		k := a.Next(cost)
		ks = append(ks, k)
		acc := 0
		for acc < k && right(s, acc) {
			acc++
		}
		a.Observe(k, acc)
		guesses += k
	}
	return ks, guesses
}

func TestAdaptiveKDynamics(t *testing.T) {
	always := func(int, int) bool { return true }
	never := func(int, int) bool { return false }
	t.Run("a useless draft is probed less and less", func(t *testing.T) {
		a := AdaptiveK{Max: 4}
		_, guesses := simulate(&a, 0.25, 256, never)
		// probes at steps 0, 7, 22, 53, 116, 179, 242
		if guesses > 8 {
			t.Fatalf("%d guesses verified over 256 steps of a useless draft", guesses)
		}
	})
	t.Run("a perfect draft reaches Max in a few steps", func(t *testing.T) {
		for _, cost := range []float64{0.05, 0.25, 0.5, 0.9} {
			a := AdaptiveK{Max: 8}
			ks, _ := simulate(&a, cost, 6, always)
			if ks[0] < 1 || ks[4] != 8 || ks[len(ks)-1] != 8 || cost <= 0.25 && ks[3] != 8 {
				t.Fatalf("cost %g: k per step %v, want 8 from the fifth step on (the fourth when cheap)", cost, ks)
			}
		}
	})
	t.Run("a draft that turns good is picked up again", func(t *testing.T) {
		a := AdaptiveK{Max: 4}
		simulate(&a, 0.25, 100, never)
		ks, _ := simulate(&a, 0.25, 100, always)
		at := -1
		for i, k := range ks {
			if k == 4 {
				at = i
				break
			}
		}
		// The probe gap reached 63 over the useless stretch; after the
		// first accepted probe the next ones follow at once.
		if at < 0 || at > 64+8 {
			t.Fatalf("k per step %v: Max not reached within 72 steps", ks)
		}
	})
	t.Run("a half-right draft speculates only when verification is cheap", func(t *testing.T) {
		half := func(step, j int) bool { return (step+j)%2 == 0 }
		for _, tc := range []struct {
			cost        float64
			least, most int
		}{{0.05, 100, 800}, {0.8, 0, 40}} {
			a := AdaptiveK{Max: 4}
			_, guesses := simulate(&a, tc.cost, 200, half)
			if guesses < tc.least || guesses > tc.most {
				t.Fatalf("cost %g: %d guesses over 200 steps, want %d to %d", tc.cost, guesses, tc.least, tc.most)
			}
		}
	})
}

func TestAdaptiveKChoosesTheBestRatio(t *testing.T) {
	// best must agree with a brute-force search over k of E(k)/(1+cost·k)
	// for depth rates set directly.
	for _, rates := range [][]float64{
		{0.9, 0.9, 0.9, 0.9, 0.9, 0.9},
		{0.9, 0.1},
		{0.5},
		{0.05},
		{0.3, 0.95, 0.95, 0.95},
		{0.99, 0.8, 0.6, 0.4, 0.2, 0.1},
	} {
		for _, cost := range []float64{0.01, 0.1, 0.3, 0.7, 1.5} {
			a := AdaptiveK{Max: 6}
			for _, r := range rates {
				// kept/judged giving rate r after the prior's shrinkage
				// towards the previous depth is awkward to invert, so use
				// a huge count: the prior no longer matters.
				a.depth = append(a.depth, trials{kept: 1e9 * r, judged: 1e9})
			}
			want, bestGain := 0, 1.0
			for k := 1; k <= a.Max; k++ {
				e, reach := 1.0, 1.0
				for j := range k {
					reach *= rates[min(j, len(rates)-1)] // deeper: inherit the last
					e += reach
				}
				if g := e / (1 + cost*float64(k)); g > bestGain+1e-6 {
					want, bestGain = k, g
				}
			}
			if got := a.best(cost); got != want {
				t.Errorf("rates %v cost %g: best = %d, want %d", rates, cost, got, want)
			}
		}
	}
}

func TestAdaptiveKInherit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		history     [2]int // the parent's verifications, repeated
		cost        float64
		least, most int // the child's first k
	}{
		{"peers always right: start deep", [2]int{4, 4}, 0.5, 3, 4},
		{"peers always wrong: start at 0, no probe", [2]int{2, 0}, 0.25, 0, 0},
		{"peers half right: in between", [2]int{4, 2}, 0.1, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := AdaptiveK{Max: 4}
			for range 50 {
				parent.Observe(tc.history[0], tc.history[1])
			}
			child := AdaptiveK{Max: 4}
			child.Inherit(&parent)
			if k := child.Next(tc.cost); k < tc.least || k > tc.most {
				t.Fatalf("first k %d, want %d to %d", k, tc.least, tc.most)
			}
			// The child's own evidence takes over: three verifications
			// against the parent's record move it to the other side.
			right := tc.history[1] < tc.history[0] // the parent's drafts failed: the child's land
			for range 3 {
				k := max(child.Next(tc.cost), 1)
				if right {
					child.Observe(k, k)
				} else {
					child.Observe(k, 0)
				}
			}
			k := child.Next(tc.cost)
			if right && k < 2 || !right && k > 0 {
				t.Fatalf("after 3 verifications of its own (right %v), k = %d", right, k)
			}
		})
	}
	var child AdaptiveK
	child.Max = 4
	child.Inherit(&AdaptiveK{Max: 4}) // a parent with no record changes nothing
	if k := child.Next(0.9); k != 1 {
		t.Fatalf("inheriting nothing: first k %d, want a probe", k)
	}
}
