// The NEON steps of quantizing a group of 32 floats to int8 with a scale,
// shared by the activations' quantization (actquant_arm64.s) and the q8
// KV cache's (dequant_kv_arm64.s): the group in V0..V7.

// FABS Vd.4S, Vn.4S; FMAX Vd.4S, Vn.4S, Vm.4S; FMAXV Sd, Vn.4S
#define FABS4S(d, n) WORD $(0x4EA0F800 | ((n)<<5) | (d))
#define FMAX4S(d, n, m) WORD $(0x4E20F400 | ((m)<<16) | ((n)<<5) | (d))
#define FMAXV4S(d, n) WORD $(0x6E30F800 | ((n)<<5) | (d))
// FCVTNS Vd.4S, Vn.4S (round to nearest, ties to even)
#define FCVTNS4S(d, n) WORD $(0x4E21A800 | ((n)<<5) | (d))
// SQXTN(2) Vd.4H(8H), Vn.4S; SQXTN(2) Vd.8B(16B), Vn.8H
#define SQXTNH(d, n) WORD $(0x0E614800 | ((n)<<5) | (d))
#define SQXTN2H(d, n) WORD $(0x4E614800 | ((n)<<5) | (d))
#define SQXTNB(d, n) WORD $(0x0E214800 | ((n)<<5) | (d))
#define SQXTN2B(d, n) WORD $(0x4E214800 | ((n)<<5) | (d))

// GROUP_AMAX sets S16 to the largest |x| of V0..V7 (V16..V23 scratch;
// FMAX returns NaN when either input is).
#define GROUP_AMAX \
	FABS4S(16, 0); \
	FABS4S(17, 1); \
	FABS4S(18, 2); \
	FABS4S(19, 3); \
	FABS4S(20, 4); \
	FABS4S(21, 5); \
	FABS4S(22, 6); \
	FABS4S(23, 7); \
	FMAX4S(16, 16, 17); \
	FMAX4S(18, 18, 19); \
	FMAX4S(20, 20, 21); \
	FMAX4S(22, 22, 23); \
	FMAX4S(16, 16, 18); \
	FMAX4S(20, 20, 22); \
	FMAX4S(16, 16, 20); \
	FMAXV4S(16, 16)

// GROUP_SCALE multiplies V0..V7 by V24.S[0].
#define GROUP_SCALE \
	FMULE(0, 0, 24); \
	FMULE(1, 1, 24); \
	FMULE(2, 2, 24); \
	FMULE(3, 3, 24); \
	FMULE(4, 4, 24); \
	FMULE(5, 5, 24); \
	FMULE(6, 6, 24); \
	FMULE(7, 7, 24)

// GROUP_ROUND rounds V0..V7 to int32, to nearest even (NaN to 0).
#define GROUP_ROUND \
	FCVTNS4S(0, 0); \
	FCVTNS4S(1, 1); \
	FCVTNS4S(2, 2); \
	FCVTNS4S(3, 3); \
	FCVTNS4S(4, 4); \
	FCVTNS4S(5, 5); \
	FCVTNS4S(6, 6); \
	FCVTNS4S(7, 7)

// GROUP_NARROW narrows V0..V7 (int32 within ±127) to the group's 32 int8
// in V24, V25, in order (V20..V23 scratch).
#define GROUP_NARROW \
	SQXTNH(20, 0); \
	SQXTN2H(20, 1); \
	SQXTNH(21, 2); \
	SQXTN2H(21, 3); \
	SQXTNH(22, 4); \
	SQXTN2H(22, 5); \
	SQXTNH(23, 6); \
	SQXTN2H(23, 7); \
	SQXTNB(24, 20); \
	SQXTN2B(24, 21); \
	SQXTNB(25, 22); \
	SQXTN2B(25, 23)
