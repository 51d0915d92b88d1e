//go:build !amd64

package cpu

func bestKernels() kernels { return portableKernels() }
