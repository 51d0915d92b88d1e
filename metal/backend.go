package metal

// Backend runs the kernels of a forward pass. Activations are row-major
// float32 slices owned by the caller; a Backend never retains them after a
// call returns. Implementations may use many threads inside a call but are
// not required to be safe for concurrent calls: one model runner owns one
// Backend at a time.
//
// Every method must be batch-invariant (see package doc) and must not
// allocate in steady state.
type Backend interface {
	// Name identifies the implementation, e.g. "cpu/portable" or "cpu/avx2".
	Name() string

	// MatMul computes out[r][o] = Σ_i x[r][i]·W[o][i] for r < rows, where
	// x is rows×w.Cols and out is rows×w.Rows (y = x·Wᵀ, as nn.Linear).
	MatMul(out, x []float32, rows int, w *Tensor)

	// Embed gathers rows of w: out[r][:] = W[ids[r]][:] as float32.
	// out is len(ids)×w.Cols.
	Embed(out []float32, w *Tensor, ids []int32)

	// RMSNorm normalises each dim-sized row of x independently:
	// out = x / sqrt(mean(x²) + eps) * weight. out may alias x.
	RMSNorm(out, x, weight []float32, dim int, eps float32)

	// RoPE rotates, in place, each headDim-sized head of each row of x by its
	// row's position, in the "rotate half" convention of Hugging Face Llama and
	// Qwen (pairs (i, i+headDim/2)); invFreq has headDim/2 entries and the
	// angle of pair i at position p is p·invFreq[i]. x is len(pos) rows of
	// heads×headDim.
	RoPE(x []float32, pos []int32, heads, headDim int, invFreq []float32)

	// SiLUMul computes gate[i] = silu(gate[i])·up[i] (the SwiGLU gate).
	SiLUMul(gate, up []float32)

	// Add computes dst[i] += src[i].
	Add(dst, src []float32)

	// WriteKV stores the keys and values of len(slots) tokens into cache
	// slots: k and v are len(slots)×kv.Dim().
	WriteKV(kv *KVLayer, k, v []float32, slots []int32)

	// Attention computes causal scaled-dot-product attention with grouped
	// query heads for each row (one query token) of q, reading keys and values
	// from the paged cache. Row r attends to positions 0..rows[r].Pos of its
	// sequence through rows[r].Blocks. q and out are len(rows)×(heads·headDim);
	// query head h uses KV head h/(heads/kvHeads); scores are scaled by
	// 1/sqrt(headDim).
	Attention(out, q []float32, kv *KVLayer, rows []AttnRow, heads, kvHeads, headDim int)

	// Close releases worker threads.
	Close()
}

// A WeightPreparer keeps weight matrices in a layout its MatMul reads
// faster. Models call PrepareWeights once for each matrix they will pass to
// MatMul, when they are built and before any MatMul; the tensor's data must
// not change afterwards. Results are the same with or without it.
type WeightPreparer interface {
	PrepareWeights(w *Tensor)
}

// A KVMemory provides the memory of key/value caches, so that a cache sits
// where the backend's kernels read and write it best. Models allocate
// their caches with KVBuffer(KVCacheElems(…)) and NewKVCacheIn when the
// backend is a KVMemory, and with NewKVCache otherwise. KVBuffer returns n
// zeroed elements.
type KVMemory interface {
	KVBuffer(n int) []uint16
}

// A SharedInputMatMul computes several products of one input at once.
// MatMuls(x, rows, ps) gives each ps[i].Out exactly what
// MatMul(ps[i].Out, x, rows, ps[i].W) gives; an implementation may share
// the work the products have in common (quantizing x) and run them as one
// parallel call.
type SharedInputMatMul interface {
	MatMuls(x []float32, rows int, ps []Product)
}

// Product is one output of MatMuls: Out = x·Wᵀ.
type Product struct {
	Out []float32
	W   *Tensor
}

// AttnRow describes one query token for Attention.
type AttnRow struct {
	Pos    int32   // position of the token in its sequence
	Blocks []int32 // the sequence's block table, covering positions 0..Pos
}
