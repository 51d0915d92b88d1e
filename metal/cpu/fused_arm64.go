package cpu

//go:noescape
func widenNEON(dst *float32, src *uint16, sstride, rows, blocks int)

//go:noescape
func scoresNEON(out, q, k *float32, stride, n, blocks int, scale float32)

//go:noescape
func weightedSumNEON(o, v *float32, stride int, w *float32, n, chunks int)

//go:noescape
func maxLanesNEON(x *float32, blocks int, m *[8]float32)

// bestFused is the portable set with attention's loops in NEON (every
// arm64 CPU has it): widening the float16 cache, scores, value sums and
// the softmax maximum. The exponential, SiLU and float16 narrowing stay
// portable.
func bestFused() fusedKernels {
	f := portableFused()
	f.widen, f.scores, f.weightedSum, f.max = widenNEONSlices, scoresNEONSlices, weightedSumNEONSlices, maxNEON
	return f
}

// widenNEONSlices is widenRef for rows of whole eights.
func widenNEONSlices(dst []float32, width int, src []uint16, stride int) {
	rows := len(dst) / width
	if width%8 != 0 || rows == 0 {
		widenRef(dst, width, src, stride)
		return
	}
	_, _ = dst[rows*width-1], src[(rows-1)*stride+width-1] // bounds of every access
	widenNEON(&dst[0], &src[0], 2*stride, rows, width/8)
}

// scoresNEONSlices is scoresRef for query heads of whole eights.
func scoresNEONSlices(out, q, k []float32, stride int, scale float32) {
	if len(q)%8 != 0 || len(q) == 0 || len(out) == 0 {
		scoresRef(out, q, k, stride, scale)
		return
	}
	_ = k[(len(out)-1)*stride+len(q)-1] // bounds of every key read
	scoresNEON(&out[0], &q[0], &k[0], 4*stride, len(out), len(q)/8, scale)
}

// weightedSumNEONSlices is weightedSumRef with o's whole 32-float chunks
// kept in registers across positions; the rest of o by the portable loop
// (each element's sum has the same order either way).
func weightedSumNEONSlices(o, v []float32, stride int, w []float32) {
	if len(w) == 0 || len(o) == 0 {
		return
	}
	_ = v[(len(w)-1)*stride+len(o)-1] // bounds of every value read
	c := len(o) / 32
	if c > 0 {
		weightedSumNEON(&o[0], &v[0], 4*stride, &w[0], len(w), c)
	}
	if rest := o[32*c:]; len(rest) > 0 {
		weightedSumRef(rest, v[32*c:], stride, w)
	}
}

// maxNEON is maxRef with its eight lanes in two registers.
func maxNEON(x []float32) float32 {
	m := maxLanesInit()
	n := len(x) &^ 7
	if n > 0 {
		maxLanesNEON(&x[0], n/8, &m)
	}
	return maxFold(&m, x[n:])
}
