package main

import (
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// kvTypeAuto is --kv-cache-type's default: the cache type the kernels run
// fastest among the ones that keep a model's answers (f16 and bf16; q8
// trades accuracy for memory and stays a choice of the user's).
const kvTypeAuto = "auto"

// autoKVType is the cache type --kv-cache-type auto picks for heads of
// headDims (the target's, and the draft's when it has one) in blocks of
// blockSize, and why: bf16 where the backend's bf16 attention is faster
// than its f16 attention (speedup: cpu.Backend.AttentionSpeedup, on CPUs
// with AVX512_BF16) and the shapes allow it, else f16.
//
// bf16 is vLLM's choice for bf16 models (its "auto" is the model's
// dtype), which is what the Qwen3 and Llama 3 checkpoints are. Its
// rounding is small beside what quantized weights already cost: on a
// random Qwen3-shaped model the logits' mean KL divergence from an exact
// float64 forward pass was 7e-6 with an f16 cache, 1e-3 with bf16, 5e-3
// with q8 (llama.cpp's q8_0 cache, which its users treat as lossless), and
// 6e-2 from q8 weights alone (model.TestKVRoundingCost).
func autoKVType(blockSize int, headDims []int, speedup func(metal.KVType) float64) (metal.KVType, string) {
	if speedup == nil || speedup(metal.KVBF16) <= speedup(metal.KVF16) {
		return metal.KVF16, "auto: these kernels' bf16 attention is no faster than f16's"
	}
	for _, hd := range headDims {
		if err := metal.KVBF16.Check(blockSize, hd); err != nil {
			return metal.KVF16, fmt.Sprintf("auto: heads of %d in blocks of %d cannot be bf16", hd, blockSize)
		}
	}
	return metal.KVBF16, fmt.Sprintf("auto: these kernels' bf16 attention runs %.2f× f16's", speedup(metal.KVBF16)/speedup(metal.KVF16))
}
