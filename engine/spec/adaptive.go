package spec

// AdaptiveK picks a sequence's draft length from its acceptance history and
// from what verifying a drafted token costs.
//
// Each verified guess is a trial: accepted guesses are successes, the first
// rejected one a failure (the guesses after it are never judged). Trials are
// counted per depth, since a draft's first guess is usually its best: r_j
// estimates the chance that guess j is accepted once guesses 1..j−1 were,
// and a depth never tried yet inherits the estimate of the one before it.
// Older verifications decay so the estimates follow the text (code, then
// prose). A row of k guesses then yields E(k) = 1 + r_1 + r_1·r_2 + … tokens
// on average and costs 1 + cost·k times a plain one-token row, where cost is
// the extra time of one verified token relative to that row (see StepCost).
// Next returns the k in [0, Max] with the most expected tokens per unit of
// cost, so a draft is verified only where it pays for itself: a useless
// draft is backed off to k = 0, at which point it costs nothing (no
// proposal is asked for).
//
// Two rules make the estimates move fast enough:
//
//   - Probes: while the best k is 0, one guess is verified every probe gap
//     steps (7, then 15, 31 and 63 after each probe that fails), so a
//     sequence whose text turns predictable is noticed at a cost of at most
//     one guess per 7 steps. The gaps are odd so that the probes of a text
//     with a period of two tokens (alternating right and wrong guesses) do
//     not all land on the same phase. An accepted probe is followed by
//     another at once, so a run of good guesses raises the estimate quickly.
//   - Slow start: after a verification that accepted every guess, k at least
//     doubles (up to Max), so a draft that is always right reaches Max in
//     about log₂ Max steps instead of waiting for the decayed estimates to
//     become confident. Where the estimates say no k pays, it takes two
//     such verifications in a row (two accepted probes) to start.
//
// A sequence never verified starts with a probe, or, given Inherit, from
// its peers' estimates. The zero value with Max set is ready to use.
type AdaptiveK struct {
	Max       int     // upper bound on k; 0 disables speculation
	successes float64 // decayed count of accepted guesses, all depths
	failures  float64 // decayed count of rejected guesses, all depths
	depth     []trials
	seen      bool // some verification was observed
	lastK     int  // guesses of the last verification
	allKept   bool // the last verification accepted every guess
	streak    int  // verifications in a row that accepted every guess
	gap       int  // steps between probes while k is 0; 0 means minProbeGap
	idle      int  // calls of Next that chose k = 0 since the last verification
	exploring bool // the last k came from a probe (or a slow start after probes), not from the estimates
	probeNext bool // the last exploring verification was accepted: probe again at once
}

// trials is the decayed record of the guesses judged at one depth.
type trials struct {
	kept, judged float64
}

const (
	// decay is how much one verification's history keeps per later one.
	decay = 0.8
	// prior is the pseudo-count of successes and of failures: rate 1/2
	// before any evidence, and a floor of prior/(2·prior+1/(1−decay)) ≈ 0.08
	// under a stream of failures, low enough for k = 0 to win.
	prior = 0.5
	// inheritWeight is how many verifications' worth of evidence Inherit
	// passes on: enough to start at the peers' k, little enough for the
	// sequence's own verifications to take over within a few steps.
	inheritWeight = 4
	// minProbeGap and maxProbeGap bound the steps between probes at k = 0.
	minProbeGap, maxProbeGap = 7, 63
	// DefaultCost is the relative cost of one verified draft token assumed
	// before any step was timed: a quarter of a one-token decode.
	DefaultCost = 0.25
)

// Next returns the draft length to propose at this step, when each verified
// draft token costs cost times a plain one-token row. Call it once per step
// in which the sequence decodes: it counts the steps between probes.
func (a *AdaptiveK) Next(cost float64) int {
	if a.Max <= 0 {
		return 0
	}
	k := a.best(cost)
	a.exploring = k == 0
	if k > 0 {
		a.gap = 0 // the draft pays: probe eagerly again once it stops paying
	}
	if a.allKept && a.lastK > 0 && (k > 0 || a.streak >= 2) {
		k = max(k, min(2*a.lastK, a.Max)) // slow start
	}
	if k > 0 {
		return k
	}
	a.idle++
	if !a.seen || a.probeNext || a.idle >= a.probeGap() {
		return 1 // probe
	}
	return 0
}

// best is the k in [0, Max] maximising E(k)/(1 + cost·k) under the current
// estimates; ties go to the shorter draft.
func (a *AdaptiveK) best(cost float64) int {
	bestK, bestGain := 0, 1.0 // k = 0 yields one token at unit cost
	expected, reach, r := 1.0, 1.0, 0.5
	for k := 1; k <= a.Max; k++ {
		r = a.depthRate(k, r)
		reach *= r // the chance that guesses 1..k are all accepted
		expected += reach
		if gain := expected / (1 + cost*float64(k)); gain > bestGain*(1+1e-9) {
			bestK, bestGain = k, gain
		}
	}
	return bestK
}

// depthRate estimates the acceptance of guess k given guesses 1..k−1 were
// accepted, shrunk towards above, the estimate of depth k−1 (1/2 for the
// first), with a weight of 2·prior pseudo-trials.
func (a *AdaptiveK) depthRate(k int, above float64) float64 {
	if k > len(a.depth) {
		return above
	}
	d := a.depth[k-1]
	return (d.kept + 2*prior*above) / (d.judged + 2*prior)
}

func (a *AdaptiveK) probeGap() int {
	if a.gap == 0 {
		return minProbeGap
	}
	return a.gap
}

// Observe records one verification of proposed guesses, accepted of them.
// Verifications with no guesses (the proposer found none) teach nothing.
func (a *AdaptiveK) Observe(proposed, accepted int) {
	if proposed <= 0 {
		return
	}
	seen := a.seen
	a.successes = a.successes*decay + float64(accepted)
	a.failures *= decay
	if accepted < proposed {
		a.failures++
	}
	judged := min(accepted+1, proposed)
	for len(a.depth) < judged {
		a.depth = append(a.depth, trials{})
	}
	for j := range a.depth {
		d := &a.depth[j]
		d.kept, d.judged = d.kept*decay, d.judged*decay
		if j < judged {
			d.judged++
			if j < accepted {
				d.kept++
			}
		}
	}
	a.seen, a.lastK, a.allKept, a.idle = true, proposed, accepted == proposed, 0
	if a.allKept {
		a.streak++
	} else {
		a.streak = 0
	}
	a.probeNext = a.exploring && a.allKept
	if a.exploring && !a.allKept && seen {
		a.gap = min(2*a.probeGap()+1, maxProbeGap) // the probes keep failing: fewer
	}
}

// Inherit starts a, a sequence not yet verified, from parent's estimates
// (a record of every sequence's verifications, say), scaled down to at
// most inheritWeight verifications' worth: a new request on a server whose
// drafts are landing starts at a deep k, and one whose drafts keep failing
// starts at k = 0 without a first probe.
func (a *AdaptiveK) Inherit(parent *AdaptiveK) {
	if !parent.seen || len(parent.depth) == 0 {
		return
	}
	f := 1.0
	if j := parent.depth[0].judged; j > inheritWeight {
		f = inheritWeight / j
	}
	a.successes, a.failures = parent.successes*f, parent.failures*f
	a.depth = a.depth[:0]
	for _, d := range parent.depth {
		a.depth = append(a.depth, trials{kept: d.kept * f, judged: d.judged * f})
	}
	a.seen = true
}

// Rate returns the current per-guess acceptance-rate estimate.
func (a *AdaptiveK) Rate() float64 {
	return (a.successes + prior) / (a.successes + a.failures + 2*prior)
}
