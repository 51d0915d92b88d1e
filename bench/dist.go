package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Length is a distribution of token counts (prompt or output lengths).
// Parse it from the flag syntax with ParseLength.
type Length struct {
	kind     lengthKind
	min, max int     // fixed (min == max) and uniform bounds, inclusive
	mean, sd float64 // normal
	spec     string  // the text it was parsed from, for reports
}

type lengthKind int

const (
	lengthFixed lengthKind = iota
	lengthUniform
	lengthNormal
)

// ParseLength parses a length distribution:
//
//	"128"             always 128
//	"128:512"         uniform integer in [128, 512]
//	"normal:256,64"   normal with mean 256 and standard deviation 64,
//	                  rounded and clamped to at least 1
func ParseLength(s string) (Length, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "normal:"); ok {
		m, d, ok := strings.Cut(rest, ",")
		mean, err1 := strconv.ParseFloat(strings.TrimSpace(m), 64)
		sd, err2 := strconv.ParseFloat(strings.TrimSpace(d), 64)
		if !ok || err1 != nil || err2 != nil || mean < 1 || sd < 0 {
			return Length{}, fmt.Errorf("bench: length %q: want normal:MEAN,SD with MEAN >= 1 and SD >= 0", s)
		}
		return Length{kind: lengthNormal, mean: mean, sd: sd, spec: s}, nil
	}
	if lo, hi, ok := strings.Cut(s, ":"); ok {
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a < 1 || b < a {
			return Length{}, fmt.Errorf("bench: length %q: want MIN:MAX with 1 <= MIN <= MAX", s)
		}
		return Length{kind: lengthUniform, min: a, max: b, spec: s}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return Length{}, fmt.Errorf("bench: length %q: want a positive integer, MIN:MAX or normal:MEAN,SD", s)
	}
	return FixedLength(n), nil
}

// FixedLength is the distribution that always gives n.
func FixedLength(n int) Length {
	return Length{kind: lengthFixed, min: n, max: n, spec: strconv.Itoa(n)}
}

// Sample draws one length.
func (l Length) Sample(rng *rand.Rand) int {
	switch l.kind {
	case lengthUniform:
		return l.min + rng.IntN(l.max-l.min+1)
	case lengthNormal:
		return max(1, int(math.Round(l.mean+l.sd*rng.NormFloat64())))
	default:
		return l.min
	}
}

// String returns the flag syntax the distribution was parsed from.
func (l Length) String() string { return l.spec }

// IsZero reports whether l is the zero value (no distribution given).
func (l Length) IsZero() bool { return l.spec == "" }
