#include "textflag.h"
#include "fused_avx512_amd64.h"

// AVX-512 versions of attention's float loops (fused_amd64.s), bit-identical
// to the portable ones. A zmm register holds sixteen floats, so each
// fused multiply-add does twice the work of the AVX2 loops; the
// per-element operations and their order are unchanged.

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
	VFMADD231PS  Z9, Z8, acc

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

// FOLD8 folds the accumulators Z0..Z7.
#define FOLD8 \
	FOLD(Z0); \
	FOLD(Z1); \
	FOLD(Z2); \
	FOLD(Z3); \
	FOLD(Z4); \
	FOLD(Z5); \
	FOLD(Z6); \
	FOLD(Z7)

// PUT stores lanes 0 and 8 of acc (a Z register below Z8, x its X half)
// as two consecutive floats at off(DI).
#define PUT(acc, x, off) \
	VEXTRACTF32X4 $2, acc, X9; \
	VUNPCKLPS     X9, x, x; \
	VMOVQ         x, off(DI)

// func scoresAVX512(out, q, k *float32, stride, groups, blocks int, scale float32)
// out[p] = q·(k + p·stride bytes)·scale (scoresRef) for p < 16·groups, over
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
	ZERO8
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

	FOLD8
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
	LOAD8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	MOVQ SI, R8
	MOVQ R12, R9
	MOVQ R13, CX

pos:
	VBROADCASTSS (R9), Z8
	VFMADD231PS 0(R8), Z8, Z0
	VFMADD231PS 64(R8), Z8, Z1
	VFMADD231PS 128(R8), Z8, Z2
	VFMADD231PS 192(R8), Z8, Z3
	VFMADD231PS 256(R8), Z8, Z4
	VFMADD231PS 320(R8), Z8, Z5
	VFMADD231PS 384(R8), Z8, Z6
	VFMADD231PS 448(R8), Z8, Z7
	ADDQ DX, R8
	ADDQ $4, R9
	DECQ CX
	JNE pos

	STORE8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ADDQ $512, DI
	ADDQ $512, SI
	DECQ R14
	JNE chunk

	VZEROUPPER
	RET

// PAIR2 is PAIR for two query heads at once: the block pair of positions
// a (low half) and b (high half), loaded once, times query block Z8 into
// acc0 and times query block Z10 into acc1.
#define PAIR2(a, b, acc0, acc1) \
	VMOVUPS      a, Y9; \
	VINSERTF32X8 $1, b, Z9, Z9; \
	VFMADD231PS  Z9, Z8, acc0; \
	VFMADD231PS  Z9, Z10, acc1

// func scoresPairAVX512(out0, out1, q0, q1, k *float32, stride, groups, blocks int, scale float32)
// scoresAVX512 for two query heads against the same keys, eight positions
// at a time (positions j and j+4 share a register, as FOLDQ wants them):
// each key block is loaded once for both, and each head's scores are the
// ones scoresAVX512 computes for it alone.
TEXT ·scoresPairAVX512(SB), NOSPLIT, $0-68
	SCORES_PAIR_ARGS

peight:
	SCORES_PAIR_GROUP

peightloop:
	SCORES_PAIR_BLOCK(PAIR2, $32)
	DECQ CX
	JNE  peightloop

	SCORES_PAIR_PUT
	DECQ R12
	JNE  peight

	VZEROUPPER
	RET

// WSUM2 adds the weighted value block at off(R8), loaded once into t, to
// a (weight Z8) and to b (weight Z10).
#define WSUM2(off, t, p, a, b) \
	VMOVUPS     off(R8), t; \
	VFMADD231PS t, Z8, a; \
	VFMADD231PS t, Z10, b

// func weightedSumPairAVX512(o0, o1, v *float32, stride int, w0, w1 *float32, n, chunks int)
// weightedSumAVX512 for two query heads over the same values: each value
// block is loaded once for both, and each head's sums are the ones
// weightedSumAVX512 computes for it alone.
TEXT ·weightedSumPairAVX512(SB), NOSPLIT, $0-64
	WSUM_PAIR_ARGS

pchunk:
	WSUM_PAIR_CHUNK

ppos:
	WSUM_PAIR_POS(WSUM2, 64)
	DECQ CX
	JNE  ppos

	WSUM_PAIR_PUT(64)
	DECQ R14
	JNE  pchunk

	VZEROUPPER
	RET

// KPAIR loads the key blocks of positions a (low half) and b (high half)
// into z (y its lower half).
#define KPAIR(a, b, y, z) \
	VMOVUPS      a, y; \
	VINSERTF32X8 $1, b, z, z

// MAC adds k times q to acc, through t.
#define MAC(k, q, t, acc) \
	VFMADD231PS k, q, acc

// MAC4 multiplies key pair k by the four query blocks Z28..Z31 into acc0..acc3.
#define MAC4(k, acc0, acc1, acc2, acc3) \
	MAC(k, Z28, Z8, acc0); \
	MAC(k, Z29, Z10, acc1); \
	MAC(k, Z30, Z12, acc2); \
	MAC(k, Z31, Z14, acc3)

// func scoresQuadAVX512(a0, a1, b0, b1, qa0, qa1, qb0, qb1, k *float32, stride, groups, blocks int, scale float32)
// scoresPairAVX512 for two tokens at once, each with two query heads: the
// four queries against the same keys, eight positions at a time. Each key
// pair and query block loaded serves four multiplies rather than two, and
// the sums are folded four registers at a time (FOLDQ), so fewer loads and
// far fewer shuffles per multiply; each query's scores are the ones
// scoresAVX512 computes for it alone.
TEXT ·scoresQuadAVX512(SB), NOSPLIT, $0-100
	MOVQ qa0+32(FP), AX
	MOVQ qa1+40(FP), SI
	SUBQ AX, SI // qa1 − qa0
	MOVQ qb0+48(FP), R12
	SUBQ AX, R12 // qb0 − qa0
	MOVQ qb1+56(FP), R13
	SUBQ AX, R13 // qb1 − qa0
	MOVQ k+64(FP), R8
	MOVQ stride+72(FP), DX
	MOVQ groups+80(FP), R14
	VBROADCASTSS scale+96(FP), Z15
	LEAQ (DX)(DX*2), R9 // 3·stride
	XORQ BX, BX         // bytes of scores done

qgroup:
	MOVQ R8, R10         // positions 0..3 at R10 + {0, 1, 2, 3}·stride
	LEAQ (R8)(DX*4), R11 // 4..7
	MOVQ qa0+32(FP), AX
	MOVQ blocks+88(FP), CX
	ZERO8
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

qblock:
	VBROADCASTF32X8 (AX), Z28
	VBROADCASTF32X8 (AX)(SI*1), Z29
	VBROADCASTF32X8 (AX)(R12*1), Z30
	VBROADCASTF32X8 (AX)(R13*1), Z31
	KPAIR((R10), (R11), Y24, Z24)                     // positions 0 and 4
	KPAIR((R10)(DX*1), (R11)(DX*1), Y25, Z25)         // 1 and 5
	KPAIR((R10)(DX*2), (R11)(DX*2), Y26, Z26)         // 2 and 6
	KPAIR((R10)(R9*1), (R11)(R9*1), Y27, Z27)         // 3 and 7
	MAC4(Z24, Z0, Z4, Z16, Z20)
	MAC4(Z25, Z1, Z5, Z17, Z21)
	MAC4(Z26, Z2, Z6, Z18, Z22)
	MAC4(Z27, Z3, Z7, Z19, Z23)
	ADDQ $32, AX
	ADDQ $32, R10
	ADDQ $32, R11
	DECQ CX
	JNE  qblock

	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	FOLDQ(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	MOVQ          a0+0(FP), DI
	VMOVUPS       Y0, (DI)(BX*1)
	MOVQ          a1+8(FP), DI
	VEXTRACTF32X8 $1, Z0, (DI)(BX*1)
	MOVQ          b0+16(FP), DI
	VMOVUPS       Y16, (DI)(BX*1)
	MOVQ          b1+24(FP), DI
	VEXTRACTF32X8 $1, Z16, (DI)(BX*1)
	ADDQ $32, BX
	LEAQ (R8)(DX*8), R8
	DECQ R14
	JNE  qgroup

	VZEROUPPER
	RET

// func scoresHeads6AVX512(out, q *[6]*float32, k *float32, stride, groups, qbytes int, scale float32)
// scoresQuadAVX512 for six query heads (three tokens of a two-head group,
// or any six) against the same keys, eight positions at a time: each key
// pair loaded serves six multiplies, and the keys of a widened chunk are
// read once for six heads rather than four. The heads' query blocks are
// read through one pointer register each at a shared offset CX (qbytes:
// the head size in bytes); each head's scores are the ones scoresAVX512
// computes for it alone.
TEXT ·scoresHeads6AVX512(SB), NOSPLIT, $0-52
	MOVQ q+8(FP), CX
	MOVQ 0(CX), AX
	MOVQ 8(CX), BX
	MOVQ 16(CX), SI
	MOVQ 24(CX), DI
	MOVQ 32(CX), R12
	MOVQ 40(CX), R13
	MOVQ k+16(FP), R8
	MOVQ stride+24(FP), DX
	MOVQ groups+32(FP), R14
	VBROADCASTSS scale+48(FP), Z15
	LEAQ (DX)(DX*2), R9 // 3·stride
	XORQ R15, R15       // bytes of scores done

sgroup:
	MOVQ R8, R10         // positions 0..3 at R10 + {0, 1, 2, 3}·stride
	LEAQ (R8)(DX*4), R11 // 4..7
	XORQ CX, CX
	ZERO8
	VPXORD Z8, Z8, Z8
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

sblock:
	KPAIR((R10), (R11), Y24, Z24)             // positions 0 and 4
	KPAIR((R10)(DX*1), (R11)(DX*1), Y25, Z25) // 1 and 5
	KPAIR((R10)(DX*2), (R11)(DX*2), Y26, Z26) // 2 and 6
	KPAIR((R10)(R9*1), (R11)(R9*1), Y27, Z27) // 3 and 7
	SCORES_HEAD(AX, Z28, Z0, Z1, Z2, Z3)
	SCORES_HEAD(BX, Z29, Z4, Z5, Z6, Z7)
	SCORES_HEAD(SI, Z28, Z16, Z17, Z18, Z19)
	SCORES_HEAD(DI, Z29, Z20, Z21, Z22, Z23)
	SCORES_HEAD(R12, Z28, Z8, Z10, Z11, Z12)
	SCORES_HEAD(R13, Z29, Z13, Z14, Z30, Z31)
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, CX
	CMPQ CX, qbytes+40(FP)
	JNE  sblock

	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	FOLDQ(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	FOLDQ(Z8, Z10, Z11, Z12, Z13, Z14, Z30, Z31)
	SCORES_PUT(0, 8, Y0, Z0)
	SCORES_PUT(16, 24, Y16, Z16)
	SCORES_PUT(32, 40, Y8, Z8)
	ADDQ $32, R15
	LEAQ (R8)(DX*8), R8
	DECQ R14
	JNE  sgroup

	VZEROUPPER
	RET
