package testmodel

import (
	"cmp"
	"fmt"
	"os"

	"github.com/splash-inference/splash/metal"
)

// KVTypeFromEnv is the KV cache type a benchmark measures: the one
// SPLASH_KV_CACHE_TYPE (serve's --kv-cache-type variable) names, or when
// unset or "auto" auto, the one serve picks by default for the benchmark's
// model and kernels (cpu.Backend.AutoKVType). So `go test -bench` measures
// what the server runs, and `SPLASH_KV_CACHE_TYPE=f16 go test -bench ...`
// one type.
func KVTypeFromEnv(auto metal.KVType) (metal.KVType, error) {
	name := cmp.Or(os.Getenv("SPLASH_KV_CACHE_TYPE"), metal.KVAuto)
	if name == metal.KVAuto {
		return auto, nil
	}
	t, err := metal.ParseKVType(name)
	if err != nil {
		return 0, fmt.Errorf("SPLASH_KV_CACHE_TYPE: %w", err)
	}
	return t, nil
}
