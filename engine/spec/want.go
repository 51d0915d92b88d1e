package spec

// Want asks a proposer for up to K draft tokens to follow Tokens, the
// sequence's tokens so far (prompt and accepted output, read-only).
// Proposers append to Draft, which has capacity K on entry.
type Want struct {
	Seq    uint64
	Tokens []int32
	K      int
	Draft  []int32
}

// Proposer fills wants with draft tokens. Proposing fewer than K, or none,
// is always allowed.
type Proposer interface {
	Propose(wants []Want) error
}

// Observer learns from verification: proposed draft tokens of seq were
// verified and accepted of them kept.
type Observer interface {
	Observe(seq uint64, proposed, accepted int)
}

// Releaser frees per-sequence state (a draft model's KV blocks) when a
// sequence finishes.
type Releaser interface {
	Release(seq uint64)
}
