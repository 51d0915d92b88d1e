package cpu

// Packed q4 matrix kernels (quantdot_packed32_amd64.s,
// quantdot_packed_amd64.s): q4TileVNNI on tiles of 32 rows and q4TileAVX2
// on weights already in their register layout (packed.go).

//go:noescape
func q4Packed32VNNI(w, ws *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q8Packed32VNNI(w, ws *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

//go:noescape
func q4PackedAVX2(w, ws *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)

// q4PackedRowsVNNI sets out[r·dim + 32·tile + i], i < 32, for every
// activation row r < rows of a (tiled layout with the biases of q4).
func q4PackedRowsVNNI(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q4Packed32VNNI, 32, packed32RowChunk, p, tile, a, rows, acc, out, dim)
}

// q8PackedRowsVNNI is q4PackedRowsVNNI for packed q8 matrices.
func q8PackedRowsVNNI(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q8Packed32VNNI, 32, packed32RowChunk, p, tile, a, rows, acc, out, dim)
}

// q4PackedRowsAVX2 is q4PackedRowsVNNI for tiles of eight rows.
func q4PackedRowsAVX2(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int) {
	packedRows(q4PackedAVX2, 8, tileRowChunk, p, tile, a, rows, acc, out, dim)
}
