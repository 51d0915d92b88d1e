#include "textflag.h"
#include "quantdot_neon_arm64.h"

// NEON versions of the many-head value loops (fused_heads_amd64.s,
// fused_heads_half_amd64.s): 4, 6, 8 or 10 query heads' value sums over
// the same positions, eight output floats of each head per call, held in
// two registers a head (V0..V19) across all the positions, so that each
// position's values are loaded (and, read in place, widened from float16)
// once for every head. Each output float is one fused multiply-add per
// position, in position order: the sums are weightedSumRef's.

// FMLA Vd.4S, Vn.4S, Vm.4S (Vd += Vn·Vm, one rounding).
#define FMLA4S(d, n, m) WORD $(0x4E20CC00 | ((m)<<16) | ((n)<<5) | (d))

// NH_MAC adds a head's weight (its pointer r, stepped on), broadcast into
// Vw (w its number), times the position's values V20, V21 to its sums
// Va, Va+1 (numbers a, a1).
#define NH_MAC(r, vw, w, a, a1) \
	VLD1R.P 4(r), [vw.S4]; \
	FMLA4S(a, 20, w); \
	FMLA4S(a1, 21, w)

// NH_LOAD and NH_STORE move a head's eight outputs, at the pointer at
// off(R0), to and from va, vb.
#define NH_LOAD(off, va, vb) \
	MOVD off(R0), R12; \
	VLD1 (R12), [va.S4, vb.S4]

#define NH_STORE(off, va, vb) \
	MOVD off(R0), R12; \
	VST1 [va.S4, vb.S4], (R12)

// NH_WEIGHTS loads the ten weight pointers of the table at w+8(FP).
#define NH_WEIGHTS \
	MOVD w+8(FP), R12; \
	LDP  (R12), (R3, R4); \
	LDP  16(R12), (R5, R6); \
	LDP  32(R12), (R7, R8); \
	LDP  48(R12), (R9, R10); \
	LDP  64(R12), (R11, R13)

// NH_HALF widens the position's eight float16 values at R1 into V20, V21,
// prefetches the same bytes R19 further (the group read next), and steps
// R1 to the next position.
#define NH_HALF \
	VLD1 (R1), [V20.H8]; \
	ADD  R19, R1, R12; \
	PRFM (R12), PLDL1KEEP; \
	ADD  R2, R1, R1; \
	FCVTL2(21, 20); \
	FCVTL(20, 20)

// NH_GROUPS readies the walk over the groups of positions: R16 the
// group, R17 the last, R14 the byte offset in each row, R2 the stride.
#define NH_GROUPS \
	MOVD tab+16(FP), R16; \
	MOVD last+24(FP), R17; \
	MOVD off+32(FP), R14; \
	MOVD stride+40(FP), R2

// NH_GROUP starts a group: R1 its first row's values at the offset, R19
// the distance to the same bytes of the group to prefetch, R15 its eight
// positions to go.
#define NH_GROUP \
	LDP  (R16), (R1, R19); \
	ADD  R14, R1, R1; \
	SUB  R1, R19, R19; \
	ADD  R14, R19, R19; \
	MOVD $8, R15

// NH_NEXT_GROUP compares the group with the last and steps to the next
// (ADD keeps the flags).
#define NH_NEXT_GROUP \
	CMP R17, R16; \
	ADD $32, R16, R16

// The heads in pairs (0-1, 2-3, 4-5, 6-7, 8-9), so that each kernel is the
// groups of its heads: NH_LOADS_*, NH_MACS_* and NH_STORES_*.
#define NH_LOADS_0_1 \
	NH_LOAD(0, V0, V1); \
	NH_LOAD(8, V2, V3)

#define NH_LOADS_2_3 \
	NH_LOAD(16, V4, V5); \
	NH_LOAD(24, V6, V7)

#define NH_LOADS_4_5 \
	NH_LOAD(32, V8, V9); \
	NH_LOAD(40, V10, V11)

#define NH_LOADS_6_7 \
	NH_LOAD(48, V12, V13); \
	NH_LOAD(56, V14, V15)

#define NH_LOADS_8_9 \
	NH_LOAD(64, V16, V17); \
	NH_LOAD(72, V18, V19)

#define NH_MACS_0_1 \
	NH_MAC(R3, V22, 22, 0, 1); \
	NH_MAC(R4, V23, 23, 2, 3)

#define NH_MACS_2_3 \
	NH_MAC(R5, V24, 24, 4, 5); \
	NH_MAC(R6, V25, 25, 6, 7)

#define NH_MACS_4_5 \
	NH_MAC(R7, V26, 26, 8, 9); \
	NH_MAC(R8, V27, 27, 10, 11)

#define NH_MACS_6_7 \
	NH_MAC(R9, V28, 28, 12, 13); \
	NH_MAC(R10, V29, 29, 14, 15)

#define NH_MACS_8_9 \
	NH_MAC(R11, V30, 30, 16, 17); \
	NH_MAC(R13, V31, 31, 18, 19)

#define NH_STORES_0_1 \
	NH_STORE(0, V0, V1); \
	NH_STORE(8, V2, V3)

#define NH_STORES_2_3 \
	NH_STORE(16, V4, V5); \
	NH_STORE(24, V6, V7)

#define NH_STORES_4_5 \
	NH_STORE(32, V8, V9); \
	NH_STORE(40, V10, V11)

#define NH_STORES_6_7 \
	NH_STORE(48, V12, V13); \
	NH_STORE(56, V14, V15)

#define NH_STORES_8_9 \
	NH_STORE(64, V16, V17); \
	NH_STORE(72, V18, V19)

// The heads by count: NH_LOADS_n, NH_MACS_n and NH_STORES_n for the first n.
#define NH_LOADS_2 \
	NH_LOADS_0_1

#define NH_LOADS_4 \
	NH_LOADS_0_1; \
	NH_LOADS_2_3

#define NH_LOADS_6 \
	NH_LOADS_0_1; \
	NH_LOADS_2_3; \
	NH_LOADS_4_5

#define NH_LOADS_8 \
	NH_LOADS_0_1; \
	NH_LOADS_2_3; \
	NH_LOADS_4_5; \
	NH_LOADS_6_7

#define NH_LOADS_10 \
	NH_LOADS_0_1; \
	NH_LOADS_2_3; \
	NH_LOADS_4_5; \
	NH_LOADS_6_7; \
	NH_LOADS_8_9

#define NH_MACS_2 \
	NH_MACS_0_1

#define NH_MACS_4 \
	NH_MACS_0_1; \
	NH_MACS_2_3

#define NH_MACS_6 \
	NH_MACS_0_1; \
	NH_MACS_2_3; \
	NH_MACS_4_5

#define NH_MACS_8 \
	NH_MACS_0_1; \
	NH_MACS_2_3; \
	NH_MACS_4_5; \
	NH_MACS_6_7

#define NH_MACS_10 \
	NH_MACS_0_1; \
	NH_MACS_2_3; \
	NH_MACS_4_5; \
	NH_MACS_6_7; \
	NH_MACS_8_9

#define NH_STORES_2 \
	NH_STORES_0_1

#define NH_STORES_4 \
	NH_STORES_0_1; \
	NH_STORES_2_3

#define NH_STORES_6 \
	NH_STORES_0_1; \
	NH_STORES_2_3; \
	NH_STORES_4_5

#define NH_STORES_8 \
	NH_STORES_0_1; \
	NH_STORES_2_3; \
	NH_STORES_4_5; \
	NH_STORES_6_7

#define NH_STORES_10 \
	NH_STORES_0_1; \
	NH_STORES_2_3; \
	NH_STORES_4_5; \
	NH_STORES_6_7; \
	NH_STORES_8_9

// func weightedSumHeadsHalf2NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeadsHalf4NEON for two heads (a decode step's pair).
TEXT ·weightedSumHeadsHalf2NEON(SB), NOSPLIT, $0-48
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_2
	NH_GROUPS

nhh2group:
	NH_GROUP

nhh2pos:
	NH_HALF
	NH_MACS_2
	SUB  $1, R15, R15
	CBNZ R15, nhh2pos

	NH_NEXT_GROUP
	BNE nhh2group

	NH_STORES_2
	RET

// func weightedSumHeads4NEON(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 4, p < n in
// order, j < 8.
TEXT ·weightedSumHeads4NEON(SB), NOSPLIT, $0-40
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_4
	MOVD v+16(FP), R1
	MOVD stride+24(FP), R2
	MOVD n+32(FP), R15

nh4pos:
	VLD1 (R1), [V20.S4, V21.S4]
	ADD  R2, R1, R1
	NH_MACS_4
	SUB  $1, R15, R15
	CBNZ R15, nh4pos

	NH_STORES_4
	RET

// func weightedSumHeadsHalf4NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads4NEON with the values float16 in place: the groups of
// eight positions tab..last (halfGroup), values from byte off of each row.
TEXT ·weightedSumHeadsHalf4NEON(SB), NOSPLIT, $0-48
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_4
	NH_GROUPS

nhh4group:
	NH_GROUP

nhh4pos:
	NH_HALF
	NH_MACS_4
	SUB  $1, R15, R15
	CBNZ R15, nhh4pos

	NH_NEXT_GROUP
	BNE nhh4group

	NH_STORES_4
	RET

// func weightedSumHeads6NEON(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 6, p < n in
// order, j < 8.
TEXT ·weightedSumHeads6NEON(SB), NOSPLIT, $0-40
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_6
	MOVD v+16(FP), R1
	MOVD stride+24(FP), R2
	MOVD n+32(FP), R15

nh6pos:
	VLD1 (R1), [V20.S4, V21.S4]
	ADD  R2, R1, R1
	NH_MACS_6
	SUB  $1, R15, R15
	CBNZ R15, nh6pos

	NH_STORES_6
	RET

// func weightedSumHeadsHalf6NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads6NEON with the values float16 in place: the groups of
// eight positions tab..last (halfGroup), values from byte off of each row.
TEXT ·weightedSumHeadsHalf6NEON(SB), NOSPLIT, $0-48
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_6
	NH_GROUPS

nhh6group:
	NH_GROUP

nhh6pos:
	NH_HALF
	NH_MACS_6
	SUB  $1, R15, R15
	CBNZ R15, nhh6pos

	NH_NEXT_GROUP
	BNE nhh6group

	NH_STORES_6
	RET

// func weightedSumHeads8NEON(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 8, p < n in
// order, j < 8.
TEXT ·weightedSumHeads8NEON(SB), NOSPLIT, $0-40
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_8
	MOVD v+16(FP), R1
	MOVD stride+24(FP), R2
	MOVD n+32(FP), R15

nh8pos:
	VLD1 (R1), [V20.S4, V21.S4]
	ADD  R2, R1, R1
	NH_MACS_8
	SUB  $1, R15, R15
	CBNZ R15, nh8pos

	NH_STORES_8
	RET

// func weightedSumHeadsHalf8NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads8NEON with the values float16 in place: the groups of
// eight positions tab..last (halfGroup), values from byte off of each row.
TEXT ·weightedSumHeadsHalf8NEON(SB), NOSPLIT, $0-48
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_8
	NH_GROUPS

nhh8group:
	NH_GROUP

nhh8pos:
	NH_HALF
	NH_MACS_8
	SUB  $1, R15, R15
	CBNZ R15, nhh8pos

	NH_NEXT_GROUP
	BNE nhh8group

	NH_STORES_8
	RET

// func weightedSumHeads10NEON(o, w *[10]*float32, v *float32, stride, n int)
// o[i][j] += w[i][p]·v[p·stride bytes + j] for heads i < 10, p < n in
// order, j < 8.
TEXT ·weightedSumHeads10NEON(SB), NOSPLIT, $0-40
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_10
	MOVD v+16(FP), R1
	MOVD stride+24(FP), R2
	MOVD n+32(FP), R15

nh10pos:
	VLD1 (R1), [V20.S4, V21.S4]
	ADD  R2, R1, R1
	NH_MACS_10
	SUB  $1, R15, R15
	CBNZ R15, nh10pos

	NH_STORES_10
	RET

// func weightedSumHeadsHalf10NEON(o, w *[10]*float32, tab, last *halfGroup, off, stride int)
// weightedSumHeads10NEON with the values float16 in place: the groups of
// eight positions tab..last (halfGroup), values from byte off of each row.
TEXT ·weightedSumHeadsHalf10NEON(SB), NOSPLIT, $0-48
	NH_WEIGHTS
	MOVD o+0(FP), R0
	NH_LOADS_10
	NH_GROUPS

nhh10group:
	NH_GROUP

nhh10pos:
	NH_HALF
	NH_MACS_10
	SUB  $1, R15, R15
	CBNZ R15, nhh10pos

	NH_NEXT_GROUP
	BNE nhh10group

	NH_STORES_10
	RET
