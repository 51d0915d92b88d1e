package jinja

import (
	"strings"
	"unicode/utf8"
)

// Span is the byte range [Start, End) of a text.
type Span struct{ Start, End int }

// marked is a string some of whose bytes came from request content (a
// message's text, a tool's arguments or result, a document): spans lists
// those byte ranges, sorted, disjoint and never adjacent. Provenance
// travels with the text through every string operation, so the renderer can
// say which bytes of its output the template wrote and which the client
// did, whatever the template cut, stripped or concatenated; the tokenizer
// then parses control tokens only in the template's bytes. Values hold a
// *marked, never changed once made; a string with no content bytes is
// always a plain string, never a marked one without spans.
type marked struct {
	s      string
	spans  []Span
	inline [2]Span // spans' storage when there are few, saving an allocation
}

// newMarked returns s with its content spans: a plain string when there
// are none.
func newMarked(s string, spans []Span) Value {
	if len(spans) == 0 {
		return s
	}
	return &marked{s: s, spans: spans}
}

// content returns s with all its bytes marked as content.
func content(s string) Value {
	if s == "" {
		return s
	}
	m := &marked{s: s}
	m.inline[0] = Span{0, len(s)}
	m.spans = m.inline[:1]
	return m
}

// MarkContent returns v with every string in it, and every key of every
// dict in it, marked as request content: a client's message, tool or
// document enters the template this way. Lists and dicts are copied,
// unless everything in them is marked already (DecodeJSONContent,
// NewContentMap); v is left as it was.
func MarkContent(v Value) Value {
	if isContent(v) {
		return v
	}
	var m marker
	return m.mark(v)
}

// Content is s marked as request content.
func Content(s string) Value { return content(s) }

// NewContentMap returns an empty Map whose keys are request content; its
// values should be too (Content, DecodeJSONContent), so that MarkContent
// takes it as it is.
func NewContentMap() *Map { return &Map{vals: map[string]Value{}, contentKeys: true} }

// isContent reports whether every string and key in v is already marked.
func isContent(v Value) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case []Value:
		for _, it := range x {
			if !isContent(it) {
				return false
			}
		}
	case *Map:
		if !x.contentKeys {
			return false
		}
		for _, it := range x.vals {
			if !isContent(it) {
				return false
			}
		}
	}
	return true
}

// marker marks content, taking the marked strings from a slab, so that
// marking a conversation's strings costs a few allocations, not one per
// string.
type marker struct{ strs []marked }

func (mk *marker) mark(v Value) Value {
	switch x := v.(type) {
	case string:
		if x == "" {
			return x
		}
		if len(mk.strs) == 0 {
			mk.strs = make([]marked, 64)
		}
		m := &mk.strs[0]
		mk.strs = mk.strs[1:]
		m.s, m.inline[0] = x, Span{0, len(x)}
		m.spans = m.inline[:1]
		return m
	case []Value:
		out := make([]Value, len(x))
		for i, it := range x {
			out[i] = mk.mark(it)
		}
		return out
	case *Map:
		m := &Map{keys: x.keys, vals: make(map[string]Value, len(x.vals)), contentKeys: true}
		for k, it := range x.vals {
			m.vals[k] = mk.mark(it)
		}
		return m
	}
	return v
}

// textOf returns v's text and content spans when v is a string.
func textOf(v Value) (marked, bool) {
	switch x := v.(type) {
	case string:
		return marked{s: x}, true
	case *marked:
		return *x, true
	}
	return marked{}, false
}

// plain drops a string's content marks; other values are returned as is.
// Comparisons, membership and tests look at the text alone.
func plain(v Value) Value {
	if m, ok := v.(*marked); ok {
		return m.s
	}
	return v
}

// value is m as a template value.
func (m marked) value() Value { return newMarked(m.s, m.spans) }

// sub returns the bytes [i, j) of m with the spans that fall there.
func (m marked) sub(i, j int) marked {
	out := marked{s: m.s[i:j]}
	for _, sp := range m.spans {
		a, b := max(sp.Start, i), min(sp.End, j)
		if a < b {
			out.spans = append(out.spans, Span{a - i, b - i})
		}
	}
	return out
}

// chars splits m into its characters, each marked where m is.
func (m marked) chars() []Value {
	out := make([]Value, 0, len(m.s))
	for i, r := range m.s {
		w := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, w = utf8.DecodeRuneInString(m.s[i:])
		}
		ch := string(r) // an invalid byte becomes U+FFFD, as ranging does
		if len(m.sub(i, i+w).spans) > 0 {
			out = append(out, content(ch))
		} else {
			out = append(out, ch)
		}
	}
	return out
}

// mapRunes rewrites m one character at a time; a character's replacement
// is content when the character was. next gets each character in order.
func (m marked) mapRunes(next func(r rune) string) marked {
	var b textBuilder
	for _, ch := range m.chars() {
		c, _ := textOf(ch)
		r, _ := utf8.DecodeRuneInString(c.s)
		out := next(r)
		if len(c.spans) > 0 {
			b.write(marked{s: out, spans: []Span{{0, len(out)}}})
		} else {
			b.WriteString(out)
		}
	}
	return b.marked()
}

// textBuilder builds a string and the spans of its content bytes.
type textBuilder struct {
	sb    strings.Builder
	spans []Span
}

func (b *textBuilder) WriteString(s string) { b.sb.WriteString(s) }

func (b *textBuilder) WriteByte(c byte) error { return b.sb.WriteByte(c) }

func (b *textBuilder) Len() int { return b.sb.Len() }

// write appends m, shifting its spans to where it lands.
func (b *textBuilder) write(m marked) {
	off := b.sb.Len()
	b.sb.WriteString(m.s)
	for _, sp := range m.spans {
		b.mark(off+sp.Start, off+sp.End)
	}
}

// writeValue appends v as the template prints it.
func (b *textBuilder) writeValue(v Value) {
	switch x := v.(type) {
	case string:
		b.sb.WriteString(x)
	case *marked:
		b.write(*x)
	case []Value, *Map:
		writeRepr(b, x)
	default:
		b.sb.WriteString(str(x))
	}
}

// mark records [start, end) as content, merging with the last span when
// they touch.
func (b *textBuilder) mark(start, end int) {
	if start >= end {
		return
	}
	if n := len(b.spans); n > 0 && b.spans[n-1].End >= start {
		b.spans[n-1].End = max(b.spans[n-1].End, end)
		return
	}
	b.spans = append(b.spans, Span{start, end})
}

func (b *textBuilder) String() string { return b.sb.String() }

func (b *textBuilder) marked() marked { return marked{s: b.sb.String(), spans: b.spans} }

// value is the built text as a template value.
func (b *textBuilder) value() Value { return newMarked(b.sb.String(), b.spans) }

// strMarked renders v as str does, keeping content marks.
func strMarked(v Value) marked {
	switch x := v.(type) {
	case string:
		return marked{s: x}
	case *marked:
		return *x
	case []Value, *Map:
		var b textBuilder
		writeRepr(&b, x)
		return b.marked()
	}
	return marked{s: str(v)}
}

// concat joins texts, keeping their marks.
func concat(parts ...marked) Value {
	n, spans := 0, 0
	for _, p := range parts {
		n += len(p.s)
		spans += len(p.spans)
	}
	if spans == 0 && len(parts) == 2 {
		return parts[0].s + parts[1].s
	}
	out := &marked{}
	b := textBuilder{spans: out.inline[:0]}
	b.sb.Grow(n)
	for _, p := range parts {
		b.write(p)
	}
	out.s, out.spans = b.sb.String(), b.spans
	return out
}

// replaceAll is strings.ReplaceAll keeping marks: the kept bytes of m keep
// theirs, and each inserted copy of nw carries nw's.
func replaceAll(m marked, old string, nw marked) Value {
	if len(m.spans) == 0 && len(nw.spans) == 0 {
		return strings.ReplaceAll(m.s, old, nw.s)
	}
	if old == "" { // Python inserts nw around every character
		var b textBuilder
		b.write(nw)
		for _, ch := range m.chars() {
			c, _ := textOf(ch)
			b.write(c)
			b.write(nw)
		}
		return b.value()
	}
	var b textBuilder
	i := 0
	for {
		j := strings.Index(m.s[i:], old)
		if j < 0 {
			break
		}
		b.write(m.sub(i, i+j))
		b.write(nw)
		i += j + len(old)
	}
	b.write(m.sub(i, len(m.s)))
	return b.value()
}

// trimmed returns the part of m that remains after trim, which must
// return a substring of its argument (strings.Trim and its kin do).
func trimmed(m marked, left, right func(string) string) marked {
	rest := left(m.s)
	i := len(m.s) - len(rest)
	rest = right(rest)
	return m.sub(i, i+len(rest))
}
