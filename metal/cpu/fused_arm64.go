package cpu

//go:noescape
func widenNEON(dst *float32, src *uint16, sstride, rows, blocks int)

//go:noescape
func scoresNEON(out, q, k *float32, stride, n, blocks int, scale float32)

//go:noescape
func weightedSumNEON(o, v *float32, stride int, w *float32, n, chunks int)

//go:noescape
func expShiftBlocksNEON(x *float32, m float32, blocks int) float32

//go:noescape
func softmaxNEON(x *float32, n int)

//go:noescape
func siluMulBlocksNEON(gate, up *float32, blocks int)

//go:noescape
func toF16NEON(dst *uint16, src *float32, blocks int)

//go:noescape
func scaleNEON(x *float32, c float32, blocks int)

//go:noescape
func normScaleNEON(o, x, w *float32, c float32, blocks int)

//go:noescape
func rotateNEON(lo, hi, c, s *float32, blocks int)

//go:noescape
func addNEON(dst, src *float32, blocks int)

//go:noescape
func sumSquaresNEON(x *float32, blocks int) float64

//go:noescape
func maxLanesNEON(x *float32, blocks int, m *[8]float32)

//go:noescape
func scoresPairNEON(out0, out1, q0, q1, k *float32, stride, groups, blocks int, scale float32)

//go:noescape
func scoresPairHalfNEON(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)

//go:noescape
func weightedSumPairHalfNEON(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)

//go:noescape
func scoresPairHalfTabNEON(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32)

//go:noescape
func weightedSumPairHalfTabNEON(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride int)

// availableFused is the NEON set (every arm64 CPU has NEON).
func availableFused() []fusedKernels {
	f := portableFused()
	f.name = "neon"
	f.expShift = func(x []float32, m float32) float32 { return expShiftSlices(expShiftBlocksNEON, x, m) }
	f.siluMul = func(gate, up []float32) { siluMulSlices(siluMulBlocksNEON, gate, up) }
	f.softmax = softmaxSlice(softmaxNEON)
	f.widen = func(dst []float32, width int, src []uint16, stride int) {
		widenSlices(widenNEON, 8, dst, width, src, stride)
	}
	f.dequantKV = func(dst []float32, q []int8, scales []uint16) { dequantKVSlices(dequantKVNEON, dst, q, scales) }
	f.quantizeKV = func(q []int8, scales []uint16, x []float32) { quantizeKVSlices(quantizeKVNEON, q, scales, x) }
	f.scores = func(out, q, k []float32, stride int, scale float32) {
		scoresSlices(scoresNEON, out, q, k, stride, scale)
	}
	// 32-float chunks: eight registers
	f.weightedSum = func(o, v []float32, stride int, w []float32) {
		weightedSumChunks(weightedSumNEON, 32, weightedSumRef, o, v, stride, w)
	}
	f.max = maxNEON
	f.scale = func(x []float32, c float32) { scaleSlices(scaleNEON, x, c) }
	f.normScale = func(o, x, w []float32, c float32) { normScaleSlices(normScaleNEON, o, x, w, c) }
	f.rotate = func(lo, hi, c, s []float32) { rotateSlices(rotateNEON, lo, hi, c, s) }
	f.add = func(dst, src []float32) { addSlices(addNEON, dst, src) }
	f.sumSquares = func(x []float32) float64 { return sumSquaresSlices(sumSquaresNEON, x) }
	f.toF16 = func(dst []uint16, src []float32) { toF16Slices(toF16NEON, dst, src) }
	f = f.withSinglePairs().withScorePairs(scoresPairNEON, 4)
	pairs := f
	f.weightedSumHeads = func(o, w [][]float32, v []float32, stride int) {
		weightedSumHeadsSIMD(sumsNEON, &pairs, o, w, v, stride)
	}
	f.weightedSumHeadsHalf = func(o, w [][]float32, tab []halfGroup, hd int) {
		weightedSumHeadsHalfSIMD(sumsNEON, o, w, tab, hd)
	}
	f.tabs = stretchKernels{4, 32, scoresPairHalfTabNEON, weightedSumPairHalfTabNEON, scoresPairQ8TabNEON, weightedSumPairQ8TabNEON}
	f.bf16 = pairBF16()
	return []fusedKernels{f.withHalfPairs(scoresPairHalfNEON, 4, weightedSumPairHalfNEON, 32).
		withQ8Pairs(scoresPairQ8NEON, 4, weightedSumPairQ8NEON, 32)}
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

//go:noescape
func weightedSumHeads4NEON(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads6NEON(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads8NEON(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads10NEON(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeadsHalf2NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf4NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf6NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf8NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf10NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

// sumHeads calls the widened NEON value kernel for heads heads.
func sumHeads(_ sumsSet, heads int, op, wp *[10]*float32, v *float32, stride, n int) {
	switch heads {
	case 10:
		weightedSumHeads10NEON(op, wp, v, stride, n)
	case 8:
		weightedSumHeads8NEON(op, wp, v, stride, n)
	case 6:
		weightedSumHeads6NEON(op, wp, v, stride, n)
	default:
		weightedSumHeads4NEON(op, wp, v, stride, n)
	}
}

// sumHeadsHalf calls the in-place NEON value kernel for heads heads.
func sumHeadsHalf(_ sumsSet, heads int, op, wp *[10]*float32, tab, last *halfGroup, off, stride int) {
	switch heads {
	case 10:
		weightedSumHeadsHalf10NEON(op, wp, tab, last, off, stride)
	case 8:
		weightedSumHeadsHalf8NEON(op, wp, tab, last, off, stride)
	case 6:
		weightedSumHeadsHalf6NEON(op, wp, tab, last, off, stride)
	case 4:
		weightedSumHeadsHalf4NEON(op, wp, tab, last, off, stride)
	default:
		weightedSumHeadsHalf2NEON(op, wp, tab, last, off, stride)
	}
}
