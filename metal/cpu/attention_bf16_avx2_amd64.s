#include "textflag.h"
#include "fused_heads_amd64.h"
#include "fused_heads_half_amd64.h"

// A KVBF16 cache's kernels for CPUs without AVX512_BF16, on AVX2:
// VDPBF16PS emulated bit for bit. The product of two bfloat16 is exact in
// float32, so a fused multiply-add of the odd elements, then one of the
// even, rounds as VDPBF16PS's two steps do; with MXCSR's flush-to-zero
// and denormals-are-zero set for the kernel's duration (and restored),
// subnormal sums and accumulators become zero as there. A lane is one
// pair of dimensions (scores) or of positions (values), eight lanes to a
// register: a 16-dimension block of keys, 8 dimensions of a value pair.

// BF_MXCSR_SET saves MXCSR in mx-8(SP) and sets FTZ and DAZ; BF_MXCSR_RESTORE
// puts it back.
#define BF_MXCSR_SET \
	STMXCSR mx-8(SP); \
	MOVL    mx-8(SP), AX; \
	ORL     $0x8040, AX; \
	MOVL    AX, ftz-4(SP); \
	LDMXCSR ftz-4(SP)

#define BF_MXCSR_RESTORE \
	LDMXCSR mx-8(SP)

// BF_SPLIT widens the bfloat16 pairs of x (a register or memory) into the
// even elements e and the odd ones o (Y15 holds 0xffff0000 in each lane).
#define BF_SPLIT(x, e, o) \
	VPSLLD $16, x, e; \
	VPAND  x, Y15, o

// BF_MASK loads 0xffff0000 into every lane of Y15.
#define BF_MASK \
	MOVL         $0xffff0000, R14; \
	MOVQ         R14, X15; \
	VPBROADCASTD X15, Y15

// BF_NARROW8 narrows the eight floats in Y0 to bfloat16 in the low halves
// of Y1's lanes (VCVTNEPS2BF16's rounding: nearest even, subnormals to
// zero of their sign, NaN quiet), with constants Y10 (0x7fff), Y11 (1),
// Y12 (exponent mask), Y13 (sign), Y14 (quiet bit); Y2..Y6 scratch.
#define BF_NARROW8 \
	VPSRLD    $16, Y0, Y1; \
	VPAND     Y11, Y1, Y1; \
	VPADDD    Y10, Y1, Y1; \
	VPADDD    Y0, Y1, Y1; \
	VPAND     Y12, Y0, Y2; \
	VPXOR     Y3, Y3, Y3; \
	VPCMPEQD  Y3, Y2, Y2; \
	VPAND     Y13, Y0, Y4; \
	VPBLENDVB Y2, Y4, Y1, Y1; \
	VCMPPS    $3, Y0, Y0, Y5; \
	VPOR      Y14, Y0, Y6; \
	VPBLENDVB Y5, Y6, Y1, Y1; \
	VPSRLD    $16, Y1, Y1

// BF_NARROW_CONSTS loads BF_NARROW8's constants.
#define BF_NARROW_CONSTS \
	MOVL         $0x7fff, AX; \
	MOVQ         AX, X10; \
	VPBROADCASTD X10, Y10; \
	MOVL         $1, AX; \
	MOVQ         AX, X11; \
	VPBROADCASTD X11, Y11; \
	MOVL         $0x7f800000, AX; \
	MOVQ         AX, X12; \
	VPBROADCASTD X12, Y12; \
	MOVL         $0x80000000, AX; \
	MOVQ         AX, X13; \
	VPBROADCASTD X13, Y13; \
	MOVL         $0x00400000, AX; \
	MOVQ         AX, X14; \
	VPBROADCASTD X14, Y14

// BF_FOLD sets the low float of x (y its ymm) to the fold of its eight
// lanes, ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)), times the scale in X9; t is
// scratch.
#define BF_FOLD(y, x, t) \
	VEXTRACTF128 $1, y, t; \
	VADDPS       t, x, x; \
	VMOVHLPS     x, x, t; \
	VADDPS       t, x, x; \
	VMOVSHDUP    x, t; \
	VADDSS       t, x, x; \
	VMULSS       X9, x, x

// BF_POS adds the key block of the position at r (16 dimensions, 32
// bytes) times the split queries Y4..Y7 (head 0 even, odd; head 1 even,
// odd) to a0 (head 0) and a1 (head 1), odd products first.
#define BF_POS(r, a0, a1) \
	BF_SPLIT(r, Y8, Y9); \
	VFMADD231PS Y9, Y5, a0; \
	VFMADD231PS Y9, Y7, a1; \
	VFMADD231PS Y8, Y4, a0; \
	VFMADD231PS Y8, Y6, a1

// func scoresPairBF16(out0, out1 *float32, q0, q1 *uint16, tab *halfGroup, groups, blocks, stride int, scale float32)
// The scores of two heads against the groups of eight positions of tab
// (rows stride bytes apart, blocks blocks of sixteen bfloat16 dimensions),
// four positions at a time, eight scores a group from out0 and out1,
// prefetching each group's pf as it goes.
TEXT ·scoresPairBF16(SB), NOSPLIT, $16-68
	BF_MXCSR_SET // and restored for each fold
	BF_MASK
	MOVQ out0+0(FP), DI
	MOVQ out1+8(FP), BX
	MOVQ tab+32(FP), R12
	MOVQ groups+40(FP), R13
	MOVQ stride+56(FP), DX

bsgroup:
	MOVQ (R12), R8  // the group's first row
	MOVQ 8(R12), R14 // the group to prefetch, two lines a block
	XORQ R11, R11   // 0: positions 0-3, 1: 4-7

bsfour:
	LDMXCSR ftz-4(SP)
	VXORPS  Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	MOVQ   q0+16(FP), SI
	MOVQ   q1+24(FP), R9
	MOVQ   R8, R10
	MOVQ   blocks+48(FP), CX

bsblock:
	BF_SPLIT((SI), Y4, Y5)
	BF_SPLIT((R9), Y6, Y7)
	MOVQ R10, AX
	BF_POS((AX), Y0, Y10)
	ADDQ DX, AX
	BF_POS((AX), Y1, Y11)
	ADDQ DX, AX
	BF_POS((AX), Y2, Y12)
	ADDQ DX, AX
	BF_POS((AX), Y3, Y13)
	PREFETCHT0 (R14)
	PREFETCHT0 64(R14)
	ADDQ       $128, R14
	ADDQ       $32, SI
	ADDQ       $32, R9
	ADDQ       $32, R10
	DECQ       CX
	JNE        bsblock

	// The fold and scale are plain float32 arithmetic, as dotBF16Ref's.
	BF_MXCSR_RESTORE
	VMOVSS scale+64(FP), X9
	BF_FOLD(Y0, X0, X4)
	BF_FOLD(Y1, X1, X4)
	BF_FOLD(Y2, X2, X4)
	BF_FOLD(Y3, X3, X4)
	BF_FOLD(Y10, X10, X4)
	BF_FOLD(Y11, X11, X4)
	BF_FOLD(Y12, X12, X4)
	BF_FOLD(Y13, X13, X4)
	VMOVSS X0, (DI)
	VMOVSS X1, 4(DI)
	VMOVSS X2, 8(DI)
	VMOVSS X3, 12(DI)
	VMOVSS X10, (BX)
	VMOVSS X11, 4(BX)
	VMOVSS X12, 8(BX)
	VMOVSS X13, 12(BX)
	ADDQ   $16, DI
	ADDQ   $16, BX
	LEAQ   (R8)(DX*4), R8
	INCQ   R11
	CMPQ   R11, $2
	JNE    bsfour

	ADDQ $32, R12
	DECQ R13
	JNE  bsgroup

	VZEROUPPER
	RET

// BF_VAL adds the value pair words at off(SI) (eight dimensions of both
// positions) times the split weights Y4..Y7 (head 0 even, odd; head 1
// even, odd) to a0 (head 0) and a1 (head 1), odd products first.
#define BF_VAL(off, a0, a1) \
	BF_SPLIT(off(SI), Y8, Y9); \
	VFMADD231PS Y9, Y5, a0; \
	VFMADD231PS Y9, Y7, a1; \
	VFMADD231PS Y8, Y4, a0; \
	VFMADD231PS Y8, Y6, a1

// func sumsPairBF16(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
// Adds to 32 outputs of each of two heads (o[0], o[1]) the value pairs of
// tab's groups, pairs of them (at least one), from byte off of each
// pair's words (pairs stride bytes apart), weighted by the pairs of w[0]
// and w[1]: sumPairsRef's lanes.
TEXT ·sumsPairBF16(SB), NOSPLIT, $16-48
	BF_MXCSR_SET
	BF_MASK
	HW_ARGS
	MOVQ    o+0(FP), R15
	MOVQ    0(R15), R8
	MOVQ    8(R15), R9
	VMOVUPS (R8), Y0
	VMOVUPS 32(R8), Y1
	VMOVUPS 64(R8), Y2
	VMOVUPS 96(R8), Y3
	VMOVUPS (R9), Y10
	VMOVUPS 32(R9), Y11
	VMOVUPS 64(R9), Y12
	VMOVUPS 96(R9), Y13
	MOVQ    tab+16(FP), R15

bvgroup:
	HW_GROUP

bvpair:
	VPBROADCASTD (AX)(CX*4), Y8
	BF_SPLIT(Y8, Y4, Y5)
	VPBROADCASTD (BX)(CX*4), Y8
	BF_SPLIT(Y8, Y6, Y7)
	BF_VAL(0, Y0, Y10)
	BF_VAL(32, Y1, Y11)
	BF_VAL(64, Y2, Y12)
	BF_VAL(96, Y3, Y13)
	PREFETCHT0 (SI)(R14*1)
	PREFETCHT0 64(SI)(R14*1)
	ADDQ       stride+40(FP), SI
	INCQ       CX
	CMPQ       CX, pairs+24(FP)
	JEQ        bvdone
	TESTQ      $3, CX
	JNE        bvpair
	ADDQ       $32, R15
	JMP        bvgroup

bvdone:
	MOVQ    o+0(FP), R15
	MOVQ    0(R15), R8
	MOVQ    8(R15), R9
	VMOVUPS Y0, (R8)
	VMOVUPS Y1, 32(R8)
	VMOVUPS Y2, 64(R8)
	VMOVUPS Y3, 96(R8)
	VMOVUPS Y10, (R9)
	VMOVUPS Y11, 32(R9)
	VMOVUPS Y12, 64(R9)
	VMOVUPS Y13, 96(R9)
	VZEROUPPER
	BF_MXCSR_RESTORE
	RET

// func narrowBF16Vec(dst *uint16, src *float32, n int)
// narrowBF16AVX512 for AVX2: n a multiple of eight, in place allowed.
TEXT ·narrowBF16Vec(SB), NOSPLIT, $0-24
	BF_NARROW_CONSTS
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

bn8:
	VMOVDQU      (SI), Y0
	BF_NARROW8
	VEXTRACTI128 $1, Y1, X2
	VPACKUSDW    X2, X1, X1
	VMOVDQU      X1, (DI)
	ADDQ         $32, SI
	ADDQ         $16, DI
	SUBQ         $8, CX
	JNE          bn8

	VZEROUPPER
	RET

// func narrowPairsBF16Vec(dst *uint16, src *float32, n, shift int, keep uint32)
// narrowPairsBF16AVX512 for AVX2: n a multiple of eight.
TEXT ·narrowPairsBF16Vec(SB), NOSPLIT, $0-36
	BF_NARROW_CONSTS
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         shift+24(FP), X7
	MOVL         keep+32(FP), AX
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8

bp8:
	VMOVDQU (SI), Y0
	BF_NARROW8
	VPSLLD  X7, Y1, Y1
	VPAND   (DI), Y8, Y2
	VPOR    Y1, Y2, Y2
	VMOVDQU Y2, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNE     bp8

	VZEROUPPER
	RET
