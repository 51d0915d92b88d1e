#include "textflag.h"

// SIMD loops of fused_exp.go and fused_kernels.go, bit-identical to the Go
// versions: the same IEEE float32 operations in the same order, with a
// fused multiply-add (VFMADD231PS) exactly where the Go versions use fma32
// (attention's scores and value sums) and none elsewhere.

#include "fused_exp_consts.h"
#include "fused_avx2_amd64.h"

// EXP_SETUP loads the constants of EXP8 into Y9..Y15.
#define EXP_SETUP \
	VBROADCASTSS expConsts<>+0(SB), Y15; \
	VBROADCASTSS expConsts<>+4(SB), Y14; \
	VBROADCASTSS expConsts<>+8(SB), Y13; \
	VBROADCASTSS expConsts<>+12(SB), Y12; \
	VBROADCASTSS expConsts<>+16(SB), Y11; \
	VBROADCASTSS expConsts<>+20(SB), Y10; \
	VPBROADCASTD expConsts<>+56(SB), Y9

#define HORNER(off) \
	VMULPS Y0, Y3, Y3; \
	VBROADCASTSS expConsts<>+off(SB), Y4; \
	VADDPS Y4, Y3, Y3

// EXP8 sets Y0 = exp32(Y0) lane by lane (fused_exp.go), using Y1..Y4.
#define EXP8 \
	VMAXPS Y15, Y0, Y0; \
	VMINPS Y14, Y0, Y0; \
	VMULPS Y13, Y0, Y1; \
	VADDPS Y12, Y1, Y1; \
	VSUBPS Y12, Y1, Y2; \
	VMULPS Y11, Y2, Y4; \
	VSUBPS Y4, Y0, Y0; \
	VMULPS Y10, Y2, Y4; \
	VSUBPS Y4, Y0, Y0; \
	VBROADCASTSS expConsts<>+24(SB), Y3; \
	HORNER(28); \
	HORNER(32); \
	HORNER(36); \
	HORNER(40); \
	HORNER(44); \
	HORNER(48); \
	HORNER(52); \
	VPADDD Y9, Y1, Y1; \
	VPSLLD $23, Y1, Y1; \
	VMULPS Y1, Y3, Y0

// EXP_SETUP16, HORNER16 and EXP16 are EXP_SETUP, HORNER and EXP8 on
// sixteen lanes: Z0 = exp32(Z0), using Z1..Z4 and the constants in
// Z9..Z15.
#define EXP_SETUP16 \
	VBROADCASTSS expConsts<>+0(SB), Z15; \
	VBROADCASTSS expConsts<>+4(SB), Z14; \
	VBROADCASTSS expConsts<>+8(SB), Z13; \
	VBROADCASTSS expConsts<>+12(SB), Z12; \
	VBROADCASTSS expConsts<>+16(SB), Z11; \
	VBROADCASTSS expConsts<>+20(SB), Z10; \
	VPBROADCASTD expConsts<>+56(SB), Z9

#define HORNER16(off) \
	VMULPS Z0, Z3, Z3; \
	VBROADCASTSS expConsts<>+off(SB), Z4; \
	VADDPS Z4, Z3, Z3

#define EXP16 \
	VMAXPS Z15, Z0, Z0; \
	VMINPS Z14, Z0, Z0; \
	VMULPS Z13, Z0, Z1; \
	VADDPS Z12, Z1, Z1; \
	VSUBPS Z12, Z1, Z2; \
	VMULPS Z11, Z2, Z4; \
	VSUBPS Z4, Z0, Z0; \
	VMULPS Z10, Z2, Z4; \
	VSUBPS Z4, Z0, Z0; \
	VBROADCASTSS expConsts<>+24(SB), Z3; \
	HORNER16(28); \
	HORNER16(32); \
	HORNER16(36); \
	HORNER16(40); \
	HORNER16(44); \
	HORNER16(48); \
	HORNER16(52); \
	VPADDD Z9, Z1, Z1; \
	VPSLLD $23, Z1, Z1; \
	VMULPS Z1, Z3, Z0

// func expShiftBlocksAVX2(x *float32, m float32, blocks int) float32
TEXT ·expShiftBlocksAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	VBROADCASTSS m+8(FP), Y8
	MOVQ blocks+16(FP), CX
	EXP_SETUP
	VXORPS Y7, Y7, Y7

exploop:
	VMOVUPS (SI), Y0
	VSUBPS Y8, Y0, Y0
	EXP8
	VMOVUPS Y0, (SI)
	VADDPS Y0, Y7, Y7
	ADDQ $32, SI
	DECQ CX
	JNE exploop

	HSUM(Y7, X7, X1)
	VZEROUPPER
	MOVSS X7, ret+24(FP)
	RET

// func siluMulBlocksAVX2(gate, up *float32, blocks int)
TEXT ·siluMulBlocksAVX2(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), SI
	MOVQ up+8(FP), DI
	MOVQ blocks+16(FP), CX
	EXP_SETUP
	VBROADCASTSS expConsts<>+48(SB), Y8 // 1
	VXORPS Y7, Y7, Y7

siluloop:
	VMOVUPS (SI), Y5
	VSUBPS Y5, Y7, Y0 // -g
	EXP8
	VADDPS Y8, Y0, Y0 // 1 + e^-g
	VDIVPS Y0, Y5, Y5 // g / (1 + e^-g)
	VMULPS (DI), Y5, Y5
	VMOVUPS Y5, (SI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE siluloop

	VZEROUPPER
	RET

// func widenAVX2(dst *float32, src *uint16, sstride, rows, blocks int)
// Row i of dst (blocks×8 floats, rows contiguous) = the float16 values at
// src + i·sstride bytes, widened by VCVTPH2PS (exact).
TEXT ·widenAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ sstride+16(FP), DX
	MOVQ rows+24(FP), R12
	MOVQ blocks+32(FP), R13

widenrow:
	MOVQ SI, R8
	MOVQ R13, CX

widenloop:
	VCVTPH2PS (R8), Y0
	VMOVUPS   Y0, (DI)
	ADDQ $16, R8
	ADDQ $32, DI
	DECQ CX
	JNE  widenloop

	ADDQ DX, SI
	DECQ R12
	JNE  widenrow
	VZEROUPPER
	RET

// func scoresAVX2(out, q, k *float32, stride, n, blocks int, scale float32)
// out[p] = q·(k + p·stride bytes)·scale (scoresRef) for p < n, over blocks×8
// floats; eight positions at a time, so eight sums proceed in parallel
// and each q vector loaded serves eight keys.
TEXT ·scoresAVX2(SB), NOSPLIT, $0-52
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ stride+24(FP), DX
	MOVQ n+32(FP), R12
	MOVQ blocks+40(FP), R13
	VBROADCASTSS scale+48(FP), Y15
	LEAQ (DX)(DX*2), R9 // 3·stride

eight:
	CMPQ R12, $8
	JLT  one
	MOVQ R8, R10        // positions 0..3 at R10 + {0, 1, 2, 3}·stride
	LEAQ (R8)(DX*4), R11 // positions 4..7 likewise
	MOVQ SI, AX
	ZERO8Y
	MOVQ R13, CX

eightloop:
	VMOVUPS (AX), Y8
	VFMADD231PS (R10), Y8, Y0
	VFMADD231PS (R10)(DX*1), Y8, Y1
	VFMADD231PS (R10)(DX*2), Y8, Y2
	VFMADD231PS (R10)(R9*1), Y8, Y3
	VFMADD231PS (R11), Y8, Y4
	VFMADD231PS (R11)(DX*1), Y8, Y5
	VFMADD231PS (R11)(DX*2), Y8, Y6
	VFMADD231PS (R11)(R9*1), Y8, Y7
	ADDQ $32, AX
	ADDQ $32, R10
	ADDQ $32, R11
	DECQ CX
	JNE  eightloop

	FOLD8_SCALE
	VMOVSS X0, 0(DI)
	VMOVSS X1, 4(DI)
	VMOVSS X2, 8(DI)
	VMOVSS X3, 12(DI)
	VMOVSS X4, 16(DI)
	VMOVSS X5, 20(DI)
	VMOVSS X6, 24(DI)
	VMOVSS X7, 28(DI)
	ADDQ $32, DI
	LEAQ (R8)(DX*8), R8
	SUBQ $8, R12
	JMP  eight

one:
	TESTQ R12, R12
	JEQ   scoresdone
	VXORPS Y0, Y0, Y0
	XORQ BX, BX
	MOVQ R13, CX

oneloop:
	VMOVUPS (SI)(BX*1), Y4
	VFMADD231PS (R8)(BX*1), Y4, Y0
	ADDQ $32, BX
	DECQ CX
	JNE  oneloop

	HSUM(Y0, X0, X9)
	VMULSS X15, X0, X0
	VMOVSS X0, 0(DI)
	ADDQ $4, DI
	ADDQ DX, R8
	DECQ R12
	JMP  one

scoresdone:
	VZEROUPPER
	RET

// func weightedSumAVX2(o, v *float32, stride int, w *float32, n, chunks int)
// o[j] += w[p]·v[p·stride bytes + j] for p = 0..n-1 in order, over
// chunks×64 floats of o, each chunk held in eight registers.
TEXT ·weightedSumAVX2(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ w+24(FP), R12
	MOVQ n+32(FP), R13
	MOVQ chunks+40(FP), R14

chunk:
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ SI, R8
	MOVQ R12, R9
	MOVQ R13, CX

pos:
	VBROADCASTSS (R9), Y8
	VFMADD231PS 0(R8), Y8, Y0
	VFMADD231PS 32(R8), Y8, Y1
	VFMADD231PS 64(R8), Y8, Y2
	VFMADD231PS 96(R8), Y8, Y3
	VFMADD231PS 128(R8), Y8, Y4
	VFMADD231PS 160(R8), Y8, Y5
	VFMADD231PS 192(R8), Y8, Y6
	VFMADD231PS 224(R8), Y8, Y7
	ADDQ DX, R8
	ADDQ $4, R9
	DECQ CX
	JNE pos

	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	DECQ R14
	JNE chunk

	VZEROUPPER
	RET


// func maxLanesAVX2(x *float32, blocks int, m *[8]float32)
// m[l] = the largest of m[l], x[l], x[l+8], … over blocks×8 floats, each
// step "if v > m then m = v" (VMAXPS with v as the first source).
TEXT ·maxLanesAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ m+16(FP), DI
	VMOVUPS (DI), Y0

maxloop:
	VMOVUPS (SI), Y1
	VMAXPS  Y0, Y1, Y0
	ADDQ $32, SI
	DECQ CX
	JNE  maxloop

	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET

// func toF16AVX2(dst *uint16, src *float32, blocks int)
// dst[i] = src[i] as float16, rounded to nearest even, for blocks×8 values.
TEXT ·toF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX

f16loop:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVDQU   X1, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNE  f16loop
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, c float32, blocks int)
// x[i] *= c over blocks×8 floats.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	VBROADCASTSS c+8(FP), Y1
	MOVQ blocks+16(FP), CX

scaleloop:
	VMULPS (SI), Y1, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	DECQ CX
	JNE scaleloop

	VZEROUPPER
	RET

// func normScaleAVX2(o, x, w *float32, c float32, blocks int)
// o[i] = (x[i]·c)·w[i] over blocks×8 floats, each product rounded.
TEXT ·normScaleAVX2(SB), NOSPLIT, $0-40
	MOVQ o+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	VBROADCASTSS c+24(FP), Y1
	MOVQ blocks+32(FP), CX

normloop:
	VMULPS (SI), Y1, Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNE normloop

	VZEROUPPER
	RET

// func rotateAVX2(lo, hi, c, s *float32, blocks int)
// lo[i], hi[i] = lo[i]·c[i] − hi[i]·s[i], lo[i]·s[i] + hi[i]·c[i] over
// blocks×8 pairs, each product rounded.
TEXT ·rotateAVX2(SB), NOSPLIT, $0-40
	MOVQ lo+0(FP), DI
	MOVQ hi+8(FP), SI
	MOVQ c+16(FP), DX
	MOVQ s+24(FP), BX
	MOVQ blocks+32(FP), CX

rotloop:
	VMOVUPS (DI), Y0 // x0
	VMOVUPS (SI), Y1 // x1
	VMOVUPS (DX), Y2 // c
	VMOVUPS (BX), Y3 // s
	VMULPS  Y2, Y0, Y4
	VMULPS  Y3, Y1, Y5
	VSUBPS  Y5, Y4, Y4 // x0·c − x1·s
	VMULPS  Y3, Y0, Y6
	VMULPS  Y2, Y1, Y7
	VADDPS  Y7, Y6, Y6 // x0·s + x1·c
	VMOVUPS Y4, (DI)
	VMOVUPS Y6, (SI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, BX
	DECQ    CX
	JNE     rotloop

	VZEROUPPER
	RET

// func addAVX2(dst, src *float32, blocks int)
// dst[i] += src[i] over blocks×8 floats.
TEXT ·addAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX

addloop:
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	DECQ    CX
	JNE     addloop

	VZEROUPPER
	RET

// func sumSquaresAVX2(x *float32, blocks int) float64
// Σ x² over blocks×16 floats in float64, lane l (of sixteen, in Y0..Y3)
// taking x[l], x[l+16], …, folded as foldSquares folds them.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   blocks+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sqloop:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VMULPD    Y4, Y4, Y4
	VMULPD    Y5, Y5, Y5
	VMULPD    Y6, Y6, Y6
	VMULPD    Y7, Y7, Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	DECQ      CX
	JNE       sqloop

	VADDPD       Y2, Y0, Y0 // t0..t3 = s0..s3 + s8..s11
	VADDPD       Y3, Y1, Y1 // t4..t7
	VADDPD       Y1, Y0, Y0 // t0+t4, t1+t5, t2+t6, t3+t7
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0 // (t0+t4)+(t2+t6), (t1+t5)+(t3+t7)
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+16(FP)
	RET

// func expShiftBlocksAVX512(x *float32, m float32, blocks int) float32
// expShiftBlocksAVX2 sixteen values at a time: the eight lane sums (Y7)
// take the low half of each sixteen, then the high half, so each lane
// adds its values in the order of the eight-lane loop; an odd last eight
// as AVX2 does it.
TEXT ·expShiftBlocksAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ blocks+16(FP), CX
	VXORPS Y7, Y7, Y7
	VBROADCASTSS m+8(FP), Z8
	EXP_SETUP16
	SHRQ $1, CX
	JEQ  exp16odd

exp16loop:
	VMOVUPS       (SI), Z0
	VSUBPS        Z8, Z0, Z0
	EXP16
	VMOVUPS       Z0, (SI)
	VADDPS        Y0, Y7, Y7
	VEXTRACTF32X8 $1, Z0, Y1
	VADDPS        Y1, Y7, Y7
	ADDQ          $64, SI
	DECQ          CX
	JNE           exp16loop

exp16odd:
	TESTQ $1, blocks+16(FP)
	JEQ   exp16sum
	VMOVUPS (SI), Y0
	VSUBPS  Y8, Y0, Y0
	EXP8
	VMOVUPS Y0, (SI)
	VADDPS  Y0, Y7, Y7

exp16sum:
	HSUM(Y7, X7, X1)
	VZEROUPPER
	MOVSS X7, ret+24(FP)
	RET

// MAX_FOLD8 leaves the largest of Y8's eight lanes in X8's low float
// (X6 scratch); the lanes hold no NaN, so any order gives its bits but for
// the sign of a zero.
#define MAX_FOLD8 LANEFOLD(VMAXPS, VMAXSS, Y8, X8, X6)

// func softmaxAVX2(x *float32, n int)
// softmaxAVX512 eight at a time, the last n mod 8 one by one (their
// exponentials by EXP8 on one lane, their maximum by VMAXSS).
TEXT ·softmaxAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), DX
	MOVQ DX, CX
	ANDQ $7, CX // the rest
	SHRQ $3, DX // whole eights

	MOVL         $0xff800000, AX
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8
	MOVQ         SI, DI
	MOVQ         DX, BX
	TESTQ        BX, BX
	JEQ          amaxfold

amaxloop:
	VMOVUPS (DI), Y6
	VMAXPS  Y8, Y6, Y8
	ADDQ    $32, DI
	DECQ    BX
	JNE     amaxloop

amaxfold:
	MAX_FOLD8
	MOVQ         CX, BX
	TESTQ        BX, BX
	JEQ          amaxdone

amaxone:
	VMOVSS (DI), X6
	VMAXSS X8, X6, X8
	ADDQ   $4, DI
	DECQ   BX
	JNE    amaxone

amaxdone:
	VBROADCASTSS X8, Y8

	EXP_SETUP
	VXORPS Y7, Y7, Y7
	MOVQ   SI, DI
	MOVQ   DX, BX
	TESTQ  BX, BX
	JEQ    aexpfold

aexploop:
	VMOVUPS (DI), Y0
	VSUBPS  Y8, Y0, Y0
	EXP8
	VMOVUPS Y0, (DI)
	VADDPS  Y0, Y7, Y7
	ADDQ    $32, DI
	DECQ    BX
	JNE     aexploop

aexpfold:
	HSUM(Y7, X7, X1)
	MOVQ  CX, BX
	TESTQ BX, BX
	JEQ   ascale

aexpone:
	VMOVSS (DI), X0
	VSUBPS Y8, Y0, Y0
	EXP8
	VMOVSS X0, (DI)
	VADDSS X0, X7, X7
	ADDQ   $4, DI
	DECQ   BX
	JNE    aexpone

ascale:
	VBROADCASTSS expConsts<>+48(SB), X6 // 1
	VDIVSS       X7, X6, X6
	VBROADCASTSS X6, Y6
	MOVQ         SI, DI
	TESTQ        DX, DX
	JEQ          ascalerest

ascaleloop:
	VMULPS  (DI), Y6, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    DX
	JNE     ascaleloop

ascalerest:
	TESTQ CX, CX
	JEQ   adone

ascaleone:
	VMULSS (DI), X6, X0
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	DECQ   CX
	JNE    ascaleone

adone:
	VZEROUPPER
	RET

// func softmaxAVX512(x *float32, n int)
// x[i] = exp32(x[i] − m) / Σ for n ≥ 1 floats, m their largest: a whole
// softmax (maxRef, expShift, then scaleRef by 1/Σ) in one call, sixteen
// at a time with the last n mod 16 masked, so that a short row costs no
// Go calls between its passes and no scalar exponentials in its tail.
// The bits are the three steps': each exponential is EXP16's, Σ adds in
// expShift's order (the lane sums of whole eights as in
// expShiftBlocksAVX512, folded by HSUM, then the last n mod 8 one by one)
// and the scale multiplies by the correctly rounded 1/Σ. The maximum is
// taken in another order than maxRef's, which can only change the sign
// of a zero maximum, and x − (+0) and x − (−0) are equal but for x = −0,
// whose exponential is 1 either way.
TEXT ·softmaxAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), DX
	MOVQ DX, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1        // the last n mod 16
	SHRQ $4, DX         // whole sixteens

	// The maximum: "if v > m then m = v" in each lane (a NaN never
	// replaces m), masked lanes −Inf.
	MOVL         $0xff800000, AX
	VPBROADCASTD AX, Z5
	VMOVAPS      Z5, Z8
	MOVQ         SI, DI
	MOVQ         DX, BX
	TESTQ        BX, BX
	JEQ          smaxtail

smaxloop:
	VMOVUPS (DI), Z6
	VMAXPS  Z8, Z6, Z8
	ADDQ    $64, DI
	DECQ    BX
	JNE     smaxloop

smaxtail:
	VMOVAPS       Z5, Z6
	VMOVUPS       (DI), K1, Z6
	VMAXPS        Z8, Z6, Z8
	VEXTRACTF32X8 $1, Z8, Y6
	VMAXPS        Y8, Y6, Y8
	MAX_FOLD8
	VBROADCASTSS  X8, Z8

	// The exponentials and their sum.
	EXP_SETUP16
	VXORPS Y7, Y7, Y7
	MOVQ   SI, DI
	MOVQ   DX, BX
	TESTQ  BX, BX
	JEQ    sexptail

sexploop:
	VMOVUPS       (DI), Z0
	VSUBPS        Z8, Z0, Z0
	EXP16
	VMOVUPS       Z0, (DI)
	VADDPS        Y0, Y7, Y7
	VEXTRACTF32X8 $1, Z0, Y1
	VADDPS        Y1, Y7, Y7
	ADDQ          $64, DI
	DECQ          BX
	JNE           sexploop

sexptail:
	VMOVUPS.Z (DI), K1, Z0
	VSUBPS    Z8, Z0, Z0
	EXP16
	VMOVUPS   Z0, K1, (DI)
	TESTQ     $8, CX
	JEQ       sexpfold
	VADDPS    Y0, Y7, Y7   // a whole eight
	ADDQ      $32, DI
	SUBQ      $8, CX

sexpfold:
	HSUM(Y7, X7, X1)
	TESTQ CX, CX
	JEQ   sscale

sexpone:
	VADDSS (DI), X7, X7    // the last n mod 8, in order
	ADDQ   $4, DI
	DECQ   CX
	JNE    sexpone

	// The scale by 1/Σ.
sscale:
	VBROADCASTSS expConsts<>+48(SB), X6 // 1
	VDIVSS       X7, X6, X6
	VBROADCASTSS X6, Z6
	MOVQ         SI, DI
	TESTQ        DX, DX
	JEQ          sscaletail

sscaleloop:
	VMULPS  (DI), Z6, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	DECQ    DX
	JNE     sscaleloop

sscaletail:
	VMOVUPS.Z (DI), K1, Z0
	VMULPS    Z6, Z0, Z0
	VMOVUPS   Z0, K1, (DI)
	VZEROUPPER
	RET

// func siluMulBlocksAVX512(gate, up *float32, blocks int)
// siluMulBlocksAVX2 sixteen values at a time; an odd last eight as AVX2
// does it.
TEXT ·siluMulBlocksAVX512(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), SI
	MOVQ up+8(FP), DI
	MOVQ blocks+16(FP), CX
	EXP_SETUP16
	VBROADCASTSS expConsts<>+48(SB), Z8 // 1
	VXORPS Y7, Y7, Y7
	SHRQ $1, CX
	JEQ  silu16odd

silu16loop:
	VMOVUPS (SI), Z5
	VSUBPS  Z5, Z7, Z0 // -g
	EXP16
	VADDPS  Z8, Z0, Z0 // 1 + e^-g
	VDIVPS  Z0, Z5, Z5 // g / (1 + e^-g)
	VMULPS  (DI), Z5, Z5
	VMOVUPS Z5, (SI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNE     silu16loop

silu16odd:
	TESTQ $1, blocks+16(FP)
	JEQ   silu16done
	VMOVUPS (SI), Y5
	VSUBPS  Y5, Y7, Y0
	EXP8
	VADDPS  Y8, Y0, Y0
	VDIVPS  Y0, Y5, Y5
	VMULPS  (DI), Y5, Y5
	VMOVUPS Y5, (SI)

silu16done:
	VZEROUPPER
	RET

// func scoresPairAVX2(out0, out1, q0, q1, k *float32, stride, groups, blocks int, scale float32)
// scoresAVX2 for two query heads against the same keys, four positions at
// a time: each key block is loaded once for both, and each head's scores
// are the ones scoresAVX2 computes for it alone.
TEXT ·scoresPairAVX2(SB), NOSPLIT, $0-68
	A2_PAIR_ARGS

p2group:
	A2_PAIR_GROUP

p2block:
	A2_PAIR_BLOCK(VMOVUPS, $32)
	DECQ CX
	JNE  p2block

	A2_PAIR_PUT
	JNE p2group

	VZEROUPPER
	RET
