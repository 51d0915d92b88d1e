// axpyRows's steps for registers of any width (floatdot_amd64.s: Y,
// floatdot_avx512_amd64.s: Z), four registers of sums o[0..4w) at byte
// offsets 0, W1, W2, W3 of DI (o) and AX (the current row of m), the
// row's coefficient at BX.

// AXPYROWS_LOAD loads the chunk's sums from o.
#define AXPYROWS_LOAD(A0, A1, A2, A3, W1, W2, W3) \
	VMOVUPS (DI), A0; \
	VMOVUPS W1(DI), A1; \
	VMOVUPS W2(DI), A2; \
	VMOVUPS W3(DI), A3

// AXPYROWS_ROW adds the coefficient times the row to the sums, each
// product rounded before its add; B and T are scratch.
#define AXPYROWS_ROW(A0, A1, A2, A3, B, T, W1, W2, W3) \
	VBROADCASTSS (BX), B; \
	VMULPS       (AX), B, T; \
	VADDPS       T, A0, A0; \
	VMULPS       W1(AX), B, T; \
	VADDPS       T, A1, A1; \
	VMULPS       W2(AX), B, T; \
	VADDPS       T, A2, A2; \
	VMULPS       W3(AX), B, T; \
	VADDPS       T, A3, A3

// AXPYROWS_STORE stores the chunk's sums to o.
#define AXPYROWS_STORE(A0, A1, A2, A3, W1, W2, W3) \
	VMOVUPS A0, (DI); \
	VMOVUPS A1, W1(DI); \
	VMOVUPS A2, W2(DI); \
	VMOVUPS A3, W3(DI)
