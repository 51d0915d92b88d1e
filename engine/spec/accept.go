package spec

import (
	"fmt"
	"math/rand/v2"
)

// AcceptGreedy returns how many draft tokens agree with the target's arg
// max tokens (target[j] is the target's choice after the row's first j+1
// inputs, len(target) = len(draft)+1). The emitted tokens are draft[:n]
// followed by target[n].
func AcceptGreedy(draft, target []int32) int {
	n := 0
	for n < len(draft) && draft[n] == target[n] {
		n++
	}
	return n
}

// AcceptSample runs speculative rejection sampling over one verify row.
// target(j) returns the target's processed distribution at position j (the
// one Sample would draw from after the inputs up to draft[j-1]); it is called
// for j = 0, 1, ... in order and only while the guesses are accepted, so a
// caller with penalties can record draft[j-1] as accepted inside it.
// draftProb(j) returns the distribution the proposer drew draft[j] from, or
// nil for a deterministic proposer (q = one-hot). residual is scratch of the
// vocabulary's size.
//
// It returns the number of accepted guesses and the extra token: the
// correction drawn from norm(max(0, p−q)) at the first rejection, or the
// bonus drawn from p after all guesses.
func AcceptSample(draft []int32, target, draftProb func(j int) []float32, rng *rand.Rand, residual []float32) (int, int32, error) {
	for j, x := range draft {
		p := target(j)
		q := draftProb(j)
		px, qx := float64(p[x]), 1.0
		if q != nil {
			qx = float64(q[x])
		}
		if qx <= 0 {
			return 0, 0, fmt.Errorf("spec: draft token %d at position %d has draft probability %g", x, j, qx)
		}
		if rng.Float64()*qx < px { // u < p(x)/q(x), without dividing
			continue
		}
		// Rejected: draw from the part of p that q does not cover. For a
		// deterministic proposer that is p without x, drawn from p in
		// place (the same weights, sum and walk as the residual would
		// give, without writing one).
		if q == nil {
			if tok, ok := drawExcept(p, x, rng); ok {
				return j, tok, nil
			}
			tok, _ := draw(p, rng)
			return j, tok, nil
		}
		res := residual[:len(p)]
		for i := range p {
			qi := float32(0)
			if q != nil {
				qi = q[i]
			} else if int32(i) == x {
				qi = 1
			}
			res[i] = max(0, p[i]-qi)
		}
		if tok, ok := draw(res, rng); ok {
			return j, tok, nil
		}
		// p ≤ q everywhere yet x was rejected: only rounding gets here.
		tok, _ := draw(p, rng)
		return j, tok, nil
	}
	tok, ok := draw(target(len(draft)), rng)
	if !ok {
		return 0, 0, fmt.Errorf("spec: target distribution at position %d has no mass", len(draft))
	}
	return len(draft), tok, nil
}

// draw samples an index from unnormalised non-negative weights; ok is
// false when they sum to zero.
func draw(w []float32, rng *rand.Rand) (int32, bool) { return drawExcept(w, -1, rng) }

// drawExcept is draw over w with w[skip] taken as zero.
func drawExcept(w []float32, skip int32, rng *rand.Rand) (int32, bool) {
	total := 0.0
	for i, x := range w {
		if x > 0 && int32(i) != skip {
			total += float64(x)
		}
	}
	if total <= 0 {
		return 0, false
	}
	u := rng.Float64() * total
	acc, last := 0.0, -1
	for i, x := range w {
		if x <= 0 || int32(i) == skip {
			continue
		}
		acc += float64(x)
		last = i
		if u < acc {
			return int32(i), true
		}
	}
	return int32(last), true
}
