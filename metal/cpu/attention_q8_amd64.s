#include "textflag.h"
#include "fused_avx512_amd64.h"

// A decode step's attention over a q8 cache (metal.KVQ8) read in place, as
// fused_half_amd64.s reads a float16 one: each block of int8 keys or
// values is sign-extended, converted to float32 and multiplied by its
// group's float16 scale in registers (all exact: the floats DequantizeKV
// gives), then used as the widened path uses them, in the same order, so
// the results are the widened path's bit for bit.

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
	MOVQ   R12, R14
	QSCALE((R14), (R14)(R13*4), Z16)
	ADDQ   R13, R14
	QSCALE((R14), (R14)(R13*4), Z17)
	ADDQ   R13, R14
	QSCALE((R14), (R14)(R13*4), Z18)
	ADDQ   R13, R14
	QSCALE((R14), (R14)(R13*4), Z19)
	QBLOCK
	QBLOCK
	QBLOCK
	QBLOCK
	ADDQ   $2, R12
	DECQ   CX
	JNE    qscales

	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	VMOVUPS       Y0, (DI)
	VEXTRACTF32X8 $1, Z0, (DI)(BX*1)
	ADDQ          $32, DI
	LEAQ          (R8)(DX*8), R8

	// R12 went S bytes on; the next group's scales are 8·S from the last's.
	LEAQ (R12)(R13*4), R12
	LEAQ (R12)(R13*2), R12
	ADDQ R13, R12
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
	VBROADCASTSS (R9), Z8
	VBROADCASTSS (R9)(R10*1), Z10
	VPBROADCASTW 0(R11), Y11
	VCVTPH2PS    Y11, Z11
	VPBROADCASTW 2(R11), Y12
	VCVTPH2PS    Y12, Z12
	VPBROADCASTW 4(R11), Y13
	VCVTPH2PS    Y13, Z13
	VPBROADCASTW 6(R11), Y14
	VCVTPH2PS    Y14, Z14
	QSUM(0, Z11, Z24, Z0, Z16)
	QSUM(16, Z11, Z25, Z1, Z17)
	QSUM(32, Z12, Z26, Z2, Z18)
	QSUM(48, Z12, Z27, Z3, Z19)
	QSUM(64, Z13, Z28, Z4, Z20)
	QSUM(80, Z13, Z29, Z5, Z21)
	QSUM(96, Z14, Z30, Z6, Z22)
	QSUM(112, Z14, Z31, Z7, Z23)
	ADDQ         DX, R8
	ADDQ         $4, R9
	ADDQ         sstride+80(FP), R11
	DECQ         CX
	JNE          qpos

	WSUM_PAIR_PUT(16)
	ADDQ $8, R12        // the next chunk's four scales
	DECQ R14
	JNE  qchunk

	VZEROUPPER
	RET
