// The parts of the in-place many-head kernels (fused_heads_half_amd64.s,
// attention_bf16_amd64.s): their arguments, and the walk of their tables
// of groups of positions (halfGroup).

// KHALF loads the key blocks (eight float16) of positions a and b,
// widened into the low and high halves of z.
#define KHALF(a, b, x, y, z) \
	VMOVDQU32    a, x; \
	VINSERTI32X4 $1, b, y, y; \
	VCVTPH2PS    y, z

// HS_GROUP starts a group of eight positions for the key kernels: R10
// and R11 its positions 0-3 and 4-7, R8 the group to prefetch, CX the
// query offset.
#define HS_GROUP \
	MOVQ tab+16(FP), R14; \
	MOVQ (R14)(R15*1), R10; \
	MOVQ 8(R14)(R15*1), R8; \
	LEAQ (R10)(DX*4), R11; \
	XORQ CX, CX; \
	ZERO8; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

// HS_KEYS loads one block of eight dimensions of the group's eight
// positions into Z24..Z27 (positions j and j+4 in one register) and
// prefetches two lines of the next group.
#define HS_KEYS \
	KHALF((R10), (R11), X24, Y24, Z24); \
	KHALF((R10)(DX*1), (R11)(DX*1), X25, Y25, Z25); \
	KHALF((R10)(DX*2), (R11)(DX*2), X26, Y26, Z26); \
	KHALF((R10)(R9*1), (R11)(R9*1), X27, Y27, Z27); \
	PREFETCHT0 (R8); \
	PREFETCHT0 64(R8); \
	ADDQ       $128, R8

// HS_NEXT steps to the next block of dimensions.
#define HS_NEXT \
	ADDQ $16, R10; \
	ADDQ $16, R11; \
	ADDQ $32, CX; \
	CMPQ CX, qbytes+32(FP)

// HS_ARGS loads the first four heads' query pointers and the stride.
#define HS_ARGS \
	MOVQ         q+8(FP), CX; \
	MOVQ         0(CX), AX; \
	MOVQ         8(CX), BX; \
	MOVQ         16(CX), SI; \
	MOVQ         24(CX), DI; \
	MOVQ         stride+24(FP), DX; \
	VBROADCASTSS scale+48(FP), Z15; \
	LEAQ         (DX)(DX*2), R9; \
	XORQ         R15, R15

// HW_GROUP starts a group of eight positions for the value kernels: SI
// its first row's values at byte offset off, R14 the distance to the
// same bytes of the group to prefetch.
#define HW_GROUP \
	MOVQ (R15), SI; \
	ADDQ off+32(FP), SI; \
	MOVQ 8(R15), R14; \
	ADDQ off+32(FP), R14; \
	SUBQ SI, R14

// HW_VALUES widens one position's 32 values (a cache line of float16)
// into Z20, Z21, prefetches the same line of the next group, and steps SI
// to the next position.
#define HW_VALUES \
	VCVTPH2PS  (SI), Z20; \
	VCVTPH2PS  32(SI), Z21; \
	PREFETCHT0 (SI)(R14*1); \
	ADDQ       stride+40(FP), SI

// HW_END compares the group with the last and steps to the next: eight
// positions of weights, 32 bytes of table (LEAQ keeps the flags).
#define HW_END \
	CMPQ R15, last+24(FP); \
	LEAQ 8(CX), CX; \
	LEAQ 32(R15), R15

// HW_ARGS loads the heads' weight pointers and zeroes the position.
#define HW_ARGS \
	HEADS_POINTERS; \
	XORQ CX, CX

// HWY_VALUES is HW_VALUES for the AVX2 kernels: one position's eight
// values (16 bytes of float16) into Y10.
#define HWY_VALUES \
	VCVTPH2PS  (SI), Y10; \
	PREFETCHT0 (SI)(R14*1); \
	ADDQ       stride+40(FP), SI


// HS6_ZERO zeroes the accumulators of the six-head key kernels' last two
// heads (the first four's: HS_GROUP).
#define HS6_ZERO \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31

// HS_END2, HS_END4 and HS_END6 fold and store the group's scores of the
// key kernels' two, four or six heads (their accumulators Z0..Z7, then
// Z16..Z23, then Z8, Z10..Z14, Z30, Z31), step R15 to the next group and
// compare it with the end.
#define HS_PUT2 \
	FOLDQ(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	SCORES_PUT(0, 8, Y0, Z0)

#define HS_PUT4 \
	HS_PUT2; \
	FOLDQ(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	SCORES_PUT(16, 24, Y16, Z16)

#define HS_PUT6 \
	HS_PUT4; \
	FOLDQ(Z8, Z10, Z11, Z12, Z13, Z14, Z30, Z31); \
	SCORES_PUT(32, 40, Y8, Z8)

#define HS_STEP \
	ADDQ $32, R15; \
	CMPQ R15, obytes+40(FP)

#define HS_END2 \
	HS_PUT2; \
	HS_STEP

#define HS_END4 \
	HS_PUT4; \
	HS_STEP

#define HS_END6 \
	HS_PUT6; \
	HS_STEP
