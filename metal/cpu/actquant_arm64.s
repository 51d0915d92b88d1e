#include "textflag.h"
#include "quantdot_neon_arm64.h"

// FABS Vd.4S, Vn.4S; FMAX Vd.4S, Vn.4S, Vm.4S; FMAXV Sd, Vn.4S
#define FABS4S(d, n) WORD $(0x4EA0F800 | ((n)<<5) | (d))
#define FMAX4S(d, n, m) WORD $(0x4E20F400 | ((m)<<16) | ((n)<<5) | (d))
#define FMAXV4S(d, n) WORD $(0x6E30F800 | ((n)<<5) | (d))
// FCVTNS Vd.4S, Vn.4S (round to nearest, ties to even)
#define FCVTNS4S(d, n) WORD $(0x4E21A800 | ((n)<<5) | (d))
// ADD Vd.4S, Vn.4S, Vm.4S; ADDV Sd, Vn.4S
#define ADD4S(d, n, m) WORD $(0x4EA08400 | ((m)<<16) | ((n)<<5) | (d))
#define ADDV4S(d, n) WORD $(0x4EB1B800 | ((n)<<5) | (d))
// SQXTN(2) Vd.4H(8H), Vn.4S; SQXTN(2) Vd.8B(16B), Vn.8H
#define SQXTNH(d, n) WORD $(0x0E614800 | ((n)<<5) | (d))
#define SQXTN2H(d, n) WORD $(0x4E614800 | ((n)<<5) | (d))
#define SQXTNB(d, n) WORD $(0x0E214800 | ((n)<<5) | (d))
#define SQXTN2B(d, n) WORD $(0x4E214800 | ((n)<<5) | (d))

// func quantGroupsNEON(x *float32, q *int8, scale *float32, sum *int32, groups, qstep, sstep int, mul int32)
//
// quantGroupsRef (actquant.go) for groups groups of 32: the same max,
// division, reciprocal, float32 product and round-to-nearest-even
// (FCVTNS), so the same bits; group g's quants at q + g·qstep bytes, its
// scale and mul·Σq at scale and sum + g·sstep bytes.
TEXT ·quantGroupsNEON(SB), NOSPLIT, $0-60
	MOVD  x+0(FP), R0
	MOVD  q+8(FP), R1
	MOVD  scale+16(FP), R2
	MOVD  sum+24(FP), R3
	MOVD  groups+32(FP), R4
	MOVD  qstep+40(FP), R6
	MOVD  sstep+48(FP), R7
	MOVW  mul+56(FP), R8
	MOVW  $0x42fe0000, R5 // 127.0
	FMOVS R5, F14
	FMOVS $1.0, F13

qgroup:
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]

	// amax
	FABS4S(16, 0)
	FABS4S(17, 1)
	FABS4S(18, 2)
	FABS4S(19, 3)
	FABS4S(20, 4)
	FABS4S(21, 5)
	FABS4S(22, 6)
	FABS4S(23, 7)
	FMAX4S(16, 16, 17)
	FMAX4S(18, 18, 19)
	FMAX4S(20, 20, 21)
	FMAX4S(22, 22, 23)
	FMAX4S(16, 16, 18)
	FMAX4S(20, 20, 22)
	FMAX4S(16, 16, 20)
	FMAXV4S(16, 16)

	// scale = amax/127; inv = 1/scale, or 0 when scale is 0.
	FDIVS  F14, F16, F17
	FMOVS  F17, (R2)
	ADD    R7, R2, R2
	FDIVS  F17, F13, F24
	FCMPS  $(0.0), F17
	BNE    scaled
	VEOR   V24.B16, V24.B16, V24.B16

scaled:
	FMULE(0, 0, 24)
	FMULE(1, 1, 24)
	FMULE(2, 2, 24)
	FMULE(3, 3, 24)
	FMULE(4, 4, 24)
	FMULE(5, 5, 24)
	FMULE(6, 6, 24)
	FMULE(7, 7, 24)
	FCVTNS4S(0, 0)
	FCVTNS4S(1, 1)
	FCVTNS4S(2, 2)
	FCVTNS4S(3, 3)
	FCVTNS4S(4, 4)
	FCVTNS4S(5, 5)
	FCVTNS4S(6, 6)
	FCVTNS4S(7, 7)

	// Sum of the quants.
	ADD4S(16, 0, 1)
	ADD4S(17, 2, 3)
	ADD4S(18, 4, 5)
	ADD4S(19, 6, 7)
	ADD4S(16, 16, 17)
	ADD4S(18, 18, 19)
	ADD4S(16, 16, 18)
	ADDV4S(16, 16)
	FMOVS F16, R9
	MULW  R8, R9, R9
	MOVW  R9, (R3)
	ADD   R7, R3, R3

	// To bytes, in order (every quant is within ±127: no saturation).
	SQXTNH(20, 0)
	SQXTN2H(20, 1)
	SQXTNH(21, 2)
	SQXTN2H(21, 3)
	SQXTNH(22, 4)
	SQXTN2H(22, 5)
	SQXTNH(23, 6)
	SQXTN2H(23, 7)
	SQXTNB(24, 20)
	SQXTN2B(24, 21)
	SQXTNB(25, 22)
	SQXTN2B(25, 23)
	VST1   [V24.B16, V25.B16], (R1)
	ADD    R6, R1, R1

	SUB  $1, R4, R4
	CBNZ R4, qgroup
	RET
