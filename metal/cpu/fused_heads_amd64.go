package cpu

// The x86 many-head value sums (fused_heads_amd64.s,
// fused_heads_half_amd64.s): AVX-512 kernels take 32 output floats of
// each head a call, AVX2 ones 8.

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

// sumsWidth is the output floats of each head one many-head value kernel
// call takes.
func sumsWidth(avx512 bool) int {
	if avx512 {
		return 32
	}
	return 8
}

// weightedSumHeadsX86 is pairs.weightedSumHeads with the heads in groups
// of ten, eight, six or four in the AVX-512 (AVX2) weightedSumHeads
// kernels, and the last one to three heads by pairs.
func weightedSumHeadsX86(avx512 bool, pairs fusedKernels, o, w [][]float32, v []float32, stride int) {
	if len(o) == 0 {
		return
	}
	width := sumsWidth(avx512)
	hd, n, ok := headsShape(o, w, width)
	i := 0
	if ok {
		_ = v[(n-1)*stride+hd-1] // bounds of every value read
		var op, wp [10]*float32
		for len(o)-i >= 4 {
			heads := sumHeadsAt(len(o)&^1, i)
			for j := range heads {
				wp[j] = &w[i+j][0]
			}
			for c := 0; c < hd; c += width {
				for j := range heads {
					op[j] = &o[i+j][c]
				}
				sumHeads(avx512, heads, &op, &wp, &v[c], 4*stride, n)
			}
			i += heads
		}
	}
	weightedSumHeadPairs(pairs, o[i:], w[i:], v, stride)
}

// sumHeads calls the kernel of the set for heads heads.
func sumHeads(avx512 bool, heads int, op, wp *[10]*float32, v *float32, stride, n int) {
	switch {
	case avx512 && heads == 10:
		weightedSumHeads10AVX512(op, wp, v, stride, n)
	case avx512 && heads == 8:
		weightedSumHeads8AVX512(op, wp, v, stride, n)
	case avx512 && heads == 6:
		weightedSumHeads6AVX512(op, wp, v, stride, n)
	case avx512:
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

// weightedSumHeadsHalfX86 is weightedSumHeadsHalf: the heads ten, eight,
// six, four or two at a time (sumHeadsAt) in the AVX-512 (AVX2) kernels.
func weightedSumHeadsHalfX86(avx512 bool, o, w [][]float32, tab []halfGroup, hd int) {
	if len(tab) == 0 {
		return
	}
	checkHeadsHalf(o, w, hd, 8*len(tab), hd)
	width := sumsWidth(avx512)
	var op, wp [10]*float32
	last := &tab[len(tab)-1]
	for i := 0; i < len(o); {
		heads := sumHeadsAt(len(o), i)
		for j := range heads {
			wp[j] = &w[i+j][0]
		}
		for c := 0; c < hd; c += width {
			for j := range heads {
				op[j] = &o[i+j][c]
			}
			sumHeadsHalf(avx512, heads, &op, &wp, &tab[0], last, 2*c, 2*hd)
		}
		i += heads
	}
}

// sumHeadsHalf calls the in-place kernel of the set for heads heads.
func sumHeadsHalf(avx512 bool, heads int, op, wp *[10]*float32, tab, last *halfGroup, off, stride int) {
	switch {
	case avx512 && heads == 10:
		weightedSumHeadsHalf10AVX512(op, wp, tab, last, off, stride)
	case avx512 && heads == 8:
		weightedSumHeadsHalf8AVX512(op, wp, tab, last, off, stride)
	case avx512 && heads == 6:
		weightedSumHeadsHalf6AVX512(op, wp, tab, last, off, stride)
	case avx512 && heads == 4:
		weightedSumHeadsHalf4AVX512(op, wp, tab, last, off, stride)
	case avx512:
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
