#include "textflag.h"
#include "fused_avx512_amd64.h"
#include "fused_heads_amd64.h"
#include "fused_heads_half_amd64.h"

// Attention's kernels over a KVBF16 cache for AVX512_BF16
// (attention_bf16.go has their arithmetic): the in-place many-head loops
// of fused_heads_half_amd64.s with VDPBF16PS for the float16 conversions
// and fused multiply-adds, over the same tables of groups of eight
// positions, and the narrowing of queries and weights to bfloat16.
//
// The Go assembler knows neither VDPBF16PS nor VCVTNEPS2BF16, so DPBF
// and NARROW spell out their EVEX encodings (register operands only).

// DPBF(s2, s1, d) is VDPBF16PS Zs2, Zs1, Zd (Go operand order; register
// numbers 0-31): Zd += the pairs of Zs1 times those of Zs2. EVEX.512.F3.
// 0F38.W0 52 /r: R, X, B and R' (inverted) extend d and s2, vvvv and V'
// (inverted) hold s1.
#define DPBF(s2, s1, d) \
	BYTE $0x62; \
	BYTE $(((1-(((d)>>3)&1))<<7) | ((1-(((s2)>>4)&1))<<6) | ((1-(((s2)>>3)&1))<<5) | ((1-(((d)>>4)&1))<<4) | 2); \
	BYTE $(((15-((s1)&15))<<3) | 6); \
	BYTE $(0x40 | ((1-(((s1)>>4)&1))<<3)); \
	BYTE $0x52; \
	BYTE $(0xC0 | (((d)&7)<<3) | ((s2)&7))

// NARROW(s, d) is VCVTNEPS2BF16 Zs, Yd: sixteen float32 to bfloat16,
// rounded to nearest even, subnormals as zero (EVEX.512.F3.0F38.W0 72 /r).
#define NARROW(s, d) \
	BYTE $0x62; \
	BYTE $(((1-(((d)>>3)&1))<<7) | ((1-(((s)>>4)&1))<<6) | ((1-(((s)>>3)&1))<<5) | ((1-(((d)>>4)&1))<<4) | 2); \
	BYTE $0x7E; \
	BYTE $0x48; \
	BYTE $0x72; \
	BYTE $(0xC0 | (((d)&7)<<3) | ((s)&7))

// KBF loads the key blocks (sixteen bfloat16) of positions a and b into
// the low and high halves of z (y its low half).
#define KBF(a, b, y, z) \
	VMOVDQU32    a, y; \
	VINSERTI64X4 $1, b, z, z

// HB_KEYS loads one block of sixteen dimensions of the group's eight
// positions into Z24..Z27 (positions j and j+4 in one register) and
// prefetches four lines of the next group.
#define HB_KEYS \
	KBF((R10), (R11), Y24, Z24); \
	KBF((R10)(DX*1), (R11)(DX*1), Y25, Z25); \
	KBF((R10)(DX*2), (R11)(DX*2), Y26, Z26); \
	KBF((R10)(R9*1), (R11)(R9*1), Y27, Z27); \
	PREFETCHT0 (R8); \
	PREFETCHT0 64(R8); \
	PREFETCHT0 128(R8); \
	PREFETCHT0 192(R8); \
	ADDQ       $256, R8

// HB_NEXT steps to the next block of dimensions: 32 bytes of keys and of
// the query.
#define HB_NEXT \
	ADDQ $32, R10; \
	ADDQ $32, R11; \
	ADDQ $32, CX; \
	CMPQ CX, qbytes+32(FP)

// HB_HEAD adds the query block (q)(CX*1), broadcast to both halves of
// z (register number t), times the key pairs Z24..Z27 to Za0..Za3.
#define HB_HEAD(q, z, t, a0, a1, a2, a3) \
	VBROADCASTI64X4 (q)(CX*1), z; \
	DPBF(24, t, a0); \
	DPBF(25, t, a1); \
	DPBF(26, t, a2); \
	DPBF(27, t, a3)

// The value kernels: head i's 32 outputs in Z2i, Z2i+1 (HEADS_LOAD_n,
// HEADS_STORE_n), its weight pointer as HEADS_POINTERS loads them, CX the
// pair, SI the pair's words at byte off of its 32 dimensions, R14 the
// distance to the same bytes of the group to prefetch, R15 the group.

// HB_VALUES loads one pair's 32 words (both positions' 32 dimensions,
// two lines) into Z20, Z21, prefetches the same lines of the next group,
// and steps SI to the next pair.
#define HB_VALUES \
	VMOVDQU32  (SI), Z20; \
	VMOVDQU32  64(SI), Z21; \
	PREFETCHT0 (SI)(R14*1); \
	PREFETCHT0 64(SI)(R14*1); \
	ADDQ       stride+40(FP), SI

// HB_MAC adds the head's weights of pair CX (at r), broadcast into z
// (register number t), times the pair's values Z20, Z21 to Za0, Za1.
#define HB_MAC(r, z, t, a0, a1) \
	VPBROADCASTD (r)(CX*4), z; \
	DPBF(20, t, a0); \
	DPBF(21, t, a1)

#define HB_MAC_2 \
	HB_MAC(AX, Z22, 22, 0, 1); \
	HB_MAC(BX, Z23, 23, 2, 3)

#define HB_MAC_4 \
	HB_MAC_2; \
	HB_MAC(DX, Z24, 24, 4, 5); \
	HB_MAC(DI, Z25, 25, 6, 7)

#define HB_MAC_6 \
	HB_MAC_4; \
	HB_MAC(R8, Z26, 26, 8, 9); \
	HB_MAC(R9, Z27, 27, 10, 11)

#define HB_MAC_8 \
	HB_MAC_6; \
	HB_MAC(R10, Z28, 28, 12, 13); \
	HB_MAC(R11, Z29, 29, 14, 15)

#define HB_MAC_10 \
	HB_MAC_8; \
	HB_MAC(R12, Z30, 30, 16, 17); \
	HB_MAC(R13, Z31, 31, 18, 19)

// HB_SUMS is the body of the value kernel for n heads (load, mac and
// store their HEADS_LOAD_n, HB_MAC_n, HEADS_STORE_n): pairs pairs from
// the groups of tab, four a group.
#define HB_SUMS(load, mac, store, group, pair, done) \
	HW_ARGS; \
	MOVQ o+0(FP), R15; \
	load; \
	MOVQ tab+16(FP), R15; \
group: \
	HW_GROUP; \
pair: \
	HB_VALUES; \
	mac; \
	INCQ  CX; \
	CMPQ  CX, pairs+24(FP); \
	JEQ   done; \
	TESTQ $3, CX; \
	JNE   pair; \
	ADDQ  $32, R15; \
	JMP   group; \
done: \
	MOVQ o+0(FP), R15; \
	store; \
	VZEROUPPER; \
	RET

// The whole-row value kernel (sumsRowsBF16x2AVX512): two heads' 128
// outputs in Z0..Z7 and Z8..Z15, one pair's 128 words in Z16..Z23.

// HR_VALUES loads one pair's words (eight lines), prefetches the same
// lines of the next group, and steps SI to the next pair.
#define HR_VALUES \
	VMOVDQU32  (SI), Z16; \
	VMOVDQU32  64(SI), Z17; \
	VMOVDQU32  128(SI), Z18; \
	VMOVDQU32  192(SI), Z19; \
	VMOVDQU32  256(SI), Z20; \
	VMOVDQU32  320(SI), Z21; \
	VMOVDQU32  384(SI), Z22; \
	VMOVDQU32  448(SI), Z23; \
	PREFETCHT0 (SI)(R14*1); \
	PREFETCHT0 64(SI)(R14*1); \
	PREFETCHT0 128(SI)(R14*1); \
	PREFETCHT0 192(SI)(R14*1); \
	PREFETCHT0 256(SI)(R14*1); \
	PREFETCHT0 320(SI)(R14*1); \
	PREFETCHT0 384(SI)(R14*1); \
	PREFETCHT0 448(SI)(R14*1); \
	ADDQ       $512, SI

// HR_MAC adds the head's weights of pair CX (at r), broadcast into z
// (register number t), times the pair Z16..Z23 to Za..Za+7.
#define HR_MAC(r, z, t, a) \
	VPBROADCASTD (r)(CX*4), z; \
	DPBF(16, t, a); \
	DPBF(17, t, a+1); \
	DPBF(18, t, a+2); \
	DPBF(19, t, a+3); \
	DPBF(20, t, a+4); \
	DPBF(21, t, a+5); \
	DPBF(22, t, a+6); \
	DPBF(23, t, a+7)

// HR_LOAD and HR_STORE move 128 floats between (r) and z0..z7.
#define HR_LOAD(r, z0, z1, z2, z3, z4, z5, z6, z7) \
	VMOVUPS (r), z0; \
	VMOVUPS 64(r), z1; \
	VMOVUPS 128(r), z2; \
	VMOVUPS 192(r), z3; \
	VMOVUPS 256(r), z4; \
	VMOVUPS 320(r), z5; \
	VMOVUPS 384(r), z6; \
	VMOVUPS 448(r), z7

#define HR_STORE(r, z0, z1, z2, z3, z4, z5, z6, z7) \
	VMOVUPS z0, (r); \
	VMOVUPS z1, 64(r); \
	VMOVUPS z2, 128(r); \
	VMOVUPS z3, 192(r); \
	VMOVUPS z4, 256(r); \
	VMOVUPS z5, 320(r); \
	VMOVUPS z6, 384(r); \
	VMOVUPS z7, 448(r)

// The decode step's kernels over tables of stretches (decodeByTables):
// fused_half_amd64.s's scoresPairHalfTabAVX512 and
// weightedSumPairHalfTabAVX512 for bfloat16.

// BPAIR loads the key blocks (sixteen bfloat16) of positions a and b into
// the low and high halves of Z9 and adds their products with the query
// blocks in Z8 and Z10 to registers acc0 and acc1.
#define BPAIR(a, b, acc0, acc1) \
	VMOVDQU      a, Y9; \
	VINSERTI64X4 $1, b, Z9, Z9; \
	DPBF(9, 8, acc0); \
	DPBF(9, 10, acc1)

// BF_PAIR_BLOCK is SCORES_PAIR_BLOCK for bfloat16 keys: a block of
// sixteen dimensions (32 bytes of keys and of each query) and four lines
// of the group's mirror at R15 prefetched.
#define BF_PAIR_BLOCK \
	VBROADCASTI64X4 (AX), Z8; \
	VBROADCASTI64X4 (AX)(SI*1), Z10; \
	BPAIR((R10), (R11), 0, 4); \
	BPAIR((R10)(DX*1), (R11)(DX*1), 1, 5); \
	BPAIR((R10)(DX*2), (R11)(DX*2), 2, 6); \
	BPAIR((R10)(R9*1), (R11)(R9*1), 3, 7); \
	PREFETCHT0 (R15); \
	PREFETCHT0 64(R15); \
	PREFETCHT0 128(R15); \
	PREFETCHT0 192(R15); \
	ADDQ       $256, R15; \
	ADDQ       $32, AX; \
	ADDQ       $32, R10; \
	ADDQ       $32, R11

// BWSUM_PAIR adds one pair of positions' weighted values (128 dimensions:
// the eight lines at R8) to the chunk's sums of both heads (Z0..Z7,
// Z16..Z23), prefetching the same lines at the mirror R15 bytes on.
#define BWSUM_PAIR \
	VPBROADCASTD (R9), Z8; \
	VPBROADCASTD (R9)(R10*1), Z10; \
	VMOVDQU32    (R8), Z24; \
	VMOVDQU32    64(R8), Z25; \
	VMOVDQU32    128(R8), Z26; \
	VMOVDQU32    192(R8), Z27; \
	VMOVDQU32    256(R8), Z28; \
	VMOVDQU32    320(R8), Z29; \
	VMOVDQU32    384(R8), Z30; \
	VMOVDQU32    448(R8), Z31; \
	PREFETCHT0   (R8)(R15*1); \
	PREFETCHT0   64(R8)(R15*1); \
	PREFETCHT0   128(R8)(R15*1); \
	PREFETCHT0   192(R8)(R15*1); \
	PREFETCHT0   256(R8)(R15*1); \
	PREFETCHT0   320(R8)(R15*1); \
	PREFETCHT0   384(R8)(R15*1); \
	PREFETCHT0   448(R8)(R15*1); \
	DPBF(24, 8, 0); \
	DPBF(25, 8, 1); \
	DPBF(26, 8, 2); \
	DPBF(27, 8, 3); \
	DPBF(28, 8, 4); \
	DPBF(29, 8, 5); \
	DPBF(30, 8, 6); \
	DPBF(31, 8, 7); \
	DPBF(24, 10, 16); \
	DPBF(25, 10, 17); \
	DPBF(26, 10, 18); \
	DPBF(27, 10, 19); \
	DPBF(28, 10, 20); \
	DPBF(29, 10, 21); \
	DPBF(30, 10, 22); \
	DPBF(31, 10, 23); \
	ADDQ         DX, R8; \
	ADDQ         $4, R9

// func scoresHeadsBF16x4AVX512(out *[6]*float32, q *[6]*uint16, tab *halfGroup, stride, qbytes, obytes int, scale float32)
// The scores of four heads (queries as bfloat16, qbytes each) against
// the groups of eight positions of tab, keys bfloat16 in place (rows
// stride bytes apart): obytes/32 groups, their scores at out[i] + 32
// bytes a group. Each lane's sums are dotBF16Ref's: pairs of
// dimensions by VDPBF16PS, then FOLDQ's fold and the scale.
TEXT ·scoresHeadsBF16x4AVX512(SB), NOSPLIT, $0-52
	HS_ARGS

hb4group:
	HS_GROUP

hb4block:
	HB_KEYS
	HB_HEAD(AX, Z28, 28, 0, 1, 2, 3)
	HB_HEAD(BX, Z29, 29, 4, 5, 6, 7)
	HB_HEAD(SI, Z28, 28, 16, 17, 18, 19)
	HB_HEAD(DI, Z29, 29, 20, 21, 22, 23)
	HB_NEXT
	JNE hb4block

	HS_END4
	JNE  hb4group

	VZEROUPPER
	RET

// func scoresHeadsBF16x6AVX512(out *[6]*float32, q *[6]*uint16, tab *halfGroup, stride, qbytes, obytes int, scale float32)
// scoresHeadsBF16x4AVX512 for six heads.
TEXT ·scoresHeadsBF16x6AVX512(SB), NOSPLIT, $0-52
	HS_ARGS
	MOVQ q+8(FP), CX
	MOVQ 32(CX), R12
	MOVQ 40(CX), R13

hb6group:
	HS_GROUP
	HS6_ZERO

hb6block:
	HB_KEYS
	HB_HEAD(AX, Z28, 28, 0, 1, 2, 3)
	HB_HEAD(BX, Z29, 29, 4, 5, 6, 7)
	HB_HEAD(SI, Z28, 28, 16, 17, 18, 19)
	HB_HEAD(DI, Z29, 29, 20, 21, 22, 23)
	HB_HEAD(R12, Z28, 28, 8, 10, 11, 12)
	HB_HEAD(R13, Z29, 29, 13, 14, 30, 31)
	HB_NEXT
	JNE hb6block

	HS_END6
	JNE  hb6group

	VZEROUPPER
	RET

// func scoresHeadsBF16x2AVX512(out *[6]*float32, q *[6]*uint16, tab *halfGroup, stride, qbytes, obytes int, scale float32)
// scoresHeadsBF16x4AVX512 for two heads (a decode step's pair).
TEXT ·scoresHeadsBF16x2AVX512(SB), NOSPLIT, $0-52
	HS_ARGS

hb2group:
	HS_GROUP

hb2block:
	HB_KEYS
	HB_HEAD(AX, Z28, 28, 0, 1, 2, 3)
	HB_HEAD(BX, Z29, 29, 4, 5, 6, 7)
	HB_NEXT
	JNE hb2block

	HS_END2
	JNE  hb2group

	VZEROUPPER
	RET

// func sumsHeadsBF16x2AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
// Adds to 32 outputs of each of two heads (o[i]) the value pairs of tab's
// groups, pairs of them (at least one), from byte off of each pair's
// words (pairs stride bytes apart), weighted by the pairs of w[i]: each
// lane's sums are sumPairsRef's.
TEXT ·sumsHeadsBF16x2AVX512(SB), NOSPLIT, $0-48
	HB_SUMS(HEADS_LOAD_2, HB_MAC_2, HEADS_STORE_2, hb2sgroup, hb2spair, hb2sdone)

// func sumsHeadsBF16x4AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
TEXT ·sumsHeadsBF16x4AVX512(SB), NOSPLIT, $0-48
	HB_SUMS(HEADS_LOAD_4, HB_MAC_4, HEADS_STORE_4, hb4sgroup, hb4spair, hb4sdone)

// func sumsHeadsBF16x6AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
TEXT ·sumsHeadsBF16x6AVX512(SB), NOSPLIT, $0-48
	HB_SUMS(HEADS_LOAD_6, HB_MAC_6, HEADS_STORE_6, hb6sgroup, hb6spair, hb6sdone)

// func sumsHeadsBF16x8AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
TEXT ·sumsHeadsBF16x8AVX512(SB), NOSPLIT, $0-48
	HB_SUMS(HEADS_LOAD_8, HB_MAC_8, HEADS_STORE_8, hb8sgroup, hb8spair, hb8sdone)

// func sumsHeadsBF16x10AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
TEXT ·sumsHeadsBF16x10AVX512(SB), NOSPLIT, $0-48
	HB_SUMS(HEADS_LOAD_10, HB_MAC_10, HEADS_STORE_10, hb10sgroup, hb10spair, hb10sdone)

// func narrowBF16AVX512(dst *uint16, src *float32, n int)
// dst[i] = bfloat16(src[i]) for n floats, a multiple of sixteen. Each
// load is 64 bytes at 4i, each store 32 bytes at 2i: in place, no store
// reaches a byte not yet loaded.
TEXT ·narrowBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

narrow16:
	VMOVUPS (SI), Z0
	NARROW(0, 1)
	VMOVDQU Y1, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	SUBQ    $16, CX
	JNE     narrow16

	VZEROUPPER
	RET

// func narrowPairsBF16AVX512(dst *uint16, src *float32, n, shift int, keep uint32)
// Stores src[i] as bfloat16 in the 16-bit half of 32-bit word i of dst
// that shift (0: the low, 16: the high) selects, keeping the other half
// (keep masks it): one slot's values of a KVBF16 cache's pair of slots.
// n is a multiple of sixteen.
TEXT ·narrowPairsBF16AVX512(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         shift+24(FP), X3
	MOVL         keep+32(FP), AX
	VPBROADCASTD AX, Z4

pairs16:
	VMOVUPS   (SI), Z0
	NARROW(0, 1)
	VPMOVZXWD Y1, Z1
	VPSLLD    X3, Z1, Z1
	VPANDD    (DI), Z4, Z2
	VPORD     Z1, Z2, Z2
	VMOVDQU32 Z2, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JNE       pairs16

	VZEROUPPER
	RET

// func sumsRowsBF16x2AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
// sumsHeadsBF16x2AVX512 for heads of 128 (off 0, stride 512) whole: each
// pair's words are read once, as one stretch of eight lines, where the
// 32-dimension kernels read two lines of it in each of four passes.
TEXT ·sumsRowsBF16x2AVX512(SB), NOSPLIT, $0-48
	HW_ARGS
	MOVQ o+0(FP), R15
	MOVQ 0(R15), R8
	MOVQ 8(R15), R9
	HR_LOAD(R8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	HR_LOAD(R9, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ tab+16(FP), R15

hrgroup:
	HW_GROUP

hrpair:
	HR_VALUES
	HR_MAC(AX, Z24, 24, 0)
	HR_MAC(BX, Z25, 25, 8)
	INCQ  CX
	CMPQ  CX, pairs+24(FP)
	JEQ   hrdone
	TESTQ $3, CX
	JNE   hrpair
	ADDQ  $32, R15
	JMP   hrgroup

hrdone:
	MOVQ o+0(FP), R15
	MOVQ 0(R15), R8
	MOVQ 8(R15), R9
	HR_STORE(R8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	HR_STORE(R9, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	VZEROUPPER
	RET

// func scoresPairBF16TabAVX512(out0, out1 *float32, q0, q1 *uint16, tab *decodeStretch, n, blocks int, scale float32)
// The scores of two heads (queries bfloat16) against the n stretches of
// tab, rows of blocks×16 bfloat16 each: each stretch's groups of eight
// positions, the last one whole (a block holds whole groups; scores past
// the context are never used), their scores one after another from out0
// and out1. Each lane's sums are dotBF16Ref's.
TEXT ·scoresPairBF16TabAVX512(SB), NOSPLIT, $0-60
	TAB_SCORES_ARGS($5, Z15) // a row: 32·blocks bytes

btentry:
	MOVQ  tab+32(FP), CX
	TAB_LEAD(CX, R8)
	MOVQ  0(CX), R8
	MOVQ  8(CX), R14
	SUBQ  R8, R14    // pf − k
	MOVQ  24(CX), R12
	ADDQ  $7, R12
	SHRQ  $3, R12    // groups
	ADDQ  $32, CX
	MOVQ  CX, tab+32(FP)

btgroup:
	SCORES_PAIR_GROUP
	LEAQ (R8)(R14*1), R15

btblock:
	BF_PAIR_BLOCK
	DECQ CX
	JNE  btblock

	SCORES_PAIR_PUT
	DECQ R12
	JNE  btgroup

	DECQ n+40(FP)
	JNE  btentry

	VZEROUPPER
	RET

// func sumsPairBF16TabAVX512(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *uint16, chunks, stride int)
// Adds to chunks×128 floats of two heads' outputs the value pairs of the
// n stretches of tab (pairs stride bytes apart), each stretch's positions
// in pairs, the last pair's second position zero-weighted past an odd
// count, weights one after another from w0 and w1: each lane's sums are
// sumPairsRef's, kept in registers through every stretch.
TEXT ·sumsPairBF16TabAVX512(SB), NOSPLIT, $0-64
	TAB_SUMS_ARGS
	XORQ R11, R11 // the chunk's byte offset in a pair

btchunk:
	TAB_CHUNK(TAB_LOAD_SUMS)

btvstretch:
	TAB_STRETCH(R15)
	ADDQ R11, R8
	MOVQ 24(AX), CX
	ADDQ $1, CX
	SHRQ $1, CX      // pairs
	ADDQ $32, AX

btpair:
	BWSUM_PAIR
	DECQ CX
	JNE  btpair

	DECQ R12
	JNE  btvstretch

	STORE8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	STORE8((DI)(BX*1), Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ $512, DI
	ADDQ $512, R11
	DECQ R14
	JNE  btchunk

	VZEROUPPER
	RET
