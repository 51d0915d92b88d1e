package grammar

// Shortest completions. Budget-aware decoding needs, at every matcher
// position, a way to finish the document in few tokens. The grammar gives
// each position one canonical shortest completion in bytes: each frame of a
// stack finishes its value in the fewest bytes (the required properties in
// key order, minItems items, strings of minLength 'a's, the number 0, the
// shortest literal, ties to the lowest index), the top frame first. The
// choices depend only on the frame, so following a completion byte by byte
// reaches positions whose completions are the rest of it: the distance
// falls by one per byte, and by one per token of any tokenization of it.

// endless stands for a length with no finite bound (a value that cannot be
// finished, or is too long to matter).
const endless = 1 << 40

func addLen(a, b int) int { return min(a+b, endless) }

// setLeast fills node.least for every node reachable from root.
func setLeast(root *node) {
	const (
		fresh = iota
		visiting
		done
	)
	mark := map[*node]uint8{}
	var visit func(n *node) int
	visit = func(n *node) int {
		switch mark[n] {
		case visiting:
			return endless // only a cycle, which no finite value needs
		case done:
			return n.least
		}
		mark[n] = visiting
		least := endless
		switch n.kind {
		case kindString:
			least = 2 + int(n.minLen)
		case kindNumber:
			least = 1
		case kindLiteral:
			for _, l := range n.lits {
				least = min(least, len(l))
			}
		case kindObject:
			least = 2
			first := true
			for set := n.required; set != 0; set &= set - 1 {
				i := trailing(set)
				if !first {
					least = addLen(least, 1)
				}
				first = false
				least = addLen(least, addLen(len(n.keys[i])+1, visit(n.values[i])))
			}
		case kindArray:
			least = 2
			if n.minItems > 0 {
				item := visit(n.item)
				least = addLen(least, min(addLen(item, 1)*int(n.minItems)-1, endless))
			}
		case kindAnyOf:
			for _, a := range n.alts {
				least = min(least, visit(a))
			}
		}
		n.least = least
		mark[n] = done
		// Nodes the shortest value does not need are still reached by
		// matching, and completions start from them.
		for _, c := range n.values {
			visit(c)
		}
		for _, c := range []*node{n.free, n.key, n.item} {
			if c != nil {
				visit(c)
			}
		}
		for _, a := range n.alts {
			visit(a)
		}
		return least
	}
	visit(root)
}

// charRest is what finishes the character a string lexer phase is in the
// middle of: the escape's letter, the \u escape's hex digits, the UTF-8
// continuation bytes (the smallest each phase allows).
var charRest = [strPhases][]byte{
	strEsc: []byte("n"), strHex1: []byte("0"), strHex2: []byte("00"), strHex3: []byte("000"), strHex4: []byte("0000"),
	strU1: {0x80}, strU2: {0x80, 0x80}, strU3: {0x80, 0x80, 0x80},
	strU2E0: {0xa0, 0x80}, strU2ED: {0x80, 0x80}, strU3F0: {0x90, 0x80, 0x80}, strU3F4: {0x80, 0x80, 0x80},
}

// closer measures (and, when write is set, spells out) shortest
// completions.
type closer struct {
	write bool
	out   []byte
	n     int
}

func (c *closer) bytes(b []byte) {
	c.n = addLen(c.n, len(b))
	if c.write {
		c.out = append(c.out, b...)
	}
}

func (c *closer) byte(b byte) {
	c.n = addLen(c.n, 1)
	if c.write {
		c.out = append(c.out, b)
	}
}

func (c *closer) repeat(b byte, k int) {
	c.n = addLen(c.n, k)
	if c.write {
		for range k {
			c.out = append(c.out, b)
		}
	}
}

// least adds the shortest value of n.
func (c *closer) least(n *node) {
	if !c.write {
		c.n = addLen(c.n, n.least)
		return
	}
	switch n.kind {
	case kindString:
		c.byte('"')
		c.repeat('a', int(n.minLen))
		c.byte('"')
	case kindNumber:
		c.byte('0')
	case kindLiteral:
		c.bytes(n.lits[shortestLit(n, fullSet(len(n.lits)))])
	case kindObject:
		c.byte('{')
		c.required(n, 0, true)
		c.byte('}')
	case kindArray:
		c.byte('[')
		for i := range n.minItems {
			if i > 0 {
				c.byte(',')
			}
			c.least(n.item)
		}
		c.byte(']')
	case kindAnyOf:
		best := n.alts[0]
		for _, a := range n.alts[1:] {
			if a.least < best.least {
				best = a
			}
		}
		c.least(best)
	}
}

// shortestLit is the index of the shortest literal in set, the lowest on
// ties.
func shortestLit(n *node, set uint64) int {
	best := -1
	for ; set != 0; set &= set - 1 {
		if i := trailing(set); best < 0 || len(n.lits[i]) < len(n.lits[best]) {
			best = i
		}
	}
	return best
}

// required adds the required properties of object n not in seen, in key
// order, each as "key":value, comma-separated (a leading comma unless
// first).
func (c *closer) required(n *node, seen uint64, first bool) {
	for set := n.required &^ seen; set != 0; set &= set - 1 {
		i := trailing(set)
		if !first {
			c.byte(',')
		}
		first = false
		c.bytes(n.keys[i])
		c.byte(':')
		c.least(n.values[i])
	}
}

// requiredLen is the length required adds.
func requiredLen(n *node, seen uint64, first bool) int {
	c := closer{}
	c.required(n, seen, first)
	return c.n
}

// frame adds the shortest finish of the value f is matching, after
// whatever is pushed above it has finished.
func (c *closer) frame(f frame) {
	n := f.n
	switch n.kind {
	case kindString:
		if f.phase == strOpen {
			c.least(n)
			return
		}
		if f.phase < strPhases {
			c.bytes(charRest[f.phase])
		}
		if n.minLen > f.count {
			c.repeat('a', int(n.minLen-f.count))
		}
		c.byte('"')
	case kindNumber:
		if !numFinal(f.phase) {
			c.byte('0')
		}
	case kindLiteral:
		c.bytes(n.lits[shortestLit(n, f.set)][f.off:])
	case kindObject:
		c.object(f)
	case kindArray:
		switch f.phase {
		case arrOpen:
			c.least(n)
			return
		case arrFirst:
			for i := range n.minItems {
				if i > 0 {
					c.byte(',')
				}
				c.least(n.item)
			}
		case arrAfterItem:
			for i := f.count; i < n.minItems; i++ {
				c.byte(',')
				c.least(n.item)
			}
		}
		c.byte(']')
	}
}

func (c *closer) object(f frame) {
	n := f.n
	switch f.phase {
	case objOpen:
		c.least(n)
		return
	case objFirst:
		c.required(n, f.set, true)
	case objKey:
		// Finish the candidate key whose whole remainder is shortest.
		best, bestLen := -1, 0
		for set := f.cand; set != 0; set &= set - 1 {
			i := trailing(set)
			l := len(n.keys[i]) - int(f.off) + 1 + n.values[i].least + requiredLen(n, f.set|1<<i, false)
			if best < 0 || l < bestLen {
				best, bestLen = i, l
			}
		}
		c.bytes(n.keys[best][f.off:])
		c.byte(':')
		c.least(n.values[best])
		c.required(n, f.set|1<<best, false)
	case objColon:
		c.byte(':')
		if n.free != nil {
			c.least(n.free)
		} else {
			c.least(n.values[f.cur])
			c.required(n, f.set, false)
		}
	case objAfterValue:
		if n.free == nil {
			c.required(n, f.set, false)
		}
	case objNextKey:
		// A key must follow the comma: the first required one left, or
		// else the unseen key with the shortest property.
		switch {
		case n.free != nil:
			c.bytes([]byte(`"":`))
			c.least(n.free)
		case n.required&^f.set != 0:
			c.required(n, f.set, true)
		default:
			best := -1
			for set := fullSet(len(n.keys)) &^ f.set; set != 0; set &= set - 1 {
				i := trailing(set)
				if best < 0 || len(n.keys[i])+n.values[i].least < len(n.keys[best])+n.values[best].least {
					best = i
				}
			}
			c.bytes(n.keys[best])
			c.byte(':')
			c.least(n.values[best])
		}
	}
	c.byte('}')
}

// state adds the shortest finish of a whole stack, top frame first.
func (c *closer) state(s state) {
	if s.depth == 0 {
		return
	}
	c.frame(s.top)
	for l := s.rest; l != nil; l = l.next {
		c.frame(l.f)
	}
}

// closeString adds a closing quote and the finish of the frames below the
// top one, a string's.
func (c *closer) closeString(s state) {
	c.byte('"')
	for l := s.rest; l != nil; l = l.next {
		c.frame(l.f)
	}
}

// finishLen is the length in bytes of the shortest finish of any of states.
func finishLen(states []state) int {
	best := endless
	for _, s := range states {
		c := closer{}
		c.state(s)
		best = min(best, c.n)
	}
	return best
}
