package cpu

import (
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

//go:noescape
func q4TileNEON(w, ws *byte, wstride, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

// q4TileRowsNEON is the tiled q4 kernel (quantdot_tiled.go) for tiles of
// 8 weight rows.
func q4TileRowsNEON(t *metal.Tensor, o0 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	const height = 8
	cols, groups := t.Cols, t.Cols/metal.GroupSize
	w, _ := quantRow(t, o0)
	wl, wsl := quantRow(t, o0+height-1)
	_, ws0 := quantRow(t, o0)
	// Bounds checks for everything the assembly reads or writes.
	_, _ = wl[len(wl)-1], wsl[len(wsl)-1]
	_ = out[(rows-1)*t.Rows+o0+height-1]
	x := &a.tiled
	_, _, _ = x.q[rows*cols-1], x.scale[rows*groups-1], x.bias[rows*groups-1]
	facc := acc[:tileAccs(rows, height)]
	for r0 := 0; r0 < rows; r0 += tileRowChunk {
		n := min(tileRowChunk, rows-r0)
		q4TileNEON(&w[0], &ws0[0], cols/2, groups,
			&x.q[r0*cols], &x.scale[r0*groups], &x.bias[r0*groups], 32*n, 4*n, n,
			&facc[0][0], &out[r0*t.Rows+o0], int(unsafe.Sizeof(float32(0)))*t.Rows)
	}
}
