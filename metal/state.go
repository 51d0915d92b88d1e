package metal

import "fmt"

// StateLayer is one layer's fixed-size per-sequence state (a linear
// attention layer's convolution window and recurrent matrix, say): Slots
// slots of Elems float32 each, slot s at Data[s·Elems:(s+1)·Elems]. Which
// sequence holds which slot is the KV manager's business, as blocks are;
// what the Elems mean is the model's.
type StateLayer struct {
	Slots, Elems int
	Data         []float32
}

// NewStateLayer allocates slots zeroed slots of elems float32s.
func NewStateLayer(slots, elems int) StateLayer {
	return StateLayer{Slots: slots, Elems: elems, Data: make([]float32, slots*elems)}
}

// Slot returns slot s's state, or an error when s is not a slot.
func (l *StateLayer) Slot(s int32) ([]float32, error) {
	if s < 0 || int(s) >= l.Slots {
		return nil, fmt.Errorf("metal: state slot %d out of range [0, %d)", s, l.Slots)
	}
	i := int(s) * l.Elems
	return l.Data[i : i+l.Elems : i+l.Elems], nil
}

// StateCopy copies slot Src's state to slot Dst in every state layer: a
// sequence's state kept as a snapshot, or a snapshot restored into the
// slot of a sequence that resumes from it.
type StateCopy struct{ Src, Dst int32 }

// CopyStates makes copies in order in every layer, or none when one names
// a slot out of range.
func CopyStates(layers []StateLayer, copies []StateCopy) error {
	for _, c := range copies {
		for i := range layers {
			if _, err := layers[i].Slot(c.Src); err != nil {
				return err
			}
			if _, err := layers[i].Slot(c.Dst); err != nil {
				return err
			}
		}
	}
	for _, c := range copies {
		for i := range layers {
			src, _ := layers[i].Slot(c.Src)
			dst, _ := layers[i].Slot(c.Dst)
			copy(dst, src)
		}
	}
	return nil
}
