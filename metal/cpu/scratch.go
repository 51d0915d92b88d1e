package cpu

// attnScratchFloats is the scratch one worker's attention grows to for
// contexts of up to context positions: one run's scores for up to every
// query head, then a widened chunk or a KVBF16 run's queries.
func attnScratchFloats(heads, headDim, context int) int {
	return attnRunTokens*heads*(context+7) + 15 + max(attnChunk*headDim, (attnRunTokens*heads*headDim+1)/2)
}

// ReserveAttention sizes every worker's scratch for attention over up to
// context positions, the figure AttentionScratchBytes plans, so that a long
// prompt's chunks reuse one buffer per worker instead of growing it as
// their context grows. Call it before the backend's first use.
func (b *Backend) ReserveAttention(heads, headDim, context int) {
	n := attnScratchFloats(heads, headDim, context)
	for w := range b.scratch {
		if cap(b.scratch[w]) < n {
			b.scratch[w] = make([]float32, n)
		}
	}
}
