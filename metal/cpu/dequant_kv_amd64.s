#include "textflag.h"

// The q8 KV cache's widening (metal.DequantizeKV): each group of 32 int8
// sign-extended, converted to float32 (exact) and multiplied by the
// group's float16 scale widened (exact: the products fit a float32), so
// the floats are the portable loop's.

// func dequantKVAVX512(dst *float32, q *int8, scales *uint16, groups int)
TEXT ·dequantKVAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ scales+16(FP), DX
	MOVQ groups+24(FP), CX

dq512loop:
	VPBROADCASTW (DX), Y0
	VCVTPH2PS    Y0, Z0
	VPMOVSXBD    (SI), Z1
	VPMOVSXBD    16(SI), Z2
	VCVTDQ2PS    Z1, Z1
	VCVTDQ2PS    Z2, Z2
	VMULPS       Z0, Z1, Z1
	VMULPS       Z0, Z2, Z2
	VMOVUPS      Z1, (DI)
	VMOVUPS      Z2, 64(DI)
	ADDQ         $32, SI
	ADDQ         $2, DX
	ADDQ         $128, DI
	DECQ         CX
	JNE          dq512loop
	VZEROUPPER
	RET

// func dequantKVAVX2(dst *float32, q *int8, scales *uint16, groups int)
TEXT ·dequantKVAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ scales+16(FP), DX
	MOVQ groups+24(FP), CX

dq2loop:
	VPBROADCASTW (DX), X0
	VCVTPH2PS    X0, Y0
	VPMOVSXBD    (SI), Y1
	VPMOVSXBD    8(SI), Y2
	VPMOVSXBD    16(SI), Y3
	VPMOVSXBD    24(SI), Y4
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VCVTDQ2PS    Y4, Y4
	VMULPS       Y0, Y1, Y1
	VMULPS       Y0, Y2, Y2
	VMULPS       Y0, Y3, Y3
	VMULPS       Y0, Y4, Y4
	VMOVUPS      Y1, (DI)
	VMOVUPS      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	VMOVUPS      Y4, 96(DI)
	ADDQ         $32, SI
	ADDQ         $2, DX
	ADDQ         $128, DI
	DECQ         CX
	JNE          dq2loop
	VZEROUPPER
	RET
