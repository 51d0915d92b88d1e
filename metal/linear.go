package metal

// A LinearAttention runs the token mixer of hybrid models' linear layers
// (Qwen3-Next, Qwen3.5: Gated DeltaNet), which keep a fixed-size state per
// sequence instead of a KV cache. Models discover it by type assertion on
// their Backend, like the other optional kernels. The specification is
// Hugging Face transformers'
// src/transformers/models/qwen3_next/modeling_qwen3_next.py (the torch_*
// reference functions and Qwen3NextGatedDeltaNet.forward).
//
// Every call is for one sequence: its state slices are that sequence's and
// are read at the start and written at the end, so a prompt can run in
// chunks of any size, state carried from one call to the next. All
// activations are row-major float32, one row per token, tokens in order.
type LinearAttention interface {
	// CausalConv1D runs a depthwise causal convolution of width kernel
	// followed by SiLU over rows tokens of channels channels:
	//
	//	out[t][c] = silu(Σ_{j<kernel} weight[c][j] · xx[t+j][c])
	//
	// where xx is the kernel-1 rows of state followed by the rows of x
	// (torch_causal_conv1d_update: the earlier tokens' inputs, zeros before
	// the first token). state ((kernel-1)×channels, oldest row first) is
	// left holding the last kernel-1 rows of xx. weight is channels×kernel,
	// the checkpoint's conv1d.weight (channels, 1, kernel) squeezed; the
	// convolution has no bias. out may alias x.
	CausalConv1D(out, x, state, weight []float32, rows, channels, kernel int)

	// DeltaGates computes each token's per-value-head decay (in log space)
	// and write strength from the a and b projections (rows×heads each):
	//
	//	g[t][h]    = −exp(aLog[h]) · softplus(a[t][h] + dtBias[h])
	//	beta[t][h] = sigmoid(b[t][h])
	//
	// g may alias a and beta may alias b.
	DeltaGates(g, beta, a, b, aLog, dtBias []float32, rows, heads int)

	// GatedDeltaRule runs the gated delta rule over rows tokens. qkv holds
	// each token's convolved queries, keys and values side by side
	// (KeyHeads·KeyDim + KeyHeads·KeyDim + ValueHeads·ValueDim floats); g
	// and beta are rows×ValueHeads (DeltaGates); state is the sequence's
	// ValueHeads×KeyDim×ValueDim matrices S. Value head h reads key head
	// h/(ValueHeads/KeyHeads) (transformers' repeat_interleave). Queries and
	// keys are L2-normalised, q̂ = q/sqrt(Σq² + 1e-6) and likewise k̂, and
	// queries scaled by 1/sqrt(KeyDim) (use_qk_l2norm_in_kernel=True); then
	// for each token t and value head, in order:
	//
	//	S     ← exp(g_t) · S
	//	δ     = beta_t · (v_t − Sᵀ k̂_t)
	//	S     ← S + k̂_t δᵀ
	//	out_t = Sᵀ q̂_t / sqrt(KeyDim)
	//
	// out is rows×(ValueHeads·ValueDim). An implementation may evaluate
	// chunks of DeltaChunk tokens, counted from the call's first row, in
	// the equivalent chunked (WY) form, whose rounding differs from the
	// token-by-token loop's; a chunk's bits must depend only on the state
	// before it and its tokens. So a sequence split into calls at
	// multiples of DeltaChunk gives the bits of one call, and short calls
	// (decode tokens, verify passes) must give the bits of their tokens
	// run one call each. Results never depend on other sequences. The
	// queries and keys in qkv are overwritten with their normalised forms.
	GatedDeltaRule(out, qkv, g, beta, state []float32, rows int, d DeltaDims)

	// GatedRMSNorm normalises each dim-sized row of x and gates it by the
	// matching row of z (Qwen3NextRMSNormGated, weight used as is, not
	// 1+weight):
	//
	//	out = x / sqrt(mean(x²) + eps) · weight · silu(z)
	//
	// out may alias x.
	GatedRMSNorm(out, x, z, weight []float32, dim int, eps float32)
}

// DeltaChunk is the chunk length of GatedDeltaRule's chunked form in
// every implementation (transformers' chunk_size): splitting a prompt into
// calls at its multiples does not change the results, so state snapshots
// taken there can be resumed bit for bit.
const DeltaChunk = 64

// DeltaShortRows is the longest call of GatedDeltaRule that every
// implementation runs token by token: a call of at most this many rows
// gives the bits of its tokens run one call each, so a sequence's decoded
// tokens can be recomputed (after a preemption) in calls this long
// without changing a bit.
const DeltaShortRows = 15

// DeltaDims are the head counts and sizes of a Gated DeltaNet layer, as
// config.json's linear_num_key_heads, linear_num_value_heads,
// linear_key_head_dim and linear_value_head_dim.
type DeltaDims struct {
	KeyHeads, ValueHeads int
	KeyDim, ValueDim     int
}

// QKVDim is the width of one token's convolved queries, keys and values.
func (d DeltaDims) QKVDim() int { return 2*d.KeyHeads*d.KeyDim + d.ValueHeads*d.ValueDim }

// StateLen is the number of float32s of one sequence's recurrent state in
// one layer.
func (d DeltaDims) StateLen() int { return d.ValueHeads * d.KeyDim * d.ValueDim }
