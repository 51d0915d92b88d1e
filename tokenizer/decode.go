package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// appendTokenBytes appends the bytes a token stands for: an added token's
// text as is, a vocabulary entry through the byte-level map.
func (t *Tokenizer) appendTokenBytes(dst []byte, id int32) []byte {
	if id < 0 || int(id) >= len(t.idToToken) {
		return dst
	}
	s := t.idToToken[id]
	if t.isAdded[id] {
		return append(dst, s...)
	}
	for _, r := range s {
		if b, ok := t.bl.toByte[r]; ok {
			dst = append(dst, b)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

func (t *Tokenizer) skip(id int32, skipSpecial bool) bool {
	return skipSpecial && t.IsSpecial(id)
}

// Decode returns the text of ids; skipSpecial drops special tokens. Bytes
// that are not valid UTF-8 become U+FFFD as the reference does: one per
// maximal ill-formed subsequence for byte-level BPE, one per byte of an
// invalid run of byte-fallback tokens for SentencePiece-style BPE.
func (t *Tokenizer) Decode(ids []int32, skipSpecial bool) string {
	if t.dec != nil {
		d := t.NewStreamDecoder(skipSpecial)
		var sb strings.Builder
		for _, id := range ids {
			sb.WriteString(d.Add(id))
		}
		sb.WriteString(d.Flush())
		return sb.String()
	}
	var b []byte
	for _, id := range ids {
		if !t.skip(id, skipSpecial) {
			b = t.appendTokenBytes(b, id)
		}
	}
	return lossyUTF8(b)
}

// lossyUTF8 converts b to a string, replacing each maximal ill-formed
// subsequence with U+FFFD (the Unicode "substitution of maximal subparts"
// practice, which Rust's from_utf8_lossy and WHATWG decoders follow).
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, w := utf8.DecodeRune(b)
		if r != utf8.RuneError || w > 1 {
			sb.Write(b[:w])
			b = b[w:]
			continue
		}
		sb.WriteRune(utf8.RuneError)
		b = b[maximalSubpart(b):]
	}
	return sb.String()
}

// maximalSubpart is the length of the longest prefix of b (at least 1)
// that starts a well-formed sequence but is cut short: the bytes one
// U+FFFD replaces.
func maximalSubpart(b []byte) int {
	c := b[0]
	var n int
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case c >= 0xC2 && c <= 0xDF:
		n = 2
	case c == 0xE0:
		n, lo = 3, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		n = 3
	case c == 0xED:
		n, hi = 3, 0x9F
	case c == 0xF0:
		n, lo = 4, 0x90
	case c >= 0xF1 && c <= 0xF3:
		n = 4
	case c == 0xF4:
		n, hi = 4, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i < n && i < len(b); i++ {
		if i == 1 && (b[i] < lo || b[i] > hi) || i > 1 && (b[i] < 0x80 || b[i] > 0xBF) {
			break
		}
	}
	return i
}

// incompleteTail returns how many trailing bytes of b form the start of a
// well-formed sequence that more bytes could still complete.
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		tail := b[len(b)-k:]
		if tail[0] < 0xC0 { // a continuation byte: look further back
			continue
		}
		if m := maximalSubpart(tail); m == k && seqLen(tail[0]) > k {
			return k
		}
		return 0
	}
	return 0
}

func seqLen(c byte) int {
	switch {
	case c >= 0xF0:
		return 4
	case c >= 0xE0:
		return 3
	case c >= 0xC0:
		return 2
	}
	return 1
}

// StreamDecoder decodes tokens one at a time, emitting text only when it is
// complete UTF-8. The concatenation of everything Add and Flush return
// equals Decode of all the tokens.
//
// For SentencePiece-style tokenizers the decoder chain runs token by token
// (decode_chain.go); a run of byte-fallback tokens is held until the first
// other token, and only the very start of the stream loses its leading
// space (Strip decoder).
type StreamDecoder struct {
	t           *Tokenizer
	skipSpecial bool
	pending     []byte
	chain       *chain // SentencePiece-style decoders; nil for byte-level
}

// NewStreamDecoder returns a decoder for one stream.
func (t *Tokenizer) NewStreamDecoder(skipSpecial bool) *StreamDecoder {
	d := &StreamDecoder{t: t, skipSpecial: skipSpecial}
	if t.dec != nil {
		d.chain = t.dec.newChain()
	}
	return d
}

// Add feeds one token and returns the text it completes.
func (d *StreamDecoder) Add(id int32) string {
	if d.t.skip(id, d.skipSpecial) {
		return ""
	}
	if d.chain != nil {
		if id < 0 || int(id) >= len(d.t.idToToken) {
			return ""
		}
		return d.chain.push(d.t.idToToken[id])
	}
	d.pending = d.t.appendTokenBytes(d.pending, id)
	keep := incompleteTail(d.pending)
	out := lossyUTF8(d.pending[:len(d.pending)-keep])
	d.pending = append(d.pending[:0], d.pending[len(d.pending)-keep:]...)
	return out
}

// Flush returns whatever is held back (as U+FFFD if incomplete).
func (d *StreamDecoder) Flush() string {
	if d.chain != nil {
		return d.chain.finish()
	}
	out := lossyUTF8(d.pending)
	d.pending = d.pending[:0]
	return out
}

// TokenBytes returns the bytes token id stands for (nil for an unknown id),
// for building constrained-decoding vocabularies. For SentencePiece-style
// tokenizers a byte-fallback token is its byte and the space mark is a
// space; the leading space the decoder strips at the start of a text is
// kept, since it depends on the position, not the token.
func (t *Tokenizer) TokenBytes(id int32) []byte {
	if t.dec == nil {
		return t.appendTokenBytes(nil, id)
	}
	if id < 0 || int(id) >= len(t.idToToken) {
		return nil
	}
	s := t.idToToken[id]
	if t.isAdded[id] {
		return []byte(s)
	}
	if b, ok := parseByteToken(s); ok && t.sp.byteFallback {
		return []byte{b}
	}
	return []byte(strings.ReplaceAll(s, t.dec.space, " "))
}
