package grammar

import "fmt"

// Budget-aware decoding. A constraint given a token budget (Limit) ends its
// document, and the tokens that must follow it, within the budget. The
// distance of a position is the fewest tokens that spell its shortest
// completion (shortest.go): an upper bound on what finishing takes, and one
// that following the completion lowers by one per token. The mask keeps
// the invariant "distance + tail <= tokens left", where tail counts the
// tokens after the document (EOS; a tool call's closing markup): a token is
// allowed only if the distance of the position it leads to fits in the
// tokens left after it. The first token of the completion's best spelling
// always fits, so the mask is never empty, and generation ends as a whole
// document. Limit refuses a budget smaller than the start's distance.
//
// Computing every token's distance exactly would cost a tokenization per
// token. The walk instead bounds it by the finish's length in bytes (with
// every byte a token of its own, n bytes take at most n tokens) and spells
// out the finish only when that bound does not fit. Tokens that stay inside
// a string change the finish by at most the 4 bytes of an unfinished
// escape or character, so while the bound plus 4 fits they are allowed
// wholesale, as in an unbudgeted mask; past it, those that end on a whole
// character, and at the end only those on the completion. A position's longest bound over all its tokens (reach) is
// cached with its mask: far from the end of the budget the cached mask is
// used as it is.

// fits reports whether the position states reached after a token's bytes
// finishes within the walk's limit, recording its bound in reach.
func (w *walker) fits(states []state) bool {
	if !w.track && !w.limited {
		return true
	}
	d := finishLen(states)
	w.reach = max(w.reach, d)
	return !w.limited || d <= w.limit || w.fewestToFinish(states) <= w.limit
}

// staysWithin reports whether every token that stays inside the string
// states are in may be allowed wholesale.
func (w *walker) staysWithin(states []state) bool {
	if !w.track && !w.limited {
		return true
	}
	d := addLen(finishLen(states), 4)
	w.reach = max(w.reach, d)
	return !w.limited || d <= w.limit
}

// spell spells out the shortest finish of s into the walker's scratch and
// returns it with its fewest-token table, or nil when it is too long to
// spell out for any budget.
func (w *walker) spell(s state) ([]byte, []int) {
	return w.spellWith(s, (*closer).state)
}

// spellWith is spell with finish as the way to finish s.
func (w *walker) spellWith(s state, finish func(*closer, state)) ([]byte, []int) {
	c := closer{}
	finish(&c, s)
	if c.n > maxSpelled {
		return nil, nil
	}
	c = closer{write: true, out: w.spelling[:0]}
	finish(&c, s)
	w.spelling = c.out
	w.fewest = w.v.fewestTokens(c.out, w.fewest)
	return c.out, w.fewest
}

// maxSpelled bounds the finishes spelled out: longer ones are endless for
// any budget a request can have.
const maxSpelled = 1 << 20

// fewestToFinish is the distance of a position: the fewest tokens spelling
// the shortest finish of any of its states.
func (w *walker) fewestToFinish(states []state) int {
	best := endless
	for _, s := range states {
		if _, f := w.spell(s); f != nil {
			best = min(best, f[0])
		}
	}
	return best
}

// addForced allows the tokens that begin a state's shortest finish and
// leave a distance within the limit: among them the first token of its
// best spelling, which keeps the mask from ever being empty.
func (w *walker) addForced(states []state) {
	v := w.v
	for _, s := range states {
		spelled, f := w.spell(s)
		node := int32(0)
		for j := 0; j < len(spelled); j++ {
			if node = v.child(node, spelled[j]); node < 0 {
				break
			}
			if f[j+1] <= w.limit {
				for _, id := range v.order[v.first[node]:v.own[node]] {
					w.mask.set(id)
				}
			}
		}
	}
}

// groupFits says which tokens that stay inside the string a position is in
// may be allowed wholesale. After one, the finish is the rest of an escape
// or character (at most 4 bytes; none for a token that ends on a whole
// character), the characters still due under minLength, and the closing
// quote with what follows, whose fewest tokens bound the distance.
func (w *walker) groupFits(states []state) stay {
	if addLen(finishLen(states), 4) <= w.limit {
		return stayAll
	}
	best := endless
	for _, s := range states {
		due := 0
		if n := s.top.n; n.minLen > s.top.count {
			due = int(n.minLen - s.top.count)
		}
		if _, f := w.spellWith(s, (*closer).closeString); f != nil {
			best = min(best, addLen(due, f[0]))
		}
	}
	switch {
	case addLen(best, 4) <= w.limit:
		return stayAll
	case best <= w.limit:
		return stayWhole
	}
	return stayNone
}

// Limit gives the constraint a budget of maxTokens tokens for the document
// and its EOS, and fails when even the shortest document does not fit. A
// vocabulary without a token for every byte gets no budget (and no error):
// its distances would not bound the tokens finishing takes.
func (c *Constraint) Limit(maxTokens int) error {
	if !c.v.everyByte {
		return nil
	}
	need := c.distance() + 1
	if need > maxTokens {
		return budgetTooSmall(need, maxTokens)
	}
	c.budget, c.cache.track = maxTokens, true
	return nil
}

func budgetTooSmall(need, maxTokens int) error {
	return fmt.Errorf("grammar: the shortest output the schema allows takes %d tokens, more than the request's limit of %d output tokens", need, maxTokens)
}

// distance is the fewest tokens that finish the document from here.
func (c *Constraint) distance() int {
	w := walker{v: c.v}
	return w.fewestToFinish(c.m.states)
}

// maskWithin is Mask with left tokens remaining (this one included), of
// which tail must follow the document.
func (c *Constraint) maskWithin(logits []float32, left, tail int) {
	ApplyMask(logits, c.allowedWithin(left, tail))
}

// allowedWithin is the mask maskWithin applies. It belongs to the
// constraint (or its cache) and stays valid until the next call.
func (c *Constraint) allowedWithin(left, tail int) Mask {
	limit := left - 1 - tail // the largest distance a token may leave
	base, reach := c.cache.maskReach(c.m)
	w := walker{v: c.v, limited: true, limit: limit}
	group := stayAll
	if _, _, inside := stringPhase(c.m.states); inside {
		group = w.groupFits(c.m.states)
	}
	if reach <= limit && group == stayAll {
		return base
	}
	c.near = w.run(c.m, c.near, group)
	w.addForced(c.m.states)
	if c.near.Count() == 0 {
		// Only when the budget was already broken (no Limit check, or a
		// token accepted outside the mask): keep the output valid at least.
		return base
	}
	return c.near
}

// CheckDraft returns how many leading tokens of a speculative draft the
// constraint allows in turn, its budget included, as the mask would at each
// of them; the constraint itself does not move. Nothing is allowed after
// an EOS.
func (c *Constraint) CheckDraft(draft []int32) int {
	at, used := c.m.Snapshot(), c.used
	defer func() { c.m.Restore(at); c.used = used }()
	for i, tok := range draft {
		mask := c.cache.Mask(c.m)
		if c.budget > 0 {
			mask = c.allowedWithin(c.budget-c.used, 1)
		}
		if tok < 0 || int(tok) >= c.v.size || !mask.Allowed(int(tok)) {
			return i
		}
		if c.v.isEOS(int(tok)) {
			return i + 1
		}
		c.v.AcceptToken(c.m, int(tok))
		c.used++
	}
	return len(draft)
}
