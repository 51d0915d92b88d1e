package testmodel

import (
	"cmp"
	"fmt"
	"os"

	"github.com/splash-inference/splash/metal"
)

// KVTypeFromEnv is the KV cache type a benchmark measures: the one
// SPLASH_KV_CACHE_TYPE (serve's --kv-cache-type variable) names, or when
// unset or "auto" the one serve picks by default for heads of headDim in
// blocks of blockSize (metal.AutoKVType, with bf16Speedup as the backend's
// AttentionSpeedup of bf16 over f16). So `go test -bench` measures what
// the server runs, and `SPLASH_KV_CACHE_TYPE=f16 go test -bench ...` one
// type.
func KVTypeFromEnv(blockSize, headDim int, bf16Speedup float64) (metal.KVType, error) {
	name := cmp.Or(os.Getenv("SPLASH_KV_CACHE_TYPE"), metal.KVAuto)
	if name == metal.KVAuto {
		t, _ := metal.AutoKVType(blockSize, []int{headDim}, bf16Speedup)
		return t, nil
	}
	t, err := metal.ParseKVType(name)
	if err != nil {
		return 0, fmt.Errorf("SPLASH_KV_CACHE_TYPE: %w", err)
	}
	return t, nil
}
