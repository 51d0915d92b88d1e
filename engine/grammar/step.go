package grammar

import "math/bits"

func trailing(x uint64) int { return bits.TrailingZeros64(x) }

// Object phases.
const (
	objOpen       uint8 = iota // before {
	objFirst                   // after {: a key or }
	objKey                     // inside a declared key, off bytes matched
	objColon                   // after a key: :
	objAfterValue              // after a value: , or }
	objNextKey                 // after ,: the next key's quote
)

// Array phases.
const (
	arrOpen      uint8 = iota // before [
	arrFirst                  // after [: an item or ]
	arrAfterItem              // after an item: , or ]
)

// step appends to out every state reachable from s by consuming b. The
// grammar is deterministic except where anyOf (or an any-value) forks, so
// out usually grows by zero or one state.
func step(s state, b byte, out []state) []state {
	if s.depth == 0 {
		return out // the value is complete: nothing may follow
	}
	f := s.top
	n := f.n
	switch n.kind {
	case kindString:
		if f.phase == strOpen {
			if b != '"' {
				return out
			}
			s.top.phase = strBody
			return append(out, s)
		}
		switch p := strNext(f.phase, b); p {
		case strFail:
			return out
		case strClosed:
			if f.count < n.minLen {
				return out
			}
			return append(out, s.pop())
		default:
			if f.phase == strBody && (n.minLen > 0 || n.maxLen != noLimit) {
				// b starts a character: count it against the bounds.
				if f.count >= n.maxLen {
					return out
				}
				s.top.count = countChar(n, f.count)
			}
			s.top.phase = p
			return append(out, s)
		}

	case kindNumber:
		if p := numNext(f.phase, b, n.integer); p != numFail && s.top.countDigit(p, b) {
			s.top.phase = p
			return append(out, s)
		}
		if numFinal(f.phase) {
			return step(s.pop(), b, out)
		}
		return out

	case kindLiteral:
		return stepLiteral(s, b, out)

	case kindObject:
		return stepObject(s, b, out)

	case kindArray:
		return stepArray(s, b, out)
	}
	return out
}

func stepLiteral(s state, b byte, out []state) []state {
	f := s.top
	var next uint64
	ended, grows := false, false
	for set := f.set; set != 0; set &= set - 1 {
		i := trailing(set)
		l := f.n.lits[i]
		if len(l) == int(f.off) {
			ended = true // a whole literal was matched before b
			continue
		}
		if l[f.off] == b {
			next |= 1 << i
			if len(l) > int(f.off)+1 {
				grows = true
			}
		}
	}
	if ended {
		// b does not continue this literal in JSON (see canStop), so it
		// belongs to the enclosing value.
		out = step(s.pop(), b, out)
	}
	if next == 0 {
		return out
	}
	if !grows {
		return append(out, s.pop()) // every candidate ends with b
	}
	s.top.set = next
	s.top.off++
	return append(out, s)
}

func stepObject(s state, b byte, out []state) []state {
	f := s.top
	n := f.n
	switch f.phase {
	case objOpen:
		if b == '{' {
			s.top.phase = objFirst
			return append(out, s)
		}
	case objFirst, objNextKey:
		if b == '}' && f.phase == objFirst && n.required == 0 {
			return append(out, s.pop())
		}
		if b != '"' {
			return out
		}
		if n.free != nil {
			s.top.phase = objColon
			return append(out, s.push(frame{n: n.key, phase: strBody}))
		}
		if cand := fullSet(len(n.keys)) &^ f.set; cand != 0 {
			s.top.phase, s.top.cand, s.top.off = objKey, cand, 1
			return append(out, s)
		}
	case objKey:
		var next uint64
		for set := f.cand; set != 0; set &= set - 1 {
			i := trailing(set)
			if n.keys[i][f.off] == b {
				next |= 1 << i
			}
		}
		if next == 0 {
			return out
		}
		s.top.cand, s.top.off = next, f.off+1
		for set := next; set != 0; set &= set - 1 {
			// Keys end with an unescaped quote, so one that ends here is the only match.
			if i := trailing(set); len(n.keys[i]) == int(f.off)+1 {
				s.top.phase, s.top.cur, s.top.set, s.top.cand = objColon, uint8(i), f.set|1<<i, 0
				s.top.off = 0
			}
		}
		return append(out, s)
	case objColon:
		if b != ':' {
			return out
		}
		s.top.phase = objAfterValue
		value := n.free
		if value == nil {
			value = n.values[f.cur]
		}
		for _, alt := range value.alts {
			out = append(out, s.push(startFrame(alt)))
		}
	case objAfterValue:
		switch b {
		case ',':
			if n.free == nil && fullSet(len(n.keys))&^f.set == 0 {
				return out // no key left to add
			}
			s.top.phase = objNextKey
			return append(out, s)
		case '}':
			if n.required&^f.set == 0 {
				return append(out, s.pop())
			}
		}
	}
	return out
}

func stepArray(s state, b byte, out []state) []state {
	f := s.top
	n := f.n
	switch f.phase {
	case arrOpen:
		if b == '[' {
			s.top.phase = arrFirst
			return append(out, s)
		}
	case arrFirst:
		if b == ']' && n.minItems == 0 {
			return append(out, s.pop())
		}
		if n.maxItems == 0 {
			return out
		}
		s.top.phase, s.top.count = arrAfterItem, countItem(n, 0)
		for _, alt := range n.item.alts {
			out = step(s.push(startFrame(alt)), b, out)
		}
	case arrAfterItem:
		switch b {
		case ',':
			if f.count >= n.maxItems {
				return out
			}
			s.top.count = countItem(n, f.count)
			for _, alt := range n.item.alts {
				out = append(out, s.push(startFrame(alt)))
			}
		case ']':
			if f.count >= n.minItems {
				return append(out, s.pop())
			}
		}
	}
	return out
}

// countItem returns the item count after one more item. Without maxItems
// the count stops at minItems, where it no longer matters, so that the
// positions inside every later item are the same (and share mask cache
// entries).
func countItem(n *node, count uint32) uint32 {
	count++
	if n.maxItems == noLimit && count > n.minItems {
		count = n.minItems
	}
	return count
}

// countChar returns the code point count after one more character. Without
// maxLength the count stops at minLength, where it no longer matters.
func countChar(n *node, count uint32) uint32 {
	count++
	if n.maxLen == noLimit && count > n.minLen {
		count = n.minLen
	}
	return count
}

// Numbers are bounded to what JSON parsers read back exactly: at most
// maxMantissaDigits digits before the exponent (so every number keeps its
// digits through a float64, and integers stay below 2^53) and an exponent
// of at most maxExponentDigits digits (so none overflows a float64).
const (
	maxMantissaDigits = 15
	maxExponentDigits = 2
)

// countDigit counts b, which takes a number frame to phase p, against the
// digit bounds and reports whether it fits. A '.' needs room for one
// fraction digit.
func (f *frame) countDigit(p, b uint8) bool {
	switch {
	case b == '.':
		return f.count < maxMantissaDigits
	case b < '0' || b > '9':
		return true
	case p == numExpDigits:
		f.off++
		return f.off <= maxExponentDigits
	}
	f.count++
	return f.count <= maxMantissaDigits
}
