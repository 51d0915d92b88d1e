#include "textflag.h"

// AVX-512 versions of attention's float loops (fused_amd64.s), bit-identical
// to the portable ones. A zmm register holds sixteen floats, so each
// multiply and add does twice the work of the AVX2 loops; the per-element
// operations and their order are unchanged.

// func widenAVX512(dst *float32, src *uint16, sstride, rows, blocks int)
// widenAVX2 sixteen values at a time: row i of dst (blocks×16 floats) =
// the float16 values at src + i·sstride bytes.
TEXT ·widenAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ sstride+16(FP), DX
	MOVQ rows+24(FP), R12
	MOVQ blocks+32(FP), R13

widenrow:
	MOVQ SI, R8
	MOVQ R13, CX

widenloop:
	VCVTPH2PS (R8), Z0
	VMOVUPS   Z0, (DI)
	ADDQ $32, R8
	ADDQ $64, DI
	DECQ CX
	JNE  widenloop

	ADDQ DX, SI
	DECQ R12
	JNE  widenrow
	VZEROUPPER
	RET

// PAIR adds to acc the products of the query block Z8 (its eight floats in
// both halves) with the block of position a (low half) and of position b
// (high half): the eight lane sums of two positions side by side, each in
// the order of scoresAVX2.
#define PAIR(a, b, acc) \
	VMOVUPS      a, Y9; \
	VINSERTF32X8 $1, b, Z9, Z9; \
	VMULPS       Z9, Z8, Z9; \
	VADDPS       Z9, acc, acc

// FOLD reduces each half of acc as HSUM does (fused_amd64.s):
// ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)) into lane 0 (low position) and lane
// 8 (high position), then scales both by Z15.
#define FOLD(acc) \
	VSHUFF32X4 $0xb1, acc, acc, Z9; \
	VADDPS     Z9, acc, acc; \
	VPERMILPS  $0x4e, acc, Z9; \
	VADDPS     Z9, acc, acc; \
	VMOVSHDUP  acc, Z9; \
	VADDPS     Z9, acc, acc; \
	VMULPS     Z15, acc, acc

// PUT stores lanes 0 and 8 of acc (a Z register below Z8, x its X half)
// as two consecutive floats at off(DI).
#define PUT(acc, x, off) \
	VEXTRACTF32X4 $2, acc, X9; \
	VUNPCKLPS     X9, x, x; \
	VMOVQ         x, off(DI)

// func scoresAVX512(out, q, k *float32, stride, groups, blocks int, scale float32)
// out[p] = dot(q, k + p·stride bytes)·scale for p < 16·groups, over
// blocks×8 floats: sixteen positions at a time, two to a register.
TEXT ·scoresAVX512(SB), NOSPLIT, $0-52
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ stride+24(FP), DX
	MOVQ groups+32(FP), R12
	MOVQ blocks+40(FP), R13
	VBROADCASTSS scale+48(FP), Z15
	LEAQ (DX)(DX*2), R9 // 3·stride

sixteen:
	MOVQ R8, R10          // positions 0..3 at R10 + {0, 1, 2, 3}·stride
	LEAQ (R8)(DX*4), R11  // 4..7
	LEAQ (R11)(DX*4), BX  // 8..11
	LEAQ (BX)(DX*4), R14  // 12..15
	MOVQ SI, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ R13, CX

sixteenloop:
	VBROADCASTF32X8 (AX), Z8
	PAIR((R10), (R10)(DX*1), Z0)
	PAIR((R10)(DX*2), (R10)(R9*1), Z1)
	PAIR((R11), (R11)(DX*1), Z2)
	PAIR((R11)(DX*2), (R11)(R9*1), Z3)
	PAIR((BX), (BX)(DX*1), Z4)
	PAIR((BX)(DX*2), (BX)(R9*1), Z5)
	PAIR((R14), (R14)(DX*1), Z6)
	PAIR((R14)(DX*2), (R14)(R9*1), Z7)
	ADDQ $32, AX
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, BX
	ADDQ $32, R14
	DECQ CX
	JNE  sixteenloop

	FOLD(Z0)
	FOLD(Z1)
	FOLD(Z2)
	FOLD(Z3)
	FOLD(Z4)
	FOLD(Z5)
	FOLD(Z6)
	FOLD(Z7)
	PUT(Z0, X0, 0)
	PUT(Z1, X1, 8)
	PUT(Z2, X2, 16)
	PUT(Z3, X3, 24)
	PUT(Z4, X4, 32)
	PUT(Z5, X5, 40)
	PUT(Z6, X6, 48)
	PUT(Z7, X7, 56)
	ADDQ $64, DI
	LEAQ (R14)(DX*4), R8
	MOVQ R13, AX
	SHLQ $5, AX
	SUBQ AX, R8 // R14 advanced by blocks·32 bytes: back to position 16
	DECQ R12
	JNE  sixteen

	VZEROUPPER
	RET

// func weightedSumAVX512(o, v *float32, stride int, w *float32, n, chunks int)
// o[j] += w[p]·v[p·stride bytes + j] for p = 0..n-1 in order, over
// chunks×128 floats of o, each chunk held in eight registers.
TEXT ·weightedSumAVX512(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ w+24(FP), R12
	MOVQ n+32(FP), R13
	MOVQ chunks+40(FP), R14

chunk:
	VMOVUPS 0(DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	VMOVUPS 256(DI), Z4
	VMOVUPS 320(DI), Z5
	VMOVUPS 384(DI), Z6
	VMOVUPS 448(DI), Z7
	MOVQ SI, R8
	MOVQ R12, R9
	MOVQ R13, CX

pos:
	VBROADCASTSS (R9), Z8
	VMULPS 0(R8), Z8, Z9
	VADDPS Z9, Z0, Z0
	VMULPS 64(R8), Z8, Z10
	VADDPS Z10, Z1, Z1
	VMULPS 128(R8), Z8, Z11
	VADDPS Z11, Z2, Z2
	VMULPS 192(R8), Z8, Z12
	VADDPS Z12, Z3, Z3
	VMULPS 256(R8), Z8, Z9
	VADDPS Z9, Z4, Z4
	VMULPS 320(R8), Z8, Z10
	VADDPS Z10, Z5, Z5
	VMULPS 384(R8), Z8, Z11
	VADDPS Z11, Z6, Z6
	VMULPS 448(R8), Z8, Z12
	VADDPS Z12, Z7, Z7
	ADDQ DX, R8
	ADDQ $4, R9
	DECQ CX
	JNE pos

	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	ADDQ $512, DI
	ADDQ $512, SI
	DECQ R14
	JNE chunk

	VZEROUPPER
	RET
