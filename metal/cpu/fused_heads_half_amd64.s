#include "textflag.h"
#include "fused_avx512_amd64.h"
#include "fused_heads_amd64.h"
#include "fused_heads_half_amd64.h"

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

	HS_END4
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
	HS6_ZERO

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

	HS_END6
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

	HS_END2
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
