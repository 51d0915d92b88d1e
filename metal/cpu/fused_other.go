//go:build !amd64 && !arm64

package cpu

// bestFused is the portable set where no SIMD loops are written.
func bestFused() fusedKernels { return portableFused() }
