#include "textflag.h"

// func maxAsm(p *float32, n int) float32
// Four ymm running maxes over 32 floats an iteration. VMAXPS a, v, a
// (Intel: a = v > a ? v : a) keeps a when v is NaN, as the Go scan's
// `if v > m` does; the accumulators never hold a NaN, so folding them
// needs no care for the order.
TEXT ·maxAsm(SB), NOSPLIT, $0-20
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $5, CX
	MOVL $0xff800000, AX // −Inf
	MOVL AX, X0
	VBROADCASTSS X0, Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3

maxloop:
	VMOVUPS 0(SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMAXPS  Y0, Y4, Y0
	VMAXPS  Y1, Y5, Y1
	VMAXPS  Y2, Y6, Y2
	VMAXPS  Y3, Y7, Y3
	ADDQ    $128, SI
	DECQ    CX
	JNE     maxloop

	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func indexAsm(p *float32, n int, m float32) int
// Compares 32 floats an iteration with m (ordered equality: a NaN never
// matches) and stops at the first block with a match.
TEXT ·indexAsm(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y0
	XORQ         DX, DX

indexloop:
	VCMPPS    $0, 0(SI)(DX*4), Y0, Y1
	VCMPPS    $0, 32(SI)(DX*4), Y0, Y2
	VCMPPS    $0, 64(SI)(DX*4), Y0, Y3
	VCMPPS    $0, 96(SI)(DX*4), Y0, Y4
	VORPS     Y2, Y1, Y5
	VORPS     Y4, Y3, Y6
	VORPS     Y6, Y5, Y5
	VMOVMSKPS Y5, AX
	TESTL     AX, AX
	JNE       found
	ADDQ      $32, DX
	CMPQ      DX, CX
	JB        indexloop
	VZEROUPPER
	MOVQ      $-1, ret+24(FP)
	RET

found:
	// The first match is in one of the four vectors: 8 bits of mask each.
	VMOVMSKPS Y1, AX
	VMOVMSKPS Y2, BX
	SHLL      $8, BX
	ORL       BX, AX
	VMOVMSKPS Y3, BX
	SHLL      $16, BX
	ORL       BX, AX
	VMOVMSKPS Y4, BX
	SHLL      $24, BX
	ORL       BX, AX
	BSFL      AX, AX
	ADDQ      AX, DX
	VZEROUPPER
	MOVQ      DX, ret+24(FP)
	RET
