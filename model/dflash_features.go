package model

import "fmt"

// FeatureCapture collects a target model's hidden states for a DFlash
// draft: the output of each of Layers (the residual stream after the
// layer's MLP, Hugging Face's hidden_states[layer+1]) at every position of
// the batch rows that set Row.Capture. The draft fuses them (fc, then
// hidden_norm) into its context; see DFlashDraft.AddContext. The dense
// transformer (Qwen3, Llama) and HybridModel fill it.
//
// Source: z-lab/dflash dflash/model.py, extract_context_feature, which
// concatenates hidden_states[id+1] over target_layer_ids along the last
// dimension.
type FeatureCapture struct {
	// Layers are the target layers captured, in the order their states
	// are concatenated (the draft's target_layer_ids).
	Layers []int
	// Out holds, after Forward, one row of len(Layers)·hidden floats per
	// captured position, in batch order (rows in order, each row's
	// positions in order). Its storage is reused by the next Forward.
	Out []float32

	rows  []int32 // flattened-batch indices of the captured positions
	slot  []int   // per model layer: its index in Layers, or -1
	width int     // len(Layers)·hidden
}

// Rows returns how many positions Out holds.
func (c *FeatureCapture) Rows() int {
	if c == nil || c.width == 0 {
		return 0
	}
	return len(c.rows)
}

// prepare checks the layers against a model of numLayers layers of width
// hidden, lists the captured positions of b and sizes Out. A nil capture
// does nothing.
func (c *FeatureCapture) prepare(b *Batch, numLayers, hidden int) error {
	if c == nil {
		return nil
	}
	if len(c.Layers) == 0 {
		return fmt.Errorf("model: feature capture names no layers")
	}
	c.slot = c.slot[:0]
	for range numLayers {
		c.slot = append(c.slot, -1)
	}
	for j, l := range c.Layers {
		if l < 0 || l >= numLayers {
			return fmt.Errorf("model: feature capture layer %d is outside the model's %d layers", l, numLayers)
		}
		if c.slot[l] >= 0 {
			return fmt.Errorf("model: feature capture names layer %d twice", l)
		}
		c.slot[l] = j
	}
	c.rows = c.rows[:0]
	n := 0
	for _, r := range b.Rows {
		if r.Capture {
			for j := range r.Tokens {
				c.rows = append(c.rows, int32(n+j))
			}
		}
		n += len(r.Tokens)
	}
	c.width = len(c.Layers) * hidden
	need := len(c.rows) * c.width
	if cap(c.Out) < need {
		c.Out = make([]float32, need)
	}
	c.Out = c.Out[:need]
	return nil
}

// record copies layer's output x (one hidden-wide row per batch position)
// at the captured positions into Out.
func (c *FeatureCapture) record(layer int, x []float32, hidden int) {
	j := c.slot[layer]
	if j < 0 {
		return
	}
	for i, r := range c.rows {
		dst := c.Out[i*c.width+j*hidden : i*c.width+(j+1)*hidden]
		copy(dst, x[int(r)*hidden:(int(r)+1)*hidden])
	}
}
