package tokenizer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json "added_tokens".
type addedToken struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// segment is a piece of the input: either plain text to tokenize or an
// added token already resolved to its id.
type segment struct {
	text  string
	id    int32 // -1 for text
	start int   // byte offset of text in the input
}

// addedMatcher finds added tokens in text, longest first at each position.
// Tokens are looked up by content for each length that some token starting
// with the same byte has: Gemma has thousands of added tokens beginning
// with '<', which a scan of candidates would try one by one.
type addedMatcher struct {
	byContent map[string]*addedToken
	lengths   [256][]int // distinct content lengths by first byte, longest first
}

func newAddedMatcher(tokens []addedToken) *addedMatcher {
	m := &addedMatcher{byContent: map[string]*addedToken{}}
	for i := range tokens {
		t := &tokens[i]
		if t.Content == "" {
			continue
		}
		if _, dup := m.byContent[t.Content]; dup {
			continue // the first one wins, as before
		}
		m.byContent[t.Content] = t
		c := t.Content[0]
		if !slices.Contains(m.lengths[c], len(t.Content)) {
			m.lengths[c] = append(m.lengths[c], len(t.Content))
		}
	}
	for c := range m.lengths {
		slices.SortFunc(m.lengths[c], func(a, b int) int { return b - a })
	}
	return m
}

// split cuts text at added tokens; special tokens are matched only when
// parseSpecial is set, the other added tokens always.
func (m *addedMatcher) split(text string, parseSpecial bool) []segment {
	return m.splitOutside(text, parseSpecial, nil)
}

// splitOutside is split that matches no added token, special or not, that
// overlaps one of the content spans (sorted and disjoint): their bytes stay
// plain text. Plain text is cut only at matched tokens, never at a span's
// edge, so text without tokens encodes as it would without spans.
func (m *addedMatcher) splitOutside(text string, parseSpecial bool, content []Span) []segment {
	var segs []segment
	start := 0 // start of pending plain text
	for i := 0; i < len(text); {
		for len(content) > 0 && content[0].End <= i {
			content = content[1:]
		}
		limit := len(text) // a token must end by the next content span
		if len(content) > 0 {
			if content[0].Start <= i {
				i = content[0].End
				continue
			}
			limit = content[0].Start
		}
		t := m.at(text, i, limit, parseSpecial)
		if t == nil {
			i++
			continue
		}
		end := i + len(t.Content)
		pre := text[start:i]
		if t.LStrip {
			pre = strings.TrimRightFunc(pre, unicode.IsSpace)
		}
		if pre != "" {
			segs = append(segs, segment{text: pre, id: -1, start: start})
		}
		segs = append(segs, segment{id: t.ID, start: i})
		if t.RStrip {
			for end < len(text) {
				r, w := utf8.DecodeRuneInString(text[end:])
				if !unicode.IsSpace(r) {
					break
				}
				end += w
			}
		}
		i, start = end, end
	}
	if start < len(text) {
		segs = append(segs, segment{text: text[start:], id: -1, start: start})
	}
	return segs
}

// at returns the added token matching text at i and ending by limit, or nil.
func (m *addedMatcher) at(text string, i, limit int, parseSpecial bool) *addedToken {
	for _, n := range m.lengths[text[i]] {
		if i+n > limit {
			continue
		}
		t := m.byContent[text[i:i+n]]
		if t == nil || t.Special && !parseSpecial {
			continue
		}
		if t.SingleWord && (isWordBefore(text, i) || isWordAfter(text, i+n)) {
			continue
		}
		return t
	}
	return nil
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

func isWordBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWord(r)
}

func isWordAfter(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWord(r)
}
