package cpu

import "math"

// Quantized weights are multiplied by int8-quantized activations, as in
// llama.cpp: each row of x is split into groups of 32 with its own scale
// (max|x|/127), so a group's dot product is an exact integer sum and only
// the per-group combination is floating point.

// qrow is one activation row quantized to int8 groups.
type qrow struct {
	q     []int8    // cols values
	q4x   []int8    // q in the q4 SIMD layout (see permuteQ4), or nil
	scale []float32 // cols/32 scales
	sum   []int32   // cols/32 sums of q, for the q4 offset correction
}

// qacts holds the quantized activation rows of one MatMul call, reused.
type qacts struct {
	q     []int8
	q4x   []int8 // q permuted for the q4 SIMD kernels, when they want it
	scale []float32
	sum   []int32
	// tiled: the same activations for the tiled kernels, when they run.
	tiled tiledActs
}

// size sizes the buffers for rows×cols activations.
func (a *qacts) size(rows, cols int) {
	n := rows * cols / 32
	if cap(a.q) < rows*cols {
		a.q = make([]int8, rows*cols)
	}
	if cap(a.scale) < n {
		a.scale, a.sum = make([]float32, n), make([]int32, n)
	}
	a.q, a.scale, a.sum = a.q[:rows*cols], a.scale[:n], a.sum[:n]
}

// quantGroupsFunc is a quantGroups kernel: quantGroupsRef's groups, each
// written where its layout puts it.
type quantGroupsFunc func(x []float32, q []int8, scale []float32, sum []int32, qstep, sstep int, mul int32)

// quantizeGroups quantizes groups g0..g1-1 (of 32 columns) of every row
// of x (rows×cols) into the sized buffers: each group on its own, so any
// split of the groups gives the same bits.
func (a *qacts) quantizeGroups(x []float32, rows, cols int, groups quantGroupsFunc, g0, g1 int) {
	ng := cols / 32
	for r := 0; r < rows; r++ {
		lo, hi := r*cols+g0*32, r*cols+g1*32
		groups(x[lo:hi], a.q[lo:hi], a.scale[r*ng+g0:r*ng+g1], a.sum[r*ng+g0:r*ng+g1], 32, 1, 1)
	}
}

// quantGroupsRef quantizes each group g of 32 values of x to int8 in
// q[g·qstep:], with scale max|x|/127 at scale[g·sstep] and mul times the
// sum of its quants at sum[g·sstep] (row-major: steps 32 and 1, mul 1; the
// tiled layout puts a row's groups a chunk's rows apart, and wants the
// bias −Σq·2^shift): the reference every quantGroups kernel matches bit
// for bit.
func quantGroupsRef(x []float32, q []int8, scale []float32, sum []int32, qstep, sstep int, mul int32) {
	for g := range len(x) / 32 {
		xv := x[g*32 : g*32+32 : g*32+32]
		qv := q[g*qstep : g*qstep+32 : g*qstep+32]
		var amax float32
		for _, v := range xv {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		s := amax / 127
		inv := float32(0)
		if s != 0 {
			inv = 1 / s
		}
		var t int32
		for j, v := range xv {
			q := int32(math.RoundToEven(float64(v * inv)))
			qv[j] = int8(q)
			t += q
		}
		scale[g*sstep], sum[g*sstep] = s, t*mul
	}
}

// row returns row r of a (cols wide).
func (a *qacts) row(r, cols int) qrow {
	g := cols / 32
	x := qrow{q: a.q[r*cols : (r+1)*cols], scale: a.scale[r*g : (r+1)*g], sum: a.sum[r*g : (r+1)*g]}
	if len(a.q4x) == len(a.q) {
		x.q4x = a.q4x[r*cols : (r+1)*cols]
	}
	return x
}

// permuteQ4 fills a.q4x with the activations in the layout the q4 SIMD
// kernels read. A q4 group stores element j in the low nibble and element
// j+16 in the high nibble of byte j, so 64 weight bytes (four groups) split
// into low and high nibbles line up with, per four groups, the first halves
// of the groups' activations followed by their second halves:
//
//	q4x[c*128 + k*16 + j]      = q[(4c+k)*32 + j]
//	q4x[c*128 + 64 + k*16 + j] = q[(4c+k)*32 + 16 + j]   (k < 4, j < 16)
//
// Groups after the last whole four of a row are copied unchanged.
func (a *qacts) permuteQ4(rows, cols int) {
	if cap(a.q4x) < len(a.q) {
		a.q4x = make([]int8, len(a.q))
	}
	a.q4x = a.q4x[:len(a.q)]
	for r := 0; r < rows; r++ {
		src, dst := a.q[r*cols:(r+1)*cols], a.q4x[r*cols:(r+1)*cols]
		whole := cols / 128 * 128
		for c := 0; c < whole; c += 128 {
			for k := 0; k < 4; k++ {
				copy(dst[c+k*16:c+k*16+16], src[c+k*32:c+k*32+16])
				copy(dst[c+64+k*16:c+64+k*16+16], src[c+k*32+16:c+k*32+32])
			}
		}
		copy(dst[whole:], src[whole:])
	}
}
