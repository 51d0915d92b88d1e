// Package vec holds vector primitives over float32 slices that run on the
// CPU outside a backend's forward pass, such as the sampler's arg max over
// a vocabulary of logits: a portable Go version, the reference, and
// assembly where the CPU has it (AVX2 on amd64, chosen at run time), which
// must give the same result.
package vec
