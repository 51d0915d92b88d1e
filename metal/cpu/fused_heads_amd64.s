#include "textflag.h"

// Value sums of several query heads at once (AVX-512): weightedSumAVX512
// for 4, 6, 8 or 10 heads over the same values and positions, 32 output
// floats of each head per call. With one or two heads per call
// (weightedSumPairAVX512), every head pair streams the whole widened chunk
// of values from L2 (64 KiB at 128 positions of 128 floats) for 16
// multiply-adds per 512 bytes; here each value block loaded serves every
// head, so a verify row's ten heads (five tokens of a two-head group)
// read the chunk once. Each output float is still one fused multiply-add
// per position, in position order, so the sums are weightedSumRef's.
//
// The heads' weights (softmaxed scores) are read through one pointer
// register each and a shared position index, their 32 outputs are held
// in two registers each across all positions.

// HEAD_LOAD and HEAD_STORE move one head's 32 outputs, at the pointer in
// slot off of the table at R15, to and from a0, a1.
#define HEAD_LOAD(off, a0, a1) \
	MOVQ    off(R15), R14; \
	VMOVUPS (R14), a0; \
	VMOVUPS 64(R14), a1

#define HEAD_STORE(off, a0, a1) \
	MOVQ    off(R15), R14; \
	VMOVUPS a0, (R14); \
	VMOVUPS a1, 64(R14)

// HEAD_MAC adds the head's weight of position CX (its weights at r),
// broadcast into t, times the position's value block Z20, Z21 to a0, a1.
#define HEAD_MAC(r, t, a0, a1) \
	VBROADCASTSS (r)(CX*4), t; \
	VFMADD231PS  Z20, t, a0; \
	VFMADD231PS  Z21, t, a1

// HEADS_WEIGHTS loads the heads' weight pointers (slots past the call's
// heads are not used) and the value pointer.
#define HEADS_WEIGHTS \
	MOVQ w+8(FP), R15; \
	MOVQ 0(R15), AX; \
	MOVQ 8(R15), BX; \
	MOVQ 16(R15), DX; \
	MOVQ 24(R15), DI; \
	MOVQ 32(R15), R8; \
	MOVQ 40(R15), R9; \
	MOVQ 48(R15), R10; \
	MOVQ 56(R15), R11; \
	MOVQ 64(R15), R12; \
	MOVQ 72(R15), R13; \
	MOVQ v+16(FP), SI

// HEADS_LOOP readies the position loop: R14 the value stride in bytes, R15
// the positions, CX the position index.
#define HEADS_LOOP \
	MOVQ stride+24(FP), R14; \
	MOVQ n+32(FP), R15; \
	XORQ CX, CX

// HEADS_VALUES loads position CX's value block into Z20, Z21; HEADS_NEXT
// steps to the next position and compares CX with the count.
#define HEADS_VALUES \
	VMOVUPS (SI), Z20; \
	VMOVUPS 64(SI), Z21

#define HEADS_NEXT \
	ADDQ R14, SI; \
	INCQ CX; \
	CMPQ CX, R15

// The heads in groups (0-3, 4-5, 6-7, 8-9), so that each kernel is the
// groups of its heads: HEADS_LOAD_*, HEADS_MAC_* and HEADS_STORE_*.
#define HEADS_LOAD_0_3 \
	HEAD_LOAD(0, Z0, Z1); \
	HEAD_LOAD(8, Z2, Z3); \
	HEAD_LOAD(16, Z4, Z5); \
	HEAD_LOAD(24, Z6, Z7)

#define HEADS_LOAD_4_5 \
	HEAD_LOAD(32, Z8, Z9); \
	HEAD_LOAD(40, Z10, Z11)

#define HEADS_LOAD_6_7 \
	HEAD_LOAD(48, Z12, Z13); \
	HEAD_LOAD(56, Z14, Z15)

#define HEADS_LOAD_8_9 \
	HEAD_LOAD(64, Z16, Z17); \
	HEAD_LOAD(72, Z18, Z19)

#define HEADS_MAC_0_3 \
	HEAD_MAC(AX, Z22, Z0, Z1); \
	HEAD_MAC(BX, Z23, Z2, Z3); \
	HEAD_MAC(DX, Z24, Z4, Z5); \
	HEAD_MAC(DI, Z25, Z6, Z7)

#define HEADS_MAC_4_5 \
	HEAD_MAC(R8, Z26, Z8, Z9); \
	HEAD_MAC(R9, Z27, Z10, Z11)

#define HEADS_MAC_6_7 \
	HEAD_MAC(R10, Z28, Z12, Z13); \
	HEAD_MAC(R11, Z29, Z14, Z15)

#define HEADS_MAC_8_9 \
	HEAD_MAC(R12, Z30, Z16, Z17); \
	HEAD_MAC(R13, Z31, Z18, Z19)

#define HEADS_STORE_0_3 \
	HEAD_STORE(0, Z0, Z1); \
	HEAD_STORE(8, Z2, Z3); \
	HEAD_STORE(16, Z4, Z5); \
	HEAD_STORE(24, Z6, Z7)

#define HEADS_STORE_4_5 \
	HEAD_STORE(32, Z8, Z9); \
	HEAD_STORE(40, Z10, Z11)

#define HEADS_STORE_6_7 \
	HEAD_STORE(48, Z12, Z13); \
	HEAD_STORE(56, Z14, Z15)

#define HEADS_STORE_8_9 \
	HEAD_STORE(64, Z16, Z17); \
	HEAD_STORE(72, Z18, Z19)

// func weightedSumHeads4AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 4, p < n in
// order, j < 32.
TEXT ·weightedSumHeads4AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_0_3
	HEADS_LOOP

heads4:
	HEADS_VALUES
	HEADS_MAC_0_3
	HEADS_NEXT
	JNE heads4

	MOVQ o+0(FP), R15
	HEADS_STORE_0_3
	VZEROUPPER
	RET

// func weightedSumHeads6AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 6, p < n in
// order, j < 32.
TEXT ·weightedSumHeads6AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_0_3
	HEADS_LOAD_4_5
	HEADS_LOOP

heads6:
	HEADS_VALUES
	HEADS_MAC_0_3
	HEADS_MAC_4_5
	HEADS_NEXT
	JNE heads6

	MOVQ o+0(FP), R15
	HEADS_STORE_0_3
	HEADS_STORE_4_5
	VZEROUPPER
	RET

// func weightedSumHeads8AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 8, p < n in
// order, j < 32.
TEXT ·weightedSumHeads8AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_0_3
	HEADS_LOAD_4_5
	HEADS_LOAD_6_7
	HEADS_LOOP

heads8:
	HEADS_VALUES
	HEADS_MAC_0_3
	HEADS_MAC_4_5
	HEADS_MAC_6_7
	HEADS_NEXT
	JNE heads8

	MOVQ o+0(FP), R15
	HEADS_STORE_0_3
	HEADS_STORE_4_5
	HEADS_STORE_6_7
	VZEROUPPER
	RET

// func weightedSumHeads10AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 10, p < n in
// order, j < 32.
TEXT ·weightedSumHeads10AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_0_3
	HEADS_LOAD_4_5
	HEADS_LOAD_6_7
	HEADS_LOAD_8_9
	HEADS_LOOP

heads10:
	HEADS_VALUES
	HEADS_MAC_0_3
	HEADS_MAC_4_5
	HEADS_MAC_6_7
	HEADS_MAC_8_9
	HEADS_NEXT
	JNE heads10

	MOVQ o+0(FP), R15
	HEADS_STORE_0_3
	HEADS_STORE_4_5
	HEADS_STORE_6_7
	HEADS_STORE_8_9
	VZEROUPPER
	RET
