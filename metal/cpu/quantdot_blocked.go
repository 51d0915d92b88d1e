//go:build amd64 || arm64

package cpu

import "github.com/splash-inference/splash/metal"

// blockKernel names one of the assembly kernels. It is a constant, not a
// func value, so escape analysis sees the accumulators stay put.
type blockKernel uint8

// Each architecture file defines its kernels as blockKernel constants,
// k.q4() (the weights are q4), k.permuted() (the kernel reads qacts.q4x)
// and callBlocks, which runs kernel k.

// blockedTile computes out[r·t.Rows + o] = row o of the quantized tensor
// t dotted with activation row r of a, for o0 <= o < o1 and r < rows.
// Kernel k runs the whole blocks of eight groups of every (o, r) pair in
// one call, so a weight row is read once for all activation rows and the
// call cost is shared by many weight rows; the remaining groups and the lane
// sums use the portable code, so every result is the reference's bit for
// bit. acc has at least (o1-o0)·rows entries.
func blockedTile(k blockKernel, t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	cols := t.Cols
	groups := cols / 32
	blocks := groups / groupLanes
	orows := o1 - o0
	acc = acc[:orows*rows]
	clear(acc)
	if blocks > 0 && rows > 0 && orows > 0 {
		n := blocks * groupLanes
		w0, ws0 := quantRow(t, o0)
		wl, wsl := quantRow(t, o1-1)
		xq := a.q
		if k.permuted() {
			xq = a.q4x
		}
		// Bounds checks for everything the assembly reads: weight rows are
		// consecutive in t.Data, so the last row's blocks bound them all.
		_, _ = wl[n*len(wl)/groups-1], wsl[2*n-1]
		_ = xq[(rows-1)*cols+n*32-1]
		_, _ = a.scale[(rows-1)*groups+n-1], a.sum[(rows-1)*groups+n-1]
		callBlocks(k, &w0[0], &ws0[0], &xq[0], &a.scale[0], &a.sum[0], blocks, rows, cols, orows, &acc[0])
	}
	tail := blocks * groupLanes
	for i := 0; i < orows; i++ {
		o := o0 + i
		for r := 0; r < rows; r++ {
			ra := &acc[i*rows+r]
			if tail < groups {
				w, ws := quantRow(t, o)
				if k.q4() {
					accumQ4(ra, w, ws, a.row(r, cols), tail)
				} else {
					accumQ8(ra, w, ws, a.row(r, cols), tail)
				}
			}
			out[r*t.Rows+o] = ra.sum()
		}
	}
}
