#include "textflag.h"
#include "floatdot_amd64.h"

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
	AXPYROWS_LOAD(Z0, Z1, Z2, Z3, 64, 128, 192)
	MOVQ SI, AX
	MOVQ R8, BX
	MOVQ R9, DX

axpyrows512row:
	AXPYROWS_ROW(Z0, Z1, Z2, Z3, Z4, Z5, 64, 128, 192)
	ADDQ $4, BX
	ADDQ R10, AX
	DECQ DX
	JNE axpyrows512row

	AXPYROWS_STORE(Z0, Z1, Z2, Z3, 64, 128, 192)
	ADDQ $256, DI
	ADDQ $256, SI
	DECQ CX
	JNE axpyrows512chunk

	VZEROUPPER
	RET
