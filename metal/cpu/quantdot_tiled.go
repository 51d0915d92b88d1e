package cpu

import "github.com/splash-inference/splash/metal"

// Tiled matrix-matrix kernels: a tile of weight rows (16 for AVX-512, 8
// for AVX2: one per 32-bit lane of a vector register) is unpacked
// and transposed once per group into registers (lane i = weight row i) and
// used against every activation row, whose four-byte pieces are broadcast.
// The unpacking is paid once per tile instead of once per (weight row,
// activation row) pair, and the integer sums of a group need no horizontal
// reduction, so many activation rows cost little more than one. The float
// combination is the portable reference's, bit for bit (quantdot.go).

// tileFunc computes out[r·t.Rows + o] for the weight rows o0 <= o <
// o0+height of t (height: the kernel set's q4TileRows) and every
// activation row r < rows of a; acc is scratch of at least
// tileAccs(rows, height) entries.
type tileFunc func(t *metal.Tensor, o0 int, a *qacts, rows int, acc []laneAcc, out []float32)

const (
	// tileRowChunk bounds the activation rows of one kernel call, so its
	// lane accumulators (512 bytes per row) stay in L1.
	tileRowChunk = 64
	// packed32RowChunk bounds the activation rows of one call of a kernel
	// on tiles of 32 weight rows, whose lane accumulators take 1 KiB a row.
	packed32RowChunk = 32
	// q4TileMinRows is the smallest activation row count sent to a q4Tile
	// kernel. A single row (decode) stays on the blocked row kernels: they
	// read each weight row front to back with prefetching and stream a
	// matrix from memory faster than a tile's across-the-rows reads.
	q4TileMinRows = 2
)

// tileAccs is the scratch a tile of height weight rows and rows
// activation rows needs, in laneAccs: each activation row of a chunk has
// groupLanes lanes of height float32, which is height laneAccs.
func tileAccs(rows, height int) int {
	return min(rows, tileRowChunk) * height
}
