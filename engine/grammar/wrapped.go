package grammar

import (
	"bytes"
	"math"
)

// Wrapped constrains output to open + a document of a grammar + close, then
// an end-of-sequence token: a forced tool call in the Qwen/Hermes format is
// "<tool_call>\n" + {"name": ..., "arguments": ...} + "\n</tool_call>".
// In the literal parts only tokens that continue the literal exactly are
// allowed (byte-level vocabularies can always spell it); a token never
// spans a literal and the document. It implements the same hook as
// Constraint. Not safe for concurrent use.
type Wrapped struct {
	v           *Vocab
	g           *Grammar
	doc         *Constraint
	open, close []byte
	// again, when set, may follow a complete wrapped document instead of
	// EOS and starts another (parallel tool calls: "\n<tool_call>\n").
	again []byte
	round int // documents started before the current one
	pos   int // bytes of the current literal already produced
	phase int // 0: open literal, 1: document, 2: close literal, 3: EOS or again
	ok    bool

	// With a budget (Limit): the tokens for everything up to EOS, those
	// accepted, and the fewest tokens of a whole document and of close.
	budget, used         int
	docLeast, closeLeast int
	fewest               []int // scratch for literals' fewest tokens
}

// NewWrapped starts open + g + close over vocabulary v.
func NewWrapped(v *Vocab, g *Grammar, open, close string) *Wrapped {
	w := &Wrapped{v: v, g: g, doc: NewConstraint(v, g), open: []byte(open), close: []byte(close), ok: true}
	if len(w.open) == 0 {
		w.phase = 1
	}
	return w
}

// NewWrappedRepeat is NewWrapped where each complete document may be
// followed by sep + open and another document, any number of times, before
// EOS: one or more tool calls.
func NewWrappedRepeat(v *Vocab, g *Grammar, open, close, sep string) *Wrapped {
	w := NewWrapped(v, g, open, close)
	w.again = []byte(sep + open)
	return w
}

func (w *Wrapped) literal() []byte {
	switch {
	case w.phase == 0 && w.round > 0:
		return w.again[w.pos:]
	case w.phase == 0:
		return w.open[w.pos:]
	case w.phase == 3:
		return w.again // only with a repeat, and only from its start
	}
	return w.close[w.pos:]
}

// Limit gives the wrapped output a budget of maxTokens tokens up to and
// including EOS (see Constraint.Limit), and fails when even the shortest
// output does not fit.
func (w *Wrapped) Limit(maxTokens int) error {
	if !w.v.everyByte {
		return nil
	}
	w.docLeast = w.doc.distance()
	w.closeLeast = w.v.fewestTokens(w.close, nil)[0]
	need := addLen(addLen(w.v.fewestTokens(w.literal(), nil)[0], w.docLeast), w.closeLeast+1)
	if w.phase == 1 {
		need = addLen(w.docLeast, w.closeLeast+1)
	}
	if need > maxTokens {
		return budgetTooSmall(need, maxTokens)
	}
	w.budget, w.doc.cache.track = maxTokens, true
	return nil
}

// Mask sets the logits of tokens not allowed next to -Inf.
func (w *Wrapped) Mask(logits []float32) {
	left := w.budget - w.used
	switch w.phase {
	case 1:
		if w.budget > 0 {
			w.doc.maskWithin(logits, left, w.closeLeast+1)
		} else {
			w.doc.Mask(logits)
		}
		return
	case 3:
		fits := w.literalFits(w.again, left, w.docLeast+w.closeLeast+1) // another call, then EOS
		for i := range logits {
			if !w.v.isEOS(i) && !(w.startsAgain(i) && fits(i)) {
				logits[i] = float32(math.Inf(-1))
			}
		}
		return
	}
	after := 1 // EOS after close
	if w.phase == 0 {
		after = w.docLeast + w.closeLeast + 1
	}
	rest := w.literal()
	fits := w.literalFits(rest, left, after)
	for i := range logits {
		if i >= w.v.size {
			logits[i] = float32(math.Inf(-1))
			continue
		}
		t := w.v.bytes(i)
		if len(t) == 0 || !bytes.HasPrefix(rest, t) || !fits(i) {
			logits[i] = float32(math.Inf(-1))
		}
	}
}

// literalFits returns a check of whether a token that begins literal lit
// leaves the rest of lit and after more tokens within the left tokens less
// one. Without a budget every token fits.
func (w *Wrapped) literalFits(lit []byte, left, after int) func(i int) bool {
	if w.budget == 0 {
		return func(int) bool { return true }
	}
	w.fewest = w.v.fewestTokens(lit, w.fewest)
	return func(i int) bool {
		n := len(w.v.bytes(i))
		return n <= len(lit) && addLen(w.fewest[n], after) <= left-1
	}
}

// startsAgain reports whether token i begins another wrapped document.
func (w *Wrapped) startsAgain(i int) bool {
	if w.again == nil || i >= w.v.size {
		return false
	}
	t := w.v.bytes(i)
	return len(t) > 0 && bytes.HasPrefix(w.again, t)
}

// Accept advances by a token the request kept.
func (w *Wrapped) Accept(tok int32) {
	w.used++
	if !w.ok {
		return
	}
	switch w.phase {
	case 1:
		w.doc.Accept(tok)
		if !w.doc.Valid() {
			w.ok = false
		} else if w.doc.Done() {
			w.phase, w.pos = 2, 0
			if len(w.close) == 0 {
				w.phase = 3
			}
		}
		return
	case 3:
		if w.startsAgain(int(tok)) && !w.v.isEOS(int(tok)) {
			w.round++
			w.doc = NewConstraint(w.v, w.g)
			w.doc.cache.track = w.budget > 0
			w.phase, w.pos = 0, 0
			break // consume the token as the start of the again literal
		}
		w.ok = w.v.isEOS(int(tok))
		return
	}
	t := w.v.bytes(int(tok))
	rest := w.literal()
	if len(t) == 0 || !bytes.HasPrefix(rest, t) {
		w.ok = false
		return
	}
	w.pos += len(t)
	if len(rest) == len(t) { // the literal is complete
		w.phase++
		w.pos = 0
		if w.phase == 2 && len(w.close) == 0 {
			w.phase = 3
		}
	}
}

// Valid reports whether every accepted token was allowed.
func (w *Wrapped) Valid() bool { return w.ok }
