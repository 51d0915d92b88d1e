package spec

import "math"

// AdaptiveK picks a sequence's draft length from its acceptance history.
// Each verified guess is a trial: accepted guesses are successes, the first
// rejected one a failure. With per-guess acceptance rate a, the expected run
// of accepted guesses is a/(1−a), so k is that, rounded up, clamped to
// [1, Max]: long when guesses keep landing, 1 when they do not (a single
// guess costs little more than a plain decode). Older steps decay so the
// estimate follows the text (code, then prose). The zero value starts at an
// even prior.
type AdaptiveK struct {
	Max       int     // upper bound on k; must be set
	successes float64 // decayed count of accepted guesses
	failures  float64 // decayed count of rejected guesses
}

// decay is how much one step's history keeps per later step.
const decay = 0.8

// K returns the draft length to propose next.
func (a *AdaptiveK) K() int {
	if a.Max <= 0 {
		return 0
	}
	rate := (a.successes + 1) / (a.successes + a.failures + 2) // Laplace prior
	k := math.Ceil(rate / (1 - rate))
	return int(min(max(k, 1), float64(a.Max)))
}

// Observe records one verification of proposed guesses, accepted of them.
func (a *AdaptiveK) Observe(proposed, accepted int) {
	if proposed <= 0 {
		return
	}
	a.successes = a.successes*decay + float64(accepted)
	a.failures *= decay
	if accepted < proposed {
		a.failures++
	}
}

// Rate returns the current acceptance-rate estimate.
func (a *AdaptiveK) Rate() float64 {
	return (a.successes + 1) / (a.successes + a.failures + 2)
}
