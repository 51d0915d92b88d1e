#include "textflag.h"
#include "quantdot_neon_arm64.h"

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
