package model

import (
	"errors"
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// ErrPlanTooSmall is returned (wrapped) by PlanMemory when the budget
// cannot hold one sequence of the full context: the caller should name the
// limits that would make room.
var ErrPlanTooSmall = errors.New("model: the memory plan is too small")

// PlanInput is what a memory plan is made from: the models' cache
// declarations and sizes, the backend's extra memory and the operator's
// limits.
type PlanInput struct {
	Cache           CacheSpec // the target model's declaration (Model.CacheSpec)
	Weights         int64     // bytes of the target's weight tensors (WeightBytes)
	ScratchPerToken int64     // the target's activations per token of a step (ScratchPerToken)
	// DraftCache and DraftWeights are the draft model's, when one runs
	// (no layers: none); its cache has as many blocks as the target's.
	DraftCache   CacheSpec
	DraftWeights int64
	// DraftScratch is the draft's own scratch at MaxRunning sequences
	// (a DFlash draft's block pass, DFlashDraft.ScratchBytes).
	DraftScratch int64
	// DFlash says the draft is a DFlash draft, whose cache is of type
	// DFlashKVType(KVType).
	DFlash bool

	Packed           int64 // the backend's packed copies of weight matrices
	AttentionScratch int64 // the backend's attention scratch at Context

	KVType         metal.KVType
	BlockSize      int   // tokens per KV block
	Context        int   // the longest sequence, prompt plus output
	Budget         int64 // bytes for weights, caches and scratch
	KVCap          int64 // cap on the paged KV cache; 0: none
	MaxBatchTokens int   // tokens per step
	MaxRunning     int   // the operator's cap on sequences running at once
	Snapshots      int   // state snapshots wanted, for a model with state layers (engine.Config.StateSnapshots)
	// Spares, for a model with state layers that speculates, gives each
	// running sequence a second state slot, where a verify pass saves the
	// state before its drafts (engine.Config.CacheSlots).
	Spares bool
}

// Plan is how a budget is spent: weights and scratch first, then one state
// slot per running sequence (two when it speculates) and the state
// snapshots for a model with state layers, then the paged KV cache, which
// takes the rest up to the cap.
type Plan struct {
	KVType                        metal.KVType
	Weights, DraftWeights, Packed int64 // Weights includes DraftWeights
	KVPerToken, DraftKV           int64 // KVPerToken includes DraftKV
	StatePerSeq                   int64 // state bytes of one running sequence; 0 without state layers
	ScratchPerToken               int64
	AttentionScratch              int64
	DraftScratch                  int64 // PlanInput.DraftScratch, part of ScratchBytes
	MaxBatchTokens                int
	Context, BlockSize, Blocks    int
	// MaxRunning is the operator's cap, lowered for a model with state
	// layers to the states that fit beside one full context's KV cache;
	// StateSlots is MaxRunning then, 0 without state layers, and
	// SpareSlots MaxRunning again with PlanInput.Spares, else 0.
	MaxRunning, StateSlots, SpareSlots int
	// Snapshots is PlanInput.Snapshots, lowered to what fits beside the
	// states and one full context's KV cache; 0 without state layers.
	Snapshots int
	Budget    int64
}

// KVBytes is the paged KV cache's memory.
func (p *Plan) KVBytes() int64 { return int64(p.Blocks*p.BlockSize) * p.KVPerToken }

// StateBytes is the state slots' memory, spares included.
func (p *Plan) StateBytes() int64 { return int64(p.StateSlots+p.SpareSlots) * p.StatePerSeq }

// SnapshotBytes is the state snapshots' memory.
func (p *Plan) SnapshotBytes() int64 { return int64(p.Snapshots) * p.StatePerSeq }

// ScratchBytes is the forward passes' scratch: a full step's activations,
// attention's scores and the draft's own.
func (p *Plan) ScratchBytes() int64 {
	return p.ScratchPerToken*int64(p.MaxBatchTokens) + p.AttentionScratch + p.DraftScratch
}

// Total is the memory the plan uses, within Budget.
func (p *Plan) Total() int64 {
	return p.Weights + p.Packed + p.KVBytes() + p.StateBytes() + p.SnapshotBytes() + p.ScratchBytes()
}

// PlanMemory plans in's budget. On ErrPlanTooSmall the returned plan is
// filled as far as it got, for the caller to show.
func PlanMemory(in PlanInput) (Plan, error) {
	p := Plan{KVType: in.KVType, Weights: in.Weights + in.DraftWeights, DraftWeights: in.DraftWeights, Packed: in.Packed,
		ScratchPerToken: in.ScratchPerToken, AttentionScratch: in.AttentionScratch, DraftScratch: in.DraftScratch, MaxBatchTokens: in.MaxBatchTokens,
		Context: in.Context, BlockSize: in.BlockSize, MaxRunning: in.MaxRunning, Budget: in.Budget}
	if in.BlockSize <= 0 || in.Context <= 0 || in.MaxBatchTokens <= 0 || in.MaxRunning <= 0 {
		return p, fmt.Errorf("model: a memory plan needs a positive block size, context, batch and running cap, got %d, %d, %d and %d",
			in.BlockSize, in.Context, in.MaxBatchTokens, in.MaxRunning)
	}
	if err := in.Cache.Check(); err != nil {
		return p, err
	}
	if err := in.Cache.CheckKV(in.KVType, in.BlockSize); err != nil {
		return p, fmt.Errorf("model: KV cache type %s: %w", in.KVType, err)
	}
	if len(in.DraftCache.Layers) > 0 {
		if err := in.DraftCache.Check(); err != nil {
			return p, fmt.Errorf("model: draft model: %w", err)
		}
		if in.DraftCache.HasState() {
			return p, fmt.Errorf("model: a draft model with state layers is not supported")
		}
		dt := in.KVType
		if in.DFlash {
			dt = DFlashKVType(dt)
		}
		if err := in.DraftCache.CheckKV(dt, in.BlockSize); err != nil {
			return p, fmt.Errorf("model: KV cache type %s (draft model): %w", dt, err)
		}
		p.DraftKV = in.DraftCache.KVBytesPerToken(dt)
	}
	p.KVPerToken = in.Cache.KVBytesPerToken(in.KVType) + p.DraftKV
	p.StatePerSeq = in.Cache.StateBytes()

	free := p.Budget - p.Weights - p.Packed - p.ScratchBytes()
	contextBlocks := (p.Context + p.BlockSize - 1) / p.BlockSize
	if p.StatePerSeq > 0 {
		oneContext := int64(contextBlocks*p.BlockSize) * p.KVPerToken
		perSeq := p.StatePerSeq
		if in.Spares {
			perSeq *= 2
		}
		p.MaxRunning = int(min(int64(in.MaxRunning), max(free-oneContext, 0)/perSeq))
		p.StateSlots = p.MaxRunning
		if in.Spares {
			p.SpareSlots = p.MaxRunning
		}
		if p.MaxRunning < 1 {
			return p, fmt.Errorf("%w: it leaves no room for one sequence's state of %d B beside one %d-token context's KV cache",
				ErrPlanTooSmall, p.StatePerSeq, p.Context)
		}
		p.Snapshots = int(min(int64(max(in.Snapshots, 0)), max(free-oneContext-p.StateBytes(), 0)/p.StatePerSeq))
	}
	kv := free - p.StateBytes() - p.SnapshotBytes()
	if in.KVCap > 0 {
		kv = min(kv, in.KVCap)
	}
	if p.KVPerToken == 0 {
		// No paged layer: the blocks only count positions, and cost nothing.
		p.Blocks = p.MaxRunning * contextBlocks
	} else {
		p.Blocks = int(max(kv, 0) / (p.KVPerToken * int64(p.BlockSize)))
	}
	if p.Blocks < contextBlocks {
		return p, fmt.Errorf("%w: it leaves %d tokens of KV cache, fewer than one %d-token context", ErrPlanTooSmall, p.Blocks*p.BlockSize, p.Context)
	}
	return p, nil
}

// WeightBytes is the memory of every tensor of ts.
func WeightBytes(ts Tensors) int64 {
	var n int64
	for _, name := range ts.Names() {
		if t, err := ts.Tensor(name); err == nil {
			n += int64(len(t.Data))
		}
	}
	return n
}

// ScratchPerToken is the float32 activations one token of a step holds in
// cfg's forward pass: the dense transformer's residual, normed and
// attention buffers (four of the hidden size), the MLP's gate and up
// (two of the intermediate size) and the logits. An architecture with wider
// activations (a linear-attention layer's projections) counts them here.
func ScratchPerToken(cfg *Config) int64 {
	return 4 * int64(4*cfg.HiddenSize+2*cfg.IntermediateSize+cfg.VocabSize)
}
