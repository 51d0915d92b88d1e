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
type matmulTask struct {
	b       *Backend
	out, x  []float32
	rows    int
	w       *metal.Tensor
	wf32    []float32 // W as float32 when its dtype is F32
	in, dim int       // w.Cols, w.Rows
}

func (b *Backend) MatMul(out, x []float32, rows int, w *metal.Tensor) {
	t := &b.mm
	*t = matmulTask{b: b, out: out[:rows*w.Rows], x: x[:rows*w.Cols], rows: rows, w: w, in: w.Cols, dim: w.Rows}
	switch w.DType {
	case metal.F32:
		t.wf32 = f32s(w.Data)
	case metal.Q8, metal.Q4:
		b.acts.quantize(t.x, rows, w.Cols)
		if w.DType == metal.Q4 && b.k.q4Layout {
			b.acts.permuteQ4(rows, w.Cols)
		} else {
			b.acts.q4x = b.acts.q4x[:0]
		}
	}
	b.pool.run(t, w.Rows, 16)
	*t = matmulTask{}
}

// quantTileAccs bounds the lane accumulators of one quantized tile (32
// bytes each): 256 of them keep a tile's results in L1.
const quantTileAccs = 256

func (t *matmulTask) run(lo, hi, worker int) {
	in := t.in
	switch t.w.DType {
	case metal.Q8, metal.Q4:
		rowsq := t.b.k.rowsQ8
		if t.w.DType == metal.Q4 {
			rowsq = t.b.k.rowsQ4
		}
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
