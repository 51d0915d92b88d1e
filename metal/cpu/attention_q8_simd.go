//go:build amd64 || arm64

package cpu

import "github.com/splash-inference/splash/metal"

// The signatures of the q8 pair kernels (attention_q8_amd64.s,
// fused_arm64.s).
type (
	q8Scores func(out0, out1, q0, q1 *float32, k *int8, stride, groups, blocks int, scale float32, sc *uint16, pf *int8)
	q8Sums   func(o0, o1 *float32, v *int8, stride int, w0, w1 *float32, n, chunks int, pf *int8, sc *uint16, sstride int)
)

// withQ8Pairs returns f with scoresQ8Pair and weightedSumQ8Pair made of
// the kernels scores (groups of group positions) and sums (chunks of chunk
// output floats).
func (f fusedKernels) withQ8Pairs(scores q8Scores, group int, sums q8Sums, chunk int) fusedKernels {
	pairs := f
	f.scoresQ8Pair = func(out0, out1, q0, q1 []float32, k []int8, sc []uint16, scale float32, tmp []float32, next []int8) {
		scoresPairQ8(scores, group, &pairs, out0, out1, q0, q1, k, sc, scale, tmp, next)
	}
	f.weightedSumQ8Pair = func(o0, o1 []float32, v []int8, sc []uint16, w0, w1 []float32, tmp []float32, next []int8) {
		weightedSumPairQ8(sums, chunk, &pairs, o0, o1, v, sc, w0, w1, tmp, next)
	}
	return f
}

// scoresPairQ8 is a set's scoresQ8Pair: whole groups of group positions
// in the kernel, the rest widened into tmp for pairs.scores2.
func scoresPairQ8(kernel q8Scores, group int, pairs *fusedKernels, out0, out1, q0, q1 []float32, k []int8, sc []uint16, scale float32, tmp []float32, next []int8) {
	npos, hd := len(out0), len(q0)
	n := 0
	if hd%metal.KVGroup == 0 && hd > 0 && npos >= group && len(out1) == npos && len(q1) == hd {
		n = npos - npos%group
		_, _ = k[n*hd-1], sc[n*hd/metal.KVGroup-1] // bounds of every read
		_ = next[n*hd-1]
		kernel(&out0[0], &out1[0], &q0[0], &q1[0], &k[0], hd, n/group, hd/8, scale, &sc[0], &next[0])
	}
	for p := n; p < npos; p += 8 {
		e := min(p+8, npos)
		w := tmp[:(e-p)*hd]
		pairs.dequantKV(w, k[p*hd:e*hd], sc[p*hd/metal.KVGroup:])
		pairs.scores2(out0[p:e], out1[p:e], q0, q1, w, hd, scale)
	}
}

// weightedSumPairQ8 is a set's weightedSumQ8Pair: whole chunks of chunk
// outputs in the kernel, the rest of the outputs from values widened into
// tmp, eight positions at a time in order.
func weightedSumPairQ8(kernel q8Sums, chunk int, pairs *fusedKernels, o0, o1 []float32, v []int8, sc []uint16, w0, w1 []float32, tmp []float32, next []int8) {
	npos, hd := len(w0), len(o0)
	if npos == 0 {
		return
	}
	ns := hd / metal.KVGroup
	done := 0
	if c := hd / chunk; c > 0 && hd%metal.KVGroup == 0 && len(w1) == npos && len(o1) == hd {
		_, _, _ = v[npos*hd-1], sc[npos*ns-1], next[npos*hd-1] // bounds of every read
		kernel(&o0[0], &o1[0], &v[0], hd, &w0[0], &w1[0], npos, c, &next[0], &sc[0], 2*ns)
		done = c * chunk
	}
	if done == hd {
		return
	}
	for p := 0; p < npos; p += 8 {
		e := min(p+8, npos)
		w := tmp[:(e-p)*hd]
		pairs.dequantKV(w, v[p*hd:e*hd], sc[p*ns:])
		pairs.weightedSum2(o0[done:], o1[done:], w[done:], hd, w0[p:e], w1[p:e])
	}
}
