package bench

import (
	"math"
	"slices"
)

// Latency summarises a set of latencies in milliseconds. Percentiles use
// linear interpolation between closest ranks, which is numpy.percentile's
// default and so what vLLM's serving benchmark reports.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
}

// summarize returns the Latency of xs; all zero when xs is empty.
func summarize(xs []float64) Latency {
	if len(xs) == 0 {
		return Latency{}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	sum := 0.0
	for _, x := range sorted {
		sum += x
	}
	return Latency{
		Mean: sum / float64(len(sorted)),
		P50:  percentile(sorted, 50),
		P90:  percentile(sorted, 90),
		P99:  percentile(sorted, 99),
	}
}

// percentile returns the p-th percentile (0..100) of sorted, interpolating
// linearly between the two closest ranks: rank = p/100·(n−1).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(rank-float64(lo))
}
