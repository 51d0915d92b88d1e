// Package engine is the synchronous core of Splash's batching: a scheduler
// that decides, step by step, which tokens of which sequences the target
// model evaluates, over a paged KV cache with prefix sharing and speculative
// decoding. It has no actors, kernels or globals, and every call returns
// with its work done: the one goroutine it starts, Decider.Decide's second
// worker over a step's rows, ends before Decide returns. The BatcherActor
// owns one Scheduler and wraps it the way raft's node wraps RawNode.
//
// # One step
//
//	plan := s.Schedule()                        // prompt chunks, decode and verify rows
//	wants := plan.Wants()                       // optional: a draft model's proposals,
//	draft.Propose(wants)                        //   run by the caller (the DraftActor)
//	plan.SetDrafts(wants)
//	logits, err := m.Forward(plan.Batch(), kv)  // the target, one batched pass
//	res, err := decider.Decide(plan, logits, samplerOf) // sample, accept drafts, logprobs
//	outs, err := s.Update(plan, res)            // new tokens, finished sequences
//
// Only one plan may be outstanding: Schedule, then Update, then Schedule.
// A cheap proposer (spec.Ngram) can instead be given to New, and Schedule
// fills the drafts itself. Outputs carry each verify row's Drafted and
// Accepted counts for a caller-run proposer's spec.Observer, and finished
// sequences for its spec.Releaser.
//
// The Plan's rows map 1:1 onto model.Row: a prompt chunk wants no logits,
// one (when it completes the sequence's tokens) or all of them (prompt
// logprobs); a verify row feeds the last accepted token and k drafts and
// wants logits at all k+1 positions (for a model with state layers, after
// rejected drafts, the kept tokens it recomputes come first, without
// logits). The batch also carries the block
// copies of the step's prefix hits that reach into a block (a sequence gets
// its own copy of a cached block whose first positions it shares), which
// Forward makes before the rows run. Update rolls back the KV positions of
// rejected drafts (kvcache Truncate), commits computed positions to the
// prefix cache (full blocks to the index, the last block's so far to the
// partial hits), and checks stop tokens, max tokens and the context limit;
// stop strings live with the detokenizer (package stop) and end a sequence
// through Cancel.
//
// # Policy
//
// As in vLLM v1 there is no prefill or decode phase: each sequence has a
// count of tokens whose keys and values are computed, and each step lets
// counts catch up with the token lists under one token budget
// (Config.MaxBatchTokens).
//
// Running sequences that need just their last token go first, as decode
// rows, ordered by block table so that sequences sharing a prompt prefix
// are adjacent rows (which attention can serve as one run). When
// speculation is on, each is widened by up to k draft tokens into a verify
// row, within the budget left after every decode row's own token
// (speculation never preempts anyone). k comes from the sequence's
// acceptance history, starting from its peers', and what a verified token
// costs (spec.AdaptiveK): 0 for drafts that do not pay, with occasional
// probes. The cost is learned from StepResult.Elapsed of steps of decode
// rows (spec.StepCost) unless Config.DraftCost fixes it.
//
// Then come prompt chunks of running sequences, then new sequences from
// the waiting queue in arrival order, each reusing the longest cached
// prefix of its tokens, while Config.MaxRunning allows. In a step with
// decode rows the prompt tokens together are at most
// Config.MaxPrefillWithDecode (when set), so that the streams running are
// not held up by a long prompt's chunks. A prompt token deep in a long
// prompt costs more than one at its start (its attention reads every
// position before it), so with Config.AttentionBreakEven set the cap counts
// tokens at their cost (prefillBudget): chunks shrink as the prompt
// proceeds, and every step holds the streams up about as long. Prompt
// chunks go oldest first, except that a running prompt leaves aside, up to
// half of what is left, what shorter prompts after it want when that is at
// most MaxBatchTokens (past a cached prefix): a short request, or an agent's
// next turn, arriving while a long prompt prefills is not held until that
// prompt is done. The scenarios in testdata/*.txt show plans step by step
// (go test -run TestScenarios -rewrite regenerates them).
//
// When blocks run out, the youngest running sequence not yet in the plan is
// preempted: its blocks are freed (committed ones stay in the prefix cache)
// and it goes back to the waiting queue at its original arrival position, to
// be recomputed from its prompt and generated tokens later. Because the
// oldest sequences are served and kept first, every request finishes.
//
// A model with state layers (model.CacheSpec.HasState, Config.StateSlots)
// also needs a state slot per running sequence: a waiting sequence is
// admitted only when one is free, and preemption, cancellation and
// finishing free it with the blocks. Each row carries its slot
// (PlanRow.State, model.Row.State); a preempted sequence restarts at
// position 0, where the model clears the slot. Its results depend on how
// the model's calls split a sequence, so prompt chunks are cut where the
// model says they may be (Config.StateChunk, StateShortRows) and results
// are the same however the scheduler batches and preempts. A prefix is
// resumed only from a state snapshot (Config.StateSnapshots, kvcache's
// package doc), kept where a prompt chunk ends at a multiple of
// StateSnapshotEvery or at the prompt's last multiple of StateChunk (a
// chunk ends there too); only blocks up to that boundary are indexed,
// since decoded positions and a prompt's last partial chunk hold other
// bits than a longer prompt computes there. So that a conversation's next
// turn resumes at the end of the answer rather than of the prompt, with
// Config.WarmAnswers a finished request (not a cancelled one) leaves a
// warming sequence of its tokens up to their last StateChunk multiple: the
// scheduler's own, run as a prompt from that snapshot when no request
// waits (PlanRow.Warm rows ask no logits; no Output; one StateChunk a
// step beside decode rows), indexed and snapshotted at its end like a
// prompt, and dropped when a request needs its place or blocks.
//
// Its state cannot be rolled back either, so when such a scheduler
// speculates each running sequence holds a second, spare slot
// (Config.CacheSlots counts them): a verify row's batch first copies the
// sequence's state into its spare (Plan.Batch), and when drafts are
// rejected Update swaps slot and spare (kvcache's Settle), so the
// sequence stands at the verify's start again, and its next decode row
// recomputes the tokens the verify kept before its new one (a replay,
// with room for new drafts). Decode and verify rows stay within
// StateShortRows tokens, the calls that compute a position as decoding it
// alone does, so greedy output is the same with and without speculation,
// whatever the proposer (n-gram, draft model or DFlash: the mechanism
// only sees drafts). Saving costs one state copy a verify row; keeping
// every verify position's state instead would write k+1 states a row and
// hold k+1 slots a sequence (BenchmarkHybridVerifyState).
//
// A request may carry images (Request.Images, images.go): runs of image
// pad tokens in its prompt whose input embeddings are a vision tower's
// output. Every row of the sequence carries them (model.Row.Images: they
// move the M-RoPE positions of the tokens after them), and
// Plan.EncodeImages gives the rows that feed an image's tokens its
// embeddings, from an ImageCache that keeps them by content hash. Since
// every pad token has the same id, the prefix cache names them by their
// image's hash instead (CacheKeys): a resent image hits, another of the
// same size does not.
//
// # States
//
// A sequence is Waiting (queued, holding no blocks), Prefilling (running,
// computing known tokens in chunks: its prompt, or everything again after a
// preemption), Decoding (running, generating through decode or verify rows)
// or Finished. Cancel ends one at any state and frees its blocks at once.
package engine
