package main

import (
	"fmt"
	"os"

	"github.com/splash-inference/splash/metal/cpu"
)

// backendOptions configures a CPU backend of threads workers (0: all) from
// the environment: SPLASH_KERNELS names the kernel set (cpu.KernelSets:
// "portable" forces the portable kernels, as portable does; "avx2" on an
// AVX-512 CPU runs what an AVX2 one would), SPLASH_HUGEPAGES=off keeps the
// packed weights and the KV cache in ordinary pages. A SPLASH_KERNELS this
// CPU cannot run is an error that lists the ones it can.
func backendOptions(threads int, portable bool) (cpu.Options, error) {
	k := os.Getenv("SPLASH_KERNELS")
	if err := cpu.CheckKernels(k); err != nil {
		return cpu.Options{}, fmt.Errorf("SPLASH_KERNELS=%s: %w", k, err)
	}
	return cpu.Options{Threads: threads, Portable: portable, Kernels: k, SmallPages: os.Getenv("SPLASH_HUGEPAGES") == "off"}, nil
}
