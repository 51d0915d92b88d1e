#include "textflag.h"
#include "quantdot_neon_arm64.h"
#include "quantgroup_neon_arm64.h"

// The q8 KV cache's widening (metal.DequantizeKV) in NEON: each group of
// 32 int8 sign-extended (SSHLL), converted (SCVTF, exact) and multiplied
// by the group's float16 scale widened (FCVTL, exact): the products fit
// a float32, so the floats are the portable loop's.

#define SXTL8H(d, n) WORD $(0x0F08A400 | ((n)<<5) | (d))
#define SXTL28H(d, n) WORD $(0x4F08A400 | ((n)<<5) | (d))
#define SXTL4S(d, n) WORD $(0x0F10A400 | ((n)<<5) | (d))
#define SXTL24S(d, n) WORD $(0x4F10A400 | ((n)<<5) | (d))

// WIDEN16 sets d0..d3 to the sixteen int8 of Vs as floats times V17 (Vt
// scratch).
#define WIDEN16(s, t, d0, d1, d2, d3) \
	SXTL8H(t, s); \
	SXTL4S(d0, t); \
	SXTL24S(d1, t); \
	SXTL28H(t, s); \
	SXTL4S(d2, t); \
	SXTL24S(d3, t); \
	SCVTF4S(d0, d0); \
	SCVTF4S(d1, d1); \
	SCVTF4S(d2, d2); \
	SCVTF4S(d3, d3); \
	FMUL4S(d0, d0, 17); \
	FMUL4S(d1, d1, 17); \
	FMUL4S(d2, d2, 17); \
	FMUL4S(d3, d3, 17)

// func dequantKVNEON(dst *float32, q *int8, scales *uint16, groups int)
TEXT ·dequantKVNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD q+8(FP), R1
	MOVD scales+16(FP), R2
	MOVD groups+24(FP), R3

dqloop:
	VLD1R.P 2(R2), [V16.H8]
	FCVTL(17, 16)
	VLD1.P  32(R1), [V0.B16, V1.B16]
	WIDEN16(0, 2, 3, 4, 5, 6)
	WIDEN16(1, 2, 7, 8, 9, 10)
	VST1.P  [V3.S4, V4.S4, V5.S4, V6.S4], 64(R0)
	VST1.P  [V7.S4, V8.S4, V9.S4, V10.S4], 64(R0)
	SUB     $1, R3, R3
	CBNZ    R3, dqloop
	RET

// FMIN Vd.4S, Vn.4S, Vm.4S
#define FMIN4S(d, n, m) WORD $(0x4EA0F400 | ((m)<<16) | ((n)<<5) | (d))

// CLAMP8 clamps V0..V7 to ±127 (V26, V27): FMIN and FMAX return NaN when
// either input is, so NaN passes, as metal.QuantizeKV's comparisons let it.
#define CLAMP8 \
	FMIN4S(0, 0, 26); \
	FMIN4S(1, 1, 26); \
	FMIN4S(2, 2, 26); \
	FMIN4S(3, 3, 26); \
	FMIN4S(4, 4, 26); \
	FMIN4S(5, 5, 26); \
	FMIN4S(6, 6, 26); \
	FMIN4S(7, 7, 26); \
	FMAX4S(0, 0, 27); \
	FMAX4S(1, 1, 27); \
	FMAX4S(2, 2, 27); \
	FMAX4S(3, 3, 27); \
	FMAX4S(4, 4, 27); \
	FMAX4S(5, 5, 27); \
	FMAX4S(6, 6, 27); \
	FMAX4S(7, 7, 27)

// func quantizeKVNEON(q *int8, scales *uint16, x *float32, groups int)
// metal.QuantizeKV a group of 32 at a time with the same IEEE operations:
// the largest |x| (FMAX of FABS: NaN wins), d = that/127 rounded to
// float16 (FCVT, to nearest even), 1/d (zero when d is), each product
// clamped to ±127 and rounded to nearest even (FCVTNS, which turns NaN
// into 0 as the Go loop does), narrowed to int8.
TEXT ·quantizeKVNEON(SB), NOSPLIT, $0-32
	MOVD  q+0(FP), R0
	MOVD  scales+8(FP), R1
	MOVD  x+16(FP), R2
	MOVD  groups+24(FP), R3
	MOVW  $0x42fe0000, R5 // 127.0
	FMOVS R5, F14
	FNEGS F14, F15
	VDUP  V14.S[0], V26.S4
	VDUP  V15.S[0], V27.S4
	FMOVS $1.0, F13

qkvgroup:
	VLD1.P 64(R2), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R2), [V4.S4, V5.S4, V6.S4, V7.S4]
	GROUP_AMAX

	FDIVS  F14, F16, F17 // amax/127
	FCVTSH F17, F18      // d
	FMOVS  F18, R5
	MOVH   R5, (R1)
	ADD    $2, R1, R1
	FCVTHS F18, F19      // d, exactly
	FDIVS  F19, F13, F24
	FCMPS  $(0.0), F19
	BNE    qkvscaled
	VEOR   V24.B16, V24.B16, V24.B16

qkvscaled:
	GROUP_SCALE
	CLAMP8
	GROUP_ROUND
	GROUP_NARROW
	VST1.P [V24.B16, V25.B16], 32(R0)

	SUB  $1, R3, R3
	CBNZ R3, qkvgroup
	RET
