package cpu

import (
	"golang.org/x/sys/cpu"

	"github.com/splash-inference/splash/metal"
)

// NEON kernels with SDOT (quantdot_arm64.s), same contract as the amd64
// blocked kernels: weight rows against rows activation rows, whole
// blocks of eight groups, eight lane accumulators per row in acc.

//go:noescape
func q4BlocksNEON(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)

//go:noescape
func q8BlocksNEON(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)

const (
	q4NEON blockKernel = iota
	q8NEON
)

func (k blockKernel) q4() bool { return k == q4NEON }

// permuted: SDOT takes signed bytes, so low and high nibbles dot the
// natural activation halves directly.
func (k blockKernel) permuted() bool { return false }

func callBlocks(k blockKernel, w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc) {
	switch k {
	case q4NEON:
		q4BlocksNEON(w, ws, xq, xs, xsum, blocks, rows, cols, orows, acc)
	case q8NEON:
		q8BlocksNEON(w, ws, xq, xs, xsum, blocks, rows, cols, orows, acc)
	}
}

func rowsQ4NEON(t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	blockedTile(q4NEON, t, o0, o1, a, rows, acc, out)
}

func rowsQ8NEON(t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	blockedTile(q8NEON, t, o0, o1, a, rows, acc, out)
}

// availableKernels lists the optimised kernel sets this CPU can run: NEON
// with the dot-product extension (and half-precision conversion, which
// every ARMv8 NEON has).
func availableKernels() []kernels {
	if cpu.ARM64.HasASIMD && cpu.ARM64.HasASIMDDP {
		return []kernels{{name: "cpu/neon", fused: "neon", rowsQ4: rowsQ4NEON, rowsQ8: rowsQ8NEON,
			q4Tile: q4TileRowsNEON, q4TileRows: 8, q4Packed: q4PackedRowsNEON, q8Packed: q8PackedRowsNEON, q8Signed: true, packHeight: 8, quantGroups: quantGroupsNEONSlices, dotF32: dotNEON, axpy: axpyNEON, axpyRows: axpyRowsNEON, deltaRow: deltaRowNEON,
			dotPeak: dotPeakSDOT, dotPeakOps: dotPeakSDOTOps, quantSpeedup: neonSpeedup}}
	}
	return nil
}
