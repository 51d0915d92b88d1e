#include "textflag.h"
#include "quantdot_neon_arm64.h"
#include "fused_pair_arm64.h"

// A KVBF16 cache's kernels on NEON: VDPBF16PS emulated bit for bit, as
// attention_bf16_avx2_amd64.s does it. The product of two bfloat16 is
// exact in float32, so a fused multiply-add of the odd elements, then one
// of the even, rounds as VDPBF16PS's two steps do; with FPCR.FZ set for
// the kernel's duration (and restored, and cleared around each score's
// fold), subnormal inputs and results are zero as there. A score's eight
// lanes are two registers (pairs 0-3 and 4-7 of a 16-dimension block).

// FMLA Vd.4S, Vn.4S, Vm.4S; SHL Vd.4S, Vn.4S, #16 (a pair's even element
// widened); USHR Vd.4S, Vn.4S, #16; CMEQ Vd.4S, Vn.4S, #0; FCMEQ Vd.4S,
// Vn.4S, Vm.4S; NOT Vd.16B, Vn.16B; XTN Vd.4H, Vn.4S; LANESUM's EXT and
// FADDP; BIT Vd.16B, Vn.16B, Vm.16B.
#define FMLA4S(d, n, m) WORD $(0x4E20CC00 | ((m)<<16) | ((n)<<5) | (d))
#define SHL16(d, n) WORD $(0x4F305400 | ((n)<<5) | (d))
#define USHR16(d, n) WORD $(0x6F300400 | ((n)<<5) | (d))
#define CMEQZ4S(d, n) WORD $(0x4EA09800 | ((n)<<5) | (d))
#define FCMEQ4S(d, n, m) WORD $(0x4E20E400 | ((m)<<16) | ((n)<<5) | (d))
#define NOT16B(d, n) WORD $(0x6E205800 | ((n)<<5) | (d))
#define XTN4H(d, n) WORD $(0x0E612800 | ((n)<<5) | (d))
#define BIT16B(d, n, m) WORD $(0x6EA01C00 | ((m)<<16) | ((n)<<5) | (d))
#define ADD4S(d, n, m) WORD $(0x4EA08400 | ((m)<<16) | ((n)<<5) | (d))

// MRS Xt, FPCR and MSR FPCR, Xt.
#define MRS_FPCR(t) WORD $(0xD53B4400 | (t))
#define MSR_FPCR(t) WORD $(0xD51B4400 | (t))

// LANESUM leaves in S(d) the fold of the eight lanes in V(lo), V(hi)
// (((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7))); V(t) scratch.
#define LANESUM(d, lo, hi, t) \
	FADD4S(lo, lo, hi); \
	EXT8(t, lo, lo); \
	FADD4S(lo, lo, t); \
	FADDP2S(d, lo)

// BF_FZ_SET keeps FPCR in R16 and sets FZ (bit 24) from R17.
#define BF_FZ_SET \
	MRS_FPCR(16); \
	ORR $(1<<24), R16, R17; \
	MSR_FPCR(17)

// BF_MASK sets every lane of V31 to 0xffff0000 (a pair's odd element).
#define BF_MASK \
	MOVW $0xffff0000, R12; \
	VDUP R12, V31.S4

// BF_SPLIT widens the pairs of V(x): the even elements into V(e), the
// odd ones into V(x) itself.
#define BF_SPLIT(x, e) \
	SHL16(e, x); \
	AND16B(x, x, 31)

// BKEY adds position j's block of sixteen keys (at Rr, stepped on) times
// the split queries (head 0: odd V16, V17, even V20, V21; head 1: odd
// V18, V19, even V22, V23) to head 0's sums V(2j), V(2j+1) and head 1's
// V(8+2j), V(9+2j), odd products first.
#define BKEY(r, j) \
	VLD1.P 32(r), [V24.S4, V25.S4]; \
	BF_SPLIT(24, 26); \
	BF_SPLIT(25, 27); \
	FMLA4S(2*(j), 24, 16); \
	FMLA4S(2*(j), 26, 20); \
	FMLA4S(2*(j)+1, 25, 17); \
	FMLA4S(2*(j)+1, 27, 21); \
	FMLA4S(8+2*(j), 24, 18); \
	FMLA4S(8+2*(j), 26, 22); \
	FMLA4S(9+2*(j), 25, 19); \
	FMLA4S(9+2*(j), 27, 23)

// func scoresPairBF16(out0, out1 *float32, q0, q1 *uint16, tab *halfGroup, groups, blocks, stride int, scale float32)
// The scores of two heads against the groups of eight positions of tab
// (rows stride bytes apart, blocks blocks of sixteen bfloat16), four
// positions at a time, eight scores a group from out0 and out1.
TEXT ·scoresPairBF16(SB), NOSPLIT, $0-68
	BF_FZ_SET
	BF_MASK
	MOVD  out0+0(FP), R0
	MOVD  out1+8(FP), R1
	MOVD  tab+32(FP), R14
	MOVD  groups+40(FP), R15
	MOVD  blocks+48(FP), R5
	MOVD  stride+56(FP), R3
	FMOVS scale+64(FP), F30

bsgroup:
	MOVD (R14), R2
	MOVD $2, R4

bsfour:
	MSR_FPCR(17)
	NP_GROUP

bsblock:
	VLD1.P 32(R10), [V16.S4, V17.S4]
	VLD1.P 32(R11), [V18.S4, V19.S4]
	BF_SPLIT(16, 20)
	BF_SPLIT(17, 21)
	BF_SPLIT(18, 22)
	BF_SPLIT(19, 23)
	BKEY(R6, 0)
	BKEY(R7, 1)
	BKEY(R8, 2)
	BKEY(R9, 3)
	SUB  $1, R13, R13
	CBNZ R13, bsblock

	MSR_FPCR(16) // the fold and scale: plain float32, as dotBF16Ref's
	NP_PUT
	CBNZ R4, bsfour

	ADD  $32, R14
	SUB  $1, R15, R15
	CBNZ R15, bsgroup
	RET

// BVAL adds one register of value pair words V(v) (four dimensions of both
// positions) times the split weights (head 0: odd V16, even V17; head 1:
// odd V18, even V19) to head 0's sums V(a) and head 1's V(8+a), odd
// products first; V28 scratch.
#define BVAL(v, a) \
	BF_SPLIT(v, 28); \
	FMLA4S(a, v, 16); \
	FMLA4S(a, 28, 17); \
	FMLA4S(8+(a), v, 18); \
	FMLA4S(8+(a), 28, 19)

// func sumsPairBF16(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)
// Adds to 32 outputs of each of two heads (o[0], o[1]) the value pairs of
// tab's groups, pairs of them (at least one), from byte off of each
// pair's words (pairs stride bytes apart), weighted by the pairs of w[0]
// and w[1]: sumPairsRef's lanes.
TEXT ·sumsPairBF16(SB), NOSPLIT, $0-48
	BF_FZ_SET
	BF_MASK
	MOVD o+0(FP), R0
	MOVD 8(R0), R1
	MOVD (R0), R0
	MOVD w+8(FP), R2
	MOVD 8(R2), R3
	MOVD (R2), R2
	MOVD tab+16(FP), R4
	MOVD pairs+24(FP), R5
	MOVD off+32(FP), R6
	MOVD stride+40(FP), R7
	VLD1 (R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	ADD  $64, R0, R9
	VLD1 (R9), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1 (R1), [V8.S4, V9.S4, V10.S4, V11.S4]
	ADD  $64, R1, R9
	VLD1 (R9), [V12.S4, V13.S4, V14.S4, V15.S4]

bvgroup:
	MOVD (R4), R8
	ADD  R6, R8, R8
	MOVD $4, R10

bvpair:
	VLD1R.P 4(R2), [V16.S4]
	VLD1R.P 4(R3), [V18.S4]
	BF_SPLIT(16, 17)
	BF_SPLIT(18, 19)
	VLD1    (R8), [V20.S4, V21.S4, V22.S4, V23.S4]
	ADD     $64, R8, R9
	VLD1    (R9), [V24.S4, V25.S4, V26.S4, V27.S4]
	BVAL(20, 0)
	BVAL(21, 1)
	BVAL(22, 2)
	BVAL(23, 3)
	BVAL(24, 4)
	BVAL(25, 5)
	BVAL(26, 6)
	BVAL(27, 7)
	ADD     R7, R8, R8
	SUB     $1, R5, R5
	CBZ     R5, bvdone
	SUB     $1, R10, R10
	CBNZ    R10, bvpair
	ADD     $32, R4
	B       bvgroup

bvdone:
	MOVD o+0(FP), R0
	MOVD 8(R0), R1
	MOVD (R0), R0
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R0)
	ADD  $64, R0, R9
	VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R9)
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R1)
	ADD  $64, R1, R9
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R9)
	MSR_FPCR(16)
	RET

// BF_NARROW4 narrows the four floats in V0 to bfloat16 in the low halves
// of V1's lanes (VCVTNEPS2BF16's rounding: nearest even, subnormals to
// zero of their sign, NaN quiet), with constants V10 (0x7fff), V11 (1),
// V12 (exponent mask), V13 (sign), V14 (quiet bit); V2..V4 scratch.
#define BF_NARROW4 \
	USHR16(1, 0); \
	VAND    V11.B16, V1.B16, V1.B16; \
	ADD4S(1, 1, 10); \
	ADD4S(1, 1, 0); \
	VAND    V12.B16, V0.B16, V2.B16; \
	CMEQZ4S(2, 2); \
	VAND    V13.B16, V0.B16, V3.B16; \
	BIT16B(1, 3, 2); \
	FCMEQ4S(2, 0, 0); \
	NOT16B(2, 2); \
	VORR    V14.B16, V0.B16, V3.B16; \
	BIT16B(1, 3, 2); \
	USHR16(1, 1)

// BF_NARROW_CONSTS loads BF_NARROW4's constants.
#define BF_NARROW_CONSTS \
	MOVW $0x7fff, R9; \
	VDUP R9, V10.S4; \
	MOVW $1, R9; \
	VDUP R9, V11.S4; \
	MOVW $0x7f800000, R9; \
	VDUP R9, V12.S4; \
	MOVW $0x80000000, R9; \
	VDUP R9, V13.S4; \
	MOVW $0x00400000, R9; \
	VDUP R9, V14.S4

// func narrowBF16Vec(dst *uint16, src *float32, n int)
// narrowBF16Ref for NEON: n a multiple of four (eight, as the AVX2
// kernel's), in place allowed.
TEXT ·narrowBF16Vec(SB), NOSPLIT, $0-24
	BF_NARROW_CONSTS
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2

bn4:
	VLD1.P 16(R1), [V0.S4]
	BF_NARROW4
	XTN4H(1, 1)
	FMOVD  F1, (R0)
	ADD    $8, R0
	SUB    $4, R2, R2
	CBNZ   R2, bn4
	RET

// func narrowPairsBF16Vec(dst *uint16, src *float32, n, shift int, keep uint32)
// narrowPairsRef for NEON: n a multiple of four (eight, as the AVX2
// kernel's).
TEXT ·narrowPairsBF16Vec(SB), NOSPLIT, $0-36
	BF_NARROW_CONSTS
	MOVD  dst+0(FP), R0
	MOVD  src+8(FP), R1
	MOVD  n+16(FP), R2
	MOVD  shift+24(FP), R3
	MOVWU keep+32(FP), R4
	VDUP  R4, V15.S4

bp4:
	VLD1.P 16(R1), [V0.S4]
	BF_NARROW4
	CBZ    R3, bpmerge
	SHL16(1, 1)

bpmerge:
	VLD1   (R0), [V5.S4]
	VAND   V15.B16, V5.B16, V5.B16
	VORR   V1.B16, V5.B16, V5.B16
	VST1.P [V5.S4], 16(R0)
	SUB    $4, R2, R2
	CBNZ   R2, bp4
	RET
