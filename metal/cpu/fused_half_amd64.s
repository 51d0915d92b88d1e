#include "textflag.h"
#include "fused_avx512_amd64.h"
#include "fused_avx2_amd64.h"

// Attention's pair loops (fused_avx512_amd64.s) reading the cached keys and
// values as float16 in place, for a run of one token. Widening a chunk
// into scratch first pays off when several tokens read it; for one token
// the stores and reloads of the widened copy were as much work as the
// products. VCVTPH2PS is exact, so every product and sum is the one the
// widened path computes.
//
// Each kernel also prefetches, as it reads its keys or values, the same
// bytes relative to pf: the caller points pf at the stretch of the cache
// it reads next. Paced with the reads (two or four cache lines at a time),
// the prefetches keep the memory busy without the stalls a burst of
// prefetches ahead of each stretch caused once the miss buffers filled.

// HPAIR loads the key blocks (eight float16) of positions a and b, widened
// into the low and high halves of Z9, and adds their products with query
// blocks Z8 and Z10 to acc0 and acc1.
#define HPAIR(a, b, acc0, acc1) \
	VMOVDQU     a, X9; \
	VINSERTI128 $1, b, Y9, Y9; \
	VCVTPH2PS   Y9, Z9; \
	VFMADD231PS Z9, Z8, acc0; \
	VFMADD231PS Z9, Z10, acc1

// func scoresPairHalfAVX512(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)
// scoresPairAVX512 with the keys float16 (stride in bytes): eight
// positions at a time over blocks×8 dimensions. The eight positions' keys
// are 8·stride bytes from R8; the rows of one KV head in a cache block are
// contiguous (stride = 16·blocks), so prefetching 128 bytes a block covers
// the group's mirror at pf.
TEXT ·scoresPairHalfAVX512(SB), NOSPLIT, $0-80
	SCORES_PAIR_ARGS
	MOVQ pf+72(FP), R14
	SUBQ R8, R14 // pf − k

hgroup:
	SCORES_PAIR_GROUP
	LEAQ (R8)(R14*1), R15

hblock:
	SCORES_PAIR_BLOCK(HPAIR, $16)
	PREFETCHT0 (R15)
	PREFETCHT0 64(R15)
	ADDQ       $128, R15
	DECQ       CX
	JNE        hblock

	SCORES_PAIR_PUT
	DECQ R12
	JNE  hgroup

	VZEROUPPER
	RET

// HWSUM2 adds the value block at off(R8), sixteen float16 widened once
// into t, weighted by Z8 to a and by Z10 to b.
#define HWSUM2(off, t, p, a, b) \
	VCVTPH2PS   off(R8), t; \
	VFMADD231PS t, Z8, a; \
	VFMADD231PS t, Z10, b

// HWSUM_POS adds one position's weighted float16 values, prefetching its
// 256 bytes at the mirror R15 bytes on.
#define HWSUM_POS \
	PREFETCHT0 (R8)(R15*1); \
	PREFETCHT0 64(R8)(R15*1); \
	PREFETCHT0 128(R8)(R15*1); \
	PREFETCHT0 192(R8)(R15*1); \
	WSUM_PAIR_POS(HWSUM2, 32)

// func weightedSumPairHalfAVX512(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)
// weightedSumPairAVX512 with the values float16 (stride in bytes): over
// chunks×128 floats of the outputs, positions 0..n-1 in order, each
// position's 256 bytes of values prefetched at pf's mirror.
TEXT ·weightedSumPairHalfAVX512(SB), NOSPLIT, $0-72
	WSUM_PAIR_ARGS
	MOVQ pf+64(FP), R15
	SUBQ SI, R15 // pf − v

hchunk:
	WSUM_PAIR_CHUNK

hpos:
	HWSUM_POS
	DECQ CX
	JNE  hpos

	WSUM_PAIR_PUT(32)
	DECQ R14
	JNE  hchunk

	VZEROUPPER
	RET

// The same two kernels over a whole table of stretches (decodeStretch,
// 32 bytes: the stretch's first row, the stretch to prefetch as it is read,
// the one decodeLead further on whose first two lines are asked for as it
// starts, and its positions): one call for all of a KV head's stretches
// instead of one per stretch, so the scores run on from stretch to
// stretch and the value sums stay in registers from the first position
// to the last. Each stretch is read exactly as the one-stretch kernels
// read it, so the results are theirs bit for bit.

// func scoresPairHalfTabAVX512(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32)
// scoresPairHalfAVX512 over the n stretches of tab, rows of blocks×8
// float16 each: the whole groups of eight positions of each stretch (its
// positions rounded down to a multiple of eight), their scores one after
// another from out0 and out1.
TEXT ·scoresPairHalfTabAVX512(SB), NOSPLIT, $0-60
	TAB_SCORES_ARGS($4, Z15) // a row: 16·blocks bytes

htentry:
	MOVQ     tab+32(FP), CX
	TAB_LEAD(CX, R8)
	MOVQ     0(CX), R8
	MOVQ     8(CX), R14
	SUBQ     R8, R14               // pf − k
	MOVQ     24(CX), R12
	SHRQ     $3, R12               // whole groups
	ADDQ     $32, CX
	MOVQ     CX, tab+32(FP)
	TESTQ    R12, R12
	JEQ      htnext

htgroup:
	SCORES_PAIR_GROUP
	LEAQ (R8)(R14*1), R15

htblock:
	SCORES_PAIR_BLOCK(HPAIR, $16)
	PREFETCHT0 (R15)
	PREFETCHT0 64(R15)
	ADDQ       $128, R15
	DECQ       CX
	JNE        htblock

	SCORES_PAIR_PUT
	DECQ R12
	JNE  htgroup

htnext:
	DECQ n+40(FP)
	JNE  htentry

	VZEROUPPER
	RET

// func weightedSumPairHalfTabAVX512(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride int)
// weightedSumPairHalfAVX512 over the n stretches of tab (rows stride bytes
// apart), their positions in order with weights one after another from
// w0 and w1: over chunks×128 floats of the outputs, each chunk's sums
// kept in registers through every stretch.
TEXT ·weightedSumPairHalfTabAVX512(SB), NOSPLIT, $0-64
	TAB_SUMS_ARGS
	XORQ R11, R11                  // the chunk's byte offset in a row

htchunk:
	TAB_CHUNK(TAB_LOAD_SUMS)

htvstretch:
	TAB_STRETCH(R15)
	ADDQ  R11, R8
	MOVQ  24(AX), CX
	ADDQ  $32, AX
	TESTQ CX, CX
	JEQ   htvnext

htpos:
	HWSUM_POS
	DECQ CX
	JNE  htpos

htvnext:
	DECQ R12
	JNE  htvstretch

	STORE8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	STORE8((DI)(BX*1), Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ $512, DI
	ADDQ $256, R11
	DECQ R14
	JNE  htchunk

	VZEROUPPER
	RET

// The AVX2 versions, for sets without AVX-512: eight lanes, so a position's
// eight lane sums fill one register and no pairing of positions is needed.
// Against widening each chunk (the AVX2 set's path before), one token's
// attention over 28 layers took 0.50-0.54 of the time at contexts 256 to
// 4096 (two threads, min of 60 alternating passes; 6.33 → 3.39 ms at 1024).

// func scoresPairHalfAVX2(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)
// scoresPairAVX2 with the keys float16 (stride in bytes), each block of
// keys widened once for both heads, and the group's mirror at pf
// prefetched, 64 bytes a block (the four positions' rows are contiguous:
// stride = 16·blocks).
TEXT ·scoresPairHalfAVX2(SB), NOSPLIT, $0-80
	A2_PAIR_ARGS

a2group:
	MOVQ pf+72(FP), R11
	ADDQ R8, R11
	SUBQ k+32(FP), R11 // the group's mirror at pf
	A2_PAIR_GROUP

a2block:
	A2_PAIR_BLOCK(VCVTPH2PS, $16)
	PREFETCHT0 (R11)
	ADDQ       $64, R11
	DECQ       CX
	JNE        a2block

	A2_PAIR_PUT
	JNE a2group

	VZEROUPPER
	RET

// A2H_POS adds one position's 32 float16 values at R8 (its line
// prefetched at the mirror R11 bytes on), weighted by the next weights at
// R9 and R9+R10, to the chunk's sums, and steps to the next position.
#define A2H_POS \
	PREFETCHT0   (R8)(R11*1); \
	VBROADCASTSS (R9), Y8; \
	VBROADCASTSS (R9)(R10*1), Y9; \
	VCVTPH2PS    0(R8), Y10; \
	VCVTPH2PS    16(R8), Y11; \
	VCVTPH2PS    32(R8), Y12; \
	VCVTPH2PS    48(R8), Y13; \
	A2_PAIR_MAC; \
	ADDQ         DX, R8; \
	ADDQ         $4, R9

// func weightedSumPairHalfAVX2(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)
// weightedSumAVX2 for two query heads with the values float16 (stride in
// bytes): over chunks×32 floats of the outputs (eight sums in Y0..Y7, head
// 0 then head 1), positions 0..n-1 in order, each position's 64 bytes of
// values widened once for both heads and prefetched at pf's mirror.
TEXT ·weightedSumPairHalfAVX2(SB), NOSPLIT, $0-72
	A2_WSUM_ARGS

w2chunk:
	A2_WSUM_CHUNK

w2pos:
	A2H_POS
	DECQ         CX
	JNE          w2pos

	STORE_SUMS2
	ADDQ    $128, DI
	ADDQ    $64, SI
	DECQ    R14
	JNE     w2chunk

	VZEROUPPER
	RET

// The AVX2 pair kernels over a table of stretches
// (scoresPairHalfTabAVX512, weightedSumPairHalfTabAVX512).

// func scoresPairHalfTabAVX2(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32)
// scoresPairHalfAVX2 over the n stretches of tab: each one's whole groups
// of four positions, their scores one after another from out0 and out1.
TEXT ·scoresPairHalfTabAVX2(SB), NOSPLIT, $0-60
	TAB_SCORES_ARGS($4, Y15) // a row: 16·blocks bytes
	MOVQ tab+32(FP), R14

a2tentry:
	TAB_LEAD(R14, R8)
	MOVQ  0(R14), R8
	MOVQ  8(R14), R15
	SUBQ  R8, R15             // pf − k
	MOVQ  24(R14), R12
	SHRQ  $2, R12             // whole groups
	ADDQ  $32, R14
	TESTQ R12, R12
	JEQ   a2tnext

a2tgroup:
	LEAQ (R8)(R15*1), R11 // the group's mirror
	MOVQ R8, R10
	MOVQ q0+16(FP), AX
	MOVQ R13, CX
	ZERO8Y

a2tblock:
	A2_PAIR_BLOCK(VCVTPH2PS, $16)
	PREFETCHT0 (R11)
	ADDQ       $64, R11
	DECQ       CX
	JNE        a2tblock

	A2_PAIR_PUT
	JNE a2tgroup

a2tnext:
	DECQ n+40(FP)
	JNE  a2tentry

	VZEROUPPER
	RET

// func weightedSumPairHalfTabAVX2(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride int)
// weightedSumPairHalfAVX2 over the n stretches of tab (rows stride bytes
// apart), their positions in order with weights one after another from
// w0 and w1; each chunk's sums kept in registers through every stretch.
TEXT ·weightedSumPairHalfTabAVX2(SB), NOSPLIT, $0-64
	TAB_SUMS_ARGS
	XORQ SI, SI // the chunk's byte offset in a row

w2tchunk:
	TAB_CHUNK(LOAD_SUMS2)

w2tstretch:
	TAB_STRETCH(R11)
	ADDQ  SI, R8
	MOVQ  24(AX), CX
	ADDQ  $32, AX
	TESTQ CX, CX
	JEQ   w2tnext

w2tpos:
	A2H_POS
	DECQ CX
	JNE  w2tpos

w2tnext:
	DECQ R12
	JNE  w2tstretch

	STORE_SUMS2
	ADDQ $128, DI
	ADDQ $64, SI
	DECQ R14
	JNE  w2tchunk

	VZEROUPPER
	RET
