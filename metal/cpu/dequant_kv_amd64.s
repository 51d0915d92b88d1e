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

// func quantizeKVAVX512(q *int8, scales *uint16, x *float32, groups int)
// metal.QuantizeKV, a group of 32 at a time, with the same IEEE
// operations: the largest |x| by its bits (unsigned max), d = that/127
// rounded to float16 (VCVTPS2PH, to nearest even), 1/d (zero when d is),
// each x·(1/d) clamped to ±127 with NaN passing (VMINPS and VMAXPS return
// their second source when either is NaN), rounded by adding and
// subtracting 1.5·2^23, NaN lanes zeroed, narrowed to int8.
TEXT ·quantizeKVAVX512(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), DI
	MOVQ scales+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ groups+24(FP), CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z10 // |x| mask
	MOVL $0x42fe0000, AX
	VPBROADCASTD AX, Z11 // 127
	MOVL $0xc2fe0000, AX
	VPBROADCASTD AX, Z12 // -127
	MOVL $0x4b400000, AX
	VPBROADCASTD AX, Z13 // 1.5·2^23
	MOVL $0x3f800000, AX
	VMOVD AX, X14        // 1
	VPXORD Z15, Z15, Z15

qkvloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VPANDD  Z10, Z0, Z2
	VPANDD  Z10, Z1, Z3
	VPMAXUD Z3, Z2, Z2
	VEXTRACTI32X8 $1, Z2, Y3
	VPMAXUD Y3, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPMAXUD X3, X2, X2
	VPSHUFD $0x4e, X2, X3
	VPMAXUD X3, X2, X2
	VPSHUFD $0xb1, X2, X3
	VPMAXUD X3, X2, X2   // lane 0: the largest |x|
	VDIVSS  X11, X2, X4  // /127
	VCVTPS2PH $0, X4, X5
	VPEXTRW $0, X5, AX
	MOVW    AX, (DX)
	VCVTPH2PS X5, X6     // d, exactly
	VXORPS  X7, X7, X7
	VUCOMISS X15, X6
	JEQ     qkvzero      // d == 0 (or NaN): 1/d taken as zero
	VDIVSS  X6, X14, X7  // 1/d

qkvzero:
	VBROADCASTSS X7, Z7
	VMULPS  Z7, Z0, Z0
	VMULPS  Z7, Z1, Z1
	VMINPS  Z0, Z11, Z0  // 127 < r ? 127 : r
	VMINPS  Z1, Z11, Z1
	VMAXPS  Z0, Z12, Z0  // -127 > r ? -127 : r
	VMAXPS  Z1, Z12, Z1
	VADDPS  Z13, Z0, Z0
	VADDPS  Z13, Z1, Z1
	VSUBPS  Z13, Z0, Z0
	VSUBPS  Z13, Z1, Z1
	VCMPPS  $3, Z0, Z0, K1 // NaN lanes
	VCMPPS  $3, Z1, Z1, K2
	VCVTTPS2DQ Z0, Z0
	VCVTTPS2DQ Z1, Z1
	VMOVDQA32 Z15, K1, Z0
	VMOVDQA32 Z15, K2, Z1
	VPMOVDB Z0, (DI)
	VPMOVDB Z1, 16(DI)
	ADDQ    $128, SI
	ADDQ    $32, DI
	ADDQ    $2, DX
	DECQ    CX
	JNE     qkvloop
	VZEROUPPER
	RET
