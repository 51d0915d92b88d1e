package cpu

// fusedKernels are the loops of attention and of the elementwise
// operations, chosen once at New like kernels (SIMD where the CPU has it).
// Every implementation returns the same bits as the portable one.
type fusedKernels struct {
	// expShift: see fused_exp.go.
	expShift func(x []float32, m float32) float32
	// siluMul: see fused_exp.go.
	siluMul func(gate, up []float32)
	// scores sets out[p] = dot(q, k[p·stride:][:len(q)])·scale for each p
	// (dot of floatdot.go): one query head against len(out) cached keys
	// stride floats apart.
	scores func(out, q, k []float32, stride int, scale float32)
	// weightedSum adds Σ_p w[p]·v[p·stride:][:len(o)] to o, position by
	// position in order, each product rounded before its add (as axpy).
	weightedSum func(o, v []float32, stride int, w []float32)
}

func portableFused() fusedKernels {
	return fusedKernels{expShift: expShift, siluMul: siluMul, scores: scoresRef, weightedSum: weightedSumRef}
}

func selectFused(o Options) fusedKernels {
	if o.Portable {
		return portableFused()
	}
	return bestFused()
}

func scoresRef(out, q, k []float32, stride int, scale float32) {
	for p := range out {
		out[p] = dot(q, k[p*stride:p*stride+len(q)]) * scale
	}
}

func weightedSumRef(o, v []float32, stride int, w []float32) {
	for p, wp := range w {
		axpy(o, v[p*stride:p*stride+len(o)], wp)
	}
}
