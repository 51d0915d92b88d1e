// Package metal is Splash's compute layer: every numeric kernel the model's
// forward pass needs, behind one narrow Backend interface.
//
// Two implementations are planned: "cpu" (portable Go, the reference that every
// optimised kernel is tested against, plus amd64/arm64 assembly chosen at run
// time) and "metal" (darwin, Metal shaders). Tensors live in host memory; on
// Apple silicon the same bytes are shared with the GPU without copies.
//
// # Weight layout
//
// A weight matrix is a Tensor of Rows×Cols elements stored row-major, Rows
// being the output dimension and Cols the input (reduction) dimension, exactly
// as a Hugging Face nn.Linear weight. Quantized tensors are grouped along Cols
// in groups of GroupSize (32) elements, each group with its own scale:
//
//	Q8: Data = Rows*Cols int8 quants, row-major;
//	    then, at offset ScaleOffset(), Rows*(Cols/32) float16 scales, row-major.
//	    x[r][c] = scale[r][c/32] * q[r][c].
//	Q4: Data = Rows*Cols/2 bytes: for each row, for each group of 32 values,
//	    16 bytes where byte j holds q[j]+8 in its low nibble and q[j+16]+8 in
//	    its high nibble (q in [-8, 7]); then, at ScaleOffset(),
//	    Rows*(Cols/32) float16 scales. x[r][c] = scale[r][c/32] * q[r][c].
//
// Scales follow the quants, starting at a 64-byte aligned offset, so the quant
// blocks of every row are contiguous and SIMD-friendly. Quantization is
// symmetric: Q8 uses scale = max|x|/127; Q4 uses scale = m/-8 where m is the
// group's value of largest magnitude (so it maps to -8 exactly), and
// q = clamp(round(x/scale), -8, 7). Cols must be a multiple of 32 for Q8 and
// Q4; other tensors stay F32/BF16.
//
// # KV cache
//
// Attention reads keys and values from a paged cache: fixed-size blocks of
// BlockSize token slots, addressed through a per-sequence block table, as in
// vLLM's PagedAttention. Token position p of a sequence lives in slot
// table[p/BlockSize]*BlockSize + p%BlockSize. Within a block the KV heads
// are stored one after another (KVLayer.KVIndex), so one head of one block
// is a contiguous stretch; blocks are KVLayer.BlockStride apart. Keys and
// values are stored as float32 (KVF32, nothing rounded), as float16
// (rounded to nearest even; KVF16) or as int8 with a float16 scale per 32
// (KVQ8, QuantizeKV), and widened exactly to float32 for the arithmetic, which accumulates in float32; or as bfloat16
// (KVBF16, values in pairs of slots), whose attention multiplies them by
// queries and softmax weights rounded to bfloat16 as well (VDPBF16PS's
// arithmetic), accumulating in float32.
//
// # Linear attention
//
// Hybrid models' Gated DeltaNet layers (LinearAttention, an optional
// interface) keep no KV cache but a fixed-size float32 state per sequence
// and layer, which the caller owns and passes to every call: the
// convolution's last kernel-1 inputs ((kernel-1)×DeltaDims.QKVDim, oldest
// first) and one KeyDim×ValueDim matrix per value head (DeltaDims.StateLen).
//
// # Batch invariance
//
// Every kernel computes each output element with a reduction order that
// depends only on that row's inputs, never on the number of rows in the call,
// on the other rows, or on the thread count. A row's logits are therefore
// bit-identical whether it runs alone or in a batch.
package metal
