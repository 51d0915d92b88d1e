#include "textflag.h"
#include "quantdot_neon_arm64.h"

// Tiled q4 matrix-matrix kernel for NEON with the dot-product extension,
// the arm64 form of q4TileVNNI (quantdot_tiled_amd64.s): eight weight
// rows, two 4-lane registers per dword of a group (lane i = weight row
// i), unpacked once per group to signed bytes q = u − 8 and used against
// every activation row with SDOT by element (the activation's dword k
// broadcast), so Σ q·x needs no offset correction. The float part and the
// final lane sums are the portable reference's (quantdot.go), bit for bit.

// UNPACK4 transposes the 16-byte groups of four weight rows in V0..V3
// (V4, V5, V6, V12 scratch) and stores the signed nibbles: lane i of
// V(lo+2k) = row i's bytes 4k..4k+3 low nibbles − 8 (elements 4k..4k+3),
// of V(lo+8+2k) the high nibbles − 8 (elements 16+4k..).
#define UNPACK4(lo) \
	TRN1S(4, 0, 1); \
	TRN2S(5, 0, 1); \
	TRN1S(6, 2, 3); \
	TRN2S(12, 2, 3); \
	TRN1D(0, 4, 6); \
	TRN1D(1, 5, 12); \
	TRN2D(2, 4, 6); \
	TRN2D(3, 5, 12); \
	VAND V7.B16, V0.B16, V4.B16; \
	SUB16B(lo, 4, 11); \
	VUSHR $4, V0.B16, V4.B16; \
	SUB16B(lo+8, 4, 11); \
	VAND V7.B16, V1.B16, V4.B16; \
	SUB16B(lo+2, 4, 11); \
	VUSHR $4, V1.B16, V4.B16; \
	SUB16B(lo+10, 4, 11); \
	VAND V7.B16, V2.B16, V4.B16; \
	SUB16B(lo+4, 4, 11); \
	VUSHR $4, V2.B16, V4.B16; \
	SUB16B(lo+12, 4, 11); \
	VAND V7.B16, V3.B16, V4.B16; \
	SUB16B(lo+6, 4, 11); \
	VUSHR $4, V3.B16, V4.B16; \
	SUB16B(lo+14, 4, 11)

// LOAD4 loads the current group (16 bytes) of the four weight rows at
// R2, R2+R1, R2+2·R1, R2+3·R1 into V0..V3, leaving R2 four rows on.
#define LOAD4 \
	VLD1 (R2), [V0.B16]; \
	ADD R1, R2, R2; \
	VLD1 (R2), [V1.B16]; \
	ADD R1, R2, R2; \
	VLD1 (R2), [V2.B16]; \
	ADD R1, R2, R2; \
	VLD1 (R2), [V3.B16]; \
	ADD R1, R2, R2

// SCALE loads weight row i's f16 scale of the group (at R9, then steps R9
// one row on) into lane i of V8.
#define SCALE(i) \
	MOVHU (R9), R10; \
	VMOV R10, V8.H[i]; \
	ADD R8, R9, R9

// func q4TileNEON(w, ws *byte, wstride, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// Arguments as q4TileVNNI's, for eight weight rows; xbias is not read
// (signed weights need no offset correction). facc holds rows·8·8
// float32: facc[r][g mod 8][i].
TEXT ·q4TileNEON(SB), NOSPLIT, $0-104
	MOVD w+0(FP), R0
	MOVD wstride+16(FP), R1
	MOVD ws+8(FP), R7
	MOVD groups+24(FP), R11
	LSL  $1, R11, R8
	MOVD xq+32(FP), R12
	MOVD xs+40(FP), R13
	MOVD xgstep+56(FP), R21
	MOVD sgstep+64(FP), R22
	MOVD facc+80(FP), R20
	MOVD $0, R14
	VMOVI $15, V7.B16
	VMOVI $8, V11.B16

	// Zero the lane accumulators: rows·8 pairs of registers.
	MOVD rows+72(FP), R15
	LSL  $3, R15, R15
	MOVD R20, R19
	ZERO(0)
	ZERO(1)

n2zero:
	VST1.P [V0.S4, V1.S4], 32(R19)
	SUB  $1, R15, R15
	CBNZ R15, n2zero

n2group:
	// Pack rows 0-3 into V16.., rows 4-7 into V17.. (even/odd registers).
	MOVD R0, R2
	LOAD4
	UNPACK4(16)
	LOAD4
	UNPACK4(17)

	// Weight scales of the eight rows, widened: rows 0-3 V9, 4-7 V10.
	MOVD R7, R9
	SCALE(0)
	SCALE(1)
	SCALE(2)
	SCALE(3)
	SCALE(4)
	SCALE(5)
	SCALE(6)
	SCALE(7)
	FCVTL(9, 8)
	FCVTL2(10, 8)

	MOVD R12, R16
	MOVD R13, R17
	ADD  R14, R20, R19
	MOVD rows+72(FP), R15

n2row:
	NEON_TILE_ROW
	ADD  $256, R19, R19
	SUB  $1, R15, R15
	CBNZ R15, n2row

	ADD  $16, R0, R0
	ADD  $2, R7, R7
	ADD  R21, R12, R12
	ADD  R22, R13, R13
	ADD  $32, R14, R14
	AND  $255, R14, R14
	SUB  $1, R11, R11
	CBNZ R11, n2group

	// Lane sums in the reference order, eight outputs per activation row.
	MOVD out+88(FP), R2
	MOVD ostride+96(FP), R3
	MOVD rows+72(FP), R15
	MOVD R20, R19

n2sum:
	NEON_TILE_SUM
	VST1 [V16.S4, V17.S4], (R2)
	ADD  R3, R2, R2
	SUB  $1, R15, R15
	CBNZ R15, n2sum
	RET
