package grammar

// AcceptToken advances the matcher by one token: its bytes, or for an EOS id
// nothing, allowed only where the output may end. It reports whether the
// token was allowed; a disallowed token leaves the matcher unchanged.
func (v *Vocab) AcceptToken(m *Matcher, id int) bool {
	if id < 0 || id >= v.size {
		return false
	}
	if v.isEOS(id) {
		return m.CanEnd()
	}
	t := v.bytes(id)
	return len(t) > 0 && m.Advance(t)
}

// CheckDraft returns how many leading tokens of draft the grammar accepts
// from the matcher's position; the matcher itself does not move. Nothing is
// accepted after an EOS token. A verifier keeps that prefix (advancing the
// matcher with AcceptToken) and resamples the next token under a mask.
func (v *Vocab) CheckDraft(m *Matcher, draft []int) int {
	c := m.Clone()
	for i, id := range draft {
		if !v.AcceptToken(c, id) {
			return i
		}
		if v.isEOS(id) {
			return i + 1
		}
	}
	return len(draft)
}

func (v *Vocab) isEOS(id int) bool {
	for _, e := range v.eos {
		if int(e) == id {
			return true
		}
	}
	return false
}
