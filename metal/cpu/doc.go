// Package cpu is the CPU implementation of metal.Backend: portable Go that
// is correct on every platform, plus assembly kernels for quantized matrix
// products chosen at New from the CPU's features (Name reports which):
//
//	cpu/avx512vnni  amd64 with AVX512_VNNI+BW: VPDPBUSD on 512-bit registers
//	cpu/avx2        amd64 with AVX2+F16C: VPMADDUBSW/VPMADDWD
//	cpu/neon        arm64 with the dot-product extension: SDOT
//	cpu/portable    everything else, or Options.Portable (SPLASH_KERNELS=portable)
//
// The portable code is the reference. q4/q8 weights multiply activations
// quantized to int8 per group of 32 (actquant.go); each group's integer sum
// is exact and the float combination order is fixed (quantdot.go), so every
// kernel set gives bit-identical results, which the tests check (the arm64
// kernels under qemu-aarch64 from `make test`). `make bench-kernels` prints
// memory bandwidth, kernel throughput and end-to-end tokens/s.
//
// Work is spread over a persistent pool of worker goroutines (pool.go:
// workers spin briefly between calls, then park; a worker joins a call only
// while it is open, so a caller never waits for one the OS has not run),
// split by output rows for matrix products and by (token, KV head) pairs
// for attention. A one-row quantized product streams each weight row once
// (quantdot_*.s); with two rows or more, a tile of weight rows is unpacked
// once per group and used against every activation row (quantdot_tiled*),
// so the weights are read once per call. Each output element is computed by
// exactly one worker with a reduction order that depends only on its own
// inputs, so results are bit-identical whatever the batch size or thread
// count (batch invariance).
package cpu
