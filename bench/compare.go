package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// compareMetric is one row of a comparison.
type compareMetric struct {
	name           string
	get            func(Summary) float64
	higherIsBetter bool
}

var compareMetrics = [...]compareMetric{
	{"req/s", func(s Summary) float64 { return s.RequestThroughput }, true},
	{"out tok/s", func(s Summary) float64 { return s.OutputTokensPerS }, true},
	{"tot tok/s", func(s Summary) float64 { return s.TotalTokensPerS }, true},
	{"goodput", func(s Summary) float64 { return s.Goodput }, true},
	{"errors", func(s Summary) float64 { return float64(s.Errors) }, false},
	{"TTFT p50 ms", func(s Summary) float64 { return s.TTFT.P50 }, false},
	{"TTFT p99 ms", func(s Summary) float64 { return s.TTFT.P99 }, false},
	{"TPOT p50 ms", func(s Summary) float64 { return s.TPOT.P50 }, false},
	{"TPOT p99 ms", func(s Summary) float64 { return s.TPOT.P99 }, false},
	{"ITL p50 ms", func(s Summary) float64 { return s.ITL.P50 }, false},
	{"ITL p99 ms", func(s Summary) float64 { return s.ITL.P99 }, false},
	{"E2E p50 ms", func(s Summary) float64 { return s.E2E.P50 }, false},
	{"E2E p99 ms", func(s Summary) float64 { return s.E2E.P99 }, false},
}

// WriteComparison prints two runs side by side, step by step (steps are
// matched by their concurrency or rate), with the ratio B/A for each metric.
// A ratio above 1 is better for throughputs and worse for latencies; the last
// column says which run won. Steps present in only one run are listed as
// missing.
func WriteComparison(w io.Writer, a, b *Report, nameA, nameB string) error {
	for _, warn := range comparability(a, b) {
		fmt.Fprintln(w, "warning:", warn)
	}
	fmt.Fprintf(w, "A = %s (%s, %s)\nB = %s (%s, %s)\n\n", nameA, a.Config.BaseURL, a.Config.Model, nameB, b.Config.BaseURL, b.Config.Model)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tmetric\tA\tB\tB/A\tbetter\t")
	byStep := map[Step]Summary{}
	for _, st := range b.Steps {
		byStep[stepOf(st.Summary)] = st.Summary
	}
	for _, st := range a.Steps {
		sa := st.Summary
		sb, ok := byStep[stepOf(sa)]
		if !ok {
			fmt.Fprintf(tw, "%s\t(missing in B)\t\t\t\t\t\n", stepOf(sa))
			continue
		}
		delete(byStep, stepOf(sa))
		for _, m := range compareMetrics {
			va, vb := m.get(sa), m.get(sb)
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%s\t%s\t\n", stepOf(sa), m.name, va, vb, ratio(va, vb), better(va, vb, m.higherIsBetter))
		}
	}
	for _, st := range b.Steps {
		if _, left := byStep[stepOf(st.Summary)]; left {
			fmt.Fprintf(tw, "%s\t(missing in A)\t\t\t\t\t\n", stepOf(st.Summary))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: writing comparison: %w", err)
	}
	return nil
}

func ratio(a, b float64) string {
	if a == 0 {
		if b == 0 {
			return "1.00"
		}
		return "-"
	}
	return fmt.Sprintf("%.2f", b/a)
}

func better(a, b float64, higher bool) string {
	switch {
	case a == b:
		return "="
	case (b > a) == higher:
		return "B"
	}
	return "A"
}

// comparability lists differences in how two runs were made that make their
// numbers not directly comparable.
func comparability(a, b *Report) []string {
	var out []string
	check := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("runs differ in %s: %q vs %q", what, x, y))
		}
	}
	ca, cb := a.Config, b.Config
	check("api", ca.API, cb.API)
	check("workload", ca.Workload, cb.Workload)
	check("input length", ca.InputLen, cb.InputLen)
	check("output length", ca.OutputLen, cb.OutputLen)
	check("load", ca.Load, cb.Load)
	check("seed", fmt.Sprint(ca.Seed), fmt.Sprint(cb.Seed))
	check("requests per step", fmt.Sprint(ca.Requests), fmt.Sprint(cb.Requests))
	return out
}
