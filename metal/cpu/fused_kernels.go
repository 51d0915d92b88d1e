package cpu

import (
	"math"

	"github.com/splash-inference/splash/metal"
)

// fusedKernels are the loops of attention and of the elementwise
// operations, chosen once at New like kernels (SIMD where the CPU has it).
// Every implementation returns the same bits as the portable one.
type fusedKernels struct {
	// name says which set this is ("portable", "avx2", ...).
	name string
	// expShift: see fused_exp.go.
	expShift func(x []float32, m float32) float32
	// siluMul: see fused_exp.go.
	siluMul func(gate, up []float32)
	// widen sets row i of dst (len(dst)/width rows of width floats) to
	// src[i·stride:][:width] widened from float16 (exact): a block of
	// cached keys or values of one KV head, converted once into the
	// worker's scratch for all the query heads and tokens that read it.
	widen func(dst []float32, width int, src []uint16, stride int)
	// dequantKV sets dst to the int8 values q (a q8 cache's rows) times
	// their groups' float16 scales (metal.DequantizeKV, exact): the q8
	// cache's widen, for whole groups of metal.KVGroup.
	dequantKV func(dst []float32, q []int8, scales []uint16)
	// quantizeKV is metal.QuantizeKV (a q8 cache's stores), bit for bit
	// for finite x (a NaN group's scale may be another NaN).
	quantizeKV func(q []int8, scales []uint16, x []float32)
	// scores sets out[p] = q·k[p·stride:][:len(q)]·scale for each p, in
	// scoresRef's order (dot's, with fused multiply-adds): one query head
	// against len(out) keys stride floats apart.
	scores func(out, q, k []float32, stride int, scale float32)
	// weightedSum adds Σ_p w[p]·v[p·stride:][:len(o)] to o, position by
	// position in order, each by a fused multiply-add (weightedSumRef).
	weightedSum func(o, v []float32, stride int, w []float32)
	// scores2 and weightedSum2 are scores and weightedSum for two query
	// heads of one KV head (same keys or values, same positions), with
	// results identical to two single calls; a SIMD set may load each key
	// or value once for both.
	scores2      func(out0, out1, q0, q1, k []float32, stride int, scale float32)
	weightedSum2 func(o0, o1, v []float32, stride int, w0, w1 []float32)
	// weightedSumHeads is weightedSum for several query heads over the
	// same values and positions (head i's outputs o[i] and weights w[i];
	// every o[i] of one length, every w[i] of another), with results
	// identical to one weightedSum call per head; a SIMD set may load each
	// value once for all of them.
	weightedSumHeads func(o, w [][]float32, v []float32, stride int)
	// scores4 is scores2 for two tokens of a run at once, each with the
	// same two query heads, over the same positions: out[i] for q[i],
	// where q is the first token's two heads then the second's.
	scores4 func(out, q [4][]float32, k []float32, stride int, scale float32)
	// scoresHeads is scores for several query heads against the same keys
	// and positions (head i's scores out[i] and query q[i]; every out[i]
	// of one length, every q[i] of another), with results identical to
	// one scores call per head; a SIMD set may load each key once for
	// several of them.
	scoresHeads func(out, q [][]float32, k []float32, stride int, scale float32)
	// scoresHalf2 and weightedSum2Half are scores2 and weightedSum2 with
	// the keys or values read in place as float16, stride elements apart:
	// the results are those of scores2 and weightedSum2 on the widened
	// rows (widening is exact). tmp is scratch of at least 8·len(q0)
	// (8·len(o0)) floats. As they read k (v) they prefetch the same
	// offsets from next, the stretch of the cache read after it. nil in
	// the portable set, which widens first.
	scoresHalf2      func(out0, out1, q0, q1 []float32, k []uint16, stride int, scale float32, tmp []float32, next []uint16)
	weightedSum2Half func(o0, o1 []float32, v []uint16, stride int, w0, w1 []float32, tmp []float32, next []uint16)
	// scoresQ8Pair and weightedSumQ8Pair are scoresHalf2 and
	// weightedSum2Half over a q8 cache's stretch: int8 rows of len(q0)
	// (len(o0)) values, contiguous from k (v), each row's float16 scales
	// contiguous from sc; each value is widened exactly as dequantKV
	// widens it, so the results are those of scores2 and weightedSum2 on
	// the widened rows. tmp and next as there (next: int8 rows). nil where
	// the set has none (a decode step then widens its chunks).
	scoresQ8Pair      func(out0, out1, q0, q1 []float32, k []int8, sc []uint16, scale float32, tmp []float32, next []int8)
	weightedSumQ8Pair func(o0, o1 []float32, v []int8, sc []uint16, w0, w1 []float32, tmp []float32, next []int8)
	// tabs are the pair kernels over a decode step's tables of stretches
	// (attention_tables.go), where the set has them.
	tabs stretchKernels
	// scoresHeadsHalf and weightedSumHeadsHalf are scoresHeads and
	// weightedSumHeads with the keys or values read in place as float16,
	// a group of eight positions at a time from tab (each group hd
	// contiguous float16 a row), prefetching each group's pf as they
	// read it: out[i] and w[i] span 8·len(tab) positions. They take an
	// even number of heads and a head size that is a multiple of 32; each
	// nil where the set has none (runs then widen their chunks of keys,
	// or of values).
	scoresHeadsHalf      func(out, q [][]float32, tab []halfGroup, hd int, scale float32)
	weightedSumHeadsHalf func(o, w [][]float32, tab []halfGroup, hd int)
	// scale multiplies x by c in place (a softmax's normalisation).
	scale func(x []float32, c float32)
	// softmax is softmaxRow in one call, bit for bit; nil where the set
	// has none (softmaxRow then composes it of max, expShift and scale).
	softmax func(x []float32)
	// sumSquares returns Σ x² in float64 (sumSquaresRef's order): the
	// mean square of RMSNorm.
	sumSquares func(x []float32) float64
	// normScale sets o[i] = (x[i]·c)·w[i] (RMSNorm's scaling), for
	// len(x) elements; o may be x.
	normScale func(o, x, w []float32, c float32)
	// rotate turns each pair (lo[i], hi[i]) by the angle whose cosine and
	// sine are c[i] and s[i] (RoPE's rotation of one head, rotateRef).
	rotate func(lo, hi, c, s []float32)
	// add sets dst[i] += src[i] (a residual connection).
	add func(dst, src []float32)
	// max returns the largest of x (maxRef's order; -Inf when empty).
	max func(x []float32) float32
	// toF16 sets dst[i] to src[i] as float16, rounded to nearest even
	// (metal.F32ToF16).
	toF16 func(dst []uint16, src []float32)
	// bf16 are the loops over a KVBF16 cache (attention_bf16.go).
	bf16 bf16Kernels
}

// softmaxRow sets x to its softmax: exp32(x[i] − max x), each divided by
// their sum as a multiplication by 1/Σ (max, expShift, scale).
func (f *fusedKernels) softmaxRow(x []float32) {
	if f.softmax != nil {
		f.softmax(x)
		return
	}
	f.scale(x, 1/f.expShift(x, f.max(x)))
}

// halfGroup locates eight consecutive positions of one KV head for the
// in-place many-head kernels: the first of their rows (contiguous, hd
// float16 each), and the first row of the group to prefetch meanwhile.
// 32 bytes, so that the key kernels index the table by their output
// offset.
type halfGroup struct {
	k, pf *uint16
	_     [2]uintptr
}

func portableFused() fusedKernels {
	return fusedKernels{name: "portable", expShift: expShift, siluMul: siluMul, widen: widenRef, dequantKV: metal.DequantizeKV, quantizeKV: metal.QuantizeKV, scores: scoresRef, weightedSum: weightedSumRef, max: maxRef, toF16: toF16Ref,
		scale: scaleRef, normScale: normScaleRef, rotate: rotateRef, add: addRef, sumSquares: sumSquaresRef, bf16: portableBF16()}.withSinglePairs()
}

// withSinglePairs returns f with scores2 and weightedSum2 made of two
// calls of its scores and weightedSum, scores4 of four, and scoresHeads
// and weightedSumHeads of those.
func (f fusedKernels) withSinglePairs() fusedKernels {
	scores, weightedSum := f.scores, f.weightedSum
	f.scores4 = func(out, q [4][]float32, k []float32, stride int, scale float32) {
		for i := range out {
			scores(out[i], q[i], k, stride, scale)
		}
	}
	f.scores2 = func(out0, out1, q0, q1, k []float32, stride int, scale float32) {
		scores(out0, q0, k, stride, scale)
		scores(out1, q1, k, stride, scale)
	}
	f.weightedSum2 = func(o0, o1, v []float32, stride int, w0, w1 []float32) {
		weightedSum(o0, v, stride, w0)
		weightedSum(o1, v, stride, w1)
	}
	pairs := f
	f.weightedSumHeads = func(o, w [][]float32, v []float32, stride int) {
		weightedSumHeadPairs(&pairs, o, w, v, stride)
	}
	f.scoresHeads = func(out, q [][]float32, k []float32, stride int, scale float32) {
		scoresHeadQuads(&pairs, out, q, k, stride, scale)
	}
	return f
}

// scoresHeadQuads is scoresHeads by quads.scores4, four heads at a time,
// then scores2 and scores for the last three or fewer.
func scoresHeadQuads(quads *fusedKernels, out, q [][]float32, k []float32, stride int, scale float32) {
	i := 0
	for ; i+3 < len(out); i += 4 {
		quads.scores4([4][]float32(out[i:i+4]), [4][]float32(q[i:i+4]), k, stride, scale)
	}
	if i+1 < len(out) {
		quads.scores2(out[i], out[i+1], q[i], q[i+1], k, stride, scale)
		i += 2
	}
	if i < len(out) {
		quads.scores(out[i], q[i], k, stride, scale)
	}
}

// weightedSumHeadPairs is weightedSumHeads by pairs.weightedSum2, two
// heads at a time, and weightedSum for an odd one out.
func weightedSumHeadPairs(pairs *fusedKernels, o, w [][]float32, v []float32, stride int) {
	i := 0
	for ; i+1 < len(o); i += 2 {
		pairs.weightedSum2(o[i], o[i+1], v, stride, w[i], w[i+1])
	}
	if i < len(o) {
		pairs.weightedSum(o[i], v, stride, w[i])
	}
}

// bestFused is the first of availableFused, or the portable set.
func bestFused() fusedKernels {
	if fs := availableFused(); len(fs) > 0 {
		return fs[0]
	}
	return portableFused()
}

// selectFused is the attention set to go with kernel set k, selected for
// o: the portable one with the portable kernels, the one that goes with a
// set chosen by name, else the best.
func selectFused(o Options, k kernels) fusedKernels {
	if k.name == portableKernels().name {
		return portableFused()
	}
	if o.Kernels != "" {
		for _, f := range availableFused() {
			if f.name == k.fused {
				return f
			}
		}
	}
	return bestFused()
}

func scaleRef(x []float32, c float32) {
	for i := range x {
		x[i] *= c
	}
}

// rotateRef computes lo·c − hi·s and lo·s + hi·c with every product
// rounded before its add or subtract: the conversions keep a compiler that
// fuses multiply-adds (arm64) from changing the result.
func rotateRef(lo, hi, c, s []float32) {
	hi, c, s = hi[:len(lo)], c[:len(lo)], s[:len(lo)] // no bounds checks in the loop
	for i := range lo {
		x0, x1 := lo[i], hi[i]
		lo[i] = float32(x0*c[i]) - float32(x1*s[i])
		hi[i] = float32(x0*s[i]) + float32(x1*c[i])
	}
}

func addRef(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

func normScaleRef(o, x, w []float32, c float32) {
	o, w = o[:len(x)], w[:len(x)] // no bounds checks in the loop
	for i, v := range x {
		o[i] = v * c * w[i]
	}
}

func widenRef(dst []float32, width int, src []uint16, stride int) {
	for i := 0; i < len(dst)/width; i++ {
		d, s := dst[i*width:(i+1)*width], src[i*stride:i*stride+width]
		for j, h := range s {
			d[j] = metal.F16ToF32(h)
		}
	}
}

// scoresRef is dot's order with each product added by a fused
// multiply-add (fma32), as attention's SIMD loops do: the fused form
// leaves the FP pipes free for the float16 conversions and shuffles around
// it (BenchmarkAttention), and Apple cores issue four FMAs a cycle.
func scoresRef(out, q, k []float32, stride int, scale float32) {
	n := len(q)
	for p := range out {
		kp := k[p*stride : p*stride+n]
		var s [8]float32
		i := 0
		for ; i+8 <= n; i += 8 {
			for l := range s {
				s[l] = fma32(q[i+l], kp[i+l], s[l])
			}
		}
		d := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
		for ; i < n; i++ {
			d = fma32(q[i], kp[i], d)
		}
		out[p] = d * scale
	}
}

// weightedSumRef adds w[p]·v[p] to o position by position, each element
// by a fused multiply-add (fma32).
func weightedSumRef(o, v []float32, stride int, w []float32) {
	for p, wp := range w {
		vp := v[p*stride : p*stride+len(o)]
		for j := range o {
			o[j] = fma32(wp, vp[j], o[j])
		}
	}
}

// maxRef keeps eight running maxima, lane l taking x[l], x[l+8], …, then
// folds them in lane order and the elements after the last eight after
// them. Each step is "if v > m then m = v", which is what VMAXPS computes
// with the new value as its first source: a NaN or an equal zero of the
// other sign never replaces m.
func maxRef(x []float32) float32 {
	m := maxLanesInit()
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		for l, v := range x[i : i+8 : i+8] {
			if v > m[l] {
				m[l] = v
			}
		}
	}
	return maxFold(&m, x[n:])
}

func maxLanesInit() [8]float32 {
	inf := float32(math.Inf(-1))
	return [8]float32{inf, inf, inf, inf, inf, inf, inf, inf}
}

// maxFold folds the lane maxima, then the tail.
func maxFold(m *[8]float32, tail []float32) float32 {
	r := m[0]
	for _, v := range m[1:] {
		if v > r {
			r = v
		}
	}
	for _, v := range tail {
		if v > r {
			r = v
		}
	}
	return r
}

func toF16Ref(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = metal.F32ToF16(x)
	}
}
