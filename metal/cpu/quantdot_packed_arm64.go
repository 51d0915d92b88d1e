package cpu

// Packed q4 and q8 matrix kernels (quantdot_packed_arm64.s): q4TileNEON
// on weights already in its register layout (packed.go), and its q8 twin.

//go:noescape
func q4PackedNEON(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q8PackedNEON(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

// q4PackedRowsNEON sets out[r·dim + 8·tile + i], i < 8, for every
// activation row r < rows of a (tiled layout).
func q4PackedRowsNEON(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q4PackedNEON, 8, tileRowChunk, p, tile, a, rows, acc, out, dim)
}

// q8PackedRowsNEON is q4PackedRowsNEON for packed q8 matrices.
func q8PackedRowsNEON(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q8PackedNEON, 8, tileRowChunk, p, tile, a, rows, acc, out, dim)
}
