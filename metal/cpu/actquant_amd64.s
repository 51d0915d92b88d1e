#include "textflag.h"

DATA quantAbs<>+0(SB)/4, $0x7fffffff
GLOBL quantAbs<>(SB), RODATA|NOPTR, $4
DATA quant127<>+0(SB)/4, $127.0
GLOBL quant127<>(SB), RODATA|NOPTR, $4
DATA quantOne<>+0(SB)/4, $1.0
GLOBL quantOne<>(SB), RODATA|NOPTR, $4

// VPERMD order that undoes the lane interleave of VPACKSSDW/VPACKSSWB.
DATA quantPerm<>+0(SB)/4, $0
DATA quantPerm<>+4(SB)/4, $4
DATA quantPerm<>+8(SB)/4, $1
DATA quantPerm<>+12(SB)/4, $5
DATA quantPerm<>+16(SB)/4, $2
DATA quantPerm<>+20(SB)/4, $6
DATA quantPerm<>+24(SB)/4, $3
DATA quantPerm<>+28(SB)/4, $7
GLOBL quantPerm<>(SB), RODATA|NOPTR, $32

// func quantGroupsAVX2(x *float32, q *int8, scale *float32, sum *int32, groups, qstep, sstep int, mul int32)
//
// quantGroupsRef (actquant.go) for groups groups of 32: the same max,
// division, reciprocal, float32 product and round-to-nearest-even
// (VCVTPS2DQ under Go's default rounding mode), so the same bits; group g's
// quants at q + g·qstep bytes, its scale and mul·Σq at scale and sum +
// g·sstep bytes.
TEXT ·quantGroupsAVX2(SB), NOSPLIT, $0-60
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	MOVQ scale+16(FP), R8
	MOVQ sum+24(FP), R9
	MOVQ groups+32(FP), CX
	MOVQ qstep+40(FP), R10
	MOVQ sstep+48(FP), R11
	MOVL mul+56(FP), AX
	VMOVD AX, X10 // lane 0: the one stored
	VBROADCASTSS quantAbs<>(SB), Y15
	VBROADCASTSS quant127<>(SB), X14
	VBROADCASTSS quantOne<>(SB), X13
	VXORPS       X12, X12, X12
	VMOVDQU      quantPerm<>(SB), Y11

qgroup:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3

	// amax in every lane of X4.
	VANDPS       Y15, Y0, Y4
	VANDPS       Y15, Y1, Y5
	VANDPS       Y15, Y2, Y6
	VANDPS       Y15, Y3, Y7
	VMAXPS       Y5, Y4, Y4
	VMAXPS       Y7, Y6, Y6
	VMAXPS       Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0x4e, X4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0xb1, X4, X5
	VMAXPS       X5, X4, X4

	// scale = amax/127; inv = 1/scale, or 0 when scale is 0.
	VDIVPS   X14, X4, X5
	VMOVSS   X5, (R8)
	VDIVPS   X5, X13, X6
	VCMPPS   $4, X12, X5, X7
	VANDPS   X7, X6, X6
	VINSERTF128 $1, X6, Y6, Y6

	VMULPS    Y6, Y0, Y0
	VMULPS    Y6, Y1, Y1
	VMULPS    Y6, Y2, Y2
	VMULPS    Y6, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3

	// Sum of the quants.
	VPADDD       Y1, Y0, Y8
	VPADDD       Y3, Y2, Y9
	VPADDD       Y9, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD       X9, X8, X8
	VPSHUFD      $0x4e, X8, X9
	VPADDD       X9, X8, X8
	VPSHUFD      $0xb1, X8, X9
	VPADDD       X9, X8, X8
	VPMULLD      X10, X8, X8
	VMOVD        X8, (R9)

	// To bytes, in order.
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y11, Y0
	VMOVDQU   Y0, (DI)

	ADDQ $128, SI
	ADDQ R10, DI
	ADDQ R11, R8
	ADDQ R11, R9
	DECQ CX
	JNE  qgroup
	VZEROUPPER
	RET
