package cpu

//go:noescape
func scoresPairHalfAVX512(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)

//go:noescape
func weightedSumPairHalfAVX512(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)

//go:noescape
func scoresPairHalfAVX2(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)

//go:noescape
func weightedSumPairHalfAVX2(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)

// halfScores and halfSums are the signatures of the in-place float16
// pair kernels (fused_half_amd64.s).
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
		scoresHalfPairs(scores, group, pairs, out0, out1, q0, q1, k, stride, scale, tmp, next)
	}
	f.weightedSum2Half = func(o0, o1 []float32, v []uint16, stride int, w0, w1 []float32, tmp []float32, next []uint16) {
		weightedSumHalfPairs(sums, chunk, pairs, o0, o1, v, stride, w0, w1, tmp, next)
	}
	return f
}

// scoresHalfPairs is pairs.scoresHalf2: whole groups of positions in the
// kernel, the rest widened into tmp for pairs.scores2.
func scoresHalfPairs(kernel halfScores, group int, pairs fusedKernels, out0, out1, q0, q1 []float32, k []uint16, stride int, scale float32, tmp []float32, next []uint16) {
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
func weightedSumHalfPairs(kernel halfSums, chunk int, pairs fusedKernels, o0, o1 []float32, v []uint16, stride int, w0, w1 []float32, tmp []float32, next []uint16) {
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
