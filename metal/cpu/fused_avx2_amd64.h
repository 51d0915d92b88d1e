// Macros shared by the AVX2 attention loops (fused_amd64.s,
// fused_half_amd64.s).

// HSUM reduces the eight lanes of acc (Y) into the low float of x (its X
// half) as ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)), the order of dot.
#define HSUM(acc, x, tmp) \
	VEXTRACTF128 $1, acc, tmp; \
	VADDPS tmp, x, x; \
	VPERMILPS $0x4e, x, tmp; \
	VADDPS tmp, x, x; \
	VMOVSHDUP x, tmp; \
	VADDSS tmp, x, x

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
