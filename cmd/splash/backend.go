package main

import (
	"os"

	"github.com/splash-inference/splash/metal/cpu"
)

// backendOptions configures a CPU backend of threads workers (0: all) from
// the environment: SPLASH_KERNELS=portable forces the portable kernels
// (as portable does), SPLASH_HUGEPAGES=off keeps the packed weights and
// the KV cache in ordinary pages.
func backendOptions(threads int, portable bool) cpu.Options {
	return cpu.Options{Threads: threads, Portable: portable || os.Getenv("SPLASH_KERNELS") == "portable",
		SmallPages: os.Getenv("SPLASH_HUGEPAGES") == "off"}
}
