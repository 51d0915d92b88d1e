package cpu

import "github.com/splash-inference/splash/metal"

// How many multiply-adds each kernel set's quantized matrix products do in
// the time the same CPU's attention kernels do one (float32 products of
// float16 or q8 keys and values), for planning work whose cost mixes the
// two (Backend.QuantSpeedup).
const (
	// vnniSpeedup: measured by BenchmarkPrefillChunk0_6BQ4 (AMD EPYC Zen
	// 5, two threads; break-even 990-1088 positions in four runs, 1011
	// with this ratio): VPDPBUSD multiplies 64 byte pairs an instruction
	// against a float FMA's 16 lanes, and the products keep a larger share
	// of their peak than attention does.
	vnniSpeedup = 3.8
	// avx2Speedup and avxvnniSpeedup: the same benchmark with the set
	// forced (SPLASH_KERNELS=avx2, avxvnni), on the same machine, with
	// the AVX2 attention loops that go with them: break-even 1208-1248
	// and 952-1038 positions in three runs each. (Both were estimated at
	// 2.2 and 3 from the instruction widths; the AVX2 attention is slower
	// than the AVX-512 one, so a product is worth more of it.)
	avx2Speedup    = 3.1
	avxvnniSpeedup = 3.8
	// neonSpeedup is an estimate from the instruction widths, not yet
	// measured: SDOT multiplies 16 byte pairs against a 4-lane FMLA, less
	// the q4 unpacking.
	neonSpeedup = 3
	// bf16AttentionSpeedup is how much faster the AVX512_BF16 attention
	// over a bf16 cache runs than the float16 one: the same benchmark with
	// SPLASH_KV_CACHE_TYPE=bf16 broke even at 1618-1650 positions against
	// 1117-1119 for float16 (two runs each, alternating).
	bf16AttentionSpeedup = 1.46
	// f32AttentionSpeedup: the same benchmark with SPLASH_KV_CACHE_TYPE=f32
	// broke even at 857-886 positions against 1185-1228 for float16 (two
	// runs each, alternating, AVX-512 VNNI): twice the bytes to read, no
	// widening. Below 1: a float32 cache's attention is the slower.
	f32AttentionSpeedup = 0.72
)

// QuantSpeedup is how many multiply-adds the backend's products of weights
// of type d do in the time its attention does one: the ratio that decides
// at what context a token's attention costs as much as its matrix
// products (model.Config.AttentionBreakEven). 1 for float weights, whose
// products and attention run on the same float units, and for the
// portable kernels.
func (b *Backend) QuantSpeedup(d metal.DType) float64 {
	if (d != metal.Q4 && d != metal.Q8) || b.k.quantSpeedup == 0 {
		return 1
	}
	return b.k.quantSpeedup
}

// AttentionSpeedup is how much faster the backend's attention runs over a
// cache of type t than over a float16 one (which QuantSpeedup counts):
// for planning with a bf16 cache, QuantSpeedup/AttentionSpeedup. 1 where
// not measured (q8), for bf16 without AVX512_BF16 (emulated on AVX2, or
// the portable loops: SIMDAttention), and for f32 with the portable loops
// (which widen float16 with no SIMD either).
func (b *Backend) AttentionSpeedup(t metal.KVType) float64 {
	switch {
	case t == metal.KVBF16 && b.f.bf16.tabScores != nil: // AVX512_BF16's
		return bf16AttentionSpeedup
	case t == metal.KVF32 && b.SIMDAttention(metal.KVF16):
		return f32AttentionSpeedup
	}
	return 1
}

// AutoKVType is the cache type --kv-cache-type auto picks on this
// backend's kernels for heads of headDims in blocks of blockSize, and why
// (metal.AutoKVType).
func (b *Backend) AutoKVType(blockSize int, headDims ...int) (metal.KVType, string) {
	return metal.AutoKVType(blockSize, headDims, b.AttentionSpeedup(metal.KVBF16))
}
