package cpu

import (
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

// matmulTask computes out[r][o] = dot(W[o], x[r]) for output rows o in a
// range. Each weight row is read once (f16/bf16 rows widened into the
// worker's scratch; q8/q4 rows read in place, against activations quantized
// to int8 once per call) and dotted with every activation row, so the
// weights stream from memory once per call however many rows the batch has.
// q4 products of several rows run in tiles of weight rows unpacked once
// for all activation rows (quantdot_tiled.go) when the kernel set has them.
type matmulTask struct {
	b       *Backend
	out, x  []float32
	rows    int
	w       *metal.Tensor
	wf32    []float32 // W as float32 when its dtype is F32
	in, dim int       // w.Cols, w.Rows
	// tiled: the pool's indices are tiles of height weight rows, each run
	// by b.k.q4Tile, or by the packed kernel when packed is set (a partial last
	// tile by the row kernel).
	tiled  bool
	height int
	packed *packedMatrix
}

func (b *Backend) MatMul(out, x []float32, rows int, w *metal.Tensor) {
	t := &b.mm
	*t = matmulTask{b: b, out: out[:rows*w.Rows], x: x[:rows*w.Cols], rows: rows, w: w, in: w.Cols, dim: w.Rows}
	switch w.DType {
	case metal.F32:
		t.wf32 = f32s(w.Data)
	case metal.Q8, metal.Q4:
		if b.k.packedFor(w.DType) != nil {
			t.packed = b.packed.get(w)
		}
		switch {
		case t.packed != nil:
			t.tiled, t.height = true, t.packed.height
		case w.DType == metal.Q4 && b.k.q4Tile != nil && rows >= q4TileMinRows:
			t.tiled, t.height = true, b.k.q4TileRows
		}
		// The row kernels' activations (and their permuted copy), unless
		// every weight row is in a whole tile.
		rowMajor := !t.tiled || w.Rows%t.height != 0
		b.quantizeActs(t.x, rows, w.Cols, rowMajor, t.tiled, actsShift(w.DType))
		if w.DType == metal.Q4 && b.k.q4Layout && rowMajor {
			b.acts.permuteQ4(rows, w.Cols)
		} else {
			b.acts.q4x = b.acts.q4x[:0]
		}
	}
	if t.tiled {
		b.pool.run(t, (w.Rows+t.height-1)/t.height, 1)
	} else {
		b.pool.run(t, w.Rows, 16)
	}
	*t = matmulTask{}
}

// quantizeActs quantizes x (rows×cols) into b.acts: in the row kernels'
// layout when rowMajor, and when tiled in the tile kernels', with biases
// −Σx << shift (actsShift).
func (b *Backend) quantizeActs(x []float32, rows, cols int, rowMajor, tiled bool, shift int) {
	if rowMajor {
		b.acts.size(rows, cols)
	}
	pack := -1
	if tiled {
		b.acts.tiled.size(rows, cols)
		pack = shift
	}
	b.runElementwise(elementwiseTask{op: opQuantize, x: x, rows: rows, cols: cols, rowMajor: rowMajor, pack: pack}, cols/32, 32*rows)
}

// quantTileAccs bounds the lane accumulators of one quantized tile (32
// bytes each): 256 of them keep a tile's results in L1.
const quantTileAccs = 256

func (t *matmulTask) run(lo, hi, worker int) {
	in := t.in
	if t.tiled {
		t.runTiles(lo, hi, worker)
		return
	}
	switch t.w.DType {
	case metal.Q8, metal.Q4:
		rowsq := t.b.k.rowsFor(t.w.DType)
		// Tiles of weight rows sized so their accumulators stay small.
		tile := max(1, quantTileAccs/t.rows)
		acc := t.b.workerAcc(worker, min(tile, hi-lo)*t.rows)
		for o := lo; o < hi; o += tile {
			rowsq(t.w, o, min(o+tile, hi), &t.b.acts, t.rows, acc, t.out)
		}
		return
	}
	for o := lo; o < hi; o++ {
		var wrow []float32
		if t.wf32 != nil {
			wrow = t.wf32[o*in : (o+1)*in]
		} else {
			wrow = t.b.workerScratch(worker, in)
			t.w.DequantizeRow(wrow, o)
		}
		for r := 0; r < t.rows; r++ {
			t.out[r*t.dim+o] = t.b.k.dotF32(wrow, t.x[r*in:(r+1)*in])
		}
	}
}

// runTiles computes the output rows of tiles lo..hi-1.
func (t *matmulTask) runTiles(lo, hi, worker int) {
	height := t.height
	if t.packed != nil {
		t.packed.prefetchTiles(lo, t.b.k.packedLead(t.rows))
	}
	acc := t.b.workerAcc(worker, tileAccs(t.rows, height))
	for i := lo; i < hi; i++ {
		o0, o1 := i*height, min((i+1)*height, t.dim)
		switch {
		case o1-o0 < height:
		case t.packed != nil:
			t.b.k.packedFor(t.packed.dtype)(t.packed, i, &t.b.acts, t.rows, acc, t.out, t.dim)
			continue
		default:
			t.b.k.q4Tile(t.w, o0, &t.b.acts, t.rows, acc, t.out)
			continue
		}
		// A partial last tile: row by row, in tiles whose accumulators stay small.
		tile := max(1, quantTileAccs/t.rows)
		racc := t.b.workerAcc(worker, min(tile, o1-o0)*t.rows)
		rowsq := t.b.k.rowsFor(t.w.DType)
		for o := o0; o < o1; o += tile {
			rowsq(t.w, o, min(o+tile, o1), &t.b.acts, t.rows, racc, t.out)
		}
	}
}

// u64s views little-endian 8-byte words as a slice without copying.
func u64s(b []byte) []uint64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// f32s views little-endian float32 bytes as a slice without copying (the
// platforms Splash runs on are little-endian and tolerate unaligned loads).
func f32s(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func (b *Backend) Embed(out []float32, w *metal.Tensor, ids []int32) {
	n := w.Cols
	for r, id := range ids {
		w.DequantizeRow(out[r*n:(r+1)*n], int(id))
	}
}
