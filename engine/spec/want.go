package spec

import "github.com/splash-inference/splash/engine/sample"

// Want asks a proposer for up to K draft tokens to follow Tokens, the
// sequence's tokens so far (prompt and accepted output, read-only).
// Proposers append to Draft, which has capacity K on entry.
type Want struct {
	Seq    uint64
	Tokens []int32
	K      int
	Draft  []int32
	// Sampling, when set with a temperature above 0, is how the sequence
	// samples: a proposer that can may draw its tokens from its own
	// distribution under the same settings (see DFlash) and report it in
	// Probs. Nil or greedy: propose deterministically.
	Sampling *sample.Params
	// Probs, when a proposer sets it, holds for each Draft token the
	// distribution (vocabulary-sized) it was drawn from, for rejection
	// sampling (AcceptSample's q); nil means each was chosen
	// deterministically (q one-hot). It is the proposer's memory, valid
	// until its next Propose.
	Probs [][]float32
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
