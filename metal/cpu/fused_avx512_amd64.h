#include "fused_pair_amd64.h"

// Macros shared by the AVX-512 attention loops (fused_avx512_amd64.s,
// fused_half_amd64.s).

// ZERO8 zeroes the accumulators Z0..Z7.
#define ZERO8 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

// LOAD8 and STORE8 move eight registers from and to the 512 bytes at
// base: a 128-float chunk of value sums.
#define LOAD8(base, r0, r1, r2, r3, r4, r5, r6, r7) \
	VMOVUPS 0 base, r0; \
	VMOVUPS 64 base, r1; \
	VMOVUPS 128 base, r2; \
	VMOVUPS 192 base, r3; \
	VMOVUPS 256 base, r4; \
	VMOVUPS 320 base, r5; \
	VMOVUPS 384 base, r6; \
	VMOVUPS 448 base, r7

#define STORE8(base, r0, r1, r2, r3, r4, r5, r6, r7) \
	VMOVUPS r0, 0 base; \
	VMOVUPS r1, 64 base; \
	VMOVUPS r2, 128 base; \
	VMOVUPS r3, 192 base; \
	VMOVUPS r4, 256 base; \
	VMOVUPS r5, 320 base; \
	VMOVUPS r6, 384 base; \
	VMOVUPS r7, 448 base

// ADDSHUF sets p to the sum of two shuffles of p and q (op with selectors
// a and b): the step of FOLDQ that halves the partial sums of two registers.
#define ADDSHUF(op, a, b, q, p) \
	op     a, q, p, Z9; \
	op     b, q, p, p; \
	VADDPS p, Z9, p

// FOLDQ folds the accumulators of two queries at once, p0..p3 of the first
// and q0..q3 of the second, where pj holds positions j (low half) and j+4
// (high half), into p0: the first query's eight scores, then the second's,
// scaled by Z15. Each lane's sums are FOLD's, ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)),
// but each shuffle serves two registers, not one: 14 shuffles for 16
// scores where FOLD and PUT took 40.
#define FOLDQ(p0, p1, p2, p3, q0, q1, q2, q3) \
	ADDSHUF(VSHUFF32X4, $0x88, $0xdd, q0, p0); \
	ADDSHUF(VSHUFF32X4, $0x88, $0xdd, q1, p1); \
	ADDSHUF(VSHUFF32X4, $0x88, $0xdd, q2, p2); \
	ADDSHUF(VSHUFF32X4, $0x88, $0xdd, q3, p3); \
	ADDSHUF(VSHUFPS, $0x44, $0xee, p1, p0); \
	ADDSHUF(VSHUFPS, $0x44, $0xee, p3, p2); \
	ADDSHUF(VSHUFPS, $0x88, $0xdd, p2, p0); \
	VMULPS Z15, p0, p0

// The parts of the two-head score loops (scoresPairAVX512 on widened keys,
// scoresPairHalfAVX512 on float16 ones), which differ only in how a pair
// of key blocks is loaded (pair) and how far a key block is (kstep bytes)
// (arguments: PAIR_ARGS).
#define SCORES_PAIR_ARGS PAIR_ARGS(Z15)

// SCORES_PAIR_GROUP starts eight positions: 0..3 at R10 + {0, 1, 2, 3}·DX,
// 4..7 at R11 + the same, CX blocks to go.
#define SCORES_PAIR_GROUP \
	MOVQ R8, R10; \
	LEAQ (R8)(DX*4), R11; \
	MOVQ q0+16(FP), AX; \
	ZERO8; \
	MOVQ R13, CX

// SCORES_PAIR_BLOCK adds one block of eight dimensions: query blocks in Z8
// and Z10, positions j and j+4 paired in one register.
#define SCORES_PAIR_BLOCK(pair, kstep) \
	VBROADCASTF32X8 (AX), Z8; \
	VBROADCASTF32X8 (AX)(SI*1), Z10; \
	pair((R10), (R11), Z0, Z4); \
	pair((R10)(DX*1), (R11)(DX*1), Z1, Z5); \
	pair((R10)(DX*2), (R11)(DX*2), Z2, Z6); \
	pair((R10)(R9*1), (R11)(R9*1), Z3, Z7); \
	ADDQ $32, AX; \
	ADDQ kstep, R10; \
	ADDQ kstep, R11

// SCORES_PAIR_PUT folds and stores the group's sixteen scores and moves
// to the next eight positions.
#define SCORES_PAIR_PUT \
	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	VMOVUPS       Y0, (DI); \
	VEXTRACTF32X8 $1, Z0, (DI)(BX*1); \
	ADDQ          $32, DI; \
	LEAQ          (R8)(DX*8), R8

// The parts of the two-head value loops (weightedSumPairAVX512 on widened
// values, weightedSumPairHalfAVX512 on float16 ones), which differ only in
// how a block of sixteen values is loaded (wsum, a WSUM2-like macro) and
// how many bytes sixteen values take (vstep). Arguments: o0, o1, v,
// stride (bytes), w0, w1, n, chunks.
#define WSUM_PAIR_ARGS \
	MOVQ o0+0(FP), DI; \
	MOVQ o1+8(FP), BX; \
	SUBQ DI, BX; \
	MOVQ v+16(FP), SI; \
	MOVQ stride+24(FP), DX; \
	MOVQ w1+40(FP), R10; \
	SUBQ w0+32(FP), R10; \
	MOVQ n+48(FP), R13; \
	MOVQ chunks+56(FP), R14

// WSUM_PAIR_CHUNK loads a 128-float chunk of both heads' sums and starts
// its positions: values at R8, weights at R9, CX positions to go.
#define WSUM_PAIR_CHUNK \
	LOAD8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	LOAD8((DI)(BX*1), Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	MOVQ SI, R8; \
	MOVQ w0+32(FP), R9; \
	MOVQ R13, CX

// WSUM_PAIR_POS adds one position's weighted values to the chunk.
#define WSUM_PAIR_POS(wsum, vstep) \
	VBROADCASTSS (R9), Z8; \
	VBROADCASTSS (R9)(R10*1), Z10; \
	wsum(0*vstep, Z24, Z25, Z0, Z16); \
	wsum(1*vstep, Z26, Z27, Z1, Z17); \
	wsum(2*vstep, Z28, Z29, Z2, Z18); \
	wsum(3*vstep, Z30, Z31, Z3, Z19); \
	wsum(4*vstep, Z24, Z25, Z4, Z20); \
	wsum(5*vstep, Z26, Z27, Z5, Z21); \
	wsum(6*vstep, Z28, Z29, Z6, Z22); \
	wsum(7*vstep, Z30, Z31, Z7, Z23); \
	ADDQ DX, R8; \
	ADDQ $4, R9

// WSUM_PAIR_PUT stores the chunk's sums and moves to the next chunk.
#define WSUM_PAIR_PUT(vstep) \
	STORE8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	STORE8((DI)(BX*1), Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	ADDQ $512, DI; \
	ADDQ $(8*vstep), SI

// TAB_LEAD asks for the first two lines of the stretch at 16(r) of a
// table of stretches (decodeStretch's lead), t a scratch register.
#define TAB_LEAD(r, t) \
	MOVQ       16(r), t; \
	PREFETCHT0 (t); \
	PREFETCHT0 64(t)

// TAB_STRETCH starts the value kernels' stretch at AX: asks for its lead,
// R8 its first row, pf the distance to its mirror (pf − v).
#define TAB_STRETCH(pf) \
	TAB_LEAD(AX, CX); \
	MOVQ 0(AX), R8; \
	MOVQ 8(AX), pf; \
	SUBQ R8, pf

// TAB_CHUNK starts a chunk of the table value kernels: the chunk's sums
// loaded by load, R9 the first weights, AX the table, R12 its stretches.
#define TAB_CHUNK(load) \
	load; \
	MOVQ w0+32(FP), R9; \
	MOVQ tab+16(FP), AX; \
	MOVQ n+24(FP), R12

// TAB_LOAD_SUMS loads the AVX-512 table value kernels' 128-float chunk of
// both heads' sums.
#define TAB_LOAD_SUMS \
	LOAD8((DI), Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	LOAD8((DI)(BX*1), Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)

// TAB_SCORES_ARGS loads the table score kernels' arguments as PAIR_ARGS
// does (DI, BX, SI, DX, R9, the scale in vscale), a row being blocks <<
// rowshift bytes, with R13 = blocks.
#define TAB_SCORES_ARGS(rowshift, vscale) \
	MOVQ         out0+0(FP), DI; \
	MOVQ         out1+8(FP), BX; \
	SUBQ         DI, BX; \
	MOVQ         q1+24(FP), SI; \
	SUBQ         q0+16(FP), SI; \
	MOVQ         blocks+48(FP), R13; \
	MOVQ         R13, DX; \
	SHLQ         rowshift, DX; \
	LEAQ         (DX)(DX*2), R9; \
	VBROADCASTSS scale+56(FP), vscale

// TAB_SUMS_ARGS loads the table value kernels' common arguments as
// WSUM_PAIR_ARGS does (DI, BX, R10, R14 the chunks, DX the stride).
#define TAB_SUMS_ARGS \
	MOVQ o0+0(FP), DI; \
	MOVQ o1+8(FP), BX; \
	SUBQ DI, BX; \
	MOVQ w1+40(FP), R10; \
	SUBQ w0+32(FP), R10; \
	MOVQ chunks+48(FP), R14; \
	MOVQ stride+56(FP), DX

// SCORES_PUT stores the eight scores of two heads folded into the low and
// high halves of z (y its low half) at the pointers in slots a and b of
// the table at out+0(FP), R15 bytes in.
#define SCORES_PUT(a, b, y, z) \
	MOVQ          out+0(FP), CX; \
	MOVQ          a(CX), CX; \
	VMOVUPS       y, (CX)(R15*1); \
	MOVQ          out+0(FP), CX; \
	MOVQ          b(CX), CX; \
	VEXTRACTF32X8 $1, z, (CX)(R15*1)

// SCORES_HEAD adds query block (q)(CX*1), broadcast into t, times the key
// pairs Z24..Z27 to a0..a3.
#define SCORES_HEAD(q, t, a0, a1, a2, a3) \
	VBROADCASTF32X8 (q)(CX*1), t; \
	VFMADD231PS     Z24, t, a0; \
	VFMADD231PS     Z25, t, a1; \
	VFMADD231PS     Z26, t, a2; \
	VFMADD231PS     Z27, t, a3
