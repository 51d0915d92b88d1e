package cpu

import (
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

// Tiled q4 matrix-matrix kernels (quantdot_tiled_amd64.s): a tile of
// weight rows, unpacked and transposed once per group, against every
// activation row. AVX-512 VNNI tiles have 16 rows, AVX2 tiles 8.

//go:noescape
func q4TileVNNI(w, ws *byte, wstride, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q4TileAVX2(w, ws *byte, wstride, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int, wsidx *int32)

// q4TileRowsVNNI sets out[r·t.Rows + o] for the 16 weight rows o0 <= o <
// o0+16 of the q4 tensor t and every activation row r < rows of a (whose
// tiled layout has the biases of q4, −8·Σx). acc holds at least
// tileAccs(rows, 16) entries.
func q4TileRowsVNNI(t *metal.Tensor, o0 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	const height = 16
	cols, groups := t.Cols, t.Cols/metal.GroupSize
	w, _ := quantRow(t, o0)
	wl, wsl := quantRow(t, o0+height-1)
	// The scale gather of a last odd group reads the two bytes before its
	// scale; for a single group that is before row o0's scales.
	wsOff := t.ScaleOffset() + 2*o0*groups
	// Bounds checks for everything the assembly reads or writes.
	_, _, _ = wl[len(wl)-1], wsl[len(wsl)-1], t.Data[wsOff-2]
	_ = out[(rows-1)*t.Rows+o0+height-1]
	x := &a.tiled
	_, _, _ = x.q[rows*cols-1], x.scale[rows*groups-1], x.bias[rows*groups-1]
	facc := acc[:tileAccs(rows, height)]
	for r0 := 0; r0 < rows; r0 += tileRowChunk {
		n := min(tileRowChunk, rows-r0)
		q4TileVNNI(&w[0], &t.Data[wsOff], cols/2, groups,
			&x.q[r0*cols], &x.scale[r0*groups], &x.bias[r0*groups], 32*n, 4*n, n,
			&facc[0][0], &out[r0*t.Rows+o0], int(unsafe.Sizeof(float32(0)))*t.Rows)
	}
}

// q4TileRowsAVX2 is q4TileRowsVNNI for tiles of 8 weight rows.
func q4TileRowsAVX2(t *metal.Tensor, o0 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	const height = 8
	cols, groups := t.Cols, t.Cols/metal.GroupSize
	w, _ := quantRow(t, o0)
	wl, wsl := quantRow(t, o0+height-1)
	// Each group's scale gather reads the dword ending with the scale.
	wsOff := t.ScaleOffset() + 2*o0*groups
	_, _, _ = wl[len(wl)-1], wsl[len(wsl)-1], t.Data[wsOff-2]
	_ = out[(rows-1)*t.Rows+o0+height-1]
	x := &a.tiled
	_, _, _ = x.q[rows*cols-1], x.scale[rows*groups-1], x.bias[rows*groups-1]
	// Byte offsets of the eight rows' scales, for the gather.
	var wsidx [height]int32
	for i := range wsidx {
		wsidx[i] = int32(i * 2 * groups)
	}
	facc := acc[:tileAccs(rows, height)]
	for r0 := 0; r0 < rows; r0 += tileRowChunk {
		n := min(tileRowChunk, rows-r0)
		q4TileAVX2(&w[0], &t.Data[wsOff], cols/2, groups,
			&x.q[r0*cols], &x.scale[r0*groups], &x.bias[r0*groups], 32*n, 4*n, n,
			&facc[0][0], &out[r0*t.Rows+o0], int(unsafe.Sizeof(float32(0)))*t.Rows, &wsidx[0])
	}
}
