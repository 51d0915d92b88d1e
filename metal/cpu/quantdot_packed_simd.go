//go:build amd64 || arm64

package cpu

import "unsafe"

// packedKernel is the signature of the packed q4 assembly kernels
// (quantdot_packed_*.s).
type packedKernel func(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

// packedRows runs a packed kernel over tile tile of p, height rows high,
// in chunks of chunk (at most tileRowChunk) activation rows.
func packedRows(kernel packedKernel, height, chunk int, p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	groups := p.groups
	cols := 32 * groups
	qb := tile * groups * p.blockBytes()
	// Bounds checks for everything the assembly reads or writes.
	_ = p.q[qb+groups*p.blockBytes()-1]
	o0 := tile * height
	_ = out[(rows-1)*dim+o0+height-1]
	x := &a.tiled
	_, _, _ = x.q[rows*cols-1], x.scale[rows*groups-1], x.bias[rows*groups-1]
	facc := acc[:tileAccs(rows, height)]
	// The activations are laid out in blocks of tileRowChunk rows, group
	// by group (qacts.tiled); a call takes chunk rows of one block.
	for r0 := 0; r0 < rows; r0 += tileRowChunk {
		n := min(tileRowChunk, rows-r0)
		for s := 0; s < n; s += chunk {
			m := min(chunk, n-s)
			kernel(&p.q[qb], groups,
				&x.q[r0*cols+32*s], &x.scale[r0*groups+s], &x.bias[r0*groups+s], 32*n, 4*n, m,
				&facc[0][0], &out[(r0+s)*dim+o0], int(unsafe.Sizeof(float32(0)))*dim)
		}
	}
}
