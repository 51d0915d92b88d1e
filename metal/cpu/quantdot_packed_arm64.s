#include "textflag.h"
#include "quantdot_neon_arm64.h"

// Packed q4 and q8 matrix kernels for NEON with the dot-product extension.
// The q4 one is q4TileNEON (quantdot_tiled_arm64.s) without its pack step.
// The weights of a tile of eight rows were laid out at load time
// (packed.go) so that a group is 128 contiguous bytes (q8: 256), the dword
// slices q4TileNEON builds with transposes (slice k: rows 0-3 then rows
// 4-7), followed by the rows' eight float16 scales (16 bytes).
// The per-row work and the float order are q4TileNEON's, so results are
// bit-identical to the portable reference.

// P8_ARGS loads the packed kernels' arguments and readies the zeroing of
// the lane accumulators (R15 pairs of registers from R19).
#define P8_ARGS \
	MOVD w+0(FP), R0; \
	MOVD groups+8(FP), R11; \
	MOVD xq+16(FP), R12; \
	MOVD xs+24(FP), R13; \
	MOVD xgstep+40(FP), R21; \
	MOVD sgstep+48(FP), R22; \
	MOVD facc+64(FP), R20; \
	MOVD $0, R14; \
	MOVD rows+56(FP), R15; \
	LSL  $3, R15, R15; \
	MOVD R20, R19; \
	ZERO(0); \
	ZERO(1)

// P8_ROWS_START widens the group's eight scales, which follow its quants
// (rows 0-3 V9, 4-7 V10), and points R16, R17, R19 and R15 at the first
// activation row.
#define P8_ROWS_START \
	VLD1.P 16(R0), [V8.H8]; \
	FCVTL(9, 8); \
	FCVTL2(10, 8); \
	MOVD   R12, R16; \
	MOVD   R13, R17; \
	ADD    R14, R20, R19; \
	MOVD   rows+56(FP), R15

// P8_NEXT_GROUP steps to the next group's activations and accumulator
// slot; R11 counts down.
#define P8_NEXT_GROUP \
	ADD R21, R12, R12; \
	ADD R22, R13, R13; \
	ADD $32, R14, R14; \
	AND $255, R14, R14; \
	SUB $1, R11, R11

// P8_SUMS_START points R2, R3, R15 and R19 at the first row's outputs and
// lane sums.
#define P8_SUMS_START \
	MOVD out+72(FP), R2; \
	MOVD ostride+80(FP), R3; \
	MOVD rows+56(FP), R15; \
	MOVD R20, R19

// P8_SUM writes one activation row's eight outputs, lane sums in the
// reference order; R15 counts down.
#define P8_SUM \
	NEON_TILE_SUM; \
	VST1 [V16.S4, V17.S4], (R2); \
	ADD  R3, R2, R2; \
	SUB  $1, R15, R15

// func q4PackedNEON(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// w: the tile's group 0 block (128 bytes of quants and 16 of scales per
// group); the other arguments are q4TileNEON's (xbias is not read).
TEXT ·q4PackedNEON(SB), NOSPLIT, $0-88
	P8_ARGS
	VMOVI $15, V7.B16
	VMOVI $8, V11.B16

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
	P8_ROWS_START

p2row:
	NEON_TILE_ROW
	ADD  $256, R19, R19
	SUB  $1, R15, R15
	CBNZ R15, p2row

	P8_NEXT_GROUP
	CBNZ R11, p2group

	P8_SUMS_START

p2sum:
	P8_SUM
	CBNZ R15, p2sum
	RET

// func q8PackedNEON(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// q4PackedNEON for q8 weights (signed bytes as they are, 256 bytes a
// group): the eight slices load straight into V16..V31, in the registers
// the q4 kernel unpacks its nibbles to.
TEXT ·q8PackedNEON(SB), NOSPLIT, $0-88
	P8_ARGS

p8zero:
	VST1.P [V0.S4, V1.S4], 32(R19)
	SUB  $1, R15, R15
	CBNZ R15, p8zero

p8group:
	// Slices 0-7 into V16..V31: even registers rows 0-3, odd 4-7.
	VLD1.P 64(R0), [V16.B16, V17.B16, V18.B16, V19.B16]
	VLD1.P 64(R0), [V20.B16, V21.B16, V22.B16, V23.B16]
	VLD1.P 64(R0), [V24.B16, V25.B16, V26.B16, V27.B16]
	VLD1.P 64(R0), [V28.B16, V29.B16, V30.B16, V31.B16]
	P8_ROWS_START

p8row:
	NEON_TILE_ROW
	ADD  $256, R19, R19
	SUB  $1, R15, R15
	CBNZ R15, p8row

	P8_NEXT_GROUP
	CBNZ R11, p8group

	P8_SUMS_START

p8sum:
	P8_SUM
	CBNZ R15, p8sum
	RET
