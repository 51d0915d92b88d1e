#include "textflag.h"
#include "quantdot_neon_arm64.h"

// Packed q4 matrix kernel for NEON with the dot-product extension:
// q4TileNEON (quantdot_tiled_arm64.s) without its pack step. The weights
// of a tile of eight rows were laid out at load time (packed.go) so that a
// group is 128 contiguous bytes, the dword slices q4TileNEON builds with
// transposes (slice k: rows 0-3 then rows 4-7), followed in a separate
// stream by the rows' eight float16 scales. The per-row work and the float
// order are q4TileNEON's, so results are bit-identical to the portable
// reference.

// func q4PackedNEON(w, ws *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// w: the tile's group 0 quants block (128 bytes per group); ws: its group
// 0 scales (16 bytes per group); the other arguments are q4TileNEON's
// (xbias is not read).
TEXT ·q4PackedNEON(SB), NOSPLIT, $0-96
	MOVD w+0(FP), R0
	MOVD ws+8(FP), R7
	MOVD groups+16(FP), R11
	MOVD xq+24(FP), R12
	MOVD xs+32(FP), R13
	MOVD xgstep+48(FP), R21
	MOVD sgstep+56(FP), R22
	MOVD facc+72(FP), R20
	MOVD $0, R14
	VMOVI $15, V7.B16
	VMOVI $8, V11.B16

	// Zero the lane accumulators: rows·8 pairs of registers.
	MOVD rows+64(FP), R15
	LSL  $3, R15, R15
	MOVD R20, R19
	ZERO(0)
	ZERO(1)

p2zero:
	VST1.P [V0.S4, V1.S4], 32(R19)
	SUB  $1, R15, R15
	CBNZ R15, p2zero

p2group:
	// Slices 0-1 into V16..V19 (low nibbles) and V24..V27 (high), slices
	// 2-3 into V20..V23 and V28..V31; even registers rows 0-3, odd 4-7.
	VLD1.P 64(R0), [V0.B16, V1.B16, V2.B16, V3.B16]
	NIBBLES(0, 16, 24)
	NIBBLES(1, 17, 25)
	NIBBLES(2, 18, 26)
	NIBBLES(3, 19, 27)
	VLD1.P 64(R0), [V0.B16, V1.B16, V2.B16, V3.B16]
	NIBBLES(0, 20, 28)
	NIBBLES(1, 21, 29)
	NIBBLES(2, 22, 30)
	NIBBLES(3, 23, 31)

	// Weight scales of the eight rows, widened: rows 0-3 V9, 4-7 V10.
	VLD1.P 16(R7), [V8.H8]
	FCVTL(9, 8)
	FCVTL2(10, 8)

	MOVD R12, R16
	MOVD R13, R17
	ADD  R14, R20, R19
	MOVD rows+64(FP), R15

p2row:
	NEON_TILE_ROW
	ADD  $256, R19, R19
	SUB  $1, R15, R15
	CBNZ R15, p2row

	ADD  R21, R12, R12
	ADD  R22, R13, R13
	ADD  $32, R14, R14
	AND  $255, R14, R14
	SUB  $1, R11, R11
	CBNZ R11, p2group

	// Lane sums in the reference order, eight outputs per activation row.
	MOVD out+80(FP), R2
	MOVD ostride+88(FP), R3
	MOVD rows+64(FP), R15
	MOVD R20, R19

p2sum:
	NEON_TILE_SUM
	VST1 [V16.S4, V17.S4], (R2)
	ADD  R3, R2, R2
	SUB  $1, R15, R15
	CBNZ R15, p2sum
	RET
