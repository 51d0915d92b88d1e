package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SLO is a service-level objective per request, in milliseconds; zero fields
// are not checked. A request meets it when every checked metric is at or
// under its bound (as vLLM's --goodput defines it).
type SLO struct {
	TTFTMs float64 `json:"ttft_ms"`
	TPOTMs float64 `json:"tpot_ms"`
	E2EMs  float64 `json:"e2e_ms"`
}

// ParseSLO parses "ttft=500ms,tpot=50ms,e2e=10s". A bare number is
// milliseconds; "e2el" is accepted for vLLM's name of e2e. "" is no SLO.
func ParseSLO(s string) (SLO, error) {
	var slo SLO
	if strings.TrimSpace(s) == "" {
		return slo, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return SLO{}, fmt.Errorf("bench: slo %q: want metric=value", part)
		}
		v, err := parseMillis(val)
		if err != nil {
			return SLO{}, fmt.Errorf("bench: slo %q: %w", part, err)
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "ttft":
			slo.TTFTMs = v
		case "tpot":
			slo.TPOTMs = v
		case "e2e", "e2el":
			slo.E2EMs = v
		default:
			return SLO{}, fmt.Errorf("bench: slo %q: unknown metric (want ttft, tpot or e2e)", part)
		}
	}
	return slo, nil
}

func parseMillis(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v <= 0 {
			return 0, fmt.Errorf("bound must be positive")
		}
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bound %q is neither milliseconds nor a duration", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("bound must be positive")
	}
	return ms(d), nil
}

// IsZero reports whether no metric is checked.
func (s SLO) IsZero() bool { return s == SLO{} }

// met reports whether a completed request meets the SLO.
func (s SLO) met(x Sample) bool {
	return (s.TTFTMs == 0 || x.TTFTMs <= s.TTFTMs) &&
		(s.TPOTMs == 0 || x.TPOTMs <= s.TPOTMs) &&
		(s.E2EMs == 0 || x.E2EMs <= s.E2EMs)
}

// String formats the SLO in the flag syntax.
func (s SLO) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		v    float64
	}{{"ttft", s.TTFTMs}, {"tpot", s.TPOTMs}, {"e2e", s.E2EMs}} {
		if p.v > 0 {
			parts = append(parts, p.name+"="+strconv.FormatFloat(p.v, 'g', -1, 64)+"ms")
		}
	}
	return strings.Join(parts, ",")
}
