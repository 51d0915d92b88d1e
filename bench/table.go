package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteTable prints one line per step: load, request counts, throughputs and
// latencies (mean / p50 / p99, in ms), then the notes a reader needs to trust
// the numbers (where token counts came from, which errors happened).
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tok\terr\treq/s\tout tok/s\ttot tok/s\tgoodput\tTTFT mean/p50/p99\tTPOT mean/p50/p99\tITL mean/p50/p99\tE2E mean/p50/p99\t")
	for _, st := range r.Steps {
		s := st.Summary
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.1f\t%.1f\t%.2f\t%s\t%s\t%s\t%s\t\n",
			stepOf(s), s.Completed, s.Errors, s.RequestThroughput, s.OutputTokensPerS, s.TotalTokensPerS, s.Goodput,
			triple(s.TTFT), triple(s.TPOT), triple(s.ITL), triple(s.E2E))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: writing table: %w", err)
	}
	for _, n := range notes(r) {
		fmt.Fprintln(w, "note:", n)
	}
	return nil
}

func stepOf(s Summary) Step { return Step{Concurrency: s.Concurrency, Rate: s.Rate} }

func triple(l Latency) string { return fmt.Sprintf("%.1f/%.1f/%.1f", l.Mean, l.P50, l.P99) }

// notes explains the parts of a report a reader could misread.
func notes(r *Report) []string {
	var out []string
	for _, st := range r.Steps {
		s := st.Summary
		switch s.OutputTokensSource {
		case SourceChunks, "mixed":
			out = append(out, fmt.Sprintf("%s: the server reported no usage for some or all requests; output tokens were counted as streamed chunks (a lower bound if it sends several tokens per chunk)", stepOf(s)))
		}
		switch s.PromptTokensSource {
		case SourceEstimate, "mixed":
			out = append(out, fmt.Sprintf("%s: prompt tokens estimated as words (one word ≈ one token)", stepOf(s)))
		}
		if len(s.ErrorKind) > 0 {
			kinds := make([]string, 0, len(s.ErrorKind))
			for k, n := range s.ErrorKind {
				kinds = append(kinds, fmt.Sprintf("%s×%d", k, n))
			}
			sort.Strings(kinds)
			out = append(out, fmt.Sprintf("%s: errors: %s", stepOf(s), strings.Join(kinds, ", ")))
		}
	}
	if !r.Config.SLO.IsZero() {
		out = append(out, "goodput: completed requests/s meeting "+r.Config.SLO.String())
	}
	return out
}
