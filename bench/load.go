package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Step is one level of a sweep: either Concurrency requests kept in flight,
// or Poisson arrivals at Rate requests per second.
type Step struct {
	Concurrency int
	Rate        float64
}

// String names the step as the table and progress bar show it.
func (s Step) String() string {
	if s.Rate > 0 {
		return "rate=" + strconv.FormatFloat(s.Rate, 'g', -1, 64) + "/s"
	}
	return "c=" + strconv.Itoa(s.Concurrency)
}

// Load is the shape of a sweep and the bounds of each step. A step stops
// issuing requests once Requests have been issued or Duration has passed
// (whichever comes first; a zero bound is not checked, but one of them must
// be set); requests in flight then run to their end or to the per-request
// timeout, so every step ends by itself.
type Load struct {
	Steps    []Step
	Requests int
	Duration time.Duration
	// MaxConcurrency caps requests in flight in rate steps (0: no cap).
	MaxConcurrency int
}

// ParseConcurrencySteps parses "1,2,4,8".
func ParseConcurrencySteps(s string) ([]Step, error) {
	var steps []Step
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bench: concurrency %q: want positive integers like 1,2,4", s)
		}
		steps = append(steps, Step{Concurrency: n})
	}
	return steps, nil
}

// ParseRateSteps parses "0.5,1,2" (requests per second).
func ParseRateSteps(s string) ([]Step, error) {
	var steps []Step
	for part := range strings.SplitSeq(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(r > 0) {
			return nil, fmt.Errorf("bench: rate %q: want positive numbers like 1,2,4", s)
		}
		steps = append(steps, Step{Rate: r})
	}
	return steps, nil
}

func (l Load) validate() error {
	if len(l.Steps) == 0 {
		return fmt.Errorf("bench: no load steps")
	}
	if l.Requests <= 0 && l.Duration <= 0 {
		return fmt.Errorf("bench: each step needs a bound: requests or duration")
	}
	return nil
}
