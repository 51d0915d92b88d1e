package cpu

// tiledActs holds one MatMul call's quantized activations in the layout of
// the tiled kernels (quantdot_tiled.go): rows in chunks of tileRowChunk,
// and within a chunk of n rows group-major, so a kernel walking one group
// down all the rows of a chunk reads consecutive memory (row-major rows are
// cols bytes apart, which for power-of-two widths maps them onto a few L1
// sets). For chunk rows r0 <= r < r0+n and group g:
//
//	q[r0·cols + (g·n + r−r0)·32 + j] = activation (r, 32g + j), j < 32
//	scale[r0·groups + g·n + r−r0]    = its group scale
//	bias[r0·groups + g·n + r−r0]     = −(Σ of its group's quants) << shift
type tiledActs struct {
	q     []int8
	scale []float32
	bias  []int32
}

// size sizes the buffers for rows×cols activations.
func (t *tiledActs) size(rows, cols int) {
	groups := cols / 32
	if cap(t.q) < rows*cols {
		t.q = make([]int8, rows*cols)
	}
	if cap(t.scale) < rows*groups {
		t.scale, t.bias = make([]float32, rows*groups), make([]int32, rows*groups)
	}
	t.q, t.scale, t.bias = t.q[:rows*cols], t.scale[:rows*groups], t.bias[:rows*groups]
}

// quantizeGroups quantizes groups g0..g1-1 of every row of x (rows×cols)
// straight into the sized buffers, with the biases of weights read as u =
// q + 2^shift. Within a chunk a group's rows are adjacent, so a split by
// groups gives each worker its own stretches of t (a split by rows would
// have workers writing the 32-byte halves of the same cache lines), and
// the quants are written in their tiled order here rather than packed from
// row-major ones in a second pass, which a prefill would pay for.
func (t *tiledActs) quantizeGroups(x []float32, rows, cols int, groups quantGroupsFunc, shift uint, g0, g1 int) {
	if g1 <= g0 {
		return
	}
	ng := cols / 32
	for r0 := 0; r0 < rows; r0 += tileRowChunk {
		n := min(tileRowChunk, rows-r0)
		for i := range n {
			r := r0 + i
			d, s := r0*cols+(g0*n+i)*32, r0*ng+g0*n+i
			groups(x[r*cols+g0*32:r*cols+g1*32], t.q[d:], t.scale[s:], t.bias[s:], n*32, n, -1<<shift)
		}
	}
}
