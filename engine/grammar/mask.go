package grammar

import (
	"math"
	"math/bits"
)

// Mask is a bitset over token ids: bit id set means the token is allowed.
type Mask []uint64

// NewMask returns an empty mask for n token ids.
func NewMask(n int) Mask { return make(Mask, (n+63)/64) }

// Allowed reports whether token id is allowed.
func (m Mask) Allowed(id int) bool { return m[id>>6]&(1<<(id&63)) != 0 }

// Count returns the number of allowed tokens.
func (m Mask) Count() int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

func (m Mask) set(id int32) { m[id>>6] |= 1 << (id & 63) }

func (m Mask) clear() {
	for i := range m {
		m[i] = 0
	}
}

// ApplyMask sets the logit of every token the mask does not allow to -Inf,
// so any sampler picks an allowed token. Logits beyond the mask's length
// (padding rows of the output layer) are disallowed too.
func ApplyMask(logits []float32, mask Mask) {
	negInf := float32(math.Inf(-1))
	for w := 0; w*64 < len(logits); w++ {
		var word uint64
		if w < len(mask) {
			word = mask[w]
		}
		if word == ^uint64(0) {
			continue
		}
		hi := min(w*64+64, len(logits))
		for id := w * 64; id < hi; id++ {
			if word&(1<<(id&63)) == 0 {
				logits[id] = negInf
			}
		}
	}
}

// Mask computes the tokens allowed at the matcher's position into dst
// (allocated when nil or too short) and returns it: every token whose bytes
// the grammar accepts from here, plus the EOS ids when the output may end.
func (v *Vocab) Mask(m *Matcher, dst Mask) Mask {
	w := walker{v: v}
	return w.run(m, dst, stayAll)
}

// stay says which of the tokens that stay inside the string a position is
// in a mask allows wholesale (a budgeted walk may allow fewer, see
// budget.go).
type stay uint8

const (
	stayNone  stay = iota
	stayWhole      // those that end on a whole character (from strBody only)
	stayAll
)

// run computes the mask at m's position into dst, allowing the tokens
// that stay inside a string as group says.
func (w *walker) run(m *Matcher, dst Mask, group stay) Mask {
	v := w.v
	if len(dst) < (v.size+63)/64 {
		dst = NewMask(v.size)
	}
	dst = dst[:(v.size+63)/64]
	w.mask = dst
	phase, room, inside := stringPhase(m.states)
	wide := room >= uint32(v.height[0])
	switch {
	case inside && wide && group == stayAll:
		// Inside a string most tokens stay inside it: start from those and
		// walk only the tokens that may close it.
		copy(dst, v.inString[phase])
	case inside && phase == strBody && group == stayAll:
		copy(dst, v.inStringChars[room]) // the same, under a near maxLength
	case inside && wide && phase == strBody && group == stayWhole:
		copy(dst, v.inStringWhole)
	case inside && (wide || phase == strBody):
		dst.clear()
	default:
		inside = false
		dst.clear()
	}
	w.walk(0, m.states, 0, inside)
	if m.CanEnd() {
		for _, id := range v.eos {
			dst.set(id)
		}
	}
	return dst
}

// walker holds one mask computation: the trie walk reuses one state buffer
// per depth so that stepping along the trie does not allocate. With track
// or limited set it also weighs each token's position by its shortest
// finish (see budget.go).
type walker struct {
	v    *Vocab
	mask Mask
	bufs [][]state

	track    bool // gather reach
	reach    int  // the longest shortest finish, in bytes, after a token the walk set
	limited  bool // set only tokens whose position finishes within limit tokens
	limit    int
	spelling []byte // scratch for spelling out finishes
	fewest   []int
}

// walk adds the allowed tokens below node, reached in states. inside means
// the bytes so far stayed inside the string(s) the walk started in, so the
// tokens that stay there too are in the mask already. (A string body never
// pushes, and leaving it pops, so "every state still in a string body along
// the whole path" means still inside the same strings.)
func (w *walker) walk(node int32, states []state, depth int, inside bool) {
	v := w.v
	if depth == len(w.bufs) {
		w.bufs = append(w.bufs, make([]state, 0, 4))
	}
	var inPhase uint8
	if inside {
		inPhase = states[0].top.phase
	}
	for _, e := range v.children(node) {
		if inside {
			// Fast path: the string lexer alone decides most children.
			t := strNext(inPhase, e.b)
			if t == strFail {
				continue
			}
			if t != strClosed && v.closes[e.child]&(1<<t) == 0 {
				continue // stays inside or breaks: already in the mask or never
			}
		}
		next := stepAll(states, e.b, w.bufs[depth][:0])
		w.bufs[depth] = next
		if len(next) == 0 {
			continue // prune: no token below this byte can be valid
		}
		c := e.child
		phase, room, inString := stringPhase(next)
		stillInside := inside && inString
		if !stillInside && v.own[c] > v.first[c] && w.fits(next) {
			for _, id := range v.order[v.first[c]:v.own[c]] {
				w.mask.set(id)
			}
		}
		if v.own[c] == v.end[c] {
			continue
		}
		if stillInside && v.closes[c]&(1<<phase) == 0 {
			// Tokens below either stay inside (already set) or break the
			// string: nothing to add.
			continue
		}
		if inString && room >= uint32(v.height[c]) && v.safe[c]&(1<<phase) != 0 && (stillInside || w.staysWithin(next)) {
			// Every token below stays inside this string: all allowed.
			if !stillInside {
				for _, id := range v.order[v.own[c]:v.end[c]] {
					w.mask.set(id)
				}
			}
			continue
		}
		w.walk(c, next, depth+1, stillInside)
	}
}

// stringPhase reports whether every state is inside a string body, all in
// the same lexer phase, where the trie's string tables describe what stays
// valid; that phase; and the room left under maxLength (the fewest
// characters any of the strings may still take), which must cover a
// subtree's height for those tables to apply.
func stringPhase(states []state) (phase uint8, room uint32, ok bool) {
	if len(states) == 0 {
		return 0, 0, false
	}
	p := states[0].top.phase
	room = noLimit
	for _, s := range states {
		if s.depth == 0 || s.top.n.kind != kindString || s.top.phase == strOpen || s.top.phase != p {
			return 0, 0, false
		}
		if n := s.top.n; n.maxLen != noLimit {
			room = min(room, n.maxLen-s.top.count)
		}
	}
	return p, room, true
}
