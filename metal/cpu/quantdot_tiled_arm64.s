#include "textflag.h"

// Tiled q4 matrix-matrix kernel for NEON with the dot-product extension,
// the arm64 form of q4TileVNNI (quantdot_tiled_amd64.s): eight weight
// rows, two 4-lane registers per dword of a group (lane i = weight row
// i), unpacked once per group to signed bytes q = u − 8 and used against
// every activation row with SDOT by element (the activation's dword k
// broadcast), so Σ q·x needs no offset correction. The float part and the
// final lane sums are the portable reference's (quantdot.go), bit for bit.
// Instructions the Go assembler lacks are encoded with WORD.

// SDOT Vd.4S, Vn.16B, Vm.4B[i]
#define SDOTE(d, n, m, i) WORD $(0x4F80E000 | (((i)&1)<<21) | ((m)<<16) | (((i)>>1)<<11) | ((n)<<5) | (d))
// TRN1/TRN2 of 32-bit (S) and 64-bit (D) elements
#define TRN1S(d, n, m) WORD $(0x4E802800 | ((m)<<16) | ((n)<<5) | (d))
#define TRN2S(d, n, m) WORD $(0x4E806800 | ((m)<<16) | ((n)<<5) | (d))
#define TRN1D(d, n, m) WORD $(0x4EC02800 | ((m)<<16) | ((n)<<5) | (d))
#define TRN2D(d, n, m) WORD $(0x4EC06800 | ((m)<<16) | ((n)<<5) | (d))
// SUB Vd.16B, Vn.16B, Vm.16B
#define SUB16B(d, n, m) WORD $(0x6E208400 | ((m)<<16) | ((n)<<5) | (d))
// SCVTF Vd.4S, Vn.4S; FCVTL/FCVTL2 Vd.4S from the low/high four halves
#define SCVTF4S(d, n) WORD $(0x4E21D800 | ((n)<<5) | (d))
#define FCVTL(d, n) WORD $(0x0E217800 | ((n)<<5) | (d))
#define FCVTL2(d, n) WORD $(0x4E217800 | ((n)<<5) | (d))
// FMUL/FADD Vd.4S, Vn.4S, Vm.4S; FMULE: FMUL Vd.4S, Vn.4S, Vm.S[0]
#define FMUL4S(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FADD4S(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FMULE(d, n, m) WORD $(0x4F809000 | ((m)<<16) | ((n)<<5) | (d))
// MOVI Vd.16B, #0
#define ZERO(d) WORD $(0x4F000400 | (d))

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
	VLD1.P 32(R16), [V0.B16, V1.B16]
	ZERO(3)
	ZERO(4)
	SDOTE(3, 16, 0, 0)
	SDOTE(4, 17, 0, 0)
	SDOTE(3, 18, 0, 1)
	SDOTE(4, 19, 0, 1)
	SDOTE(3, 20, 0, 2)
	SDOTE(4, 21, 0, 2)
	SDOTE(3, 22, 0, 3)
	SDOTE(4, 23, 0, 3)
	SDOTE(3, 24, 1, 0)
	SDOTE(4, 25, 1, 0)
	SDOTE(3, 26, 1, 1)
	SDOTE(4, 27, 1, 1)
	SDOTE(3, 28, 1, 2)
	SDOTE(4, 29, 1, 2)
	SDOTE(3, 30, 1, 3)
	SDOTE(4, 31, 1, 3)
	SCVTF4S(3, 3)
	SCVTF4S(4, 4)
	FMOVS.P 4(R17), F2
	FMULE(5, 9, 2)
	FMULE(6, 10, 2)
	FMUL4S(5, 5, 3)
	FMUL4S(6, 6, 4)
	VLD1 (R19), [V12.S4, V13.S4]
	FADD4S(12, 12, 5)
	FADD4S(13, 13, 6)
	VST1 [V12.S4, V13.S4], (R19)
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
	VLD1.P 64(R19), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R19), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R19), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R19), [V12.S4, V13.S4, V14.S4, V15.S4]
	// lane L is V(2L), V(2L+1): a0+a4, a2+a6, then a1+a5, a3+a7
	FADD4S(16, 0, 8)
	FADD4S(17, 1, 9)
	FADD4S(18, 4, 12)
	FADD4S(19, 5, 13)
	FADD4S(16, 16, 18)
	FADD4S(17, 17, 19)
	FADD4S(20, 2, 10)
	FADD4S(21, 3, 11)
	FADD4S(22, 6, 14)
	FADD4S(23, 7, 15)
	FADD4S(20, 20, 22)
	FADD4S(21, 21, 23)
	FADD4S(16, 16, 20)
	FADD4S(17, 17, 21)
	VST1 [V16.S4, V17.S4], (R2)
	ADD  R3, R2, R2
	SUB  $1, R15, R15
	CBNZ R15, n2sum
	RET
