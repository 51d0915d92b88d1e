#include "textflag.h"
#include "floatdot_amd64.h"

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

// func deltaRowBlocksAVX2(row, u, o *float32, e, k, q float32, blocks int)
TEXT ·deltaRowBlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ row+0(FP), SI
	MOVQ u+8(FP), DI
	MOVQ o+16(FP), DX
	VBROADCASTSS e+24(FP), Y0
	VBROADCASTSS k+28(FP), Y1
	VBROADCASTSS q+32(FP), Y2
	MOVQ blocks+40(FP), CX

deltarowloop:
	VMULPS (SI), Y0, Y3
	VMULPS (DI), Y1, Y4
	VADDPS Y4, Y3, Y3
	VMOVUPS Y3, (SI)
	VMULPS Y3, Y2, Y5
	VADDPS (DX), Y5, Y5
	VMOVUPS Y5, (DX)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNE deltarowloop

	VZEROUPPER
	RET

// func axpyRowsBlocksAVX2(o, m, c *float32, rows, stride, chunks int)
// stride is the bytes between rows of m.
TEXT ·axpyRowsBlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ c+16(FP), R8
	MOVQ rows+24(FP), R9
	MOVQ stride+32(FP), R10
	MOVQ chunks+40(FP), CX

axpyrowschunk:
	AXPYROWS_LOAD(Y0, Y1, Y2, Y3, 32, 64, 96)
	MOVQ SI, AX
	MOVQ R8, BX
	MOVQ R9, DX

axpyrowsrow:
	AXPYROWS_ROW(Y0, Y1, Y2, Y3, Y4, Y5, 32, 64, 96)
	ADDQ $4, BX
	ADDQ R10, AX
	DECQ DX
	JNE axpyrowsrow

	AXPYROWS_STORE(Y0, Y1, Y2, Y3, 32, 64, 96)
	ADDQ $128, DI
	ADDQ $128, SI
	DECQ CX
	JNE axpyrowschunk

	VZEROUPPER
	RET
