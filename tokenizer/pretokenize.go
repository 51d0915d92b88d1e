package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// splitPattern is a recognised Split regex, matched by scan.
type splitPattern struct {
	maxDigits int  // \p{N} run length per piece: 1 (Qwen), 3 (Llama 3), 0 = unlimited (GPT-2)
	gpt2      bool // GPT-2's pattern: ' ?\p{L}+| ?\p{N}+' without the CR/LF alternatives
}

// The patterns the scanner implements, as written in tokenizer.json.
const (
	patternQwen   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

func parsePattern(p string) (splitPattern, error) {
	switch p {
	case patternQwen:
		return splitPattern{maxDigits: 1}, nil
	case patternLlama3:
		return splitPattern{maxDigits: 3}, nil
	case patternGPT2:
		return splitPattern{gpt2: true}, nil
	}
	return splitPattern{}, fmt.Errorf("tokenizer: Split pattern %q is not supported", p)
}

func isL(r rune) bool     { return unicode.IsLetter(r) }
func isN(r rune) bool     { return unicode.IsNumber(r) }
func isS(r rune) bool     { return unicode.IsSpace(r) }
func isCRLF(r rune) bool  { return r == '\r' || r == '\n' }
func isPunct(r rune) bool { return !isS(r) && !isL(r) && !isN(r) } // [^\s\p{L}\p{N}]

// runeAt decodes the rune at i (RuneError, 1 past the end is never asked).
func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(s[i:])
}

// scan calls emit for each piece of s, in order, as the reference regex with
// "Isolated" behaviour splits it: every byte of s lands in exactly one piece.
func (p splitPattern) scan(s string, emit func(piece string)) {
	for i := 0; i < len(s); {
		n := p.match(s, i)
		if n == 0 { // cannot happen for these patterns (\s+ or a punct run always matches); keep progress
			_, n = runeAt(s, i)
		}
		emit(s[i : i+n])
		i += n
	}
}

// run returns the byte length of the longest run of runes from i for which
// ok holds, and the rune count, stopping after max runes when max > 0.
func run(s string, i int, ok func(rune) bool, max int) (bytes, count int) {
	j := i
	for j < len(s) && (max <= 0 || count < max) {
		r, w := runeAt(s, j)
		if !ok(r) {
			break
		}
		j += w
		count++
	}
	return j - i, count
}

// match returns the length of the piece starting at i: the first
// alternative of the pattern that matches there, as a backtracking engine
// would find it.
func (p splitPattern) match(s string, i int) int {
	c0, w0 := runeAt(s, i)
	c1, w1 := runeAt(s, i+w0)

	// contractions: 's 't 're 've 'm 'll 'd (case-insensitive except GPT-2)
	if c0 == '\'' && c1 >= 0 {
		l1 := c1
		if !p.gpt2 {
			l1 = unicode.ToLower(c1)
		}
		switch l1 {
		case 's', 't', 'm', 'd':
			return w0 + w1
		case 'r', 'v', 'l':
			c2, w2 := runeAt(s, i+w0+w1)
			if !p.gpt2 {
				c2 = unicode.ToLower(c2)
			}
			if l1 == 'r' && c2 == 'e' || l1 == 'v' && c2 == 'e' || l1 == 'l' && c2 == 'l' {
				return w0 + w1 + w2
			}
		}
	}
	if p.gpt2 {
		return p.matchGPT2(s, i, c0, w0, c1)
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isL(c0) {
		n, _ := run(s, i, isL, 0)
		return n
	}
	if c0 >= 0 && !isCRLF(c0) && !isN(c0) && isL(c1) {
		n, _ := run(s, i+w0, isL, 0)
		return w0 + n
	}
	// \p{N} or \p{N}{1,3}
	if isN(c0) {
		n, _ := run(s, i, isN, p.maxDigits)
		return n
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	if c0 == ' ' && isPunct(c1) || isPunct(c0) {
		j := i
		if c0 == ' ' {
			j += w0
		}
		n, _ := run(s, j, isPunct, 0)
		j += n
		n, _ = run(s, j, isCRLF, 0)
		return j + n - i
	}
	// whitespace: \s*[\r\n]+ | \s+(?!\S) | \s+
	ws, count := run(s, i, isS, 0)
	if ws == 0 {
		return 0
	}
	// \s*[\r\n]+ ends just after the last CR or LF of the run
	lastNL := -1
	for j := i; j < i+ws; {
		r, w := runeAt(s, j)
		if isCRLF(r) {
			lastNL = j + w
		}
		j += w
	}
	if lastNL >= 0 {
		return lastNL - i
	}
	return p.trailingSpace(s, i, ws, count)
}

// trailingSpace applies \s+(?!\S)|\s+ to a whitespace run of ws bytes
// (count runes) at i: the whole run at the end of the text or before
// another whitespace; otherwise all but its last rune, which then joins the
// next piece; a single rune stays alone.
func (p splitPattern) trailingSpace(s string, i, ws, count int) int {
	if i+ws == len(s) || count == 1 {
		return ws
	}
	_, last := utf8.DecodeLastRuneInString(s[i : i+ws])
	return ws - last
}

// matchGPT2 handles the rest of GPT-2's pattern:
// ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+'.
func (p splitPattern) matchGPT2(s string, i int, c0 rune, w0 int, c1 rune) int {
	for _, class := range []func(rune) bool{isL, isN, isPunct} {
		if class(c0) {
			n, _ := run(s, i, class, 0)
			return n
		}
		if c0 == ' ' && class(c1) {
			n, _ := run(s, i+w0, class, 0)
			return w0 + n
		}
	}
	ws, count := run(s, i, isS, 0)
	if ws == 0 {
		return 0
	}
	return p.trailingSpace(s, i, ws, count)
}
