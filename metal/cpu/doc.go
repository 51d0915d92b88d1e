// Package cpu is the portable CPU implementation of metal.Backend: plain Go,
// no assembly, correct on every platform. It is the reference that every
// optimised kernel (AVX2, AVX-512/VNNI, NEON, Metal) is tested against.
//
// Work is spread over a persistent pool of worker goroutines, split by
// output rows for matrix products and by (token, head) pairs for attention.
// Each output element is computed by exactly one worker with a reduction
// order that depends only on its own inputs, so results are bit-identical
// whatever the batch size or thread count (batch invariance).
package cpu
