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

// packGroups packs groups g0..g1-1 of every activation row of a into the
// sized buffers. Within a chunk a group's rows are adjacent, so a split by
// groups gives each worker its own stretches of t (a split by rows would
// have workers writing the 32-byte halves of the same cache lines).
func (t *tiledActs) packGroups(a *qacts, rows, cols int, shift uint, g0, g1 int) {
	groups := cols / 32
	for r0 := 0; r0 < rows; r0 += tileRowChunk {
		n := min(tileRowChunk, rows-r0)
		for g := g0; g < g1; g++ {
			for i := 0; i < n; i++ {
				r := r0 + i
				d := r0*cols + (g*n+i)*32
				copy(t.q[d:d+32], a.q[r*cols+g*32:r*cols+g*32+32])
				s := r0*groups + g*n + i
				t.scale[s] = a.scale[r*groups+g]
				t.bias[s] = -(a.sum[r*groups+g] << shift)
			}
		}
	}
}
