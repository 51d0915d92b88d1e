package cpu

import (
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/backendtest"
)

// TestConformance runs the backend conformance suite against every kernel
// set this CPU can run, on one thread and on two (the parallel split must
// not change a result).
func TestConformance(t *testing.T) {
	for _, set := range KernelSets() {
		for _, threads := range []int{1, 2} {
			t.Run(set+"/"+string(rune('0'+threads)), func(t *testing.T) {
				backendtest.Run(t, func(testing.TB) metal.Backend {
					return NewWithOptions(Options{Threads: threads, Kernels: set})
				})
			})
		}
	}
}
