package grammar

// Constraint applies a grammar to one request's decoding: Mask before each
// sampled position, Accept for each token kept. It is the token-mask hook
// of the actor runtime (actors.TokenMask). Not safe for concurrent use.
type Constraint struct {
	v     *Vocab
	m     *Matcher
	cache *MaskCache
	mask  Mask
	ok    bool // false once a token outside the grammar was accepted

	budget int  // tokens for the document and its EOS (see Limit); 0: none
	used   int  // tokens accepted
	near   Mask // the mask near the end of the budget
}

// NewConstraint starts g at its beginning over vocabulary v.
func NewConstraint(v *Vocab, g *Grammar) *Constraint {
	return &Constraint{v: v, m: NewMatcher(g), cache: NewMaskCache(v, 256), ok: true}
}

// Mask sets the logits of tokens the grammar does not allow next to -Inf.
// With a budget (Limit), only tokens after which the document can still
// end in time are allowed.
func (c *Constraint) Mask(logits []float32) {
	if c.budget > 0 {
		c.maskWithin(logits, c.budget-c.used, 1)
		return
	}
	ApplyMask(logits, c.cache.Mask(c.m))
}

// Accept advances the grammar by a token the request kept. A token the
// grammar rejects (which Mask prevents) marks the constraint broken.
func (c *Constraint) Accept(tok int32) {
	c.used++
	if c.ok && !c.v.AcceptToken(c.m, int(tok)) {
		c.ok = false
	}
}

// Valid reports whether every accepted token was allowed.
func (c *Constraint) Valid() bool { return c.ok }

// Done reports whether a complete value has been produced.
func (c *Constraint) Done() bool { return c.m.Done() }
