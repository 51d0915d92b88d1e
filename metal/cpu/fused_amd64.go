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
	return fusedKernels{expShift: expShiftAVX2, siluMul: siluMulAVX2, widen: widenAVX2Slices, scores: scoresAVX2Slices, weightedSum: weightedSumAVX2Slices, max: maxAVX2, toF16: toF16AVX2Slices}
}

// expShiftAVX2 is expShift with the whole eights in one register of lanes.
func expShiftAVX2(x []float32, m float32) float32 {
	n := len(x) &^ 7
	s := float32(0)
	if n > 0 {
		s = expShiftBlocksAVX2(&x[0], m, n/8)
	}
	return expShiftTail(s, x[n:], m)
}

// siluMulAVX2 is siluMul eight elements at a time.
func siluMulAVX2(gate, up []float32) {
	n := len(gate) &^ 7
	up = up[:len(gate)]
	if n > 0 {
		siluMulBlocksAVX2(&gate[0], &up[0], n/8)
	}
	siluMul(gate[n:], up[n:])
}

// widenAVX2Slices is widenRef for rows of whole eights.
func widenAVX2Slices(dst []float32, width int, src []uint16, stride int) {
	rows := len(dst) / width
	if width%8 != 0 || rows == 0 {
		widenRef(dst, width, src, stride)
		return
	}
	_, _ = dst[rows*width-1], src[(rows-1)*stride+width-1] // bounds of every access
	widenAVX2(&dst[0], &src[0], 2*stride, rows, width/8)
}

// scoresAVX2Slices is scoresRef for query heads of whole eights.
func scoresAVX2Slices(out, q, k []float32, stride int, scale float32) {
	if len(q)%8 != 0 || len(q) == 0 || len(out) == 0 {
		scoresRef(out, q, k, stride, scale)
		return
	}
	_ = k[(len(out)-1)*stride+len(q)-1] // bounds of every key read
	scoresAVX2(&out[0], &q[0], &k[0], 4*stride, len(out), len(q)/8, scale)
}

// weightedSumAVX2Slices is weightedSumRef with o's whole 64-float chunks
// kept in registers across positions; the rest of o by the portable loop
// (each element's sum has the same order either way).
func weightedSumAVX2Slices(o, v []float32, stride int, w []float32) {
	if len(w) == 0 || len(o) == 0 {
		return
	}
	_ = v[(len(w)-1)*stride+len(o)-1] // bounds of every value read
	c := len(o) / 64
	if c > 0 {
		weightedSumAVX2(&o[0], &v[0], 4*stride, &w[0], len(w), c)
	}
	if rest := o[64*c:]; len(rest) > 0 {
		weightedSumRef(rest, v[64*c:], stride, w)
	}
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

// toF16AVX2Slices is toF16Ref eight elements at a time (VCVTPS2PH rounds to
// nearest even, as metal.F32ToF16 does; NaN payloads may differ).
func toF16AVX2Slices(dst []uint16, src []float32) {
	n := len(src) &^ 7
	dst = dst[:len(src)]
	if n > 0 {
		toF16AVX2(&dst[0], &src[0], n/8)
	}
	toF16Ref(dst[n:], src[n:])
}
