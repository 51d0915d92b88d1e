#include "fused_pair_amd64.h"

// Macros shared by the AVX2 attention loops (fused_amd64.s,
// fused_half_amd64.s).

// LANEFOLD combines the eight lanes of acc (Y) into the low float of x
// (its X half) with op (packed) and ops (scalar) as
// ((s0∘s4)∘(s2∘s6))∘((s1∘s5)∘(s3∘s7)).
#define LANEFOLD(op, ops, acc, x, tmp) \
	VEXTRACTF128 $1, acc, tmp; \
	op tmp, x, x; \
	VPERMILPS $0x4e, x, tmp; \
	op tmp, x, x; \
	VMOVSHDUP x, tmp; \
	ops tmp, x, x

// HSUM adds the eight lanes of acc in that order, the order of dot.
#define HSUM(acc, x, tmp) LANEFOLD(VADDPS, VADDSS, acc, x, tmp)

// FOLD8_SCALE folds each of Y0..Y7 (HSUM) into the low float of X0..X7
// and multiplies it by X15 (X8..X14 scratch).
#define FOLD8_SCALE \
	HSUM(Y0, X0, X8); \
	HSUM(Y1, X1, X9); \
	HSUM(Y2, X2, X10); \
	HSUM(Y3, X3, X11); \
	HSUM(Y4, X4, X12); \
	HSUM(Y5, X5, X13); \
	HSUM(Y6, X6, X14); \
	HSUM(Y7, X7, X8); \
	VMULSS X15, X0, X0; \
	VMULSS X15, X1, X1; \
	VMULSS X15, X2, X2; \
	VMULSS X15, X3, X3; \
	VMULSS X15, X4, X4; \
	VMULSS X15, X5, X5; \
	VMULSS X15, X6, X6; \
	VMULSS X15, X7, X7

// ZERO8Y zeroes Y0..Y7.
#define ZERO8Y \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// The parts of the AVX2 two-head score loops (scoresPairAVX2 on widened
// keys, scoresPairHalfAVX2 on float16 ones): four positions at a time,
// eight sums in Y0..Y7 (head 0 then head 1), over blocks×8 dimensions,
// each block of keys loaded once for both heads (arguments: PAIR_ARGS).
#define A2_PAIR_ARGS PAIR_ARGS(Y15)

// A2_PAIR_GROUP starts four positions at R8 (R10 steps through their
// blocks), CX blocks to go.
#define A2_PAIR_GROUP \
	MOVQ R8, R10; \
	MOVQ q0+16(FP), AX; \
	MOVQ blocks+56(FP), CX; \
	ZERO8Y

// A2_PAIR_MAC adds the products of Y10..Y13 (four key blocks, or four
// blocks of a position's values) with Y8 to Y0..Y3 and with Y9 to
// Y4..Y7: head 0's and head 1's sums, each product once.
#define A2_PAIR_MAC \
	VFMADD231PS Y10, Y8, Y0; \
	VFMADD231PS Y10, Y9, Y4; \
	VFMADD231PS Y11, Y8, Y1; \
	VFMADD231PS Y11, Y9, Y5; \
	VFMADD231PS Y12, Y8, Y2; \
	VFMADD231PS Y12, Y9, Y6; \
	VFMADD231PS Y13, Y8, Y3; \
	VFMADD231PS Y13, Y9, Y7

// A2_PAIR_BLOCK adds one block of eight dimensions: the query blocks in
// Y8, Y9, the four positions' key blocks loaded by load (kstep bytes a
// block) into Y10..Y13.
#define A2_PAIR_BLOCK(load, kstep) \
	VMOVUPS     (AX), Y8; \
	VMOVUPS     (AX)(SI*1), Y9; \
	load        (R10), Y10; \
	load        (R10)(DX*1), Y11; \
	load        (R10)(DX*2), Y12; \
	load        (R10)(R9*1), Y13; \
	A2_PAIR_MAC; \
	ADDQ        $32, AX; \
	ADDQ        kstep, R10

// A2_PAIR_PUT folds and stores the group's eight scores, moves to the
// next four positions and counts R12 down.
#define A2_PAIR_PUT \
	FOLD8_SCALE; \
	VMOVSS X0, 0(DI); \
	VMOVSS X1, 4(DI); \
	VMOVSS X2, 8(DI); \
	VMOVSS X3, 12(DI); \
	VMOVSS X4, 0(DI)(BX*1); \
	VMOVSS X5, 4(DI)(BX*1); \
	VMOVSS X6, 8(DI)(BX*1); \
	VMOVSS X7, 12(DI)(BX*1); \
	ADDQ   $16, DI; \
	LEAQ   (R8)(DX*4), R8; \
	DECQ   R12

// A2_WSUM_ARGS loads the arguments of the AVX2 two-head value loops
// (o0, o1, v, stride, w0, w1, n, chunks, pf: weightedSumPairHalfAVX2,
// weightedSumPairQ8AVX2): DI o0, BX o1 − o0, SI v, DX stride, R10 w1 −
// w0, R11 pf − v, R14 chunks.
#define A2_WSUM_ARGS \
	MOVQ o0+0(FP), DI; \
	MOVQ o1+8(FP), BX; \
	SUBQ DI, BX; \
	MOVQ v+16(FP), SI; \
	MOVQ stride+24(FP), DX; \
	MOVQ w1+40(FP), R10; \
	SUBQ w0+32(FP), R10; \
	MOVQ pf+64(FP), R11; \
	SUBQ SI, R11; \
	MOVQ chunks+56(FP), R14

// A2_WSUM_CHUNK loads a 32-float chunk of both heads' sums and starts its
// positions: values at R8, weights at R9, CX positions to go.
#define A2_WSUM_CHUNK \
	LOAD_SUMS2; \
	MOVQ SI, R8; \
	MOVQ w0+32(FP), R9; \
	MOVQ n+48(FP), CX

// LOAD_SUMS2 and STORE_SUMS2 move a 32-float chunk of two heads' value
// sums, at DI and DI+BX, to and from Y0..Y3 and Y4..Y7.
#define LOAD_SUMS2 \
	VMOVUPS 0(DI), Y0; \
	VMOVUPS 32(DI), Y1; \
	VMOVUPS 64(DI), Y2; \
	VMOVUPS 96(DI), Y3; \
	VMOVUPS 0(DI)(BX*1), Y4; \
	VMOVUPS 32(DI)(BX*1), Y5; \
	VMOVUPS 64(DI)(BX*1), Y6; \
	VMOVUPS 96(DI)(BX*1), Y7

#define STORE_SUMS2 \
	VMOVUPS Y0, 0(DI); \
	VMOVUPS Y1, 32(DI); \
	VMOVUPS Y2, 64(DI); \
	VMOVUPS Y3, 96(DI); \
	VMOVUPS Y4, 0(DI)(BX*1); \
	VMOVUPS Y5, 32(DI)(BX*1); \
	VMOVUPS Y6, 64(DI)(BX*1); \
	VMOVUPS Y7, 96(DI)(BX*1)
