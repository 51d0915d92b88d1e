#include "textflag.h"
#include "fused_avx512_amd64.h"
#include "fused_heads_amd64.h"

// Attention's many-head loops (fused_heads_amd64.s, scoresHeads6AVX512)
// reading the cached keys and values as float16 in place, for a run of
// several tokens: instead of widening each chunk of the cache into
// scratch (a store and a reload of twice its bytes) and then reading it
// from L2 once per group of heads, each group of eight positions is
// converted as it is loaded, once per key or value block for four to ten
// heads. VCVTPH2PS is exact, so every product and sum is the widened
// path's.
//
// The positions come as a table of groups (halfGroup, 32 bytes each): the
// first row of eight consecutive positions of one KV head (contiguous
// rows, stride bytes apart), and the first row of the group read after it
// (the next KV head's or the next chunk's), which the kernel prefetches as
// it reads, a line per row and pass (values) or two lines per block of
// eight dimensions (keys).

// KHALF loads the key blocks (eight float16) of positions a and b,
// widened into the low and high halves of z.
#define KHALF(a, b, x, y, z) \
	VMOVDQU32    a, x; \
	VINSERTI32X4 $1, b, y, y; \
	VCVTPH2PS    y, z

// HS_GROUP starts a group of eight positions for the key kernels: R10
// and R11 its positions 0-3 and 4-7, R8 the group to prefetch, CX the
// query offset.
#define HS_GROUP \
	MOVQ tab+16(FP), R14; \
	MOVQ (R14)(R15*1), R10; \
	MOVQ 8(R14)(R15*1), R8; \
	LEAQ (R10)(DX*4), R11; \
	XORQ CX, CX; \
	ZERO8; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

// HS_KEYS loads one block of eight dimensions of the group's eight
// positions into Z24..Z27 (positions j and j+4 in one register) and
// prefetches two lines of the next group.
#define HS_KEYS \
	KHALF((R10), (R11), X24, Y24, Z24); \
	KHALF((R10)(DX*1), (R11)(DX*1), X25, Y25, Z25); \
	KHALF((R10)(DX*2), (R11)(DX*2), X26, Y26, Z26); \
	KHALF((R10)(R9*1), (R11)(R9*1), X27, Y27, Z27); \
	PREFETCHT0 (R8); \
	PREFETCHT0 64(R8); \
	ADDQ       $128, R8

// HS_NEXT steps to the next block of dimensions.
#define HS_NEXT \
	ADDQ $16, R10; \
	ADDQ $16, R11; \
	ADDQ $32, CX; \
	CMPQ CX, qbytes+32(FP)

// HS_ARGS loads the first four heads' query pointers and the stride.
#define HS_ARGS \
	MOVQ         q+8(FP), CX; \
	MOVQ         0(CX), AX; \
	MOVQ         8(CX), BX; \
	MOVQ         16(CX), SI; \
	MOVQ         24(CX), DI; \
	MOVQ         stride+24(FP), DX; \
	VBROADCASTSS scale+48(FP), Z15; \
	LEAQ         (DX)(DX*2), R9; \
	XORQ         R15, R15

// HW_GROUP starts a group of eight positions for the value kernels: SI
// its first row's values at byte offset off, R14 the distance to the
// same bytes of the group to prefetch.
#define HW_GROUP \
	MOVQ (R15), SI; \
	ADDQ off+32(FP), SI; \
	MOVQ 8(R15), R14; \
	ADDQ off+32(FP), R14; \
	SUBQ SI, R14

// HW_VALUES widens one position's 32 values (a cache line of float16)
// into Z20, Z21, prefetches the same line of the next group, and steps SI
// to the next position.
#define HW_VALUES \
	VCVTPH2PS  (SI), Z20; \
	VCVTPH2PS  32(SI), Z21; \
	PREFETCHT0 (SI)(R14*1); \
	ADDQ       stride+40(FP), SI

// HW_END compares the group with the last and steps to the next: eight
// positions of weights, 32 bytes of table (LEAQ keeps the flags).
#define HW_END \
	CMPQ R15, last+24(FP); \
	LEAQ 8(CX), CX; \
	LEAQ 32(R15), R15

// HW_ARGS loads the heads' weight pointers and zeroes the position.
#define HW_ARGS \
	HEADS_POINTERS; \
	XORQ CX, CX

// HWY_VALUES is HW_VALUES for the AVX2 kernels: one position's eight
// values (16 bytes of float16) into Y10.
#define HWY_VALUES \
	VCVTPH2PS  (SI), Y10; \
	PREFETCHT0 (SI)(R14*1); \
	ADDQ       stride+40(FP), SI

// func scoresHeadsHalf4AVX512(out, q *[6]*float32, tab *halfGroup, stride, qbytes, obytes int, scale float32)
// scoresHeads6AVX512 for four heads with the keys float16 in place, the
// groups of positions from tab: obytes/32 groups of eight, their scores
// at out[i] + 32 bytes a group.
TEXT ·scoresHeadsHalf4AVX512(SB), NOSPLIT, $0-52
	HS_ARGS

hs4group:
	HS_GROUP

hs4block:
	HS_KEYS
	SCORES_HEAD(AX, Z28, Z0, Z1, Z2, Z3)
	SCORES_HEAD(BX, Z29, Z4, Z5, Z6, Z7)
	SCORES_HEAD(SI, Z28, Z16, Z17, Z18, Z19)
	SCORES_HEAD(DI, Z29, Z20, Z21, Z22, Z23)
	HS_NEXT
	JNE hs4block

	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	FOLDQ(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	SCORES_PUT(0, 8, Y0, Z0)
	SCORES_PUT(16, 24, Y16, Z16)
	ADDQ $32, R15
	CMPQ R15, obytes+40(FP)
	JNE  hs4group

	VZEROUPPER
	RET

// func scoresHeadsHalf6AVX512(out, q *[6]*float32, tab *halfGroup, stride, qbytes, obytes int, scale float32)
// scoresHeadsHalf4AVX512 for six heads.
TEXT ·scoresHeadsHalf6AVX512(SB), NOSPLIT, $0-52
	HS_ARGS
	MOVQ q+8(FP), CX
	MOVQ 32(CX), R12
	MOVQ 40(CX), R13

hs6group:
	HS_GROUP
	VPXORD Z8, Z8, Z8
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

hs6block:
	HS_KEYS
	SCORES_HEAD(AX, Z28, Z0, Z1, Z2, Z3)
	SCORES_HEAD(BX, Z29, Z4, Z5, Z6, Z7)
	SCORES_HEAD(SI, Z28, Z16, Z17, Z18, Z19)
	SCORES_HEAD(DI, Z29, Z20, Z21, Z22, Z23)
	SCORES_HEAD(R12, Z28, Z8, Z10, Z11, Z12)
	SCORES_HEAD(R13, Z29, Z13, Z14, Z30, Z31)
	HS_NEXT
	JNE hs6block

	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	FOLDQ(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	FOLDQ(Z8, Z10, Z11, Z12, Z13, Z14, Z30, Z31)
	SCORES_PUT(0, 8, Y0, Z0)
	SCORES_PUT(16, 24, Y16, Z16)
	SCORES_PUT(32, 40, Y8, Z8)
	ADDQ $32, R15
	CMPQ R15, obytes+40(FP)
	JNE  hs6group

	VZEROUPPER
	RET

// func scoresHeadsHalf2AVX512(out, q *[6]*float32, tab *halfGroup, stride, qbytes, obytes int, scale float32)
// scoresHeadsHalf4AVX512 for two heads (a decode step's pair).
TEXT ·scoresHeadsHalf2AVX512(SB), NOSPLIT, $0-52
	HS_ARGS

hs2group:
	HS_GROUP

hs2block:
	HS_KEYS
	SCORES_HEAD(AX, Z28, Z0, Z1, Z2, Z3)
	SCORES_HEAD(BX, Z29, Z4, Z5, Z6, Z7)
	HS_NEXT
	JNE hs2block

	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	SCORES_PUT(0, 8, Y0, Z0)
	ADDQ $32, R15
	CMPQ R15, obytes+40(FP)
	JNE  hs2group

	VZEROUPPER
	RET

// func weightedSumHeadsHalf2AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeadsHalf4AVX512 for two heads (a decode step's pair).
TEXT ·weightedSumHeadsHalf2AVX512(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	HEADS_LOAD_2
	MOVQ tab+16(FP), R15

hw2group:
	HW_GROUP
	EIGHT(HW_VALUES, HEADS_MAC_2)
	HW_END
	JNE hw2group

	MOVQ o+0(FP), R15
	HEADS_STORE_2
	VZEROUPPER
	RET

// func weightedSumHeadsHalf4AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads4AVX512 with the values float16 in place: the groups
// of eight positions tab..last, values from byte off of each row.
TEXT ·weightedSumHeadsHalf4AVX512(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	HEADS_LOAD_4
	MOVQ tab+16(FP), R15

hw4group:
	HW_GROUP
	EIGHT(HW_VALUES, HEADS_MAC_4)
	HW_END
	JNE hw4group

	MOVQ o+0(FP), R15
	HEADS_STORE_4
	VZEROUPPER
	RET

// func weightedSumHeadsHalf6AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads6AVX512 with the values float16 in place: the groups
// of eight positions tab..last, values from byte off of each row.
TEXT ·weightedSumHeadsHalf6AVX512(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	HEADS_LOAD_6
	MOVQ tab+16(FP), R15

hw6group:
	HW_GROUP
	EIGHT(HW_VALUES, HEADS_MAC_6)
	HW_END
	JNE hw6group

	MOVQ o+0(FP), R15
	HEADS_STORE_6
	VZEROUPPER
	RET

// func weightedSumHeadsHalf8AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads8AVX512 with the values float16 in place: the groups
// of eight positions tab..last, values from byte off of each row.
TEXT ·weightedSumHeadsHalf8AVX512(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	HEADS_LOAD_8
	MOVQ tab+16(FP), R15

hw8group:
	HW_GROUP
	EIGHT(HW_VALUES, HEADS_MAC_8)
	HW_END
	JNE hw8group

	MOVQ o+0(FP), R15
	HEADS_STORE_8
	VZEROUPPER
	RET

// func weightedSumHeadsHalf10AVX512(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads10AVX512 with the values float16 in place: the groups
// of eight positions tab..last, values from byte off of each row.
TEXT ·weightedSumHeadsHalf10AVX512(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	HEADS_LOAD_10
	MOVQ tab+16(FP), R15

hw10group:
	HW_GROUP
	EIGHT(HW_VALUES, HEADS_MAC_10)
	HW_END
	JNE hw10group

	MOVQ o+0(FP), R15
	HEADS_STORE_10
	VZEROUPPER
	RET

// func weightedSumHeadsHalf2AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeadsHalf4AVX2 for two heads (a decode step's pair).
TEXT ·weightedSumHeadsHalf2AVX2(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_2
	MOVQ tab+16(FP), R15

yhw2group:
	HW_GROUP
	EIGHT(HWY_VALUES, YHEADS_MAC_2)
	HW_END
	JNE yhw2group

	MOVQ o+0(FP), R15
	YHEADS_STORE_2
	VZEROUPPER
	RET

// func weightedSumHeadsHalf4AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeadsHalf4AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeadsHalf4AVX2(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_4
	MOVQ tab+16(FP), R15

yhw4group:
	HW_GROUP
	EIGHT(HWY_VALUES, YHEADS_MAC_4)
	HW_END
	JNE yhw4group

	MOVQ o+0(FP), R15
	YHEADS_STORE_4
	VZEROUPPER
	RET

// func weightedSumHeadsHalf6AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeadsHalf6AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeadsHalf6AVX2(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_6
	MOVQ tab+16(FP), R15

yhw6group:
	HW_GROUP
	EIGHT(HWY_VALUES, YHEADS_MAC_6)
	HW_END
	JNE yhw6group

	MOVQ o+0(FP), R15
	YHEADS_STORE_6
	VZEROUPPER
	RET

// func weightedSumHeadsHalf8AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeadsHalf8AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeadsHalf8AVX2(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_8
	MOVQ tab+16(FP), R15

yhw8group:
	HW_GROUP
	EIGHT(HWY_VALUES, YHEADS_MAC_8)
	HW_END
	JNE yhw8group

	MOVQ o+0(FP), R15
	YHEADS_STORE_8
	VZEROUPPER
	RET

// func weightedSumHeadsHalf10AVX2(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeadsHalf10AVX512 in AVX2: 8 output floats of each head.
TEXT ·weightedSumHeadsHalf10AVX2(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	YHEADS_LOAD_10
	MOVQ tab+16(FP), R15

yhw10group:
	HW_GROUP
	EIGHT(HWY_VALUES, YHEADS_MAC_10)
	HW_END
	JNE yhw10group

	MOVQ o+0(FP), R15
	YHEADS_STORE_10
	VZEROUPPER
	RET
