#include "textflag.h"
#include "quantdot_neon_arm64.h"
#include "quantgroup_neon_arm64.h"

// ADD Vd.4S, Vn.4S, Vm.4S; ADDV Sd, Vn.4S
#define ADD4S(d, n, m) WORD $(0x4EA08400 | ((m)<<16) | ((n)<<5) | (d))
#define ADDV4S(d, n) WORD $(0x4EB1B800 | ((n)<<5) | (d))

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
	GROUP_AMAX

	// scale = amax/127; inv = 1/scale, or 0 when scale is 0.
	FDIVS  F14, F16, F17
	FMOVS  F17, (R2)
	ADD    R7, R2, R2
	FDIVS  F17, F13, F24
	FCMPS  $(0.0), F17
	BNE    scaled
	VEOR   V24.B16, V24.B16, V24.B16

scaled:
	GROUP_SCALE
	GROUP_ROUND

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
	GROUP_NARROW
	VST1   [V24.B16, V25.B16], (R1)
	ADD    R6, R1, R1

	SUB  $1, R4, R4
	CBNZ R4, qgroup
	RET
