// Package actors is the concurrent shell around the engine: a small
// protoactor-go supervision tree that batches every running request into
// one forward pass per step.
//
//	Engine.Generate ──spawn──▶ RequestActor ──Submit/Cancel──▶ BatcherActor ──Verify──▶ VerifierActor
//	                                ▲                                │
//	                                └──────TokensGenerated───────────┘
//
// The BatcherActor owns an engine.Scheduler (and through it the KV block
// pool and prefix cache) and runs the step loop: Schedule, Verify (the
// target forward pass, in the VerifierActor that owns the model and its KV
// memory), Decide (sampling and speculative acceptance), Update, then one
// TokensGenerated message per sequence that advanced. Between steps its
// mailbox takes new Submits and Cancels, so requests join and leave the
// batch continuously. N-gram speculation runs inside Schedule (the
// scheduler's Proposer), so every step verifies drafts in the same pass.
// The batcher times each step, draft proposals and forward pass, and hands
// the time to Update (StepResult.Elapsed): from it the scheduler learns what
// a verified draft token costs and drafts only where that pays (k = 0, and
// no DraftActor round trip, for a draft that keeps missing).
//
// A RequestActor per request owns its event channel: it detokenizes
// incrementally, applies stop strings, and ends the stream exactly once.
//
// Supervision: the VerifierActor restarts on a panic (bounded), and its
// parent, the batcher, is told at once: every sequence of the step in flight
// ends with an error event, the others keep going. A panic in the batcher
// itself ends every live request with an error event before the restarted
// batcher serves new ones. The logic inside the actors lives in engine/ and
// is tested there without actors.
//
// Design note: ARCHITECTURE.md draws a separate KVCacheManagerActor. The
// block pool is consulted many times per step by the scheduler's policy
// (admission, preemption, rollback), so it lives inside the scheduler as a
// synchronous object, as in vLLM; a message hop per block decision would
// cost more than it isolates.
package actors
