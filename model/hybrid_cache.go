package model

import (
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// newHybrid is the Builder of the hybrid architectures.
func newHybrid(cfg *Config, w Tensors, be metal.Backend) (Model, error) {
	return NewHybridModel(cfg, w, be)
}

var _ Model = (*HybridModel)(nil)

// CacheSpec declares a paged KV layer for each full-attention layer and a
// state for each Gated DeltaNet layer: its convolution window
// (Hybrid.ConvStateLen floats) followed by its recurrent matrices
// (DeltaDims().StateLen floats). The delta rule's chunked form rounds
// unlike its token loop, so calls may be split only at multiples of
// metal.DeltaChunk or into calls of at most metal.DeltaShortRows tokens.
func (m *HybridModel) CacheSpec() CacheSpec {
	y := m.cfg.Hybrid
	s := CacheSpec{Layers: make([]LayerCache, len(m.layers)), StateChunk: metal.DeltaChunk, StateShortRows: metal.DeltaShortRows}
	for i := range m.layers {
		if m.layers[i].attn != nil {
			s.Layers[i] = PagedLayer(m.cfg.NumKeyValueHeads, m.cfg.HeadDim)
		} else {
			s.Layers[i] = StateLayer(y.ConvStateLen() + y.DeltaDims().StateLen())
		}
	}
	return s
}

// Forward is Model.Forward: row i's state is slot b.Rows[i].State of
// every state layer of kv (kv.States[j] for the j-th Gated DeltaNet
// layer), cleared first when the row starts at position 0 and otherwise
// taken to be at the row's Start, as the scheduler guarantees: a state
// holds no position of its own. No two rows may share a slot.
func (m *HybridModel) Forward(b *Batch, kv *metal.KVCache) ([]float32, error) {
	if err := m.checkSlots(b, kv); err != nil {
		return nil, err
	}
	if len(b.StateCopies) > 0 {
		if kv == nil {
			return nil, fmt.Errorf("model: hybrid batch has state copies but no cache")
		}
		if err := metal.CopyStates(kv.States, b.StateCopies); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	if len(b.Copies) > 0 {
		if err := kv.CopyBlocks(b.Copies); err != nil {
			return nil, err
		}
	}
	states := m.slotStates(b, kv)
	defer clear(states)
	return m.ForwardBatch(b, states, kv)
}

// checkSlots reports a cache without the model's state layers, or a row
// whose slot is not one or is another row's.
func (m *HybridModel) checkSlots(b *Batch, kv *metal.KVCache) error {
	y := m.cfg.Hybrid
	conv, delta := y.ConvStateLen(), y.DeltaDims().StateLen()
	if m.linearLayers > 0 {
		if kv == nil || len(kv.States) != m.linearLayers {
			return fmt.Errorf("model: KV cache has no state layers for the model's %d linear layers (model.NewCache)", m.linearLayers)
		}
		for j := range kv.States {
			if kv.States[j].Elems != conv+delta {
				return fmt.Errorf("model: state layer %d holds %d floats a slot, the model's linear layers %d", j, kv.States[j].Elems, conv+delta)
			}
		}
	}
	for i, row := range b.Rows {
		for _, other := range b.Rows[:i] {
			if m.linearLayers > 0 && other.State == row.State {
				return fmt.Errorf("model: hybrid batch row %d: state slot %d is another row's (one row per sequence)", i, row.State)
			}
		}
		if m.linearLayers > 0 && (row.State < 0 || int(row.State) >= kv.States[0].Slots) {
			return fmt.Errorf("model: hybrid batch row %d: state slot %d out of range [0, %d)", i, row.State, kv.States[0].Slots)
		}
	}
	return nil
}

// slotStates returns each row's state as views of its slots in kv
// (checkSlots), clearing those of rows at position 0.
func (m *HybridModel) slotStates(b *Batch, kv *metal.KVCache) []*HybridState {
	y, r := m.cfg.Hybrid, &m.run
	conv := y.ConvStateLen()
	for len(r.views) < len(b.Rows) {
		r.views = append(r.views, HybridState{Conv: make([][]float32, m.linearLayers), Delta: make([][]float32, m.linearLayers)})
	}
	r.viewPtrs = r.viewPtrs[:0]
	for i, row := range b.Rows {
		v := &r.views[i]
		v.Pos = row.Start
		for j := range m.linearLayers {
			s, _ := kv.States[j].Slot(row.State) // in range: checked above
			if row.Start == 0 {
				clear(s)
			}
			v.Conv[j], v.Delta[j] = s[:conv], s[conv:]
		}
		r.viewPtrs = append(r.viewPtrs, v)
	}
	return r.viewPtrs
}
