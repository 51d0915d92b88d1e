#include "textflag.h"

// func axpyRowsBlocksAVX512(o, m, c *float32, rows, stride, chunks int)
// axpyRowsBlocksAVX2 on 64 columns at a time; stride is the bytes between
// rows of m.
TEXT ·axpyRowsBlocksAVX512(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ c+16(FP), R8
	MOVQ rows+24(FP), R9
	MOVQ stride+32(FP), R10
	MOVQ chunks+40(FP), CX

axpyrows512chunk:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	MOVQ SI, AX
	MOVQ R8, BX
	MOVQ R9, DX

axpyrows512row:
	VBROADCASTSS (BX), Z4
	VMULPS (AX), Z4, Z5
	VADDPS Z5, Z0, Z0
	VMULPS 64(AX), Z4, Z6
	VADDPS Z6, Z1, Z1
	VMULPS 128(AX), Z4, Z7
	VADDPS Z7, Z2, Z2
	VMULPS 192(AX), Z4, Z8
	VADDPS Z8, Z3, Z3
	ADDQ $4, BX
	ADDQ R10, AX
	DECQ DX
	JNE axpyrows512row

	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	DECQ CX
	JNE axpyrows512chunk

	VZEROUPPER
	RET
