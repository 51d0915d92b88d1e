package metal

import "fmt"

// KVType is how a KV cache stores keys and values.
type KVType uint8

const (
	// KVF16 stores each key and value as float16 (rounded to nearest
	// even), as llama.cpp's default cache does.
	KVF16 KVType = iota
	// KVQ8 stores each group of KVGroup keys (or values) of one head as
	// int8 with one float16 scale, as llama.cpp's q8_0 cache does: 1.0625
	// bytes a value rather than 2, so long contexts read about half the
	// bytes and twice the tokens fit in the same memory, at a rounding
	// error of at most half a step of max|x|/127 per group (QuantizeKV).
	KVQ8
	// KVBF16 stores each key and value as bfloat16 (rounded to nearest
	// even, values below float32's normal range as zero: F32ToBF16DAZ),
	// as vLLM's cache does for bf16 models: the same memory as KVF16 with
	// float32's range, and on CPUs with AVX512_BF16 attention's products
	// run as VDPBF16PS, two multiply-adds per lane, with the queries and
	// the softmax weights rounded to bfloat16 as well. Values are stored
	// in pairs of positions (KVLayer), which VDPBF16PS sums together.
	KVBF16
	// KVF32 stores each key and value as float32, two uint16 elements a
	// value (Float32s): the model's own arithmetic, nothing rounded, at
	// twice KVF16's memory and reads. The reference mode: a float32
	// checkpoint's logits come out as a float64 forward pass computes them
	// to float32's precision, where KVF16's rounding alone moves them by
	// about 1e-3 (model.TestF32CacheMatchesExact). Never AutoKVType's pick.
	KVF32
)

// BF16Dims and BF16Positions are what a KVBF16 cache's head size and block
// size must be multiples of (KVType.Check).
const (
	BF16Dims      = 32
	BF16Positions = 8
)

// KVGroup is the number of consecutive values of one head that share a
// scale in a KVQ8 cache; a KVQ8 cache needs head sizes that are multiples
// of it.
const KVGroup = GroupSize

var kvTypeNames = [...]string{KVF16: "f16", KVQ8: "q8", KVBF16: "bf16", KVF32: "f32"}

func (t KVType) String() string {
	if int(t) < len(kvTypeNames) {
		return kvTypeNames[t]
	}
	return fmt.Sprintf("KVType(%d)", t)
}

// ParseKVType reads a KV cache type by name ("f32", "f16", "bf16", "q8";
// "q8_0" as llama.cpp spells it).
func ParseKVType(s string) (KVType, error) {
	switch s {
	case "f32":
		return KVF32, nil
	case "f16":
		return KVF16, nil
	case "bf16":
		return KVBF16, nil
	case "q8", "q8_0":
		return KVQ8, nil
	}
	return 0, fmt.Errorf("metal: unknown KV cache type %q (want f32, f16, bf16 or q8)", s)
}

// Check reports whether a cache of this type can hold heads of headDim in
// blocks of blockSize positions.
func (t KVType) Check(blockSize, headDim int) error {
	switch t {
	case KVF16, KVF32:
		return nil
	case KVBF16:
		// Whole zmm registers of a head's keys (16 dimensions) and value
		// pairs (32), and whole groups of eight positions in a block: the
		// shapes the kernels read in place.
		if headDim%BF16Dims != 0 || blockSize%BF16Positions != 0 {
			return fmt.Errorf("metal: a bf16 KV cache needs a head size that is a multiple of %d and a block size that is a multiple of %d, not %d and %d",
				BF16Dims, BF16Positions, headDim, blockSize)
		}
		return nil
	case KVQ8:
		if headDim%KVGroup != 0 {
			return fmt.Errorf("metal: a q8 KV cache needs a head size that is a multiple of %d, not %d", KVGroup, headDim)
		}
		return nil
	}
	return fmt.Errorf("metal: unknown KV cache type %d", t)
}

// RowElems is the number of uint16 elements holding one position's keys
// (or values) of one head of headDim: float16 each, int8 two to an
// element (a KVQ8 block keeps its scales after its rows), or float32 two
// elements each.
func (t KVType) RowElems(headDim int) int {
	switch t {
	case KVQ8:
		return headDim / 2
	case KVF32:
		return 2 * headDim
	}
	return headDim
}

// HeadElems is the number of uint16 elements of one head of one block of
// blockSize positions: its rows, and for KVQ8 their scales.
func (t KVType) HeadElems(blockSize, headDim int) int {
	if t == KVQ8 {
		return blockSize * (headDim/2 + headDim/KVGroup)
	}
	return blockSize * t.RowElems(headDim)
}

// TokenBytes is the cache memory of one token of one layer: its keys and
// values of kvHeads heads of headDim.
func (t KVType) TokenBytes(kvHeads, headDim int) int {
	return 2 * 2 * kvHeads * t.HeadElems(1, headDim)
}

// QuantizeKV stores x (a multiple of KVGroup values) as int8 in q with one
// float16 scale per group in scales: d = max|x|/127 rounded to float16,
// and each q = x/d rounded to nearest even, within ±127 (zero for a group
// of zeros). Every value dequantizes (DequantizeKV) exactly: the product
// of an int8 and a float16 fits a float32's significand, so every kernel
// that widens it gets the same float32 whatever its order.
func QuantizeKV(q []int8, scales []uint16, x []float32) {
	for g := 0; g < len(x); g += KVGroup {
		scales[g/KVGroup] = quantizeQ8Group(q[g:g+KVGroup:g+KVGroup], x[g:g+KVGroup:g+KVGroup])
	}
}

// DequantizeKV widens QuantizeKV's int8 values q and their group scales
// to float32 in dst (len(dst) values).
func DequantizeKV(dst []float32, q []int8, scales []uint16) {
	q = q[:len(dst)]
	for g := 0; g < len(dst); g += KVGroup {
		d := F16ToF32(scales[g/KVGroup])
		for i, v := range q[g:min(g+KVGroup, len(dst))] {
			dst[g+i] = float32(v) * d
		}
	}
}

// KVAuto names the cache type AutoKVType picks (--kv-cache-type auto).
const KVAuto = "auto"

// AutoKVType is the cache type to serve heads of headDims (a model's, and
// its draft's) in blocks of blockSize with, and why: the fastest of the
// types that keep a model's answers (f16 and bf16; q8 trades accuracy for
// memory and stays a choice of the user's). bf16Speedup is how much faster
// the backend computes attention over a bf16 cache than over an f16 one
// (cpu.Backend.AttentionSpeedup; cpu.Backend.AutoKVType calls this with
// it): bf16 where that is above 1 (CPUs with AVX512_BF16) and the shapes
// allow it, else f16.
//
// bf16 is vLLM's choice for bf16 models (its "auto" is the model's dtype),
// which the Qwen3 and Llama 3 checkpoints are. Its rounding is small
// beside what quantized weights already cost: on a random Qwen3-shaped
// model the logits' mean KL divergence from an exact float64 forward pass
// was 7e-6 with an f16 cache, 1e-3 with bf16, 5e-3 with q8 (llama.cpp's
// q8_0 cache, which its users treat as lossless), and 6e-2 from q8 weights
// alone (model.TestKVRoundingCost).
func AutoKVType(blockSize int, headDims []int, bf16Speedup float64) (KVType, string) {
	if !(bf16Speedup > 1) {
		return KVF16, "auto: these kernels' bf16 attention is no faster than f16's"
	}
	for _, hd := range headDims {
		if KVBF16.Check(blockSize, hd) != nil {
			return KVF16, fmt.Sprintf("auto: heads of %d in blocks of %d cannot be bf16", hd, blockSize)
		}
	}
	return KVBF16, fmt.Sprintf("auto: these kernels' bf16 attention runs %.2f× f16's", bf16Speedup)
}
