//go:build amd64 || arm64

package cpu

// The slice-level wrappers of the fused loops' assembly (AVX2 in
// fused_amd64.s, NEON in fused_arm64.s): bounds checks in Go, whole
// eights (or chunks) in assembly, any rest by the portable loop.

type (
	expShiftAsm    func(x *float32, m float32, blocks int) float32
	siluMulAsm     func(gate, up *float32, blocks int)
	toF16Asm       func(dst *uint16, src *float32, blocks int)
	widenAsm       func(dst *float32, src *uint16, sstride, rows, blocks int)
	scoresAsm      func(out, q, k *float32, stride, n, blocks int, scale float32)
	weightedSumAsm func(o, v *float32, stride int, w *float32, n, chunks int)
	scaleAsm       func(x *float32, c float32, blocks int)
	normScaleAsm   func(o, x, w *float32, c float32, blocks int)
	rotateAsm      func(lo, hi, c, s *float32, blocks int)
	addAsm         func(dst, src *float32, blocks int)
	sumSquaresAsm  func(x *float32, blocks int) float64
	softmaxAsm     func(x *float32, n int)
)

// widenSlices is widenRef for rows of whole vectors of lanes floats (the
// assembly's step), by widenRef otherwise.
func widenSlices(asm widenAsm, lanes int, dst []float32, width int, src []uint16, stride int) {
	rows := len(dst) / width
	if width%lanes != 0 || rows == 0 {
		widenRef(dst, width, src, stride)
		return
	}
	_, _ = dst[rows*width-1], src[(rows-1)*stride+width-1] // bounds of every access
	asm(&dst[0], &src[0], 2*stride, rows, width/lanes)
}

// scoresSlices is scoresRef for query heads of whole eights.
func scoresSlices(asm scoresAsm, out, q, k []float32, stride int, scale float32) {
	if len(q)%8 != 0 || len(q) == 0 || len(out) == 0 {
		scoresRef(out, q, k, stride, scale)
		return
	}
	_ = k[(len(out)-1)*stride+len(q)-1] // bounds of every key read
	asm(&out[0], &q[0], &k[0], 4*stride, len(out), len(q)/8, scale)
}

// weightedSumChunks is weightedSumRef with o's whole chunks of chunk
// floats kept in registers across positions; the rest of o by rest (each
// element's sum has the same order either way).
func weightedSumChunks(asm weightedSumAsm, chunk int, rest func(o, v []float32, stride int, w []float32), o, v []float32, stride int, w []float32) {
	if len(w) == 0 || len(o) == 0 {
		return
	}
	_ = v[(len(w)-1)*stride+len(o)-1] // bounds of every value read
	c := len(o) / chunk
	if c > 0 {
		asm(&o[0], &v[0], 4*stride, &w[0], len(w), c)
	}
	if r := o[chunk*c:]; len(r) > 0 {
		rest(r, v[chunk*c:], stride, w)
	}
}

// softmaxSlice is a set's softmax: a whole row in one assembly call.
func softmaxSlice(asm softmaxAsm) func(x []float32) {
	return func(x []float32) {
		if len(x) > 0 {
			asm(&x[0], len(x))
		}
	}
}

// expShiftSlices is expShift with the whole eights in assembly.
func expShiftSlices(asm expShiftAsm, x []float32, m float32) float32 {
	n := len(x) &^ 7
	s := float32(0)
	if n > 0 {
		s = asm(&x[0], m, n/8)
	}
	return expShiftTail(s, x[n:], m)
}

// siluMulSlices is siluMul with the whole eights in assembly.
func siluMulSlices(asm siluMulAsm, gate, up []float32) {
	n := len(gate) &^ 7
	up = up[:len(gate)]
	if n > 0 {
		asm(&gate[0], &up[0], n/8)
	}
	siluMul(gate[n:], up[n:])
}

// toF16Slices is toF16Ref eight elements at a time (VCVTPS2PH and FCVTN
// round to nearest even, as metal.F32ToF16 does; NaN payloads may differ).
func toF16Slices(asm toF16Asm, dst []uint16, src []float32) {
	n := len(src) &^ 7
	dst = dst[:len(src)]
	if n > 0 {
		asm(&dst[0], &src[0], n/8)
	}
	toF16Ref(dst[n:], src[n:])
}

// scaleSlices is scaleRef with the whole eights in asm.
func scaleSlices(asm scaleAsm, x []float32, c float32) {
	n := len(x) &^ 7
	if n > 0 {
		asm(&x[0], c, n/8)
	}
	scaleRef(x[n:], c)
}

// normScaleSlices is normScaleRef with the whole eights in asm.
func normScaleSlices(asm normScaleAsm, o, x, w []float32, c float32) {
	n := len(x) &^ 7
	o, w = o[:len(x)], w[:len(x)] // bounds of every access
	if n > 0 {
		asm(&o[0], &x[0], &w[0], c, n/8)
	}
	normScaleRef(o[n:], x[n:], w[n:], c)
}

// rotateSlices is rotateRef with the whole eights in asm.
func rotateSlices(asm rotateAsm, lo, hi, c, s []float32) {
	n := len(lo) &^ 7
	hi, c, s = hi[:len(lo)], c[:len(lo)], s[:len(lo)] // bounds of every access
	if n > 0 {
		asm(&lo[0], &hi[0], &c[0], &s[0], n/8)
	}
	rotateRef(lo[n:], hi[n:], c[n:], s[n:])
}

// addSlices is addRef with the whole eights in asm.
func addSlices(asm addAsm, dst, src []float32) {
	n := len(dst) &^ 7
	src = src[:len(dst)]
	if n > 0 {
		asm(&dst[0], &src[0], n/8)
	}
	addRef(dst[n:], src[n:])
}

// sumSquaresSlices is sumSquaresRef with the whole sixteens in asm, which
// returns their folded sum.
func sumSquaresSlices(asm sumSquaresAsm, x []float32) float64 {
	n := len(x) &^ 15
	ss := 0.0
	if n > 0 {
		ss = asm(&x[0], n/16)
	}
	for _, v := range x[n:] {
		ss += float64(v) * float64(v)
	}
	return ss
}

// halfScores and halfSums are the signatures of the in-place float16
// pair kernels (fused_half_amd64.s, fused_arm64.s).
type (
	halfScores func(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)
	halfSums   func(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)
)

// withHalfPairs returns f with scoresHalf2 and weightedSum2Half made of
// the kernels scores (groups of group positions) and sums (chunks of chunk
// output floats).
func (f fusedKernels) withHalfPairs(scores halfScores, group int, sums halfSums, chunk int) fusedKernels {
	pairs := f
	f.scoresHalf2 = func(out0, out1, q0, q1 []float32, k []uint16, stride int, scale float32, tmp []float32, next []uint16) {
		scoresHalfPairs(scores, group, &pairs, out0, out1, q0, q1, k, stride, scale, tmp, next)
	}
	f.weightedSum2Half = func(o0, o1 []float32, v []uint16, stride int, w0, w1 []float32, tmp []float32, next []uint16) {
		weightedSumHalfPairs(sums, chunk, &pairs, o0, o1, v, stride, w0, w1, tmp, next)
	}
	return f
}

// scoresHalfPairs is pairs.scoresHalf2: whole groups of positions in the
// kernel, the rest widened into tmp for pairs.scores2.
func scoresHalfPairs(kernel halfScores, group int, pairs *fusedKernels, out0, out1, q0, q1 []float32, k []uint16, stride int, scale float32, tmp []float32, next []uint16) {
	npos, hd := len(out0), len(q0)
	n := 0
	if hd%8 == 0 && hd > 0 && npos >= group && len(out1) == npos && len(q1) == hd {
		n = npos - npos%group
		_ = k[(n-1)*stride+hd-1] // bounds of every key read
		kernel(&out0[0], &out1[0], &q0[0], &q1[0], &k[0], 2*stride, n/group, hd/8, scale, &next[0])
	}
	for p := n; p < npos; p += 8 {
		e := min(p+8, npos)
		w := tmp[:(e-p)*hd]
		pairs.widen(w, hd, k[p*stride:], stride)
		pairs.scores2(out0[p:e], out1[p:e], q0, q1, w, hd, scale)
	}
}

// weightedSumHalfPairs is pairs.weightedSum2Half: whole chunks of the
// outputs in the kernel, the rest of the outputs from the values widened
// into tmp, eight positions at a time in order.
func weightedSumHalfPairs(kernel halfSums, chunk int, pairs *fusedKernels, o0, o1 []float32, v []uint16, stride int, w0, w1 []float32, tmp []float32, next []uint16) {
	npos, hd := len(w0), len(o0)
	if npos == 0 {
		return
	}
	done := 0
	if c := hd / chunk; c > 0 && len(w1) == npos && len(o1) == hd {
		_ = v[(npos-1)*stride+hd-1] // bounds of every value read
		kernel(&o0[0], &o1[0], &v[0], 2*stride, &w0[0], &w1[0], npos, c, &next[0])
		done = c * chunk
	}
	if done == hd {
		return
	}
	width := hd - done
	for p := 0; p < npos; p += 8 {
		e := min(p+8, npos)
		w := tmp[:(e-p)*width]
		pairs.widen(w, width, v[p*stride+done:], stride)
		pairs.weightedSum2(o0[done:], o1[done:], w, width, w0[p:e], w1[p:e])
	}
}

// checkHeadsHalf panics unless the in-place many-head kernels can take
// these heads (an even number, each in of length n and out of length m)
// and head size.
func checkHeadsHalf(out, in [][]float32, m, n, hd int) {
	if len(out)%2 != 0 || len(in) != len(out) || hd%32 != 0 {
		panic("cpu: in-place attention needs an even number of heads and a head size of a multiple of 32")
	}
	for i := range out {
		if len(out[i]) != m || len(in[i]) != n {
			panic("cpu: in-place attention heads of unequal lengths")
		}
	}
}

// sumHeadsAt is how many of n heads, from head i on, the next call of the
// many-head value kernels (two, four, six, eight or ten heads) takes: the
// rest when at most ten are left, else up to ten leaving at least four,
// so that an even count splits into those kernels (two only alone).
func sumHeadsAt(n, i int) int {
	if rest := n - i; rest > 10 {
		return min(10, rest-4)
	}
	return n - i
}

// headsShape returns the head size and the positions of the heads' value
// sums (o[i] outputs, w[i] weights), and whether the many-head value
// kernels that take width output floats a call can sum them: every
// output of one whole number of widths, every weight list of one length.
func headsShape(o, w [][]float32, width int) (hd, n int, ok bool) {
	hd, n = len(o[0]), len(w[0])
	ok = hd%width == 0 && hd > 0 && n > 0 && len(w) == len(o)
	for i := range o {
		ok = ok && len(o[i]) == hd && len(w[i]) == n
	}
	return hd, n, ok
}

// scoresPairAsm is the signature of the two-head score kernels on
// widened keys (scoresPairAVX512, scoresPairAVX2, scoresPairNEON).
type scoresPairAsm func(out0, out1, q0, q1, k *float32, stride, groups, blocks int, scale float32)

// scoresPairGroups is single.scores2 with the whole groups of group
// positions in asm and the rest by single.
func scoresPairGroups(asm scoresPairAsm, group int, single *fusedKernels, out0, out1, q0, q1, k []float32, stride int, scale float32) {
	n := len(out0) - len(out0)%group
	hd := len(q0)
	if hd%8 != 0 || hd == 0 || n == 0 || len(out1) != len(out0) || len(q1) != hd {
		single.scores2(out0, out1, q0, q1, k, stride, scale)
		return
	}
	_, _ = out1[n-1], k[(n-1)*stride+hd-1] // bounds of every access
	asm(&out0[0], &out1[0], &q0[0], &q1[0], &k[0], 4*stride, n/group, hd/8, scale)
	if n < len(out0) {
		single.scores2(out0[n:], out1[n:], q0, q1, k[n*stride:], stride, scale)
	}
}

// withScorePairs returns f with scores2 made of its widened pair kernel
// asm (groups of group positions, the rest by f's scores2), and scores4
// and scoresHeads made of that scores2.
func (f fusedKernels) withScorePairs(asm scoresPairAsm, group int) fusedKernels {
	single := f
	f.scores2 = func(out0, out1, q0, q1, k []float32, stride int, scale float32) {
		scoresPairGroups(asm, group, &single, out0, out1, q0, q1, k, stride, scale)
	}
	pairs := f
	f.scores4 = func(out, q [4][]float32, k []float32, stride int, scale float32) {
		pairs.scores2(out[0], out[1], q[0], q[1], k, stride, scale)
		pairs.scores2(out[2], out[3], q[2], q[3], k, stride, scale)
	}
	quads := f
	f.scoresHeads = func(out, q [][]float32, k []float32, stride int, scale float32) {
		scoresHeadQuads(&quads, out, q, k, stride, scale)
	}
	return f
}

// sumsSet names a set of many-head value kernels (sumHeads, sumHeadsHalf
// in the architecture's file).
type sumsSet int

const (
	sumsAVX512 sumsSet = iota // 32 output floats of each head a call
	sumsAVX2                  // 8
	sumsNEON                  // 8
)

// width is the output floats of each head one kernel call of s takes.
func (s sumsSet) width() int {
	if s == sumsAVX512 {
		return 32
	}
	return 8
}

// weightedSumHeadsSIMD is pairs.weightedSumHeads with the heads in groups
// of ten, eight, six or four in the widened value kernels of set, and the
// last one to three heads by pairs.
func weightedSumHeadsSIMD(set sumsSet, pairs *fusedKernels, o, w [][]float32, v []float32, stride int) {
	if len(o) == 0 {
		return
	}
	width := set.width()
	hd, n, ok := headsShape(o, w, width)
	i := 0
	if ok {
		_ = v[(n-1)*stride+hd-1] // bounds of every value read
		var op, wp [10]*float32
		// Groups of at least four: the widened kernels have no two-head one.
		for len(o)-i >= 4 {
			heads := sumHeadsAt(len(o)&^1, i)
			for j := range heads {
				wp[j] = &w[i+j][0]
			}
			for c := 0; c < hd; c += width {
				for j := range heads {
					op[j] = &o[i+j][c]
				}
				sumHeads(set, heads, &op, &wp, &v[c], 4*stride, n)
			}
			i += heads
		}
	}
	weightedSumHeadPairs(pairs, o[i:], w[i:], v, stride)
}

// weightedSumHeadsHalfSIMD is weightedSumHeadsHalf: the heads ten, eight,
// six, four or two at a time (sumHeadsAt) in the in-place value kernels
// of set.
func weightedSumHeadsHalfSIMD(set sumsSet, o, w [][]float32, tab []halfGroup, hd int) {
	if len(tab) == 0 {
		return
	}
	checkHeadsHalf(o, w, hd, 8*len(tab), hd)
	width := set.width()
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
			sumHeadsHalf(set, heads, &op, &wp, &tab[0], last, 2*c, 2*hd)
		}
		i += heads
	}
}
