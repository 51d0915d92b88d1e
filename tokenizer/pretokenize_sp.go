package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// preTokenizer cuts normalized text into the words BPE runs on, for the
// SentencePiece-style tokenizers (the byte-level ones use splitPattern).
type preTokenizer interface {
	// split appends the words of s to dst. atStart reports whether s begins
	// the input text (Metaspace's "first" scheme prepends only there).
	split(dst []string, s string, atStart bool) []string
}

// prependScheme says where Metaspace adds its replacement character.
type prependScheme int

const (
	prependAlways prependScheme = iota // to every piece of text
	prependFirst                       // only to the piece that starts the input
	prependNever
)

// metaspace replaces spaces with the replacement character ("▁"), prepends
// one according to its scheme, and optionally splits before each
// replacement character (SentencePiece's word boundaries).
type metaspace struct {
	replacement string
	scheme      prependScheme
	splitWords  bool
}

func (m metaspace) split(dst []string, s string, atStart bool) []string {
	if s == "" {
		return dst
	}
	s = strings.ReplaceAll(s, " ", m.replacement)
	if !strings.HasPrefix(s, m.replacement) && (m.scheme == prependAlways || m.scheme == prependFirst && atStart) {
		s = m.replacement + s
	}
	if !m.splitWords {
		return append(dst, s)
	}
	return splitOn(dst, s, literalMatches(s, m.replacement), mergedWithNext, false)
}

// splitBehavior is what Split does with the matches of its pattern.
type splitBehavior int

const (
	removed            splitBehavior = iota // drop them
	isolated                                // keep each as its own piece
	mergedWithPrevious                      // join each to the piece before
	mergedWithNext                          // join each to the piece after
	contiguous                              // keep runs of them as one piece
)

var splitBehaviors = map[string]splitBehavior{
	"Removed": removed, "Isolated": isolated, "MergedWithPrevious": mergedWithPrevious,
	"MergedWithNext": mergedWithNext, "Contiguous": contiguous,
}

// literalSplit is the Split pre-tokenizer with a String pattern.
type literalSplit struct {
	pattern  string
	behavior splitBehavior
	invert   bool
}

func (p literalSplit) split(dst []string, s string, _ bool) []string {
	return splitOn(dst, s, literalMatches(s, p.pattern), p.behavior, p.invert)
}

// regexSplit is the Split pre-tokenizer with a Regex pattern Go's regexp
// reads as the reference does (see compileRegex).
type regexSplit struct {
	re       *regexp.Regexp
	behavior splitBehavior
	invert   bool
}

func (p regexSplit) split(dst []string, s string, _ bool) []string {
	var matches [][2]int
	for _, m := range p.re.FindAllStringIndex(s, -1) {
		matches = append(matches, [2]int{m[0], m[1]})
	}
	return splitOn(dst, s, matches, p.behavior, p.invert)
}

// preSequence applies pre-tokenizers in turn, each to every word of the
// one before.
type preSequence []preTokenizer

func (q preSequence) split(dst []string, s string, atStart bool) []string {
	words := []string{s}
	for _, p := range q {
		var next []string
		for i, w := range words {
			next = p.split(next, w, atStart && i == 0)
		}
		words = next
	}
	return append(dst, words...)
}

// literalMatches returns the byte ranges of the non-overlapping occurrences
// of pat in s, leftmost first.
func literalMatches(s, pat string) [][2]int {
	if pat == "" {
		return nil
	}
	var m [][2]int
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], pat)
		if j < 0 {
			break
		}
		m = append(m, [2]int{i + j, i + j + len(pat)})
		i += j + len(pat)
	}
	return m
}

// piece is a range of the text and whether it is a match of the pattern.
type piece struct {
	start, end int
	match      bool
}

// splitOn cuts s at matches as Hugging Face's split with the given
// behavior does, appending the non-empty pieces to dst.
func splitOn(dst []string, s string, matches [][2]int, b splitBehavior, invert bool) []string {
	var pieces []piece
	at := 0
	for _, m := range matches {
		if m[0] > at {
			pieces = append(pieces, piece{at, m[0], invert})
		}
		if m[1] > m[0] {
			pieces = append(pieces, piece{m[0], m[1], !invert})
		}
		at = m[1]
	}
	if at < len(s) {
		pieces = append(pieces, piece{at, len(s), invert})
	}
	var out []piece
	switch b {
	case removed:
		for _, p := range pieces {
			if !p.match {
				out = append(out, p)
			}
		}
	case isolated:
		out = pieces
	case mergedWithPrevious:
		prev := false
		for _, p := range pieces {
			if p.match && !prev && len(out) > 0 {
				out[len(out)-1].end = p.end
			} else {
				out = append(out, p)
			}
			prev = p.match
		}
	case mergedWithNext:
		// walk backwards: a match joins the piece after it unless that
		// piece is itself a match
		prev := false
		for i := len(pieces) - 1; i >= 0; i-- {
			p := pieces[i]
			if p.match && !prev && len(out) > 0 {
				out[len(out)-1].start = p.start
			} else {
				out = append(out, p)
			}
			prev = p.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	case contiguous:
		for i, p := range pieces {
			if i > 0 && p.match == pieces[i-1].match {
				out[len(out)-1].end = p.end
			} else {
				out = append(out, p)
			}
		}
	}
	for _, p := range out {
		dst = append(dst, s[p.start:p.end])
	}
	return dst
}

// preTokenizerJSON is a tokenizer.json pre_tokenizer object.
type preTokenizerJSON struct {
	Type          string             `json:"type"`
	Pretokenizers []preTokenizerJSON `json:"pretokenizers"`
	Replacement   string             `json:"replacement"`
	PrependScheme string             `json:"prepend_scheme"`
	AddPrefix     *bool              `json:"add_prefix_space"` // older files, instead of prepend_scheme
	Split         *bool              `json:"split"`
	Pattern       patternJSON        `json:"pattern"`
	Behavior      string             `json:"behavior"`
	Invert        bool               `json:"invert"`
	// Digits
	IndividualDigits bool `json:"individual_digits"`
}

// parseSPPreTokenizer builds the pre-tokenizer of a SentencePiece-style
// tokenizer.json; nil when there is none (the whole text is one word).
func parseSPPreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c preTokenizerJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: pre_tokenizer: %w", err)
	}
	return buildSPPreTokenizer(c)
}

func buildSPPreTokenizer(c preTokenizerJSON) (preTokenizer, error) {
	switch c.Type {
	case "Metaspace":
		m := metaspace{replacement: c.Replacement, splitWords: c.Split == nil || *c.Split}
		if len([]rune(m.replacement)) != 1 {
			return nil, fmt.Errorf("tokenizer: Metaspace replacement %q is not one character", c.Replacement)
		}
		switch {
		case c.PrependScheme == "always", c.PrependScheme == "" && (c.AddPrefix == nil || *c.AddPrefix):
			m.scheme = prependAlways
		case c.PrependScheme == "first":
			m.scheme = prependFirst
		case c.PrependScheme == "never", c.PrependScheme == "":
			m.scheme = prependNever
		default:
			return nil, fmt.Errorf("tokenizer: Metaspace prepend_scheme %q is not supported", c.PrependScheme)
		}
		return m, nil
	case "Split":
		b, ok := splitBehaviors[c.Behavior]
		if !ok {
			return nil, fmt.Errorf("tokenizer: Split behavior %q is not supported", c.Behavior)
		}
		switch {
		case c.Pattern.String != nil:
			return literalSplit{pattern: *c.Pattern.String, behavior: b, invert: c.Invert}, nil
		case c.Pattern.Regex != nil:
			re, err := compileRegex(*c.Pattern.Regex)
			if err != nil {
				return nil, fmt.Errorf("tokenizer: Split pre-tokenizer: %w", err)
			}
			return regexSplit{re: re, behavior: b, invert: c.Invert}, nil
		}
		return nil, fmt.Errorf("tokenizer: Split pre-tokenizer without a String or Regex pattern")
	case "WhitespaceSplit":
		return charSplit{match: unicode.IsSpace, behavior: removed}, nil
	case "Whitespace":
		return whitespaceWords{}, nil
	case "BertPreTokenizer":
		return bertWords{}, nil
	case "Digits":
		if c.IndividualDigits {
			return charSplit{match: unicode.IsNumber, behavior: isolated}, nil
		}
		return charSplit{match: unicode.IsNumber, behavior: contiguous, runs: true}, nil
	case "Punctuation":
		b, ok := splitBehaviors[c.Behavior]
		if !ok {
			return nil, fmt.Errorf("tokenizer: Punctuation behavior %q is not supported", c.Behavior)
		}
		return charSplit{match: isPunctuation, behavior: b}, nil
	case "Sequence":
		var q preSequence
		for _, sub := range c.Pretokenizers {
			p, err := buildSPPreTokenizer(sub)
			if err != nil {
				return nil, err
			}
			q = append(q, p)
		}
		return q, nil
	}
	return nil, fmt.Errorf("tokenizer: pre-tokenizer %q is not supported", c.Type)
}
