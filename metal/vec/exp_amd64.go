package vec

import "golang.org/x/sys/cpu"

// haveExpAsm reports the AVX2 kernel.
func haveExpAsm() bool { return cpu.X86.HasAVX2 }

// expWeightsAsm is ExpWeights over n floats, a multiple of 8, returning
// the lanes' folded sum.
//
//go:noescape
func expWeightsAsm(w, x *float32, n int, m, invT float32) float64
