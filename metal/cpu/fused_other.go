//go:build !amd64 && !arm64

package cpu

// availableFused is empty where no SIMD loops are written.
func availableFused() []fusedKernels { return nil }
