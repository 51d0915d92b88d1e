package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/model"
)

// Submit asks the batcher to schedule a request. Sent by a RequestActor;
// answered with TokensGenerated messages to Reply until one carries a
// finish reason, or with a single Failed.
type Submit struct {
	Req      engine.Request
	Sampling sample.Params // Sampling.Logprobs: < 0 none, 0 the sampled token's, k also the top k
	Mask     TokenMask     // optional constrained decoding
	Reply    *actor.PID    // the RequestActor
	// SpecTrace asks for each verify step's SpecStep in TokensGenerated.
	SpecTrace bool
}

// Cancel tells the batcher to end a sequence and free its blocks now. Sent
// by a RequestActor whose client left or whose stop string matched.
type Cancel struct {
	ID     uint64
	Reason stop.Reason
}

// TokensGenerated reports a sequence's new tokens from one step, with their
// logprobs when asked. Sent by the batcher to the sequence's RequestActor.
type TokensGenerated struct {
	Tokens         []int32
	Logprobs       []TokenLogprobs // one per token when Submit.Sampling.Logprobs ≥ 0
	PromptLogprobs []TokenLogprobs // on the first message, when the request asked for them
	Reason         stop.Reason     // set on the last message
	CachedTokens   int             // prompt tokens served from the prefix cache (first message)
	// Spec, when Submit.SpecTrace asked for it, is the decode step that
	// gave Tokens (nil for the token of a prompt's last pass).
	Spec *SpecStep
}

// Failed ends a request with an error. Sent by the batcher.
type Failed struct {
	Err error
}

// Verify asks the verifier to run the target model over a batch. Sent by
// the batcher; answered with Verified.
type Verify struct {
	Step  uint64
	Batch *model.Batch
	// Images, when set, gives the batch's rows their images' embeddings
	// from the verifier's cache before the pass (engine.Plan.EncodeImages):
	// the tower runs where the model does.
	Images func(*engine.ImageCache) error
}

// Verified carries the logits of a Verify (valid until the next Verify).
type Verified struct {
	Step   uint64
	Logits []float32
	Err    error
}

// stepNow makes the batcher run a step when it has work. Sent by the
// batcher to itself, so Submits and Cancels queued meanwhile go first.
type stepNow struct{}

// childFailed tells the batcher that its verifier panicked while handling
// Message. Sent by the batcher's supervisor strategy.
type childFailed struct {
	Reason  any
	Message any
}

// TokenLogprobs is a token, its natural-log probability and the most likely
// alternatives at its position.
type TokenLogprobs struct {
	Token   int32
	Logprob float32
	Top     []sample.TokenLogprob
}

// CheckPool asks the batcher to verify its block pool against the live
// sequences (a leak check when idle). Answered with PoolChecked.
type CheckPool struct{}

// PoolChecked answers CheckPool.
type PoolChecked struct {
	Err  error
	Idle bool
}

// Propose asks the draft actor to fill Wants with draft tokens (in place:
// the batcher does not touch them until Proposed arrives). Sent by the
// batcher; answered with Proposed.
type Propose struct {
	Step  uint64
	Wants []spec.Want
}

// Proposed answers Propose. An error only costs speculation for the step.
type Proposed struct {
	Step uint64
	Err  error
}

// Observed tells the draft actor how many of a sequence's proposed tokens
// the target accepted. Sent by the batcher.
type Observed struct {
	Seq                uint64
	Proposed, Accepted int
}

// Released tells the draft actor a sequence ended, freeing its draft
// cache. Sent by the batcher.
type Released struct {
	Seq uint64
}

// FeaturesCommitted gives the draft actor the target's features at the
// positions a step committed (DFlash speculation). Sent by the batcher.
type FeaturesCommitted struct {
	Features []spec.Features
}
