#include "textflag.h"
#include "quantdot_neon_arm64.h"

// NEON loops of floatdot.go, bit-identical to the Go versions: the same
// float32 products and sums in the same order, no fused multiply-adds
// (FMUL then FADD wherever the Go rounds a product before its add).

// func dotBlocksNEON(a, b *float32, blocks int) float32
// dot's eight partial sums, s0-s3 in V0 and s4-s7 in V1, eight elements a
// block; then ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)) as dot adds them.
TEXT ·dotBlocksNEON(SB), NOSPLIT, $0-28
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD blocks+16(FP), R2
	ZERO(0)
	ZERO(1)

dotloop:
	CBZ    R2, dotdone
	VLD1.P 32(R0), [V2.S4, V3.S4]
	VLD1.P 32(R1), [V4.S4, V5.S4]
	FMUL4S(2, 2, 4)
	FMUL4S(3, 3, 5)
	FADD4S(0, 0, 2)
	FADD4S(1, 1, 3)
	SUB    $1, R2
	B      dotloop

dotdone:
	FADD4S(0, 0, 1)
	EXT8(2, 0, 0)
	FADD4S(0, 0, 2)
	FADDP2S(0, 0)
	FMOVS  F0, ret+24(FP)
	RET

// func axpyBlocksNEON(o, v *float32, w float32, blocks int)
// o[j] += w·v[j], eight elements a block.
TEXT ·axpyBlocksNEON(SB), NOSPLIT, $0-32
	MOVD  o+0(FP), R0
	MOVD  v+8(FP), R1
	FMOVS w+16(FP), F16
	MOVD  blocks+24(FP), R2
	VDUP  V16.S[0], V16.S4

axpyloop:
	CBZ    R2, axpydone
	VLD1.P 32(R1), [V0.S4, V1.S4]
	VLD1   (R0), [V4.S4, V5.S4]
	FMUL4S(0, 0, 16)
	FMUL4S(1, 1, 16)
	FADD4S(4, 4, 0)
	FADD4S(5, 5, 1)
	VST1.P [V4.S4, V5.S4], 32(R0)
	SUB    $1, R2
	B      axpyloop

axpydone:
	RET

// func deltaRowBlocksNEON(row, u, o *float32, e, k, q float32, blocks int)
// r = e·row[j] + k·u[j] (each product rounded), row[j] = r, o[j] += q·r,
// eight elements a block.
TEXT ·deltaRowBlocksNEON(SB), NOSPLIT, $0-48
	MOVD  row+0(FP), R0
	MOVD  u+8(FP), R1
	MOVD  o+16(FP), R2
	FMOVS e+24(FP), F16
	FMOVS k+28(FP), F17
	FMOVS q+32(FP), F18
	MOVD  blocks+40(FP), R3
	VDUP  V16.S[0], V16.S4
	VDUP  V17.S[0], V17.S4
	VDUP  V18.S[0], V18.S4

deltaloop:
	CBZ    R3, deltadone
	VLD1   (R0), [V0.S4, V1.S4]
	VLD1.P 32(R1), [V2.S4, V3.S4]
	VLD1   (R2), [V4.S4, V5.S4]
	FMUL4S(0, 0, 16)
	FMUL4S(1, 1, 16)
	FMUL4S(2, 2, 17)
	FMUL4S(3, 3, 17)
	FADD4S(0, 0, 2)
	FADD4S(1, 1, 3)
	VST1.P [V0.S4, V1.S4], 32(R0)
	FMUL4S(2, 0, 18)
	FMUL4S(3, 1, 18)
	FADD4S(4, 4, 2)
	FADD4S(5, 5, 3)
	VST1.P [V4.S4, V5.S4], 32(R2)
	SUB    $1, R3
	B      deltaloop

deltadone:
	RET

// func axpyRowsBlocksNEON(o, m, c *float32, rows, stride, chunks int)
// axpyRows sixteen columns at a time, their sums held in V4-V7 down the
// rows (stride in bytes): each column gets its rows' products in row
// order, as the Go loop adds them.
TEXT ·axpyRowsBlocksNEON(SB), NOSPLIT, $0-48
	MOVD o+0(FP), R0
	MOVD m+8(FP), R1
	MOVD c+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD stride+32(FP), R4
	MOVD chunks+40(FP), R5

chunk:
	CBZ  R5, rowsdone
	VLD1 (R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	MOVD R1, R6
	MOVD R2, R7
	MOVD R3, R8

row:
	CBZ   R8, chunkdone
	FMOVS (R7), F16
	ADD   $4, R7
	VDUP  V16.S[0], V16.S4
	VLD1  (R6), [V0.S4, V1.S4, V2.S4, V3.S4]
	FMUL4S(0, 0, 16)
	FMUL4S(1, 1, 16)
	FMUL4S(2, 2, 16)
	FMUL4S(3, 3, 16)
	FADD4S(4, 4, 0)
	FADD4S(5, 5, 1)
	FADD4S(6, 6, 2)
	FADD4S(7, 7, 3)
	ADD   R4, R6
	SUB   $1, R8
	B     row

chunkdone:
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R0)
	ADD    $64, R1
	SUB    $1, R5
	B      chunk

rowsdone:
	RET
