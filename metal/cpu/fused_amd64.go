package cpu

import (
	"golang.org/x/sys/cpu"

	"github.com/splash-inference/splash/metal"
)

//go:noescape
func expShiftBlocksAVX2(x *float32, m float32, blocks int) float32

//go:noescape
func siluMulBlocksAVX2(gate, up *float32, blocks int)

//go:noescape
func widenAVX2(dst *float32, src *uint16, sstride, rows, blocks int)

//go:noescape
func scoresAVX2(out, q, k *float32, stride, n, blocks int, scale float32)

//go:noescape
func scoresPairAVX2(out0, out1, q0, q1, k *float32, stride, groups, blocks int, scale float32)

//go:noescape
func maxLanesAVX2(x *float32, blocks int, m *[8]float32)

//go:noescape
func toF16AVX2(dst *uint16, src *float32, blocks int)

//go:noescape
func weightedSumAVX2(o, v *float32, stride int, w *float32, n, chunks int)

//go:noescape
func scaleAVX2(x *float32, c float32, blocks int)

//go:noescape
func normScaleAVX2(o, x, w *float32, c float32, blocks int)

//go:noescape
func rotateAVX2(lo, hi, c, s *float32, blocks int)

//go:noescape
func addAVX2(dst, src *float32, blocks int)

//go:noescape
func sumSquaresAVX2(x *float32, blocks int) float64

//go:noescape
func expShiftBlocksAVX512(x *float32, m float32, blocks int) float32

//go:noescape
func softmaxAVX512(x *float32, n int)

//go:noescape
func softmaxAVX2(x *float32, n int)

//go:noescape
func siluMulBlocksAVX512(gate, up *float32, blocks int)

//go:noescape
func widenAVX512(dst *float32, src *uint16, sstride, rows, blocks int)

//go:noescape
func scoresAVX512(out, q, k *float32, stride, groups, blocks int, scale float32)

//go:noescape
func weightedSumAVX512(o, v *float32, stride int, w *float32, n, chunks int)

//go:noescape
func scoresPairAVX512(out0, out1, q0, q1, k *float32, stride, groups, blocks int, scale float32)

//go:noescape
func scoresQuadAVX512(a0, a1, b0, b1, qa0, qa1, qb0, qb1, k *float32, stride, groups, blocks int, scale float32)

//go:noescape
func weightedSumPairAVX512(o0, o1, v *float32, stride int, w0, w1 *float32, n, chunks int)

//go:noescape
func scoresHeads6AVX512(out, q *[6]*float32, k *float32, stride, groups, qbytes int, scale float32)

// hasAVX512 reports the AVX-512 the set's kernels use, and the AVX2 set
// it builds on; x/sys/cpu also checks that the OS saves the AVX-512
// state. Besides the foundation they use DQ (VBROADCASTF32X8,
// VEXTRACTF32X8, VINSERTF32X8) and VL (ymm registers from Y16 on): every
// AVX-512 CPU since Skylake-SP and Zen 4 has both, but the Xeon Phi
// processors have neither and would stop on their first kernel.
func hasAVX512() bool {
	return hasAVX2() && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
}

// availableFused lists the SIMD sets this CPU can run, best first: AVX-512
// for attention's loops and the exponentials (the rest of its set is
// AVX2's), then AVX2.
func availableFused() []fusedKernels {
	if !hasAVX2() {
		return nil
	}
	avx2 := fusedAVX2()
	avx2.tabs = stretchKernels{4, 32, scoresPairHalfTabAVX2, weightedSumPairHalfTabAVX2, scoresPairQ8TabAVX2, weightedSumPairQ8TabAVX2}
	if !hasAVX512() {
		return []fusedKernels{avx2.withHalfPairs(scoresPairHalfAVX2, 4, weightedSumPairHalfAVX2, 32).
			withQ8Pairs(scoresPairQ8AVX2, 4, weightedSumPairQ8AVX2, 32)}
	}
	avx512 := avx2
	avx512.name = "avx512"
	avx512.expShift = func(x []float32, m float32) float32 { return expShiftSlices(expShiftBlocksAVX512, x, m) }
	avx512.siluMul = func(gate, up []float32) { siluMulSlices(siluMulBlocksAVX512, gate, up) }
	avx512.softmax = softmaxSlice(softmaxAVX512)
	avx512.quantizeKV = func(q []int8, scales []uint16, x []float32) { quantizeKVSlices(quantizeKVAVX512, q, scales, x) }
	avx512.dequantKV = func(dst []float32, q []int8, scales []uint16) { dequantKVSlices(dequantKVAVX512, dst, q, scales) }
	avx512.widen = func(dst []float32, width int, src []uint16, stride int) {
		if width%16 != 0 {
			avx2.widen(dst, width, src, stride)
			return
		}
		widenSlices(widenAVX512, 16, dst, width, src, stride)
	}
	avx512.scores = func(out, q, k []float32, stride int, scale float32) {
		scoresPairs(scoresAVX512, avx2.scores, out, q, k, stride, scale)
	}
	// 128-float chunks: eight registers; a shorter rest as AVX2 does it
	avx512.weightedSum = func(o, v []float32, stride int, w []float32) {
		weightedSumChunks(weightedSumAVX512, 128, avx2.weightedSum, o, v, stride, w)
	}
	avx512 = avx512.withSinglePairs()
	single := avx512
	avx512.scores2 = func(out0, out1, q0, q1, k []float32, stride int, scale float32) {
		scoresPairGroups(scoresPairAVX512, 8, &single, out0, out1, q0, q1, k, stride, scale)
	}
	avx512.weightedSum2 = func(o0, o1, v []float32, stride int, w0, w1 []float32) {
		weightedSumPairs2(&single, o0, o1, v, stride, w0, w1)
	}
	pairs := avx512
	avx512.scores4 = func(out, q [4][]float32, k []float32, stride int, scale float32) {
		scoresQuads(&pairs, out, q, k, stride, scale)
	}
	avx512.weightedSumHeads = func(o, w [][]float32, v []float32, stride int) {
		weightedSumHeadsSIMD(sumsAVX512, &pairs, o, w, v, stride)
	}
	quads := avx512
	avx512.scoresHeads = func(out, q [][]float32, k []float32, stride int, scale float32) {
		scoresHeadsAVX512(&quads, out, q, k, stride, scale)
	}
	avx512 = avx512.withQ8Pairs(scoresPairQ8AVX512, 8, weightedSumPairQ8AVX512, 128)
	avx512.tabs = stretchKernels{8, 128, scoresPairHalfTabAVX512, weightedSumPairHalfTabAVX512, scoresPairQ8TabAVX512, weightedSumPairQ8TabAVX512}
	if hasAVX512BF16() {
		avx512.bf16 = avx512BF16()
	}
	avx512.scoresHeadsHalf = scoresHeadsHalfAVX512
	avx512.weightedSumHeadsHalf = func(o, w [][]float32, tab []halfGroup, hd int) {
		weightedSumHeadsHalfSIMD(sumsAVX512, o, w, tab, hd)
	}
	return []fusedKernels{avx512.withHalfPairs(scoresPairHalfAVX512, 8, weightedSumPairHalfAVX512, 128),
		avx2.withHalfPairs(scoresPairHalfAVX2, 4, weightedSumPairHalfAVX2, 32).
			withQ8Pairs(scoresPairQ8AVX2, 4, weightedSumPairQ8AVX2, 32)}
}

// scoresPairs is scoresRef with the whole sixteens of positions in the
// AVX-512 kernel, two positions to a register, and the rest by rest.
func scoresPairs(asm scoresAsm, rest func(out, q, k []float32, stride int, scale float32), out, q, k []float32, stride int, scale float32) {
	n := len(out) &^ 15
	if len(q)%8 != 0 || len(q) == 0 || n == 0 {
		rest(out, q, k, stride, scale)
		return
	}
	_ = k[(n-1)*stride+len(q)-1] // bounds of every key read
	asm(&out[0], &q[0], &k[0], 4*stride, n/16, len(q)/8, scale)
	if n < len(out) {
		rest(out[n:], q, k[n*stride:], stride, scale)
	}
}

// scoresQuads is pairs.scores4 with the whole eights of positions in
// scoresQuadAVX512 and the rest two heads at a time.
func scoresQuads(pairs *fusedKernels, out, q [4][]float32, k []float32, stride int, scale float32) {
	npos, hd := len(out[0]), len(q[0])
	n := npos &^ 7
	ok := hd%8 == 0 && hd > 0 && n > 0
	for i := range out {
		ok = ok && len(out[i]) == npos && len(q[i]) == hd
	}
	if !ok {
		n = 0
	} else {
		_ = k[(n-1)*stride+hd-1] // bounds of every key read
		scoresQuadAVX512(&out[0][0], &out[1][0], &out[2][0], &out[3][0], &q[0][0], &q[1][0], &q[2][0], &q[3][0],
			&k[0], 4*stride, n/8, hd/8, scale)
	}
	if n < npos {
		pairs.scores2(out[0][n:], out[1][n:], q[0], q[1], k[n*stride:], stride, scale)
		pairs.scores2(out[2][n:], out[3][n:], q[2], q[3], k[n*stride:], stride, scale)
	}
}

// weightedSumPairs2 is single.weightedSum2 with the whole 128-float
// chunks of the outputs in weightedSumPairAVX512.
func weightedSumPairs2(single *fusedKernels, o0, o1, v []float32, stride int, w0, w1 []float32) {
	const chunk = 128
	n, c := len(w0), len(o0)/chunk
	if n == 0 || c == 0 || len(w1) != n || len(o1) != len(o0) {
		single.weightedSum2(o0, o1, v, stride, w0, w1)
		return
	}
	_ = v[(n-1)*stride+len(o0)-1] // bounds of every value read
	weightedSumPairAVX512(&o0[0], &o1[0], &v[0], 4*stride, &w0[0], &w1[0], n, c)
	if rest := chunk * c; rest < len(o0) {
		single.weightedSum2(o0[rest:], o1[rest:], v[rest:], stride, w0, w1)
	}
}

// scoresHeadsAVX512 is quads.scoresHeads with the heads in groups of six
// in scoresHeads6AVX512 over the whole eights of positions (the rest of
// their positions, and the last five or fewer heads, by quads).
func scoresHeadsAVX512(quads *fusedKernels, out, q [][]float32, k []float32, stride int, scale float32) {
	if len(out) == 0 {
		return
	}
	npos, hd := len(out[0]), len(q[0])
	n := npos &^ 7
	ok := hd%8 == 0 && hd > 0 && n > 0 && len(q) == len(out)
	for i := range out {
		ok = ok && len(out[i]) == npos && len(q[i]) == hd
	}
	i := 0
	if ok {
		_ = k[(n-1)*stride+hd-1] // bounds of every key read
		var op, qp [6]*float32
		var rest [6][]float32
		for ; len(out)-i >= 6; i += 6 {
			for j := range 6 {
				op[j], qp[j] = &out[i+j][0], &q[i+j][0]
				rest[j] = out[i+j][n:]
			}
			scoresHeads6AVX512(&op, &qp, &k[0], 4*stride, n/8, 4*hd, scale)
			if n < npos {
				scoresHeadQuads(quads, rest[:], q[i:i+6], k[n*stride:], stride, scale)
			}
		}
	}
	scoresHeadQuads(quads, out[i:], q[i:], k, stride, scale)
}

// scoresHeadsHalfAVX512 is scoresHeadsHalf: the heads six, four or two at
// a time (an even count splits into those).
func scoresHeadsHalfAVX512(out, q [][]float32, tab []halfGroup, hd int, scale float32) {
	if len(tab) == 0 {
		return
	}
	n := 8 * len(tab)
	checkHeadsHalf(out, q, n, hd, hd)
	var op, qp [6]*float32
	for i := 0; i < len(out); {
		heads := 4
		switch rest := len(out) - i; {
		case rest == 6 || rest >= 10:
			heads = 6
		case rest == 2:
			heads = 2
		}
		for j := range heads {
			op[j], qp[j] = &out[i+j][0], &q[i+j][0]
		}
		switch heads {
		case 6:
			scoresHeadsHalf6AVX512(&op, &qp, &tab[0], 2*hd, 4*hd, 4*n, scale)
		case 4:
			scoresHeadsHalf4AVX512(&op, &qp, &tab[0], 2*hd, 4*hd, 4*n, scale)
		default:
			scoresHeadsHalf2AVX512(&op, &qp, &tab[0], 2*hd, 4*hd, 4*n, scale)
		}
		i += heads
	}
}

// fusedAVX2 is the AVX2 set.
func fusedAVX2() fusedKernels {
	f := fusedKernels{name: "avx2", max: maxAVX2, quantizeKV: metal.QuantizeKV, bf16: pairBF16()}
	f.dequantKV = func(dst []float32, q []int8, scales []uint16) { dequantKVSlices(dequantKVAVX2, dst, q, scales) }
	f.scale = func(x []float32, c float32) { scaleSlices(scaleAVX2, x, c) }
	f.softmax = softmaxSlice(softmaxAVX2)
	f.normScale = func(o, x, w []float32, c float32) { normScaleSlices(normScaleAVX2, o, x, w, c) }
	f.rotate = func(lo, hi, c, s []float32) { rotateSlices(rotateAVX2, lo, hi, c, s) }
	f.add = func(dst, src []float32) { addSlices(addAVX2, dst, src) }
	f.sumSquares = func(x []float32) float64 { return sumSquaresSlices(sumSquaresAVX2, x) }
	f.toF16 = func(dst []uint16, src []float32) { toF16Slices(toF16AVX2, dst, src) }
	f.expShift = func(x []float32, m float32) float32 { return expShiftSlices(expShiftBlocksAVX2, x, m) }
	f.siluMul = func(gate, up []float32) { siluMulSlices(siluMulBlocksAVX2, gate, up) }
	f.widen = func(dst []float32, width int, src []uint16, stride int) {
		widenSlices(widenAVX2, 8, dst, width, src, stride)
	}
	f.scores = func(out, q, k []float32, stride int, scale float32) {
		scoresSlices(scoresAVX2, out, q, k, stride, scale)
	}
	// 64-float chunks: eight registers
	f.weightedSum = func(o, v []float32, stride int, w []float32) {
		weightedSumChunks(weightedSumAVX2, 64, weightedSumRef, o, v, stride, w)
	}
	f = f.withSinglePairs().withScorePairs(scoresPairAVX2, 4)
	pairs := f
	f.weightedSumHeads = func(o, w [][]float32, v []float32, stride int) {
		weightedSumHeadsSIMD(sumsAVX2, &pairs, o, w, v, stride)
	}
	f.weightedSumHeadsHalf = func(o, w [][]float32, tab []halfGroup, hd int) {
		weightedSumHeadsHalfSIMD(sumsAVX2, o, w, tab, hd)
	}
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
