package cpu

// The x86 many-head value kernels (fused_heads_amd64.s,
// fused_heads_half_amd64.s), called by weightedSumHeadsSIMD and
// weightedSumHeadsHalfSIMD: AVX-512 kernels take 32 output floats of each
// head a call, AVX2 ones 8.

//go:noescape
func weightedSumHeads4AVX512(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads6AVX512(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads8AVX512(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads10AVX512(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads4AVX2(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads6AVX2(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads8AVX2(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeads10AVX2(o, w *[10]*float32, v *float32, stride, n int)

//go:noescape
func weightedSumHeadsHalf2AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf2AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf4AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf6AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf8AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf10AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf4AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf6AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf8AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

//go:noescape
func weightedSumHeadsHalf10AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)

// sumHeads calls the widened value kernel of set for heads heads.
func sumHeads(set sumsSet, heads int, op, wp *[10]*float32, v *float32, stride, n int) {
	switch {
	case set == sumsAVX512 && heads == 10:
		weightedSumHeads10AVX512(op, wp, v, stride, n)
	case set == sumsAVX512 && heads == 8:
		weightedSumHeads8AVX512(op, wp, v, stride, n)
	case set == sumsAVX512 && heads == 6:
		weightedSumHeads6AVX512(op, wp, v, stride, n)
	case set == sumsAVX512:
		weightedSumHeads4AVX512(op, wp, v, stride, n)
	case heads == 10:
		weightedSumHeads10AVX2(op, wp, v, stride, n)
	case heads == 8:
		weightedSumHeads8AVX2(op, wp, v, stride, n)
	case heads == 6:
		weightedSumHeads6AVX2(op, wp, v, stride, n)
	default:
		weightedSumHeads4AVX2(op, wp, v, stride, n)
	}
}

// sumHeadsHalf calls the in-place value kernel of set for heads heads.
func sumHeadsHalf(set sumsSet, heads int, op, wp *[10]*float32, tab, last *halfGroup, off, stride int) {
	switch {
	case set == sumsAVX512 && heads == 10:
		weightedSumHeadsHalf10AVX512(op, wp, tab, last, off, stride)
	case set == sumsAVX512 && heads == 8:
		weightedSumHeadsHalf8AVX512(op, wp, tab, last, off, stride)
	case set == sumsAVX512 && heads == 6:
		weightedSumHeadsHalf6AVX512(op, wp, tab, last, off, stride)
	case set == sumsAVX512 && heads == 4:
		weightedSumHeadsHalf4AVX512(op, wp, tab, last, off, stride)
	case set == sumsAVX512:
		weightedSumHeadsHalf2AVX512(op, wp, tab, last, off, stride)
	case heads == 10:
		weightedSumHeadsHalf10AVX2(op, wp, tab, last, off, stride)
	case heads == 8:
		weightedSumHeadsHalf8AVX2(op, wp, tab, last, off, stride)
	case heads == 6:
		weightedSumHeadsHalf6AVX2(op, wp, tab, last, off, stride)
	case heads == 4:
		weightedSumHeadsHalf4AVX2(op, wp, tab, last, off, stride)
	default:
		weightedSumHeadsHalf2AVX2(op, wp, tab, last, off, stride)
	}
}
