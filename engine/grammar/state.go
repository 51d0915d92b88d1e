package grammar

// frame is the matching progress inside one node. Frames are values; the
// stack below the top one is an immutable linked list, so a state is copied
// by value and many states share their common bottom.
type frame struct {
	n     *node
	phase uint8  // kind-specific phase or lexer state (see the constants in step.go)
	cur   uint8  // object: index of the property whose value is being matched
	off   uint16 // object key or literal: bytes matched so far
	count uint32 // array: items started so far; string: code points so far (when bounded)
	set   uint64 // object: properties seen; literal: candidates still matching
	cand  uint64 // object key: declared keys still matching
}

// link is one frame below the top of a stack.
type link struct {
	f    frame
	next *link
}

// state is one parse stack: the top frame by value, the rest shared. A
// depth of zero means the top-level value is complete.
type state struct {
	top   frame
	rest  *link
	depth int32
}

func (s state) push(f frame) state {
	if s.depth > 0 {
		s.rest = &link{f: s.top, next: s.rest}
	}
	s.top = f
	s.depth++
	return s
}

func (s state) pop() state {
	s.depth--
	if s.depth == 0 {
		return state{}
	}
	s.top = s.rest.f
	s.rest = s.rest.next
	return s
}

// equal reports whether two states are the same stack. Frames below the top
// are compared by identity, which is enough to merge the duplicates that
// forks produce in practice, and never merges different stacks.
func (s state) equal(o state) bool {
	return s.depth == o.depth && s.top == o.top && s.rest == o.rest
}

// startFrame is the frame that begins matching a value of n (never an anyOf).
func startFrame(n *node) frame {
	f := frame{n: n}
	if n.kind == kindLiteral {
		f.set = fullSet(len(n.lits))
	}
	return f
}

func fullSet(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// complete reports whether the state may end the document here: the value
// is complete, or its last token (a number or literal) could end now.
func (s state) complete() bool {
	return s.depth == 0 || (s.depth == 1 && s.top.canStop())
}

// canStop reports whether a number or literal frame has matched a whole
// value but could still grow, so it ends only when the next byte is not its.
func (f frame) canStop() bool {
	switch f.n.kind {
	case kindNumber:
		return numFinal(f.phase)
	case kindLiteral:
		for i, l := range f.n.lits {
			if f.set&(1<<i) != 0 && len(l) == int(f.off) {
				return true
			}
		}
	}
	return false
}
