package grammar

// Matcher checks output against a Grammar one byte at a time. It is a
// pushdown automaton run over a set of stacks (more than one only while an
// anyOf is undecided). A Matcher is not safe for concurrent use; Clone gives
// an independent copy cheaply because stacks are immutable and shared.
type Matcher struct {
	states []state // never empty; treated as immutable once stored
}

// Snapshot is a saved matcher position, restored with Restore. It stays
// valid however the matcher moves afterwards.
type Snapshot struct {
	states []state
}

// NewMatcher returns a matcher at the start of a document of g.
func NewMatcher(g *Grammar) *Matcher {
	m := &Matcher{}
	for _, alt := range g.root.alts {
		m.states = append(m.states, state{top: startFrame(alt), depth: 1})
	}
	return m
}

// Accept consumes b if the grammar allows it there and reports whether it
// did; a rejected byte leaves the matcher unchanged.
func (m *Matcher) Accept(b byte) bool {
	next := stepAll(m.states, b, nil)
	if len(next) == 0 {
		return false
	}
	m.states = next
	return true
}

// Advance consumes all of p if the grammar allows it and reports whether it
// did. It is all or nothing: on false the matcher is unchanged.
func (m *Matcher) Advance(p []byte) bool {
	states := m.states
	var a, b []state
	for _, c := range p {
		b = stepAll(states, c, b[:0])
		if len(b) == 0 {
			return false
		}
		states, a, b = b, b, a
	}
	if len(p) > 0 {
		m.states = append([]state(nil), states...)
	}
	return true
}

// Done reports whether a complete value has been produced: the document
// cannot continue and only the end of output may follow.
func (m *Matcher) Done() bool {
	for _, s := range m.states {
		if s.depth == 0 {
			return true
		}
	}
	return false
}

// CanEnd reports whether the output may end here. It differs from Done only
// for a top-level number or literal that could still grow ("12" may end or
// continue as "123").
func (m *Matcher) CanEnd() bool {
	for _, s := range m.states {
		if s.complete() {
			return true
		}
	}
	return false
}

// Snapshot saves the current position.
func (m *Matcher) Snapshot() Snapshot { return Snapshot{states: m.states} }

// Restore moves the matcher back (or forward) to a saved position.
func (m *Matcher) Restore(s Snapshot) { m.states = s.states }

// Clone returns an independent matcher at the same position.
func (m *Matcher) Clone() *Matcher { return &Matcher{states: m.states} }

// stepAll appends to out the states reachable from any of states by b,
// without duplicates.
func stepAll(states []state, b byte, out []state) []state {
	for _, s := range states {
		start := len(out)
		out = step(s, b, out)
		out = dedupe(out, start)
	}
	return out
}

// dedupe removes from out[start:] the states already present earlier.
func dedupe(out []state, start int) []state {
	if start == 0 && len(out) <= 1 {
		return out
	}
	keep := start
	for i := start; i < len(out); i++ {
		dup := false
		for j := 0; j < keep; j++ {
			if out[j].equal(out[i]) {
				dup = true
				break
			}
		}
		if !dup {
			out[keep] = out[i]
			keep++
		}
	}
	return out[:keep]
}
