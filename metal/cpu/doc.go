// Package cpu is the CPU implementation of metal.Backend: portable Go that
// is correct on every platform, plus assembly kernels for quantized matrix
// products chosen at New from the CPU's features (Name reports which).
//
// # Kernel sets
//
//	cpu/avx512vnni  amd64 with AVX512_VNNI+BW: VPDPBUSD on 512-bit registers
//	cpu/avxvnni     amd64 with AVX2+F16C+FMA and AVX-VNNI but not AVX-512 VNNI
//	                (Intel from Alder Lake on): VPDPBUSD on 256-bit registers
//	cpu/avx2        amd64 with AVX2+F16C+FMA: VPMADDUBSW/VPMADDWD
//	cpu/neon        arm64 with the dot-product extension: SDOT (attention's
//	                loops are NEON on every arm64: fused_arm64.s)
//	cpu/portable    everything else, or Options.Portable (SPLASH_KERNELS=portable)
//
// Options.Kernels (SPLASH_KERNELS) picks a set by name among KernelSets, and
// the attention loops that go with it. `make bench-kernels` prints memory
// bandwidth, kernel throughput and end-to-end tokens/s for the set chosen.
//
// # Exact results
//
// The portable code is the reference. q4/q8 weights multiply activations
// quantized to int8 per group of 32 (actquant.go); each group's integer sum
// is exact and the float combination order is fixed (quantdot.go), so every
// kernel set gives bit-identical results, which the tests check (the arm64
// kernels under qemu-aarch64 from `make test`). Attention's scores and value
// sums use fused multiply-adds in every set, the reference's fma32 rounding
// once as the instructions do; the other float steps use none.
//
// Each output element is computed by exactly one worker with a reduction
// order that depends only on its own inputs, so results are bit-identical
// whatever the batch size or thread count (batch invariance).
//
// # Parallelism
//
// Work is spread over a persistent pool of worker goroutines (pool.go):
// workers spin briefly between calls, then park; a worker joins a call only
// while it is open, so a caller never waits for one the OS has not run.
// Matrix products are split by output rows, attention by (run of a
// sequence's tokens, KV head) pairs, and the elementwise steps of a batch
// by rows (elementwise_parallel.go).
//
// # Matrix products
//
// q4 matrices (q8 too, for AVX-512, AVX-VNNI and NEON) are packed at load
// (packed.go) into the register layout of the tile kernels (32 rows a tile
// for AVX-512, 8 for AVX2, AVX-VNNI and NEON), so one kernel
// (quantdot_packed*.s) streams a tile of weight rows once, in order, and
// uses each group against every activation row: the weights are read once
// per call for 1 row or many, since reading them is what a step costs.
//
// # Attention
//
// Attention hands each chunk of a KV head's float16 cache to one kernel
// call for all the query heads of all the tokens of a run that read it,
// which holds several heads' sums in registers so that each key or value
// block loaded serves all of them (fused_heads*.s). Where the set has
// in-place kernels (AVX-512 keys and values, AVX2 and NEON values), whole
// groups of eight positions are converted from float16 as they are loaded;
// the rest of the chunk is widened to float32 first. A decode step reads
// the cache in place with two-head kernels (AVX-512, AVX2, NEON). Each
// kernel prefetches the cache it reads next as it goes (attention.go).
package cpu
