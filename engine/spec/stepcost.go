package spec

// StepCost learns what verifying one more token costs, from timed steps: a
// step's time is modelled as Fixed + PerToken·tokens (weights read once per
// pass, then work per token) and fitted by exponentially weighted least
// squares over the recent steps, so it follows the kernels, the machine's
// load and the context length. A fit is taken only when the steps differ
// enough in size and the slope stands out of the noise (at least twice its
// standard error: on shared cores a step's time can double at random);
// otherwise the last good fit stays, or DefaultCost before the first. The
// cost never drops below MinCost, so noise cannot make verification look
// free and turn drafts on everywhere.
//
// It is a plain value: the caller times the steps and feeds them in. The
// zero value is ready to use.
type StepCost struct {
	w, sx, sy, sxx, sxy, syy float64 // decayed sums of 1, x, y, x², xy, y²
	fixed, perToken          float64 // the last fit, in seconds
	fitted                   bool
}

const (
	// costDecay weights the previous steps: about the last 30 count.
	costDecay = 0.97
	// minSpread is the variance of step sizes (tokens²) the fit needs: a
	// run of one-token steps with a probe of two every eight or so.
	minSpread = 0.05
	// minSteps is the effective number of steps the fit needs.
	minSteps = 4
	// MinCost floors Cost: above the acceptance estimate of a draft that
	// keeps failing (about 0.08, see AdaptiveK), so that one stays at k = 0.
	MinCost = 0.1
)

// Observe records a step that fed tokens tokens and took seconds.
func (c *StepCost) Observe(tokens int, seconds float64) {
	if tokens <= 0 || !(seconds > 0) {
		return
	}
	x, y := float64(tokens), seconds
	c.w = c.w*costDecay + 1
	c.sx = c.sx*costDecay + x
	c.sy = c.sy*costDecay + y
	c.sxx = c.sxx*costDecay + x*x
	c.sxy = c.sxy*costDecay + x*y
	c.syy = c.syy*costDecay + y*y
	if c.w < minSteps {
		return
	}
	mx, my := c.sx/c.w, c.sy/c.w
	vx := c.sxx/c.w - mx*mx
	if vx < minSpread {
		return
	}
	slope := (c.sxy/c.w - mx*my) / vx
	icept := my - slope*mx
	// Weighted residual sum of squares, then the slope's standard error.
	rss := c.syy - 2*icept*c.sy - 2*slope*c.sxy + icept*icept*c.w + 2*icept*slope*c.sx + slope*slope*c.sxx
	se2 := max(rss, 0) / (c.w - 2) / (c.w * vx)
	if slope <= 0 || 4*se2 > slope*slope {
		return // not distinguishable from noise
	}
	c.perToken, c.fixed, c.fitted = slope, max(icept, 0), true
}

// Cost returns the time of one more verified token in a row of a step with
// rows decode rows, relative to that row's share of a one-token-per-row
// step: PerToken / (Fixed/rows + PerToken). It is what AdaptiveK.Next takes.
// With many rows the fixed part is shared and an extra token costs about as
// much as a whole row, so speculation pays only for drafts that are nearly
// always right.
func (c *StepCost) Cost(rows int) float64 {
	if !c.fitted {
		return DefaultCost
	}
	rows = max(rows, 1)
	return max(c.perToken/(c.fixed/float64(rows)+c.perToken), MinCost)
}

// Fit returns the last fit, in seconds, and whether there is one.
func (c *StepCost) Fit() (fixed, perToken float64, ok bool) {
	return c.fixed, c.perToken, c.fitted
}
