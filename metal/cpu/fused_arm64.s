#include "textflag.h"
#include "quantdot_neon_arm64.h"
#include "fused_pair_arm64.h"

// NEON loops of fused_kernels.go, bit-identical to the Go versions: the
// same IEEE float32 operations in the same order; fused multiply-adds
// (FMLA) exactly where the Go versions use fma32 (attention's scores and
// value sums), none elsewhere.

// FMLA Vd.4S, Vn.4S, Vm.4S (Vd += Vn·Vm, one rounding); FMLAE: FMLA
// Vd.4S, Vn.4S, Vm.S[0].
#define FMLA4S(d, n, m) WORD $(0x4E20CC00 | ((m)<<16) | ((n)<<5) | (d))
#define FMLAE(d, n, m) WORD $(0x4F801000 | ((m)<<16) | ((n)<<5) | (d))

// FCMGT Vd.4S, Vn.4S, Vm.4S (Vn > Vm); BIT Vd.16B, Vn.16B, Vm.16B (Vd
// takes Vn's bits where Vm's are set)
#define FCMGT4S(d, n, m) WORD $(0x6EA0E400 | ((m)<<16) | ((n)<<5) | (d))
#define BIT16B(d, n, m) WORD $(0x6EA01C00 | ((m)<<16) | ((n)<<5) | (d))

// LANESUM leaves in S(d) the dot order's sum of the eight lanes in V(lo)
// (lanes 0-3) and V(hi) (lanes 4-7): C = lo + hi = (s0+s4, s1+s5, s2+s6,
// s3+s7); E = C + C rotated by two lanes, so E0 = (s0+s4)+(s2+s6) and E1 =
// (s1+s5)+(s3+s7); then E0 + E1. V(t) is scratch.
#define LANESUM(d, lo, hi, t) \
	FADD4S(lo, lo, hi); \
	EXT8(t, lo, lo); \
	FADD4S(lo, lo, t); \
	FADDP2S(d, lo)

#include "fused_exp_consts.h"

// FSUB, FMIN, FMAX, FDIV Vd.4S, Vn.4S, Vm.4S; FNEG Vd.4S, Vn.4S; ADD
// Vd.4S, Vn.4S, Vm.4S; SHL Vd.4S, Vn.4S, #23
#define FSUB4S(d, n, m) WORD $(0x4EA0D400 | ((m)<<16) | ((n)<<5) | (d))
#define FMIN4S(d, n, m) WORD $(0x4EA0F400 | ((m)<<16) | ((n)<<5) | (d))
#define FMAX4S(d, n, m) WORD $(0x4E20F400 | ((m)<<16) | ((n)<<5) | (d))
#define FDIV4S(d, n, m) WORD $(0x6E20FC00 | ((m)<<16) | ((n)<<5) | (d))
#define FNEG4S(d, n) WORD $(0x6EA0F800 | ((n)<<5) | (d))
#define ADD4S(d, n, m) WORD $(0x4EA08400 | ((m)<<16) | ((n)<<5) | (d))
#define SHL23(d, n) WORD $(0x4F375400 | ((n)<<5) | (d))

// EXP_SETUP loads expConsts into V16..V30, one constant in every lane
// of each: lo, hi, log2e, magic, ln2hi, ln2lo (V16..V21), the Horner
// coefficients (V22..V29), the exponent bias (V30). R6 is scratch.
#define EXP_SETUP \
	MOVD $expConsts<>(SB), R6; \
	VLD1R.P 4(R6), [V16.S4]; \
	VLD1R.P 4(R6), [V17.S4]; \
	VLD1R.P 4(R6), [V18.S4]; \
	VLD1R.P 4(R6), [V19.S4]; \
	VLD1R.P 4(R6), [V20.S4]; \
	VLD1R.P 4(R6), [V21.S4]; \
	VLD1R.P 4(R6), [V22.S4]; \
	VLD1R.P 4(R6), [V23.S4]; \
	VLD1R.P 4(R6), [V24.S4]; \
	VLD1R.P 4(R6), [V25.S4]; \
	VLD1R.P 4(R6), [V26.S4]; \
	VLD1R.P 4(R6), [V27.S4]; \
	VLD1R.P 4(R6), [V28.S4]; \
	VLD1R.P 4(R6), [V29.S4]; \
	VLD1R (R6), [V30.S4]

// EXP4 sets V(x) = exp32(V(x)) lane by lane (fused_exp.go) with the
// constants of EXP_SETUP; V(t), V(n), V(p) are scratch.
#define EXP4(x, t, n, p) \
	FMAX4S(x, x, 16); \
	FMIN4S(x, x, 17); \
	FMUL4S(t, x, 18); \
	FADD4S(t, t, 19); \
	FSUB4S(n, t, 19); \
	FMUL4S(p, n, 20); \
	FSUB4S(x, x, p); \
	FMUL4S(p, n, 21); \
	FSUB4S(x, x, p); \
	FMUL4S(p, 22, x); \
	FADD4S(p, p, 23); \
	FMUL4S(p, p, x); \
	FADD4S(p, p, 24); \
	FMUL4S(p, p, x); \
	FADD4S(p, p, 25); \
	FMUL4S(p, p, x); \
	FADD4S(p, p, 26); \
	FMUL4S(p, p, x); \
	FADD4S(p, p, 27); \
	FMUL4S(p, p, x); \
	FADD4S(p, p, 28); \
	FMUL4S(p, p, x); \
	FADD4S(p, p, 29); \
	ADD4S(t, t, 30); \
	SHL23(t, t); \
	FMUL4S(x, p, t)

// The parts of the NEON two-head value loops (weightedSumPairHalfNEON,
// weightedSumPairQ8NEON): arguments o0, o1, v, stride (bytes), w0, w1,
// n, chunks, pf; a 32-float chunk of head 0's sums in V0..V7 and head
// 1's in V8..V15, values at R7, weights at R8 and R9, R10 positions to go.
#define NW_ARGS \
	MOVD o0+0(FP), R0; \
	MOVD o1+8(FP), R1; \
	MOVD v+16(FP), R2; \
	MOVD stride+24(FP), R3; \
	MOVD n+48(FP), R4; \
	MOVD chunks+56(FP), R5; \
	MOVD pf+64(FP), R14; \
	SUB  R2, R14, R14

#define NW_CHUNK \
	VLD1 (R0), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	ADD  $64, R0, R6; \
	VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4]; \
	VLD1 (R1), [V8.S4, V9.S4, V10.S4, V11.S4]; \
	ADD  $64, R1, R6; \
	VLD1 (R6), [V12.S4, V13.S4, V14.S4, V15.S4]; \
	MOVD R2, R7; \
	MOVD w0+32(FP), R8; \
	MOVD w1+40(FP), R9; \
	MOVD R4, R10

#define NW_PUT \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0); \
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R0); \
	VST1.P [V8.S4, V9.S4, V10.S4, V11.S4], 64(R1); \
	VST1.P [V12.S4, V13.S4, V14.S4, V15.S4], 64(R1)

// NTAB_CHUNK starts a chunk of the table value kernels: the sums loaded
// (NW_CHUNK), R23 the table, R24 its stretches.
#define NTAB_CHUNK \
	NW_CHUNK; \
	MOVD tab+16(FP), R23; \
	MOVD n+24(FP), R24

// NW_MAC adds one position's 32 widened values (a..h, four each) weighted
// by S28 to head 0's sums and by S29 to head 1's.
#define NW_MAC(a, b, c, d, e, f, g, h) \
	FMLAE(0, a, 28); \
	FMLAE(1, b, 28); \
	FMLAE(2, c, 28); \
	FMLAE(3, d, 28); \
	FMLAE(4, e, 28); \
	FMLAE(5, f, 28); \
	FMLAE(6, g, 28); \
	FMLAE(7, h, 28); \
	FMLAE(8, a, 29); \
	FMLAE(9, b, 29); \
	FMLAE(10, c, 29); \
	FMLAE(11, d, 29); \
	FMLAE(12, e, 29); \
	FMLAE(13, f, 29); \
	FMLAE(14, g, 29); \
	FMLAE(15, h, 29)

// SCALE8 multiplies the eight floats at r by S(c), stepping r past them.
#define SCALE8(r, c) \
	VLD1 (r), [V0.S4, V1.S4]; \
	FMULE(0, 0, c); \
	FMULE(1, 1, c); \
	VST1.P [V0.S4, V1.S4], 32(r)

// EXP_SHIFT8 sets the eight floats at r to exp32(x − V15) and adds them
// to the lane sums V8 (lanes 0-3) and V9 (4-7), stepping r past them.
#define EXP_SHIFT8(r) \
	VLD1 (r), [V0.S4, V1.S4]; \
	FSUB4S(0, 0, 15); \
	FSUB4S(1, 1, 15); \
	EXP4(0, 2, 3, 4); \
	EXP4(1, 5, 6, 7); \
	VST1.P [V0.S4, V1.S4], 32(r); \
	FADD4S(8, 8, 0); \
	FADD4S(9, 9, 1)

// func expShiftBlocksNEON(x *float32, m float32, blocks int) float32
// x[i] = exp32(x[i] - m) over blocks×8 floats; returns their sum in
// eight lanes (V8, V9) combined in the dot order.
TEXT ·expShiftBlocksNEON(SB), NOSPLIT, $0-28
	MOVD  x+0(FP), R0
	FMOVS m+8(FP), F15
	VDUP  V15.S[0], V15.S4
	MOVD  blocks+16(FP), R1
	EXP_SETUP
	ZERO(8)
	ZERO(9)

exploop:
	EXP_SHIFT8(R0)
	SUB  $1, R1, R1
	CBNZ R1, exploop

	LANESUM(10, 8, 9, 11)
	FMOVS F10, ret+24(FP)
	RET

// FMAXNM Vd.4S, Vn.4S, Vm.4S; FMAXNMV Sd, Vn.4S; FMAXNM Sd, Sn, Sm: the
// larger, a quiet NaN losing to any number (as in maxRef, where a NaN
// never replaces the running maximum).
#define FMAXNM4S(d, n, m) WORD $(0x4E20C400 | ((m)<<16) | ((n)<<5) | (d))
#define FMAXNMV(d, n) WORD $(0x6E30C800 | ((n)<<5) | (d))
#define FMAXNMS(d, n, m) WORD $(0x1E206800 | ((m)<<16) | ((n)<<5) | (d))

// func softmaxNEON(x *float32, n int)
// x[i] = exp32(x[i] − m) / Σ for n ≥ 1 floats, m their largest: a whole
// softmax (maxRef, expShift, then scaleRef by 1/Σ) in one call, as
// softmaxAVX512 (fused_amd64.s) does it, eight at a time and the last
// n mod 8 one by one. The bits are the three steps': Σ adds in expShift's
// order (lanes 0-3 in V8, 4-7 in V9, folded by LANESUM, then the rest in
// order) and the scale multiplies by the correctly rounded 1/Σ. The
// maximum is taken in another order than maxRef's, which can only change
// the sign of a zero maximum: the exponentials are the same.
TEXT ·softmaxNEON(SB), NOSPLIT, $0-16
	MOVD x+0(FP), R0
	MOVD n+8(FP), R1
	LSR  $3, R1, R2 // whole eights
	AND  $7, R1, R3 // the rest

	// The maximum.
	MOVW $0xff800000, R4
	VDUP R4, V0.S4
	VDUP R4, V1.S4
	MOVD R0, R5
	MOVD R2, R6
	CBZ  R6, smaxfold

smaxloop:
	VLD1.P 32(R5), [V2.S4, V3.S4]
	FMAXNM4S(0, 0, 2)
	FMAXNM4S(1, 1, 3)
	SUB    $1, R6, R6
	CBNZ   R6, smaxloop

smaxfold:
	FMAXNM4S(0, 0, 1)
	FMAXNMV(0, 0)
	MOVD R3, R6
	CBZ  R6, smaxdone

smaxone:
	FMOVS.P 4(R5), F2
	FMAXNMS(0, 0, 2)
	SUB     $1, R6, R6
	CBNZ    R6, smaxone

smaxdone:
	VDUP V0.S[0], V15.S4

	// The exponentials and their sum.
	EXP_SETUP
	ZERO(8)
	ZERO(9)
	MOVD R0, R5
	MOVD R2, R6
	CBZ  R6, sexpfold

sexploop:
	EXP_SHIFT8(R5)
	SUB    $1, R6, R6
	CBNZ   R6, sexploop

sexpfold:
	LANESUM(10, 8, 9, 11)
	MOVD R3, R6
	CBZ  R6, sscale

sexpone:
	FMOVS (R5), F0
	FSUB4S(0, 0, 15)
	EXP4(0, 2, 3, 4)
	FMOVS.P F0, 4(R5)
	FADDS   F0, F10, F10
	SUB     $1, R6, R6
	CBNZ    R6, sexpone

	// The scale by 1/Σ.
sscale:
	FMOVS $1.0, F11
	FDIVS F10, F11, F11
	MOVD  R0, R5
	MOVD  R2, R6
	CBZ   R6, sscalerest

sscaleloop:
	SCALE8(R5, 11)
	SUB    $1, R6, R6
	CBNZ   R6, sscaleloop

sscalerest:
	CBZ R3, sdone

sscaleone:
	FMOVS (R5), F0
	FMULS F11, F0, F0
	FMOVS.P F0, 4(R5)
	SUB     $1, R3, R3
	CBNZ    R3, sscaleone

sdone:
	RET

// func siluMulBlocksNEON(gate, up *float32, blocks int)
// gate[i] = gate[i]/(1+exp32(-gate[i]))·up[i] over blocks×8 floats.
TEXT ·siluMulBlocksNEON(SB), NOSPLIT, $0-24
	MOVD gate+0(FP), R0
	MOVD up+8(FP), R1
	MOVD blocks+16(FP), R2
	EXP_SETUP
	FMOVS $1.0, F15
	VDUP  V15.S[0], V15.S4

siluloop:
	VLD1 (R0), [V10.S4, V11.S4]
	FNEG4S(0, 10)
	FNEG4S(1, 11)
	EXP4(0, 2, 3, 4)
	EXP4(1, 5, 6, 7)
	FADD4S(0, 0, 15)
	FADD4S(1, 1, 15)
	FDIV4S(10, 10, 0)
	FDIV4S(11, 11, 1)
	VLD1.P 32(R1), [V12.S4, V13.S4]
	FMUL4S(10, 10, 12)
	FMUL4S(11, 11, 13)
	VST1.P [V10.S4, V11.S4], 32(R0)
	SUB  $1, R2, R2
	CBNZ R2, siluloop
	RET

// func widenNEON(dst *float32, src *uint16, sstride, rows, blocks int)
// Row i of dst (blocks×8 floats, rows contiguous) = the float16 values at
// src + i·sstride bytes, widened by FCVTL/FCVTL2 (exact).
TEXT ·widenNEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD sstride+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD blocks+32(FP), R4

widenrow:
	MOVD R1, R5
	MOVD R4, R6

widenloop:
	VLD1.P 16(R5), [V0.H8]
	FCVTL(1, 0)
	FCVTL2(2, 0)
	VST1.P [V1.S4, V2.S4], 32(R0)
	SUB  $1, R6, R6
	CBNZ R6, widenloop

	ADD  R2, R1, R1
	SUB  $1, R3, R3
	CBNZ R3, widenrow
	RET

// func scoresNEON(out, q, k *float32, stride, n, blocks int, scale float32)
// out[p] = q·(k + p·stride bytes)·scale (scoresRef) for p < n, over blocks×8
// floats; four positions at a time, each position's eight lanes in two
// registers (V0..V7), the q step in V16, V17.
TEXT ·scoresNEON(SB), NOSPLIT, $0-52
	MOVD  out+0(FP), R0
	MOVD  q+8(FP), R1
	MOVD  k+16(FP), R2
	MOVD  stride+24(FP), R3
	MOVD  n+32(FP), R4
	MOVD  blocks+40(FP), R5
	FMOVS scale+48(FP), F30

four:
	CMP  $4, R4
	BLT  one
	MOVD R2, R6
	ADD  R3, R6, R7
	ADD  R3, R7, R8
	ADD  R3, R8, R9
	MOVD R1, R10
	MOVD R5, R11
	ZERO8

fourloop:
	VLD1.P 32(R10), [V16.S4, V17.S4]
	VLD1.P 32(R6), [V20.S4, V21.S4]
	VLD1.P 32(R7), [V22.S4, V23.S4]
	VLD1.P 32(R8), [V24.S4, V25.S4]
	VLD1.P 32(R9), [V26.S4, V27.S4]
	FMLA4S(0, 20, 16)
	FMLA4S(1, 21, 17)
	FMLA4S(2, 22, 16)
	FMLA4S(3, 23, 17)
	FMLA4S(4, 24, 16)
	FMLA4S(5, 25, 17)
	FMLA4S(6, 26, 16)
	FMLA4S(7, 27, 17)
	SUB  $1, R11, R11
	CBNZ R11, fourloop

	LANESUM(8, 0, 1, 28)
	LANESUM(9, 2, 3, 29)
	LANESUM(10, 4, 5, 28)
	LANESUM(11, 6, 7, 29)
	FMULS F30, F8, F8
	FMULS F30, F9, F9
	FMULS F30, F10, F10
	FMULS F30, F11, F11
	FMOVS.P F8, 4(R0)
	FMOVS.P F9, 4(R0)
	FMOVS.P F10, 4(R0)
	FMOVS.P F11, 4(R0)
	ADD  R3<<2, R2, R2
	SUB  $4, R4, R4
	B    four

one:
	CBZ  R4, scoresdone
	MOVD R2, R6
	MOVD R1, R10
	MOVD R5, R11
	ZERO(0)
	ZERO(1)

oneloop:
	VLD1.P 32(R10), [V16.S4, V17.S4]
	VLD1.P 32(R6), [V20.S4, V21.S4]
	FMLA4S(0, 20, 16)
	FMLA4S(1, 21, 17)
	SUB  $1, R11, R11
	CBNZ R11, oneloop

	LANESUM(8, 0, 1, 28)
	FMULS F30, F8, F8
	FMOVS.P F8, 4(R0)
	ADD  R3, R2, R2
	SUB  $1, R4, R4
	B    one

scoresdone:
	RET

// func weightedSumNEON(o, v *float32, stride int, w *float32, n, chunks int)
// o[j] += w[p]·v[p·stride bytes + j] for p = 0..n-1 in order, over
// chunks×32 floats of o, each chunk held in eight registers (V0..V7).
TEXT ·weightedSumNEON(SB), NOSPLIT, $0-48
	MOVD o+0(FP), R0
	MOVD v+8(FP), R1
	MOVD stride+16(FP), R2
	MOVD w+24(FP), R3
	MOVD n+32(FP), R4
	MOVD chunks+40(FP), R5

chunk:
	VLD1 (R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	ADD  $64, R0, R6
	VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	MOVD R1, R7
	MOVD R3, R8
	MOVD R4, R9

pos:
	FMOVS.P 4(R8), F24
	MOVD R7, R10
	VLD1.P 64(R10), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1 (R10), [V20.S4, V21.S4, V22.S4, V23.S4]
	FMLAE(0, 16, 24)
	FMLAE(1, 17, 24)
	FMLAE(2, 18, 24)
	FMLAE(3, 19, 24)
	FMLAE(4, 20, 24)
	FMLAE(5, 21, 24)
	FMLAE(6, 22, 24)
	FMLAE(7, 23, 24)
	ADD  R2, R7, R7
	SUB  $1, R9, R9
	CBNZ R9, pos

	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R0)
	ADD  $128, R1, R1
	SUB  $1, R5, R5
	CBNZ R5, chunk
	RET

// func maxLanesNEON(x *float32, blocks int, m *[8]float32)
// m[l] = the largest of m[l], x[l], x[l+8], … over blocks×8 floats, each
// step "if v > m then m = v" (FCMGT, then BIT inserts the greater lanes).
TEXT ·maxLanesNEON(SB), NOSPLIT, $0-24
	MOVD x+0(FP), R0
	MOVD blocks+8(FP), R1
	MOVD m+16(FP), R2
	VLD1 (R2), [V0.S4, V1.S4]

maxloop:
	VLD1.P 32(R0), [V2.S4, V3.S4]
	FCMGT4S(4, 2, 0)
	FCMGT4S(5, 3, 1)
	BIT16B(0, 2, 4)
	BIT16B(1, 3, 5)
	SUB  $1, R1, R1
	CBNZ R1, maxloop

	VST1 [V0.S4, V1.S4], (R2)
	RET

// FCVTN Vd.4H, Vn.4S; FCVTN2 Vd.8H, Vn.4S (round to nearest even)
#define FCVTN(d, n) WORD $(0x0E216800 | ((n)<<5) | (d))
#define FCVTN2(d, n) WORD $(0x4E216800 | ((n)<<5) | (d))

// func toF16NEON(dst *uint16, src *float32, blocks int)
// dst[i] = src[i] as float16, rounded to nearest even, for blocks×8 values.
TEXT ·toF16NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD blocks+16(FP), R2

f16loop:
	VLD1.P 32(R1), [V0.S4, V1.S4]
	FCVTN(2, 0)
	FCVTN2(2, 1)
	VST1.P [V2.H8], 16(R0)
	SUB  $1, R2, R2
	CBNZ R2, f16loop
	RET

// func scaleNEON(x *float32, c float32, blocks int)
// x[i] *= c over blocks×8 floats.
TEXT ·scaleNEON(SB), NOSPLIT, $0-24
	MOVD  x+0(FP), R0
	FMOVS c+8(FP), F16
	MOVD  blocks+16(FP), R1

scaleloop:
	SCALE8(R0, 16)
	SUB  $1, R1, R1
	CBNZ R1, scaleloop
	RET

// func normScaleNEON(o, x, w *float32, c float32, blocks int)
// o[i] = (x[i]·c)·w[i] over blocks×8 floats, each product rounded.
TEXT ·normScaleNEON(SB), NOSPLIT, $0-40
	MOVD  o+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  w+16(FP), R2
	FMOVS c+24(FP), F16
	MOVD  blocks+32(FP), R3

normloop:
	VLD1.P 32(R1), [V0.S4, V1.S4]
	VLD1.P 32(R2), [V2.S4, V3.S4]
	FMULE(0, 0, 16)
	FMULE(1, 1, 16)
	FMUL4S(0, 0, 2)
	FMUL4S(1, 1, 3)
	VST1.P [V0.S4, V1.S4], 32(R0)
	SUB  $1, R3, R3
	CBNZ R3, normloop
	RET

// func rotateNEON(lo, hi, c, s *float32, blocks int)
// lo[i], hi[i] = lo[i]·c[i] − hi[i]·s[i], lo[i]·s[i] + hi[i]·c[i] over
// blocks×8 pairs, each product rounded.
TEXT ·rotateNEON(SB), NOSPLIT, $0-40
	MOVD lo+0(FP), R0
	MOVD hi+8(FP), R1
	MOVD c+16(FP), R2
	MOVD s+24(FP), R3
	MOVD blocks+32(FP), R4

rotloop:
	VLD1   (R0), [V0.S4, V1.S4]      // x0
	VLD1   (R1), [V2.S4, V3.S4]      // x1
	VLD1.P 32(R2), [V4.S4, V5.S4]    // c
	VLD1.P 32(R3), [V6.S4, V7.S4]    // s
	FMUL4S(16, 0, 4)
	FMUL4S(17, 1, 5)
	FMUL4S(18, 2, 6)
	FMUL4S(19, 3, 7)
	FSUB4S(16, 16, 18) // x0·c − x1·s
	FSUB4S(17, 17, 19)
	FMUL4S(20, 0, 6)
	FMUL4S(21, 1, 7)
	FMUL4S(22, 2, 4)
	FMUL4S(23, 3, 5)
	FADD4S(20, 20, 22) // x0·s + x1·c
	FADD4S(21, 21, 23)
	VST1.P [V16.S4, V17.S4], 32(R0)
	VST1.P [V20.S4, V21.S4], 32(R1)
	SUB  $1, R4, R4
	CBNZ R4, rotloop
	RET

// func addNEON(dst, src *float32, blocks int)
// dst[i] += src[i] over blocks×8 floats.
TEXT ·addNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD blocks+16(FP), R2

addloop:
	VLD1   (R0), [V0.S4, V1.S4]
	VLD1.P 32(R1), [V2.S4, V3.S4]
	FADD4S(0, 0, 2)
	FADD4S(1, 1, 3)
	VST1.P [V0.S4, V1.S4], 32(R0)
	SUB  $1, R2, R2
	CBNZ R2, addloop
	RET

// FCVTL Vd.2D, Vn.2S and FCVTL2 Vd.2D, Vn.4S (float32 to float64, exact);
// FMUL, FADD Vd.2D; FADDP Dd, Vn.2D (the two lanes' sum).
#define FCVTLD(d, n) WORD $(0x0E617800 | ((n)<<5) | (d))
#define FCVTL2D(d, n) WORD $(0x4E617800 | ((n)<<5) | (d))
#define FMUL2D(d, n, m) WORD $(0x6E60DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FADD2D(d, n, m) WORD $(0x4E60D400 | ((m)<<16) | ((n)<<5) | (d))
#define FADDPD(d, n) WORD $(0x7E70D800 | ((n)<<5) | (d))

// SQUARES adds the squares of float32 lanes 0, 1 (FCVTLD) or 2, 3
// (FCVTL2D) of Vn to accumulator Va, through Vt.
#define SQUARES(cvt, t, n, a) \
	cvt(t, n); \
	FMUL2D(t, t, t); \
	FADD2D(a, a, t)

// func sumSquaresNEON(x *float32, blocks int) float64
// Σ x² over blocks×16 floats in float64, lane l (of sixteen, two to each
// of V0..V7) taking x[l], x[l+16], …, folded as foldSquares folds them.
TEXT ·sumSquaresNEON(SB), NOSPLIT, $0-24
	MOVD x+0(FP), R0
	MOVD blocks+8(FP), R1
	ZERO8

sqloop:
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	SQUARES(FCVTLD, 20, 16, 0)  // lanes 0, 1
	SQUARES(FCVTL2D, 21, 16, 1) // 2, 3
	SQUARES(FCVTLD, 22, 17, 2)  // 4, 5
	SQUARES(FCVTL2D, 23, 17, 3) // 6, 7
	SQUARES(FCVTLD, 24, 18, 4)  // 8, 9
	SQUARES(FCVTL2D, 25, 18, 5) // 10, 11
	SQUARES(FCVTLD, 26, 19, 6)  // 12, 13
	SQUARES(FCVTL2D, 27, 19, 7) // 14, 15
	SUB  $1, R1, R1
	CBNZ R1, sqloop

	FADD2D(0, 0, 4) // t0, t1 = s0 + s8, s1 + s9
	FADD2D(1, 1, 5) // t2, t3
	FADD2D(2, 2, 6) // t4, t5
	FADD2D(3, 3, 7) // t6, t7
	FADD2D(0, 0, 2) // t0+t4, t1+t5
	FADD2D(1, 1, 3) // t2+t6, t3+t7
	FADD2D(0, 0, 1) // (t0+t4)+(t2+t6), (t1+t5)+(t3+t7)
	FADDPD(0, 0)
	FMOVD F0, ret+16(FP)
	RET

// HKEY widens position j's block of eight float16 keys (at Rr, stepped
// on) and adds its products with the two query blocks V16/V17 (head 0)
// and V18/V19 (head 1) to head 0's sums V(2j), V(2j+1) and head 1's
// V(8+2j), V(9+2j).
#define HKEY(r, j) \
	VLD1.P 16(r), [V20.H8]; \
	FCVTL(21, 20); \
	FCVTL2(22, 20); \
	FMLA4S(2*(j), 21, 16); \
	FMLA4S(2*(j)+1, 22, 17); \
	FMLA4S(8+2*(j), 21, 18); \
	FMLA4S(9+2*(j), 22, 19)

// func scoresPairHalfNEON(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)
// scoresNEON for two query heads with the keys float16 (stride in bytes),
// read in place: four positions at a time over blocks×8 dimensions, each
// block of keys widened once in registers for both heads, the group's
// mirror at pf prefetched 64 bytes a block (the four positions' rows are
// contiguous: stride = 16·blocks), as scoresPairHalfAVX2.
TEXT ·scoresPairHalfNEON(SB), NOSPLIT, $0-80
	NP_ARGS
	MOVD pf+72(FP), R14
	SUB  R2, R14, R14 // pf − k

h4group:
	NP_GROUP
	ADD R2, R14, R12

h4block:
	NP_BLOCK(HKEY)
	PRFM (R12), PLDL1KEEP
	ADD  $64, R12
	SUB  $1, R13, R13
	CBNZ R13, h4block

	NP_PUT
	CBNZ R4, h4group
	RET

// FKEY is HKEY for keys already float32 (widened): position j's block of
// eight at Rr, stepped on.
#define FKEY(r, j) \
	VLD1.P 32(r), [V21.S4, V22.S4]; \
	FMLA4S(2*(j), 21, 16); \
	FMLA4S(2*(j)+1, 22, 17); \
	FMLA4S(8+2*(j), 21, 18); \
	FMLA4S(9+2*(j), 22, 19)

// func scoresPairNEON(out0, out1, q0, q1, k *float32, stride, groups, blocks int, scale float32)
// scoresNEON for two query heads against the same keys, four positions
// at a time: each key block is loaded once for both heads, and each
// head's scores are the ones scoresNEON computes for it alone.
TEXT ·scoresPairNEON(SB), NOSPLIT, $0-68
	NP_ARGS

p4group:
	NP_GROUP

p4block:
	NP_BLOCK(FKEY)
	SUB  $1, R13, R13
	CBNZ R13, p4block

	NP_PUT
	CBNZ R4, p4group
	RET

// NH_POS adds one position's 32 float16 values at R7 (widened once for
// both heads, weighted by the next weights at R8 and R9, stepped on) to the
// chunk's sums, prefetching their line at the mirror R14 bytes on, and
// steps R7 to the next position.
#define NH_POS \
	ADD     R14, R7, R11; \
	PRFM    (R11), PLDL1KEEP; \
	FMOVS.P 4(R8), F28; \
	FMOVS.P 4(R9), F29; \
	VLD1    (R7), [V16.H8, V17.H8, V18.H8, V19.H8]; \
	FCVTL(20, 16); \
	FCVTL2(21, 16); \
	FCVTL(22, 17); \
	FCVTL2(23, 17); \
	FCVTL(24, 18); \
	FCVTL2(25, 18); \
	FCVTL(26, 19); \
	FCVTL2(27, 19); \
	NW_MAC(20, 21, 22, 23, 24, 25, 26, 27); \
	ADD     R3, R7, R7

// func weightedSumPairHalfNEON(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)
// weightedSumNEON for two query heads with the values float16 (stride in
// bytes), read in place: over chunks×32 floats of the outputs (head 0's
// sums V0..V7, head 1's V8..V15), positions 0..n-1 in order, each
// position's 64 bytes of values widened once for both heads and
// prefetched at pf's mirror.
TEXT ·weightedSumPairHalfNEON(SB), NOSPLIT, $0-72
	NW_ARGS

h2chunk:
	NW_CHUNK

h2pos:
	NH_POS
	SUB     $1, R10, R10
	CBNZ    R10, h2pos

	NW_PUT
	ADD    $64, R2, R2
	SUB    $1, R5, R5
	CBNZ   R5, h2chunk
	RET

// The pair kernels over a whole table of stretches (decodeStretch: the
// stretch's first row, the stretch to prefetch as it is read, the one
// decodeLead on, its positions; attention_tables.go), as the AVX-512 ones
// (fused_half_amd64.s): one call per segment of a KV head, each stretch
// read exactly as the one-stretch kernels read it.

// NTAB_LEAD asks for the first two lines of the lead of the stretch at r
// (t a scratch register).
#define NTAB_LEAD(r, t) \
	MOVD 16(r), t; \
	PRFM (t), PLDL1KEEP; \
	ADD  $64, t; \
	PRFM (t), PLDL1KEEP

// NTAB_VSTRETCH starts the value kernels' stretch at R23: asks for its
// lead, R7 its first row, R14 the distance to its mirror (pf − v).
#define NTAB_VSTRETCH \
	NTAB_LEAD(R23, R20); \
	MOVD 0(R23), R7; \
	MOVD 8(R23), R14; \
	SUB  R7, R14, R14

// func scoresPairHalfTabNEON(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32)
// scoresPairHalfNEON over the n stretches of tab: each one's whole groups
// of four positions, their scores one after another from out0 and out1.
TEXT ·scoresPairHalfTabNEON(SB), NOSPLIT, $0-60
	MOVD  out0+0(FP), R0
	MOVD  out1+8(FP), R1
	MOVD  blocks+48(FP), R5
	LSL   $4, R5, R3 // a row: 16·blocks bytes
	FMOVS scale+56(FP), F30
	MOVD  tab+32(FP), R23
	MOVD  n+40(FP), R24

h4tentry:
	NTAB_LEAD(R23, R20)
	MOVD 0(R23), R2
	MOVD 8(R23), R14
	SUB  R2, R14, R14 // pf − k
	MOVD 24(R23), R4
	LSR  $2, R4, R4   // whole groups
	ADD  $32, R23
	CBZ  R4, h4tnext

h4tgroup:
	NP_GROUP
	ADD R2, R14, R12

h4tblock:
	NP_BLOCK(HKEY)
	PRFM (R12), PLDL1KEEP
	ADD  $64, R12
	SUB  $1, R13, R13
	CBNZ R13, h4tblock

	NP_PUT
	CBNZ R4, h4tgroup

h4tnext:
	SUB  $1, R24, R24
	CBNZ R24, h4tentry
	RET

// func weightedSumPairHalfTabNEON(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride int)
// weightedSumPairHalfNEON over the n stretches of tab (rows stride bytes
// apart), their positions in order with weights one after another from
// w0 and w1; each chunk's sums kept in registers through every stretch.
TEXT ·weightedSumPairHalfTabNEON(SB), NOSPLIT, $0-64
	MOVD o0+0(FP), R0
	MOVD o1+8(FP), R1
	MOVD chunks+48(FP), R5
	MOVD stride+56(FP), R3
	MOVD $0, R2 // the chunk's byte offset in a row

h2tchunk:
	NTAB_CHUNK

h2tstretch:
	NTAB_VSTRETCH
	ADD  R2, R7, R7
	MOVD 24(R23), R10
	ADD  $32, R23
	CBZ  R10, h2tnext

h2tpos:
	NH_POS
	SUB  $1, R10, R10
	CBNZ R10, h2tpos

h2tnext:
	SUB  $1, R24, R24
	CBNZ R24, h2tstretch

	NW_PUT
	ADD  $64, R2, R2
	SUB  $1, R5, R5
	CBNZ R5, h2tchunk
	RET

// The q8 cache's pair kernels (metal.KVQ8), as the float16 ones above with
// each block of int8 sign-extended (SSHLL), converted (SCVTF) and
// multiplied by its group's float16 scale widened (FCVTL): all exact, the
// floats DequantizeKV gives, so the products and sums are the widened
// path's.
#define SXTL8H(d, n) WORD $(0x0F08A400 | ((n)<<5) | (d))
#define SXTL28H(d, n) WORD $(0x4F08A400 | ((n)<<5) | (d))
#define SXTL4S(d, n) WORD $(0x0F10A400 | ((n)<<5) | (d))
#define SXTL24S(d, n) WORD $(0x4F10A400 | ((n)<<5) | (d))

// QKEY widens position j's block of eight int8 keys (at Rr, stepped on)
// times its scale V(24+j).S[0] and adds their products with the query
// blocks to the sums, as HKEY.
#define QKEY(r, j) \
	VLD1.P 8(r), [V20.B8]; \
	SXTL8H(20, 20); \
	SXTL4S(21, 20); \
	SXTL24S(22, 20); \
	SCVTF4S(21, 21); \
	SCVTF4S(22, 22); \
	FMULE(21, 21, 24+(j)); \
	FMULE(22, 22, 24+(j)); \
	FMLA4S(2*(j), 21, 16); \
	FMLA4S(2*(j)+1, 22, 17); \
	FMLA4S(8+2*(j), 21, 18); \
	FMLA4S(9+2*(j), 22, 19)

// QSCALE sets f (a float register) to the float16 scale at (r), widened.
#define QSCALE(r, f) \
	MOVHU  (r), R21; \
	FMOVS  R21, f; \
	FCVTHS f, f

// QBLOCK is NP_BLOCK(QKEY) with a line of the group's mirror at R12
// prefetched (four positions' blocks of eight int8: 32 bytes).
#define QBLOCK \
	NP_BLOCK(QKEY); \
	PRFM (R12), PLDL1KEEP; \
	ADD  $32, R12

// NQ_32DIMS adds 32 dimensions of the group's four positions: their
// scales from R20 (S = R19 bytes a position) and four QBLOCKs, and steps
// R20 to the next 32 dimensions' scales.
#define NQ_32DIMS \
	QSCALE(R20, F24); \
	ADD    R19, R20, R22; \
	QSCALE(R22, F25); \
	ADD    R19, R22, R22; \
	QSCALE(R22, F26); \
	ADD    R19, R22, R22; \
	QSCALE(R22, F27); \
	QBLOCK; \
	QBLOCK; \
	QBLOCK; \
	QBLOCK; \
	ADD    $2, R20

// func scoresPairQ8NEON(out0, out1, q0, q1 *float32, k *int8, stride, groups, blocks int, scale float32, sc *uint16, pf *int8)
// scoresPairHalfNEON over a q8 stretch: groups×4 positions of int8 rows
// stride bytes apart from k (contiguous: stride = 8·blocks), blocks×8
// dimensions (a multiple of 32); position p's scales at sc + p·blocks/2
// bytes.
TEXT ·scoresPairQ8NEON(SB), NOSPLIT, $0-88
	NP_ARGS
	MOVD sc+72(FP), R15
	LSR  $1, R5, R19 // S: bytes of one position's scales
	MOVD pf+80(FP), R14
	SUB  R2, R14, R14 // pf − k

q4group:
	NP_GROUP
	ADD  R2, R14, R12
	MOVD R15, R20

q4scales:
	NQ_32DIMS
	SUB    $4, R13, R13
	CBNZ   R13, q4scales

	NP_PUT
	ADD  R19<<2, R15, R15
	CBNZ R4, q4group
	RET

// NQ_POS is NH_POS for 32 int8 values times their scale at R20 (stepped
// by R19, the bytes between two positions' scales).
#define NQ_POS \
	ADD     R14, R7, R11; \
	PRFM    (R11), PLDL1KEEP; \
	FMOVS.P 4(R8), F28; \
	FMOVS.P 4(R9), F29; \
	VLD1    (R7), [V16.B16, V17.B16]; \
	SXTL8H(18, 16); \
	SXTL28H(19, 16); \
	SXTL8H(20, 17); \
	SXTL28H(21, 17); \
	QSCALE(R20, F16); \
	SXTL4S(22, 18); \
	SXTL24S(23, 18); \
	SXTL4S(24, 19); \
	SXTL24S(25, 19); \
	SXTL4S(26, 20); \
	SXTL24S(27, 20); \
	SXTL4S(30, 21); \
	SXTL24S(31, 21); \
	SCVTF4S(22, 22); \
	SCVTF4S(23, 23); \
	SCVTF4S(24, 24); \
	SCVTF4S(25, 25); \
	SCVTF4S(26, 26); \
	SCVTF4S(27, 27); \
	SCVTF4S(30, 30); \
	SCVTF4S(31, 31); \
	FMULE(22, 22, 16); \
	FMULE(23, 23, 16); \
	FMULE(24, 24, 16); \
	FMULE(25, 25, 16); \
	FMULE(26, 26, 16); \
	FMULE(27, 27, 16); \
	FMULE(30, 30, 16); \
	FMULE(31, 31, 16); \
	NW_MAC(22, 23, 24, 25, 26, 27, 30, 31); \
	ADD     R3, R7, R7; \
	ADD     R19, R20, R20

// func weightedSumPairQ8NEON(o0, o1 *float32, v *int8, stride int, w0, w1 *float32, n, chunks int, pf *int8, sc *uint16, sstride int)
// weightedSumPairHalfNEON over a q8 stretch: over chunks×32 floats of the
// outputs (one scale group), positions 0..n-1 in order, int8 rows stride
// bytes apart from v, position p's scales at sc + p·sstride bytes; each
// position's 32 bytes of a chunk prefetched at pf's mirror.
TEXT ·weightedSumPairQ8NEON(SB), NOSPLIT, $0-88
	NW_ARGS
	MOVD sc+72(FP), R15
	MOVD sstride+80(FP), R19

q2chunk:
	NW_CHUNK
	MOVD R15, R20

q2pos:
	NQ_POS
	SUB     $1, R10, R10
	CBNZ    R10, q2pos

	NW_PUT
	ADD    $32, R2, R2
	ADD    $2, R15, R15
	SUB    $1, R5, R5
	CBNZ   R5, q2chunk
	RET

// func scoresPairQ8TabNEON(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32, soff int)
// scoresPairQ8NEON over the n stretches of tab (scoresPairHalfTabNEON):
// each stretch's int8 rows of blocks×8 bytes from its first element,
// their scales soff bytes on, a group's scales at the mirror prefetched.
TEXT ·scoresPairQ8TabNEON(SB), NOSPLIT, $0-72
	MOVD  out0+0(FP), R0
	MOVD  out1+8(FP), R1
	MOVD  blocks+48(FP), R5
	LSL   $3, R5, R3 // a row: 8·blocks bytes
	FMOVS scale+56(FP), F30
	LSR   $1, R5, R19 // S: bytes of one position's scales
	MOVD  tab+32(FP), R23
	MOVD  n+40(FP), R24
	MOVD  soff+64(FP), R25

q4tentry:
	NTAB_LEAD(R23, R20)
	MOVD 0(R23), R2
	MOVD 8(R23), R14
	SUB  R2, R14, R14 // pf − k
	ADD  R25, R2, R15 // the first position's scales
	MOVD 24(R23), R4
	LSR  $2, R4, R4   // whole groups
	ADD  $32, R23
	CBZ  R4, q4tnext

q4tgroup:
	NP_GROUP
	ADD  R2, R14, R12
	ADD  R15, R14, R20
	PRFM (R20), PLDL1KEEP
	MOVD R15, R20

q4tscales:
	NQ_32DIMS
	SUB  $4, R13, R13
	CBNZ R13, q4tscales

	NP_PUT
	ADD  R19<<2, R15, R15
	CBNZ R4, q4tgroup

q4tnext:
	SUB  $1, R24, R24
	CBNZ R24, q4tentry
	RET

// func weightedSumPairQ8TabNEON(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride, soff, sstride int)
// weightedSumPairQ8NEON over the n stretches of tab
// (weightedSumPairHalfTabNEON): int8 rows stride bytes apart from each
// stretch's first element, position p's scales at soff + p·sstride bytes
// from it, each position's scales at the mirror prefetched.
TEXT ·weightedSumPairQ8TabNEON(SB), NOSPLIT, $0-80
	MOVD o0+0(FP), R0
	MOVD o1+8(FP), R1
	MOVD chunks+48(FP), R5
	MOVD stride+56(FP), R3
	MOVD soff+64(FP), R25
	MOVD sstride+72(FP), R19
	MOVD $0, R2  // the chunk's byte offset in a row
	MOVD $0, R15 // and in a row's scales

q2tchunk:
	NTAB_CHUNK

q2tstretch:
	NTAB_VSTRETCH
	ADD  R25, R7, R20
	ADD  R15, R20, R20 // the chunk's scale of the first position
	ADD  R2, R7, R7
	MOVD 24(R23), R10
	ADD  $32, R23
	CBZ  R10, q2tnext

q2tpos:
	ADD  R14, R20, R11
	PRFM (R11), PLDL1KEEP
	NQ_POS
	SUB  $1, R10, R10
	CBNZ R10, q2tpos

q2tnext:
	SUB  $1, R24, R24
	CBNZ R24, q2tstretch

	NW_PUT
	ADD  $32, R2, R2
	ADD  $2, R15, R15
	SUB  $1, R5, R5
	CBNZ R5, q2tchunk
	RET
