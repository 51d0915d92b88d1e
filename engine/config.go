package engine

import "fmt"

// Config holds the scheduler's budget knobs, chosen by the memory plan.
type Config struct {
	BlockSize      int // tokens per KV block; 16 when zero
	NumBlocks      int // KV blocks in the pool
	MaxBatchTokens int // tokens the target evaluates per step
	MaxRunning     int // sequences holding KV blocks at once
	MaxModelLen    int // context limit, prompt plus output; NumBlocks·BlockSize when zero
	MaxDraft       int // longest speculative proposal per row; 0 turns speculation off
	// MaxPrefillWithDecode caps the prompt tokens of a step that also
	// carries decode rows (vLLM's long_prefill_token_threshold, for the
	// step as a whole): every decoding stream waits for the whole step,
	// so a long prompt arriving among running streams is taken in smaller
	// chunks, and its time to first token stretches a little, rather than
	// every stream stalling for a full MaxBatchTokens chunk. Zero: no cap
	// beyond MaxBatchTokens.
	MaxPrefillWithDecode int
	// AttentionBreakEven, when positive, is the context at which a token's
	// attention costs as much as its matrix products (model.Config.
	// AttentionBreakEven): MaxPrefillWithDecode then counts a prompt token
	// at context c as 1 + c/AttentionBreakEven tokens, so that chunks deep
	// in a long prompt shrink to what one at its start costs. Zero counts
	// every token as one.
	AttentionBreakEven int
	// DraftCost, when positive, fixes the cost of verifying one draft token
	// relative to a decode row's share of a step (spec.AdaptiveK.Next);
	// otherwise it is learned from the steps' Elapsed times (spec.StepCost).
	DraftCost float64
	// FixedDraft verifies MaxDraft draft tokens (as far as the step's
	// budget and the sequence's room allow) at every decode step, as
	// vLLM's num_speculative_tokens does, rather than AdaptiveK's choice:
	// to measure a draft's acceptance per block, or where speculation is
	// known to pay whatever the timed steps say.
	FixedDraft bool
	// StateSlots is the number of per-sequence state slots of a model
	// with state layers (model.CacheSpec.HasState); zero for a model
	// without. A sequence holds a slot while it runs, so at most
	// StateSlots run at once. Such a state cannot be rolled back: with
	// speculation (MaxDraft > 0) each sequence also holds a spare slot,
	// where a verify pass saves the state before its drafts, to go back
	// to when some are rejected (CacheSlots counts them).
	StateSlots int
	// StateChunk and StateShortRows, for a model with state layers
	// (model.CacheSpec's fields of those names), make the results
	// independent of how a sequence is chunked: prompt chunks are cut at
	// multiples of StateChunk from position 0 and at the prompt's end,
	// and generated tokens recomputed after a preemption (decoded one a
	// step the first time) go in chunks of at most StateShortRows. Zero:
	// chunks are cut anywhere.
	StateChunk, StateShortRows int
	// StateSnapshots, for a model with state layers and a StateChunk, is
	// how many snapshots of a sequence's state the KV manager keeps, one
	// per cached block ending at a multiple of StateChunk that a prompt
	// chunk reached (the state there is any sequence's with that prefix),
	// so that a prefix hit resumes from the deepest one and recomputes the
	// rest. Each takes a state slot's memory (CacheSlots). Zero: no prefix
	// hits for such a model.
	StateSnapshots int
	// StateSnapshotEvery is the snapshot interval, a multiple of
	// StateChunk (8·StateChunk when zero): prompt chunks of a model with
	// snapshots also end at its multiples, so that each is a chunk's end
	// and gets a snapshot, and a hit recomputes less than an interval.
	StateSnapshotEvery int
	// WarmAnswers, for a model with state snapshots, has the scheduler
	// recompute each finished request's answer (not a cancelled one's) on
	// its own account, in prompt chunks from the snapshot at its prompt's
	// last chunk boundary, when no request waits: a generated token's
	// state is not what a prompt chunk computes, so without this a
	// conversation's next turn, which sends the answer back as prompt,
	// resumes at the previous prompt's end and recomputes the whole
	// answer; with it, at the answer's last chunk boundary.
	WarmAnswers bool
}

// CacheSlots is the number of state slots model.NewCache must make for a
// scheduler of this configuration (as Scheduler.Config returns it): a slot
// per running sequence, a spare per running sequence when it speculates,
// then the snapshots.
func (c Config) CacheSlots() int {
	return c.StateSlots*(1+c.spares()) + c.StateSnapshots
}

// spares is 1 when each sequence holds a spare state slot, else 0.
func (c Config) spares() int {
	if c.StateSlots > 0 && c.MaxDraft > 0 {
		return 1
	}
	return 0
}

func (c *Config) withDefaults() (Config, error) {
	d := *c
	if d.BlockSize == 0 {
		d.BlockSize = 16
	}
	if d.MaxModelLen == 0 {
		d.MaxModelLen = d.NumBlocks * d.BlockSize
	}
	if d.StateSnapshots > 0 && d.StateSnapshotEvery == 0 {
		d.StateSnapshotEvery = 8 * d.StateChunk
	}
	switch {
	case d.BlockSize < 0 || d.NumBlocks <= 0:
		return d, fmt.Errorf("engine: need positive BlockSize and NumBlocks, got %d and %d", d.BlockSize, d.NumBlocks)
	case d.MaxBatchTokens <= 0 || d.MaxRunning <= 0:
		return d, fmt.Errorf("engine: need positive MaxBatchTokens and MaxRunning, got %d and %d", d.MaxBatchTokens, d.MaxRunning)
	case d.MaxRunning > d.MaxBatchTokens:
		// Every running sequence must be able to decode in the same step,
		// or the youngest would never get a turn.
		return d, fmt.Errorf("engine: MaxRunning %d exceeds MaxBatchTokens %d", d.MaxRunning, d.MaxBatchTokens)
	case d.MaxModelLen < 2 || d.MaxModelLen > d.NumBlocks*d.BlockSize:
		// A sequence alone must always fit the pool, or preemption could
		// not guarantee progress.
		return d, fmt.Errorf("engine: MaxModelLen %d must be in [2, NumBlocks·BlockSize = %d]", d.MaxModelLen, d.NumBlocks*d.BlockSize)
	case d.MaxDraft < 0:
		return d, fmt.Errorf("engine: MaxDraft %d is negative", d.MaxDraft)
	case d.DraftCost < 0:
		return d, fmt.Errorf("engine: DraftCost %g is negative", d.DraftCost)
	case d.MaxPrefillWithDecode < 0:
		return d, fmt.Errorf("engine: MaxPrefillWithDecode %d is negative", d.MaxPrefillWithDecode)
	case d.AttentionBreakEven < 0:
		return d, fmt.Errorf("engine: AttentionBreakEven %d is negative", d.AttentionBreakEven)
	case d.StateSlots < 0:
		return d, fmt.Errorf("engine: StateSlots %d is negative", d.StateSlots)
	case d.StateSnapshots < 0 || d.StateSnapshots > 0 && (d.StateSlots == 0 || d.StateChunk == 0 ||
		d.StateSnapshotEvery%d.StateChunk != 0 || d.StateSnapshotEvery%d.BlockSize != 0):
		return d, fmt.Errorf("engine: %d StateSnapshots need StateSlots and an interval (%d) that is a multiple of StateChunk %d and BlockSize %d",
			d.StateSnapshots, d.StateSnapshotEvery, d.StateChunk, d.BlockSize)
	case d.StateChunk < 0 || d.StateShortRows < 0:
		return d, fmt.Errorf("engine: StateChunk %d and StateShortRows %d must not be negative", d.StateChunk, d.StateShortRows)
	}
	return d, nil
}
