package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The word-level pre-tokenizers (WhitespaceSplit, Whitespace, Digits,
// Punctuation, BertPreTokenizer) cut at character classes. Each is the
// reference's definition written over Go's Unicode tables; the component
// tables in testdata/components.json hold them to the reference.

// charSplit splits at every character for which match holds (each such
// character is one match) with a Split behavior.
type charSplit struct {
	match    func(rune) bool
	behavior splitBehavior
	runs     bool // a run of matching characters is one match
}

func (p charSplit) split(dst []string, s string, _ bool) []string {
	var matches [][2]int
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !p.match(r) {
			i += w
			continue
		}
		if p.runs && len(matches) > 0 && matches[len(matches)-1][1] == i {
			matches[len(matches)-1][1] = i + w
		} else {
			matches = append(matches, [2]int{i, i + w})
		}
		i += w
	}
	return splitOn(dst, s, matches, p.behavior, false)
}

// whitespaceWords is the Whitespace pre-tokenizer, the regex
// \w+|[^\w\s]+ with Unicode classes: runs of word characters and runs of
// other non-space characters; spaces are dropped.
type whitespaceWords struct{}

func (whitespaceWords) split(dst []string, s string, _ bool) []string {
	start, class := 0, 0 // class of the current run: 0 space, 1 word, 2 other
	for i := 0; i <= len(s); {
		c, w := 0, 0
		if i < len(s) {
			var r rune
			r, w = utf8.DecodeRuneInString(s[i:])
			switch {
			case unicode.IsSpace(r):
				c = 0
			case isWordChar(r):
				c = 1
			default:
				c = 2
			}
		}
		if i == len(s) || c != class {
			if class != 0 && i > start {
				dst = append(dst, s[start:i])
			}
			start, class = i, c
		}
		if i == len(s) {
			break
		}
		i += w
	}
	return dst
}

// isWordChar is \w in the reference's regex engine: alphabetic, marks,
// decimal digits and connector punctuation.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r)
}

// isPunctuation is the reference's is_punc: ASCII punctuation (which
// includes symbols such as $ + < = > ^ ` | ~) or a Unicode punctuation
// character.
func isPunctuation(r rune) bool {
	if r < 0x80 {
		return r > ' ' && r < 0x7F && !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

// bertWords is the BertPreTokenizer: split at white space (dropped), then
// isolate each punctuation character.
type bertWords struct{}

func (bertWords) split(dst []string, s string, atStart bool) []string {
	spaces := charSplit{match: unicode.IsSpace, behavior: removed}
	punct := charSplit{match: isPunctuation, behavior: isolated}
	for _, w := range spaces.split(nil, s, atStart) {
		dst = punct.split(dst, w, false)
	}
	return dst
}
