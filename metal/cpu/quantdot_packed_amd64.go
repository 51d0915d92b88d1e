package cpu

// Packed q4 and q8 matrix kernels (quantdot_packed32_amd64.s,
// quantdot_packed32row_amd64.s, quantdot_packed_amd64.s): q4TileVNNI on
// tiles of 32 rows, with kernels of its own for one activation row, and
// q4TileAVX2, on weights already in their register layout (packed.go).

//go:noescape
func q4Packed32VNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q8Packed32VNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q4PackedAVXVNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q8PackedAVXVNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q4PackedAVX2(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

// packedRowKernel is the signature of the one-row packed kernels
// (quantdot_packed32row_amd64.s).
type packedRowKernel func(w *byte, groups int, xq *int8, xs *float32, xbias *int32, facc, out *float32)

//go:noescape
func q4Packed32VNNIRow(w *byte, groups int, xq *int8, xs *float32, xbias *int32, facc, out *float32)

//go:noescape
func q8Packed32VNNIRow(w *byte, groups int, xq *int8, xs *float32, xbias *int32, facc, out *float32)

// q4PackedRowsVNNI sets out[r·dim + 32·tile + i], i < 32, for every
// activation row r < rows of a (tiled layout with the biases of q4).
func q4PackedRowsVNNI(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	if rows == 1 {
		packedRow(q4Packed32VNNIRow, p, tile, a, acc, out)
		return
	}
	packedRows(q4Packed32VNNI, 32, packed32RowChunk, p, tile, a, rows, acc, out, dim)
}

// q8PackedRowsVNNI is q4PackedRowsVNNI for packed q8 matrices.
func q8PackedRowsVNNI(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	if rows == 1 {
		packedRow(q8Packed32VNNIRow, p, tile, a, acc, out)
		return
	}
	packedRows(q8Packed32VNNI, 32, packed32RowChunk, p, tile, a, rows, acc, out, dim)
}

// packedRow runs a one-row kernel (quantdot_packed32row_amd64.s) over tile
// tile of p, 32 rows high: out[32·tile + i], i < 32, for the one
// activation row of a.
func packedRow(kernel packedRowKernel, p *packedMatrix, tile int, a *qacts, acc []laneAcc, out []float32) {
	groups := p.groups
	qb := tile * groups * p.blockBytes()
	// Bounds checks for everything the assembly reads or writes.
	_ = p.q[qb+groups*p.blockBytes()-1]
	_ = out[32*tile+31]
	x := &a.tiled
	_, _, _ = x.q[32*groups-1], x.scale[groups-1], x.bias[groups-1]
	facc := acc[:tileAccs(1, 32)]
	kernel(&p.q[qb], groups, &x.q[0], &x.scale[0], &x.bias[0], &facc[0][0], &out[32*tile])
}

// q4PackedRowsAVX2 is q4PackedRowsVNNI for tiles of eight rows.
func q4PackedRowsAVX2(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q4PackedAVX2, 8, tileRowChunk, p, tile, a, rows, acc, out, dim)
}

// q4PackedRowsAVXVNNI is q4PackedRowsAVX2 with AVX-VNNI.
func q4PackedRowsAVXVNNI(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q4PackedAVXVNNI, 8, tileRowChunk, p, tile, a, rows, acc, out, dim)
}

// q8PackedRowsAVXVNNI is q4PackedRowsAVXVNNI for packed q8 matrices.
func q8PackedRowsAVXVNNI(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q8PackedAVXVNNI, 8, tileRowChunk, p, tile, a, rows, acc, out, dim)
}
