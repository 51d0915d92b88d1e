package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites text before pre-tokenization, as a tokenizer.json
// "normalizer" does.
type normalizer interface {
	normalize(s string) string
}

// unicodeForm is one of the four Unicode normalization forms.
type unicodeForm struct{ form norm.Form }

func (u unicodeForm) normalize(s string) string { return u.form.String(s) }

// lowercase maps each character to its full lowercase mapping, character by
// character as Rust's char::to_lowercase does (so no final-sigma rule).
type lowercase struct{}

func (lowercase) normalize(s string) string {
	return strings.Map(unicode.ToLower, strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

// strip removes leading and/or trailing white space.
type strip struct{ left, right bool }

func (p strip) normalize(s string) string {
	if p.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if p.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

// stripAccents removes non-spacing marks (accents once NFD has split them
// off).
type stripAccents struct{}

func (stripAccents) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// prepend puts a fixed string before any non-empty text (SentencePiece's
// leading "▁").
type prepend struct{ prefix string }

func (p prepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return p.prefix + s
}

// replace substitutes every non-overlapping match of a literal string or a
// regular expression, leftmost first.
type replace struct {
	literal string
	re      *regexp.Regexp // nil for a literal pattern
	content string
}

func (p replace) normalize(s string) string {
	if p.re != nil {
		return p.re.ReplaceAllLiteralString(s, p.content)
	}
	if p.literal == "" {
		return s
	}
	return strings.ReplaceAll(s, p.literal, p.content)
}

// sequence applies normalizers in order.
type sequence []normalizer

func (q sequence) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

// normalizerJSON is a tokenizer.json normalizer object.
type normalizerJSON struct {
	Type        string           `json:"type"`
	Normalizers []normalizerJSON `json:"normalizers"`
	Prepend     string           `json:"prepend"`
	Pattern     patternJSON      `json:"pattern"`
	Content     string           `json:"content"`
	StripLeft   bool             `json:"strip_left"`
	StripRight  bool             `json:"strip_right"`
}

// patternJSON is {"String": "..."} or {"Regex": "..."}.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// parseNormalizer builds the normalizer of a tokenizer.json; nil when there
// is none.
func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c normalizerJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: normalizer: %w", err)
	}
	return buildNormalizer(c)
}

func buildNormalizer(c normalizerJSON) (normalizer, error) {
	switch c.Type {
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFD":
		return unicodeForm{norm.NFD}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "Strip":
		return strip{left: c.StripLeft, right: c.StripRight}, nil
	case "StripAccents":
		return stripAccents{}, nil
	case "Prepend":
		return prepend{prefix: c.Prepend}, nil
	case "Replace":
		r := replace{content: c.Content}
		switch {
		case c.Pattern.String != nil:
			r.literal = *c.Pattern.String
		case c.Pattern.Regex != nil:
			re, err := compileRegex(*c.Pattern.Regex)
			if err != nil {
				return nil, fmt.Errorf("tokenizer: Replace normalizer: %w", err)
			}
			r.re = re
		default:
			return nil, fmt.Errorf("tokenizer: Replace normalizer without a String or Regex pattern")
		}
		return r, nil
	case "Sequence":
		var q sequence
		for _, sub := range c.Normalizers {
			n, err := buildNormalizer(sub)
			if err != nil {
				return nil, err
			}
			q = append(q, n)
		}
		if len(q) == 1 {
			return q[0], nil
		}
		return q, nil
	}
	return nil, fmt.Errorf("tokenizer: normalizer %q is not supported", c.Type)
}

// compileRegex compiles a tokenizer.json regex with Go's regexp, refusing
// what Go would read differently from the reference's Oniguruma engine:
// look-around and back-references (which Go lacks) and the Perl classes
// \s \d \w \b (ASCII in Go, Unicode in the reference).
func compileRegex(pattern string) (*regexp.Regexp, error) {
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "(?="), strings.HasPrefix(pattern[i:], "(?!"),
			strings.HasPrefix(pattern[i:], "(?<="), strings.HasPrefix(pattern[i:], "(?<!"):
			return nil, fmt.Errorf("regex %q uses look-around, which is not supported", pattern)
		case pattern[i] == '\\' && i+1 < len(pattern):
			i++
			switch c := pattern[i]; {
			case c >= '1' && c <= '9', c == 'k':
				return nil, fmt.Errorf("regex %q uses a back-reference, which is not supported", pattern)
			case strings.IndexByte(`sSdDwWbB`, c) >= 0:
				return nil, fmt.Errorf(`regex %q uses \%c, whose Unicode meaning is not supported`, pattern, c)
			}
		}
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", pattern, err)
	}
	return re, nil
}
