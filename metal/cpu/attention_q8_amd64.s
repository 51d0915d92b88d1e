#include "textflag.h"
#include "fused_avx512_amd64.h"
#include "fused_avx2_amd64.h"

// A decode step's attention over a q8 cache (metal.KVQ8) read in place, as
// fused_half_amd64.s reads a float16 one: each block of int8 keys or
// values is sign-extended, converted to float32 and multiplied by its
// group's float16 scale in registers (all exact: the floats DequantizeKV
// gives), then used as the widened path uses them, in the same order, so
// the results are the widened path's bit for bit.

// The AVX2 versions: four positions at a time, a position's eight lanes
// in one register (as scoresPairHalfAVX2 and weightedSumPairHalfAVX2).

// Q2KEY loads the int8 block of eight keys at a into y as floats times
// the scale vector at s.
#define Q2KEY(a, s, y) \
	VPMOVSXBD a, y; \
	VCVTDQ2PS y, y; \
	VMULPS    s, y, y

// Q2SCALE stores the float16 scale at (AX), widened and broadcast, at s
// (a slot of the kernel's frame).
#define Q2SCALE(s) \
	VPBROADCASTW (AX), X14; \
	VCVTPH2PS    X14, Y14; \
	VMOVUPS      Y14, s

// Q2BLOCK adds one block of eight dimensions of the four positions (their
// scale vectors at 0..96(SP)) and prefetches a line of the mirror at R11.
#define Q2BLOCK \
	VMOVUPS     (AX), Y8; \
	VMOVUPS     (AX)(SI*1), Y9; \
	Q2KEY((R10), 0(SP), Y10); \
	Q2KEY((R10)(DX*1), 32(SP), Y11); \
	Q2KEY((R10)(DX*2), 64(SP), Y12); \
	Q2KEY((R10)(R9*1), 96(SP), Y13); \
	A2_PAIR_MAC; \
	PREFETCHT0  (R11); \
	ADDQ        $32, R11; \
	ADDQ        $32, AX; \
	ADDQ        $8, R10

// Q2_32DIMS adds 32 dimensions of the group's four positions: their scale
// vectors made in the frame (0-127) from the scales at 128(SP) (S = R15
// bytes a position; AX kept at 136), four Q2BLOCKs, and 128(SP) on to the
// next 32 dimensions' scales.
#define Q2_32DIMS \
	MOVQ AX, 136(SP); \
	MOVQ 128(SP), AX; \
	Q2SCALE(0(SP)); \
	ADDQ R15, AX; \
	Q2SCALE(32(SP)); \
	ADDQ R15, AX; \
	Q2SCALE(64(SP)); \
	ADDQ R15, AX; \
	Q2SCALE(96(SP)); \
	MOVQ 136(SP), AX; \
	Q2BLOCK; \
	Q2BLOCK; \
	Q2BLOCK; \
	Q2BLOCK; \
	ADDQ $2, 128(SP)

// QPAIR loads the eight int8 keys of an eight-dimension block of positions
// a and b into the low and high halves of Z9 as floats times their
// scales s (the pair's scale vector), and adds their products with query
// blocks Z8 and Z10 to acc0 and acc1.
#define QPAIR(a, b, s, acc0, acc1) \
	VMOVQ       a, X9; \
	VPINSRQ     $1, b, X9, X9; \
	VPMOVSXBD   X9, Z9; \
	VCVTDQ2PS   Z9, Z9; \
	VMULPS      s, Z9, Z9; \
	VFMADD231PS Z9, Z8, acc0; \
	VFMADD231PS Z9, Z10, acc1

// QSCALE sets z to the scale at (a) in its low eight lanes and the one at
// (b) in its high eight.
#define QSCALE(a, b, z) \
	VPBROADCASTW a, X11; \
	VPBROADCASTW b, X12; \
	VINSERTI128  $1, X12, Y11, Y11; \
	VCVTPH2PS    Y11, z

// QBLOCK adds one block of eight dimensions of the group's eight positions
// (j and j+4 paired, as SCORES_PAIR_BLOCK) and prefetches a line of the
// group's mirror at R15.
#define QBLOCK \
	VBROADCASTF32X8 (AX), Z8; \
	VBROADCASTF32X8 (AX)(SI*1), Z10; \
	QPAIR((R10), (R11), Z16, Z0, Z4); \
	QPAIR((R10)(DX*1), (R11)(DX*1), Z17, Z1, Z5); \
	QPAIR((R10)(DX*2), (R11)(DX*2), Z18, Z2, Z6); \
	QPAIR((R10)(R9*1), (R11)(R9*1), Z19, Z3, Z7); \
	PREFETCHT0 (R15); \
	ADDQ $64, R15; \
	ADDQ $32, AX; \
	ADDQ $8, R10; \
	ADDQ $8, R11

// Q32DIMS adds one group of 32 dimensions of the group's eight positions:
// their scale vectors from R12 (S = R13 bytes a position), four QBLOCKs,
// and R12 on to the next 32 dimensions' scales.
#define Q32DIMS \
	MOVQ   R12, R14; \
	QSCALE((R14), (R14)(R13*4), Z16); \
	ADDQ   R13, R14; \
	QSCALE((R14), (R14)(R13*4), Z17); \
	ADDQ   R13, R14; \
	QSCALE((R14), (R14)(R13*4), Z18); \
	ADDQ   R13, R14; \
	QSCALE((R14), (R14)(R13*4), Z19); \
	QBLOCK; \
	QBLOCK; \
	QBLOCK; \
	QBLOCK; \
	ADDQ   $2, R12

// QGROUP_PUT folds and stores the group's sixteen scores and moves R8 to
// the next eight positions' rows and R12 to their scales: R12 went S bytes
// on, and the next group's scales are 8·S from the last's.
#define QGROUP_PUT \
	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	VMOVUPS       Y0, (DI); \
	VEXTRACTF32X8 $1, Z0, (DI)(BX*1); \
	ADDQ          $32, DI; \
	LEAQ          (R8)(DX*8), R8; \
	LEAQ          (R12)(R13*4), R12; \
	LEAQ          (R12)(R13*2), R12; \
	ADDQ          R13, R12

// func scoresPairQ8AVX512(out0, out1, q0, q1 *float32, k *int8, stride, groups, blocks int, scale float32, sc *uint16, pf *int8)
// scoresPairHalfAVX512 over a q8 stretch: groups×8 positions of int8 rows
// stride bytes apart from k (contiguous: stride = 8·blocks), over blocks×8
// dimensions (a multiple of 32); position p's scales at sc + p·blocks/2
// bytes. As it reads a group's rows it prefetches the same bytes of pf's
// stretch, a line a block.
TEXT ·scoresPairQ8AVX512(SB), NOSPLIT, $0-88
	PAIR_ARGS(Z15)
	MOVQ sc+72(FP), R12
	SHRQ $1, R13        // S: bytes of one position's scales
	MOVQ pf+80(FP), R14
	SUBQ R8, R14
	MOVQ R14, pf+80(FP) // pf − k

qgroup:
	MOVQ R8, R10
	LEAQ (R8)(DX*4), R11
	MOVQ q0+16(FP), AX
	MOVQ pf+80(FP), R15
	ADDQ R8, R15
	ZERO8
	MOVQ blocks+56(FP), CX
	SHRQ $2, CX         // groups of 32 dimensions

qscales:
	Q32DIMS
	DECQ   CX
	JNE    qscales

	QGROUP_PUT
	DECQ groups+48(FP)
	JNE  qgroup

	VZEROUPPER
	RET

// QSUM adds sixteen int8 values at off(R8), widened and scaled by s into
// t, weighted by Z8 to a and by Z10 to b.
#define QSUM(off, s, t, a, b) \
	VPMOVSXBD   off(R8), t; \
	VCVTDQ2PS   t, t; \
	VMULPS      s, t, t; \
	VFMADD231PS t, Z8, a; \
	VFMADD231PS t, Z10, b

// QSUM_POS adds one position's weighted int8 values (at R8, its four
// scales at R11, weights at R9 and R9+R10) to the chunk's sums and steps
// to the next position (ss: the memory operand of the bytes between
// two positions' scales).
#define QSUM_POS(ss) \
	VBROADCASTSS (R9), Z8; \
	VBROADCASTSS (R9)(R10*1), Z10; \
	VPBROADCASTW 0(R11), Y11; \
	VCVTPH2PS    Y11, Z11; \
	VPBROADCASTW 2(R11), Y12; \
	VCVTPH2PS    Y12, Z12; \
	VPBROADCASTW 4(R11), Y13; \
	VCVTPH2PS    Y13, Z13; \
	VPBROADCASTW 6(R11), Y14; \
	VCVTPH2PS    Y14, Z14; \
	QSUM(0, Z11, Z24, Z0, Z16); \
	QSUM(16, Z11, Z25, Z1, Z17); \
	QSUM(32, Z12, Z26, Z2, Z18); \
	QSUM(48, Z12, Z27, Z3, Z19); \
	QSUM(64, Z13, Z28, Z4, Z20); \
	QSUM(80, Z13, Z29, Z5, Z21); \
	QSUM(96, Z14, Z30, Z6, Z22); \
	QSUM(112, Z14, Z31, Z7, Z23); \
	ADDQ         DX, R8; \
	ADDQ         $4, R9; \
	ADDQ         ss, R11

// func weightedSumPairQ8AVX512(o0, o1 *float32, v *int8, stride int, w0, w1 *float32, n, chunks int, pf *int8, sc *uint16, sstride int)
// weightedSumPairHalfAVX512 over a q8 stretch: over chunks×128 floats of
// the outputs, positions 0..n-1 in order, int8 rows stride bytes apart
// from v, position p's scales at sc + p·sstride bytes; each position's
// 128 bytes of a chunk prefetched at pf's mirror.
TEXT ·weightedSumPairQ8AVX512(SB), NOSPLIT, $0-88
	WSUM_PAIR_ARGS
	MOVQ pf+64(FP), R15
	SUBQ SI, R15        // pf − v
	MOVQ sc+72(FP), R12

qchunk:
	WSUM_PAIR_CHUNK
	MOVQ R12, R11

qpos:
	PREFETCHT0   (R8)(R15*1)
	PREFETCHT0   64(R8)(R15*1)
	QSUM_POS(sstride+80(FP))
	DECQ         CX
	JNE          qpos

	WSUM_PAIR_PUT(16)
	ADDQ $8, R12        // the next chunk's four scales
	DECQ R14
	JNE  qchunk

	VZEROUPPER
	RET

// func scoresPairQ8TabAVX512(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32, soff int)
// scoresPairQ8AVX512 over the n stretches of tab (fused_half_amd64.s,
// scoresPairHalfTabAVX512): each stretch's int8 rows of blocks×8 bytes
// from its first element, their scales soff bytes on; as a group's rows
// and scales are read, the same bytes of the stretch's mirror are
// prefetched. The frame holds the groups left (0) and pf − k (8).
TEXT ·scoresPairQ8TabAVX512(SB), NOSPLIT, $16-72
	TAB_SCORES_ARGS($3, Z15) // a row: 8·blocks bytes
	SHRQ         $1, R13           // S: bytes of one position's scales

qtentry:
	MOVQ       tab+32(FP), CX
	TAB_LEAD(CX, R8)
	MOVQ       0(CX), R8
	MOVQ       8(CX), R14
	SUBQ       R8, R14
	MOVQ       R14, 8(SP)          // pf − k
	MOVQ       R8, R12
	ADDQ       soff+64(FP), R12    // the first position's scales
	MOVQ       24(CX), R14
	SHRQ       $3, R14             // whole groups
	MOVQ       R14, 0(SP)
	ADDQ       $32, CX
	MOVQ       CX, tab+32(FP)
	TESTQ      R14, R14
	JEQ        qtnext

qtgroup:
	MOVQ       R8, R10
	LEAQ       (R8)(DX*4), R11
	MOVQ       q0+16(FP), AX
	MOVQ       8(SP), R15
	LEAQ       (R12)(R15*1), R14   // the mirror's scales of the group
	PREFETCHT0 (R14)
	PREFETCHT0 -1(R14)(R13*8)
	ADDQ       R8, R15
	ZERO8
	MOVQ       blocks+48(FP), CX
	SHRQ       $2, CX              // groups of 32 dimensions

qtscales:
	Q32DIMS
	DECQ   CX
	JNE    qtscales

	QGROUP_PUT
	DECQ 0(SP)
	JNE  qtgroup

qtnext:
	DECQ n+40(FP)
	JNE  qtentry

	VZEROUPPER
	RET

// func weightedSumPairQ8TabAVX512(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride, soff, sstride int)
// weightedSumPairQ8AVX512 over the n stretches of tab
// (weightedSumPairHalfTabAVX512): int8 rows stride bytes apart from each
// stretch's first element, position p's scales at soff + p·sstride bytes
// from it; each chunk's sums kept in registers through every stretch.
TEXT ·weightedSumPairQ8TabAVX512(SB), NOSPLIT, $0-80
	TAB_SUMS_ARGS
	XORQ R13, R13                  // the chunk's byte offset in a row
	XORQ SI, SI                    // and in a row's scales

qtchunk:
	TAB_CHUNK(TAB_LOAD_SUMS)

qtvstretch:
	TAB_STRETCH(R15)
	LEAQ  (R8)(SI*1), R11
	ADDQ  soff+64(FP), R11         // the chunk's scales of the first position
	ADDQ  R13, R8
	MOVQ  24(AX), CX
	ADDQ  $32, AX
	TESTQ CX, CX
	JEQ   qtvnext

qtpos:
	PREFETCHT0   (R8)(R15*1)
	PREFETCHT0   64(R8)(R15*1)
	PREFETCHT0   (R11)(R15*1)
	QSUM_POS(sstride+72(FP))
	DECQ         CX
	JNE          qtpos

qtvnext:
	DECQ R12
	JNE  qtvstretch

	STORE8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	STORE8((DI)(BX*1), Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ $512, DI
	ADDQ $128, R13
	ADDQ $8, SI
	DECQ R14
	JNE  qtchunk

	VZEROUPPER
	RET

// func scoresPairQ8AVX2(out0, out1, q0, q1 *float32, k *int8, stride, groups, blocks int, scale float32, sc *uint16, pf *int8)
// scoresPairQ8AVX512 for the AVX2 set: four positions at a time, the
// group's four scale vectors of each 32 dimensions kept in the frame
// (0-127), with the scale pointer (128) and AX (136) while they are made.
TEXT ·scoresPairQ8AVX2(SB), NOSPLIT, $144-88
	A2_PAIR_ARGS
	MOVQ sc+72(FP), R14
	MOVQ R13, R15
	SHRQ $1, R15        // S: bytes of one position's scales

a2qgroup:
	MOVQ pf+80(FP), R11
	ADDQ R8, R11
	SUBQ k+32(FP), R11  // the group's mirror at pf
	A2_PAIR_GROUP
	MOVQ R14, 128(SP)   // the group's scales of the 32 dimensions at hand

a2qscales:
	Q2_32DIMS
	SUBQ $4, CX
	JNE  a2qscales

	A2_PAIR_PUT
	LEAQ (R14)(R15*4), R14
	JNE  a2qgroup

	VZEROUPPER
	RET

// Q2_POS adds one position's 32 int8 values at R8 times their scale at
// R15 (its line prefetched at the mirror R11 bytes on), weighted by the
// next weights at R9 and R9+R10, to the chunk's sums, and steps to the
// next position (ss: the memory operand of the bytes between two
// positions' scales).
#define Q2_POS(ss) \
	PREFETCHT0   (R8)(R11*1); \
	VBROADCASTSS (R9), Y8; \
	VBROADCASTSS (R9)(R10*1), Y9; \
	VPBROADCASTW (R15), X14; \
	VCVTPH2PS    X14, Y14; \
	Q2KEY(0(R8), Y14, Y10); \
	Q2KEY(8(R8), Y14, Y11); \
	Q2KEY(16(R8), Y14, Y12); \
	Q2KEY(24(R8), Y14, Y13); \
	A2_PAIR_MAC; \
	ADDQ         DX, R8; \
	ADDQ         $4, R9; \
	ADDQ         ss, R15

// func weightedSumPairQ8AVX2(o0, o1 *float32, v *int8, stride int, w0, w1 *float32, n, chunks int, pf *int8, sc *uint16, sstride int)
// weightedSumPairQ8AVX512 for the AVX2 set: chunks×32 floats of the
// outputs (one scale group), positions 0..n-1 in order.
TEXT ·weightedSumPairQ8AVX2(SB), NOSPLIT, $0-88
	A2_WSUM_ARGS
	MOVQ sc+72(FP), R12

a2qchunk:
	A2_WSUM_CHUNK
	MOVQ R12, R15

a2qpos:
	Q2_POS(sstride+80(FP))
	DECQ         CX
	JNE          a2qpos

	STORE_SUMS2
	ADDQ $128, DI
	ADDQ $32, SI
	ADDQ $2, R12
	DECQ R14
	JNE  a2qchunk

	VZEROUPPER
	RET

// func scoresPairQ8TabAVX2(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32, soff int)
// scoresPairQ8AVX2 over the n stretches of tab (scoresPairHalfTabAVX2):
// each stretch's int8 rows of blocks×8 bytes from its first element,
// their scales soff bytes on, a group's scales at the mirror prefetched.
// The frame as scoresPairQ8AVX2's, and pf − k at 144.
TEXT ·scoresPairQ8TabAVX2(SB), NOSPLIT, $152-72
	TAB_SCORES_ARGS($3, Y15) // a row: 8·blocks bytes
	MOVQ R13, R15
	SHRQ $1, R15             // S: bytes of one position's scales

a2qtentry:
	MOVQ  tab+32(FP), R8
	TAB_LEAD(R8, R14)
	MOVQ  0(R8), R14
	MOVQ  8(R8), R11
	SUBQ  R14, R11
	MOVQ  R11, 144(SP)       // pf − k
	MOVQ  24(R8), R12
	SHRQ  $2, R12            // whole groups
	ADDQ  $32, R8
	MOVQ  R8, tab+32(FP)
	MOVQ  R14, R8
	ADDQ  soff+64(FP), R14   // the first position's scales
	TESTQ R12, R12
	JEQ   a2qtnext

a2qtgroup:
	MOVQ       144(SP), R11
	LEAQ       (R14)(R11*1), AX
	PREFETCHT0 (AX)          // the mirror's scales of the group
	ADDQ       R8, R11       // the group's mirror
	MOVQ       R8, R10
	MOVQ       q0+16(FP), AX
	MOVQ       R13, CX
	ZERO8Y
	MOVQ       R14, 128(SP)

a2qtscales:
	Q2_32DIMS
	SUBQ $4, CX
	JNE  a2qtscales

	A2_PAIR_PUT
	LEAQ (R14)(R15*4), R14
	JNE  a2qtgroup

a2qtnext:
	DECQ n+40(FP)
	JNE  a2qtentry

	VZEROUPPER
	RET

// func weightedSumPairQ8TabAVX2(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride, soff, sstride int)
// weightedSumPairQ8AVX2 over the n stretches of tab
// (weightedSumPairHalfTabAVX2): int8 rows stride bytes apart from each
// stretch's first element, position p's scales at soff + p·sstride bytes
// from it, each position's scale at the mirror prefetched.
TEXT ·weightedSumPairQ8TabAVX2(SB), NOSPLIT, $0-80
	TAB_SUMS_ARGS
	XORQ SI, SI   // the chunk's byte offset in a row
	XORQ R13, R13 // and in a row's scales

a2qtchunk:
	TAB_CHUNK(LOAD_SUMS2)

a2qtstretch:
	TAB_STRETCH(R11)
	LEAQ  (R8)(R13*1), R15
	ADDQ  soff+64(FP), R15   // the chunk's scale of the first position
	ADDQ  SI, R8
	MOVQ  24(AX), CX
	ADDQ  $32, AX
	TESTQ CX, CX
	JEQ   a2qtvnext

a2qtpos:
	PREFETCHT0 (R15)(R11*1)
	Q2_POS(sstride+72(FP))
	DECQ       CX
	JNE        a2qtpos

a2qtvnext:
	DECQ R12
	JNE  a2qtstretch

	STORE_SUMS2
	ADDQ $128, DI
	ADDQ $32, SI
	ADDQ $2, R13
	DECQ R14
	JNE  a2qtchunk

	VZEROUPPER
	RET
