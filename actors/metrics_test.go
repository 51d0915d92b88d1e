package actors

import (
	"strconv"
	"strings"
	"testing"
)

// checkAcceptanceLength checks /metrics text from an engine of speculation
// mode against itself: the acceptance-length histogram is labelled with
// the mode, its buckets are cumulative up to its count, and its sum less
// its count (one target token per verify step) is the accepted-token
// counter; with speculation off it is empty. It returns the count.
func checkAcceptanceLength(t *testing.T, text, mode string) int {
	t.Helper()
	values := map[string]float64{}
	var buckets []float64
	for _, line := range strings.Split(text, "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("metric line %q", line)
		}
		values[name] = f
		if strings.HasPrefix(name, "splash_spec_acceptance_length_bucket{") {
			if !strings.HasPrefix(name, `splash_spec_acceptance_length_bucket{mode="`+mode+`",le=`) {
				t.Fatalf("bucket %q is not labelled mode=%q", name, mode)
			}
			buckets = append(buckets, f)
		}
	}
	label := `{mode="` + mode + `"}`
	count, okCount := values["splash_spec_acceptance_length_count"+label]
	sum, okSum := values["splash_spec_acceptance_length_sum"+label]
	accepted := values["splash_spec_accepted_tokens_total"]
	if !okCount || !okSum || len(buckets) == 0 {
		t.Fatalf("no acceptance-length histogram for mode %s:\n%s", mode, text)
	}
	for i := 1; i < len(buckets); i++ {
		if buckets[i] < buckets[i-1] {
			t.Fatalf("acceptance-length buckets not cumulative: %v", buckets)
		}
	}
	if buckets[len(buckets)-1] != count || sum-count != accepted || mode == "off" && count != 0 {
		t.Fatalf("mode %s: acceptance length count %v (+Inf bucket %v), sum %v, accepted tokens %v", mode, count, buckets[len(buckets)-1], sum, accepted)
	}
	return int(count)
}
