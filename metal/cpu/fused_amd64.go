package cpu

//go:noescape
func expShiftBlocksAVX2(x *float32, m float32, blocks int) float32

//go:noescape
func siluMulBlocksAVX2(gate, up *float32, blocks int)

//go:noescape
func widenAVX2(dst *float32, src *uint16, sstride, rows, blocks int)

//go:noescape
func scoresAVX2(out, q, k *float32, stride, n, blocks int, scale float32)

//go:noescape
func maxLanesAVX2(x *float32, blocks int, m *[8]float32)

//go:noescape
func toF16AVX2(dst *uint16, src *float32, blocks int)

//go:noescape
func weightedSumAVX2(o, v *float32, stride int, w *float32, n, chunks int)

// bestFused is the AVX2 set when the CPU has it (hasAVX2, quantdot_amd64.go).
func bestFused() fusedKernels {
	if !hasAVX2() {
		return portableFused()
	}
	f := fusedKernels{max: maxAVX2}
	f.toF16 = func(dst []uint16, src []float32) { toF16Slices(toF16AVX2, dst, src) }
	f.expShift = func(x []float32, m float32) float32 { return expShiftSlices(expShiftBlocksAVX2, x, m) }
	f.siluMul = func(gate, up []float32) { siluMulSlices(siluMulBlocksAVX2, gate, up) }
	f.widen = func(dst []float32, width int, src []uint16, stride int) {
		widenSlices(widenAVX2, dst, width, src, stride)
	}
	f.scores = func(out, q, k []float32, stride int, scale float32) {
		scoresSlices(scoresAVX2, out, q, k, stride, scale)
	}
	// 64-float chunks: eight registers
	f.weightedSum = func(o, v []float32, stride int, w []float32) { weightedSumSlices(weightedSumAVX2, 64, o, v, stride, w) }
	return f
}

// maxAVX2 is maxRef with its eight lanes in one register.
func maxAVX2(x []float32) float32 {
	m := maxLanesInit()
	n := len(x) &^ 7
	if n > 0 {
		maxLanesAVX2(&x[0], n/8, &m)
	}
	return maxFold(&m, x[n:])
}
