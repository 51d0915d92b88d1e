package vec

import "golang.org/x/sys/cpu"

// haveArgmaxAsm reports the AVX2 kernels.
func haveArgmaxAsm() bool { return cpu.X86.HasAVX2 }

// maxAsm is the largest of p[0:n] (n a multiple of argmaxBlock, at least
// one block) that is not NaN, −Inf when all are: VMAXPS with the running
// max as its second operand, which it returns when the value is NaN.
//
//go:noescape
func maxAsm(p *float32, n int) float32

// indexAsm is the index of the first of p[0:n] equal to m (n a multiple
// of argmaxBlock), or −1.
//
//go:noescape
func indexAsm(p *float32, n int, m float32) int
