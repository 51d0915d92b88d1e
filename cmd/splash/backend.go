package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/splash-inference/splash/metal/cpu"
)

// backendOptions configures a CPU backend of threads workers (0: all) from
// the environment: SPLASH_KERNELS names the kernel set (cpu.KernelSets:
// "portable" forces the portable kernels, as portable does; "avx2" on an
// AVX-512 CPU runs what an AVX2 one would), SPLASH_HUGEPAGES=off keeps the
// packed weights and the KV cache in ordinary pages. A SPLASH_KERNELS this
// CPU cannot run is an error that lists the ones it can.
func backendOptions(threads int, portable bool) (cpu.Options, error) {
	o := cpu.Options{Threads: threads, Portable: portable, SmallPages: os.Getenv("SPLASH_HUGEPAGES") == "off"}
	if k := os.Getenv("SPLASH_KERNELS"); k != "" {
		sets := cpu.KernelSets()
		if !slices.Contains(sets, k) {
			return o, fmt.Errorf("SPLASH_KERNELS=%s: not a kernel set this CPU runs (it runs %s)", k, strings.Join(sets, ", "))
		}
		o.Kernels = k
	}
	return o, nil
}
