package model

// MoEBlock runs layer i's mixture-of-experts block of m on the n rows of
// h (normed inputs), leaving the output in h: all the rows in one call,
// as a forward pass does, or, when perToken, each row in a call of its
// own, the per-token path the grouped one must match.
func MoEBlock(m *HybridModel, i int, h []float32, n int, perToken bool) {
	m.run.moe.grow(m.cfg, n)
	b, hidden := m.layers[i].moe, m.cfg.HiddenSize
	if !perToken {
		m.moe(b, h, n)
		return
	}
	for t := range n {
		m.moe(b, h[t*hidden:(t+1)*hidden], 1)
	}
}
