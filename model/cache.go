package model

import (
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// CacheKind is what one layer keeps for a sequence between forward passes.
type CacheKind uint8

const (
	// PagedKV layers (attention) keep keys and values for every position
	// in the paged KV cache's blocks: the cache grows with the sequence,
	// blocks can be shared by sequences with a common prefix, and cutting
	// a sequence back to an earlier position only drops blocks.
	PagedKV CacheKind = iota
	// SeqState layers (linear attention, such as a Gated DeltaNet's
	// convolution window and recurrent matrix) keep one fixed-size float32
	// state per sequence in a state slot. It does not grow, but it has
	// absorbed every token so far: it cannot be cut back to an earlier
	// position, nor shared, without a snapshot taken there.
	SeqState
)

func (k CacheKind) String() string {
	switch k {
	case PagedKV:
		return "paged KV"
	case SeqState:
		return "state"
	}
	return fmt.Sprintf("CacheKind(%d)", k)
}

// LayerCache is one layer's declaration.
type LayerCache struct {
	Kind             CacheKind
	KVHeads, HeadDim int // PagedKV: keys (and as many values) per token are KVHeads·HeadDim
	StateFloats      int // SeqState: float32 elements of one sequence's state
}

// PagedLayer declares an attention layer of kvHeads heads of headDim.
func PagedLayer(kvHeads, headDim int) LayerCache {
	return LayerCache{Kind: PagedKV, KVHeads: kvHeads, HeadDim: headDim}
}

// StateLayer declares a layer with a per-sequence state of floats float32s.
func StateLayer(floats int) LayerCache { return LayerCache{Kind: SeqState, StateFloats: floats} }

// CacheSpec is a model's declaration of what it caches per layer, in layer
// order. The engine sizes and manages the cache from it alone: the memory
// plan (PlanMemory), the KV manager's block pool and state slots, and
// NewCache. The i-th PagedKV layer is the cache's Layers[i] and the j-th
// SeqState layer its States[j], whatever layers lie between them.
//
// A forward pass finds a row's state in slot Row.State of every state
// layer. A row starting at position 0 starts from a zero state: the model
// clears the slot, so a slot handed from a finished sequence to a new one
// needs no other reset.
type CacheSpec struct {
	Layers []LayerCache
	// StateChunk and StateShortRows, for a model with state layers, say
	// where a sequence may be split into Forward calls without changing
	// any result's bits (a state's arithmetic may depend on how its
	// tokens were grouped): at multiples of StateChunk from position 0,
	// and anywhere into calls of at most StateShortRows tokens, which give
	// the bits of one call a token. Zero: anywhere.
	StateChunk, StateShortRows int
}

// DenseCache declares cfg's dense transformer: every layer paged attention.
func DenseCache(cfg *Config) CacheSpec {
	s := CacheSpec{Layers: make([]LayerCache, cfg.NumHiddenLayers)}
	for i := range s.Layers {
		s.Layers[i] = PagedLayer(cfg.NumKeyValueHeads, cfg.HeadDim)
	}
	return s
}

// KVLayers is the number of PagedKV layers.
func (s CacheSpec) KVLayers() int { return s.count(PagedKV) }

// StateLayers is the number of SeqState layers.
func (s CacheSpec) StateLayers() int { return s.count(SeqState) }

// HasState reports whether any layer keeps a per-sequence state, which
// needs a state slot per running sequence and cannot be rolled back.
func (s CacheSpec) HasState() bool { return s.StateLayers() > 0 }

func (s CacheSpec) count(k CacheKind) int {
	n := 0
	for _, l := range s.Layers {
		if l.Kind == k {
			n++
		}
	}
	return n
}

// KVBytesPerToken is the paged KV memory one token takes over every
// PagedKV layer in a cache of type t.
func (s CacheSpec) KVBytesPerToken(t metal.KVType) int64 {
	var n int64
	for _, l := range s.Layers {
		if l.Kind == PagedKV {
			n += int64(t.TokenBytes(l.KVHeads, l.HeadDim))
		}
	}
	return n
}

// StateBytes is the memory of one sequence's state over every SeqState
// layer: what each running sequence holds whatever its length.
func (s CacheSpec) StateBytes() int64 {
	var n int64
	for _, l := range s.Layers {
		if l.Kind == SeqState {
			n += 4 * int64(l.StateFloats)
		}
	}
	return n
}

// Check reports the first malformed layer: an unknown kind, a dimension
// that is not positive, or PagedKV layers of different shapes (one block
// table addresses every layer's blocks alike, metal.KVCache).
func (s CacheSpec) Check() error {
	var first *LayerCache
	for i := range s.Layers {
		l := &s.Layers[i]
		switch l.Kind {
		case PagedKV:
			if l.KVHeads <= 0 || l.HeadDim <= 0 {
				return fmt.Errorf("model: cache of layer %d: %d KV heads of %d", i, l.KVHeads, l.HeadDim)
			}
			if first == nil {
				first = l
			} else if l.KVHeads != first.KVHeads || l.HeadDim != first.HeadDim {
				return fmt.Errorf("model: cache of layer %d: %d KV heads of %d, layer before has %d of %d", i, l.KVHeads, l.HeadDim, first.KVHeads, first.HeadDim)
			}
		case SeqState:
			if l.StateFloats <= 0 {
				return fmt.Errorf("model: cache of layer %d: a state of %d floats", i, l.StateFloats)
			}
		default:
			return fmt.Errorf("model: cache of layer %d: unknown kind %v", i, l.Kind)
		}
	}
	return nil
}

// CheckKV reports whether a KV cache of type t in blocks of blockSize can
// hold every PagedKV layer (metal.KVType.Check).
func (s CacheSpec) CheckKV(t metal.KVType, blockSize int) error {
	for _, l := range s.Layers {
		if l.Kind != PagedKV {
			continue
		}
		if err := t.Check(blockSize, l.HeadDim); err != nil {
			return err
		}
	}
	return nil
}

// NewCache allocates m's whole cache: its paged KV layers
// (Model.NewKVCache) and, when it declares state layers, slots states of
// each. A model without state layers gets exactly its NewKVCache.
func NewCache(m Model, numBlocks, blockSize, slots int, t metal.KVType) *metal.KVCache {
	kv := m.NewKVCache(numBlocks, blockSize, t)
	for _, l := range m.CacheSpec().Layers {
		if l.Kind == SeqState {
			kv.States = append(kv.States, metal.NewStateLayer(slots, l.StateFloats))
		}
	}
	return kv
}
