#include "textflag.h"
#include "fused_heads_amd64.h"

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

// HEADS_WEIGHTS loads the heads' weight pointers (slots past the call's
// heads are not used) and the value pointer.
#define HEADS_WEIGHTS \
	HEADS_POINTERS; \
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

// func weightedSumHeads4AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 4, p < n in
// order, j < 32.
TEXT ·weightedSumHeads4AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_4
	HEADS_LOOP

heads4:
	HEADS_VALUES
	HEADS_MAC_4(0)
	HEADS_NEXT
	JNE heads4

	MOVQ o+0(FP), R15
	HEADS_STORE_4
	VZEROUPPER
	RET

// func weightedSumHeads6AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 6, p < n in
// order, j < 32.
TEXT ·weightedSumHeads6AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_6
	HEADS_LOOP

heads6:
	HEADS_VALUES
	HEADS_MAC_6(0)
	HEADS_NEXT
	JNE heads6

	MOVQ o+0(FP), R15
	HEADS_STORE_6
	VZEROUPPER
	RET

// func weightedSumHeads8AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 8, p < n in
// order, j < 32.
TEXT ·weightedSumHeads8AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_8
	HEADS_LOOP

heads8:
	HEADS_VALUES
	HEADS_MAC_8(0)
	HEADS_NEXT
	JNE heads8

	MOVQ o+0(FP), R15
	HEADS_STORE_8
	VZEROUPPER
	RET

// func weightedSumHeads10AVX512(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 10, p < n in
// order, j < 32.
TEXT ·weightedSumHeads10AVX512(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	HEADS_LOAD_10
	HEADS_LOOP

heads10:
	HEADS_VALUES
	HEADS_MAC_10(0)
	HEADS_NEXT
	JNE heads10

	MOVQ o+0(FP), R15
	HEADS_STORE_10
	VZEROUPPER
	RET

// func weightedSumHeads4AVX2(o, w *[10]*float32, v *float32, stride, n int)
// weightedSumHeads4AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeads4AVX2(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_4
	HEADS_LOOP

yheads4:
	VMOVUPS (SI), Y10
	YHEADS_MAC_4(0)
	HEADS_NEXT
	JNE yheads4

	MOVQ o+0(FP), R15
	YHEADS_STORE_4
	VZEROUPPER
	RET

// func weightedSumHeads6AVX2(o, w *[10]*float32, v *float32, stride, n int)
// weightedSumHeads6AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeads6AVX2(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_6
	HEADS_LOOP

yheads6:
	VMOVUPS (SI), Y10
	YHEADS_MAC_6(0)
	HEADS_NEXT
	JNE yheads6

	MOVQ o+0(FP), R15
	YHEADS_STORE_6
	VZEROUPPER
	RET

// func weightedSumHeads8AVX2(o, w *[10]*float32, v *float32, stride, n int)
// weightedSumHeads8AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeads8AVX2(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_8
	HEADS_LOOP

yheads8:
	VMOVUPS (SI), Y10
	YHEADS_MAC_8(0)
	HEADS_NEXT
	JNE yheads8

	MOVQ o+0(FP), R15
	YHEADS_STORE_8
	VZEROUPPER
	RET

// func weightedSumHeads10AVX2(o, w *[10]*float32, v *float32, stride, n int)
// weightedSumHeads10AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeads10AVX2(SB), NOSPLIT, $0-40
	HEADS_WEIGHTS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_10
	HEADS_LOOP

yheads10:
	VMOVUPS (SI), Y10
	YHEADS_MAC_10(0)
	HEADS_NEXT
	JNE yheads10

	MOVQ o+0(FP), R15
	YHEADS_STORE_10
	VZEROUPPER
	RET
