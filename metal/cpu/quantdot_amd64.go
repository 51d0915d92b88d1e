package cpu

import (
	"golang.org/x/sys/cpu"

	"github.com/splash-inference/splash/metal"
)

// Blocked kernels (quantdot_amd64.s): each dots orows consecutive weight
// rows with rows activation rows (cols wide, consecutive in memory),
// processing the first blocks×8 groups of each pair, and stores the eight
// lane accumulators of the reference order in acc[o·rows + r]. A weight
// row stays in L1 while it meets every activation row.

//go:noescape
func q4BlocksAVX2(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)

//go:noescape
func q8BlocksAVX2(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)

//go:noescape
func q4BlocksVNNI(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)

//go:noescape
func q8BlocksVNNI(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)

const (
	q4AVX2 blockKernel = iota
	q8AVX2
	q4VNNI
	q8VNNI
)

func (k blockKernel) q4() bool       { return k == q4AVX2 || k == q4VNNI }
func (k blockKernel) permuted() bool { return k.q4() }

func callBlocks(k blockKernel, w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc) {
	switch k {
	case q4AVX2:
		q4BlocksAVX2(w, ws, xq, xs, xsum, blocks, rows, cols, orows, acc)
	case q8AVX2:
		q8BlocksAVX2(w, ws, xq, xs, xsum, blocks, rows, cols, orows, acc)
	case q4VNNI:
		q4BlocksVNNI(w, ws, xq, xs, xsum, blocks, rows, cols, orows, acc)
	case q8VNNI:
		q8BlocksVNNI(w, ws, xq, xs, xsum, blocks, rows, cols, orows, acc)
	}
}

func rowsQ4AVX2(t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	blockedTile(q4AVX2, t, o0, o1, a, rows, acc, out)
}

func rowsQ8AVX2(t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	blockedTile(q8AVX2, t, o0, o1, a, rows, acc, out)
}

func rowsQ4VNNI(t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	blockedTile(q4VNNI, t, o0, o1, a, rows, acc, out)
}

func rowsQ8VNNI(t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32) {
	blockedTile(q8VNNI, t, o0, o1, a, rows, acc, out)
}

// hasAVX2 reports AVX2 with the float16 conversions and FMA3 that the
// AVX2 sets' attention loops use (every AVX2 processor has them).
func hasAVX2() bool { return cpu.X86.HasAVX2 && cpu.X86.HasF16C && cpu.X86.HasFMA }

// hasVNNI reports VPDPBUSD on 512-bit registers with byte/word shifts
// (AVX512_VNNI, AVX512BW); x/sys/cpu also checks that the OS saves the
// AVX-512 state.
func hasVNNI() bool {
	return hasAVX2() && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512F
}

// availableKernels lists the optimised kernel sets this CPU can run, best
// first; tests check each against the portable reference.
func availableKernels() []kernels {
	var ks []kernels
	if hasVNNI() {
		ks = append(ks, kernels{name: "cpu/avx512vnni", rowsQ4: rowsQ4VNNI, rowsQ8: rowsQ8VNNI, q4Layout: true,
			q4Tile: q4TileRowsVNNI, q4TileRows: 16, q4Packed: q4PackedRowsVNNI, q8Packed: q8PackedRowsVNNI, packHeight: 32, fused: "avx512", packedFarRows: [2]int{2, packedVNNIFarRows}, quantGroups: quantGroupsAVX2Slices, dotF32: dotAVX2, axpy: axpyAVX2, axpyRows: axpyRowsAVX512, deltaRow: deltaRowAVX2,
			dotPeak: dotPeakVNNI, dotPeakOps: dotPeakVNNIOps, quantSpeedup: vnniSpeedup})
	}
	// AVX-VNNI: VPDPBUSD on ymm, for CPUs that have it without AVX-512
	// (Intel's client cores from Alder Lake on), on AVX2's packed tiles.
	if hasAVX2() && cpu.X86.HasAVXVNNI {
		ks = append(ks, kernels{name: "cpu/avxvnni", rowsQ4: rowsQ4AVX2, rowsQ8: rowsQ8AVX2, q4Layout: true,
			q4Tile: q4TileRowsAVX2, q4TileRows: 8, q4Packed: q4PackedRowsAVXVNNI, q8Packed: q8PackedRowsAVXVNNI, packHeight: 8, fused: "avx2", packedFarRows: [2]int{1, packedAVX2FarRows}, quantGroups: quantGroupsAVX2Slices, dotF32: dotAVX2, axpy: axpyAVX2, axpyRows: axpyRowsAVX2, deltaRow: deltaRowAVX2,
			dotPeak: dotPeakAVXVNNI, dotPeakOps: dotPeakAVXVNNIOps, quantSpeedup: avxvnniSpeedup})
	}
	if hasAVX2() {
		ks = append(ks, kernels{name: "cpu/avx2", rowsQ4: rowsQ4AVX2, rowsQ8: rowsQ8AVX2, q4Layout: true,
			q4Tile: q4TileRowsAVX2, q4TileRows: 8, q4Packed: q4PackedRowsAVX2, packHeight: 8, fused: "avx2", packedFarRows: [2]int{1, packedAVX2FarRows}, quantGroups: quantGroupsAVX2Slices, dotF32: dotAVX2, axpy: axpyAVX2, axpyRows: axpyRowsAVX2, deltaRow: deltaRowAVX2,
			dotPeak: dotPeakAVX2, dotPeakOps: dotPeakAVX2Ops, quantSpeedup: avx2Speedup})
	}
	return ks
}
