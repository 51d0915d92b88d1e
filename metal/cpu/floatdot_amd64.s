#include "textflag.h"

// Float32 loops matching floatdot.go bit for bit: separate multiplies and
// adds (no FMA), lane i mod 8 accumulating element i.

// func dotBlocksAVX2(a, b *float32, blocks int) float32
// Returns ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)) over blocks×8 elements.
TEXT ·dotBlocksAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ blocks+16(FP), CX
	VXORPS Y0, Y0, Y0

dotloop:
	VMOVUPS (SI), Y1
	VMULPS (DI), Y1, Y1
	VADDPS Y1, Y0, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE dotloop

	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0     // s0+s4, s1+s5, s2+s6, s3+s7
	VPERMILPS $0x4e, X0, X1
	VADDPS X1, X0, X0     // (s0+s4)+(s2+s6), (s1+s5)+(s3+s7), ...
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func axpyBlocksAVX2(o, v *float32, w float32, blocks int)
TEXT ·axpyBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), SI
	MOVQ v+8(FP), DI
	VBROADCASTSS w+16(FP), Y2
	MOVQ blocks+24(FP), CX

axpyloop:
	VMULPS (DI), Y2, Y1
	VADDPS (SI), Y1, Y1
	VMOVUPS Y1, (SI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE axpyloop

	VZEROUPPER
	RET
