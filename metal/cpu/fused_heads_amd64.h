// Shared steps of the many-head value loops (fused_heads_amd64.s,
// fused_heads_half_amd64.s): ten heads' 32 outputs in Z0..Z19 (head i in
// Z2i, Z2i+1), their weight pointers in AX, BX, DX, DI, R8..R13, the
// position's values in Z20, Z21, broadcast weights in Z22..Z31.

// HEAD_LOAD and HEAD_STORE move one head's 32 outputs, at the pointer in
// slot off of the table at R15, to and from a0, a1.
#define HEAD_LOAD(off, a0, a1) \
	MOVQ    off(R15), R14; \
	VMOVUPS (R14), a0; \
	VMOVUPS 64(R14), a1

#define HEAD_STORE(off, a0, a1) \
	MOVQ    off(R15), R14; \
	VMOVUPS a0, (R14); \
	VMOVUPS a1, 64(R14)

// HEAD_MAC adds the head's weight of position CX (its weights at r, d
// bytes further), broadcast into t, times the position's value block Z20,
// Z21 to a0, a1.
#define HEAD_MAC(r, t, a0, a1, d) \
	VBROADCASTSS d(r)(CX*4), t; \
	VFMADD231PS  Z20, t, a0; \
	VFMADD231PS  Z21, t, a1

// The heads in pairs (0-1, 2-3, 4-5, 6-7, 8-9), so that each kernel is the
// groups of its heads: HEADS_LOAD_*, HEADS_MAC_* (of the weights d bytes
// past position CX's) and HEADS_STORE_*.
#define HEADS_LOAD_0_1 \
	HEAD_LOAD(0, Z0, Z1); \
	HEAD_LOAD(8, Z2, Z3)

#define HEADS_LOAD_2_3 \
	HEAD_LOAD(16, Z4, Z5); \
	HEAD_LOAD(24, Z6, Z7)

#define HEADS_LOAD_4_5 \
	HEAD_LOAD(32, Z8, Z9); \
	HEAD_LOAD(40, Z10, Z11)

#define HEADS_LOAD_6_7 \
	HEAD_LOAD(48, Z12, Z13); \
	HEAD_LOAD(56, Z14, Z15)

#define HEADS_LOAD_8_9 \
	HEAD_LOAD(64, Z16, Z17); \
	HEAD_LOAD(72, Z18, Z19)

#define HEADS_MAC_0_1(d) \
	HEAD_MAC(AX, Z22, Z0, Z1, d); \
	HEAD_MAC(BX, Z23, Z2, Z3, d)

#define HEADS_MAC_2_3(d) \
	HEAD_MAC(DX, Z24, Z4, Z5, d); \
	HEAD_MAC(DI, Z25, Z6, Z7, d)

#define HEADS_MAC_4_5(d) \
	HEAD_MAC(R8, Z26, Z8, Z9, d); \
	HEAD_MAC(R9, Z27, Z10, Z11, d)

#define HEADS_MAC_6_7(d) \
	HEAD_MAC(R10, Z28, Z12, Z13, d); \
	HEAD_MAC(R11, Z29, Z14, Z15, d)

#define HEADS_MAC_8_9(d) \
	HEAD_MAC(R12, Z30, Z16, Z17, d); \
	HEAD_MAC(R13, Z31, Z18, Z19, d)

#define HEADS_STORE_0_1 \
	HEAD_STORE(0, Z0, Z1); \
	HEAD_STORE(8, Z2, Z3)

#define HEADS_STORE_2_3 \
	HEAD_STORE(16, Z4, Z5); \
	HEAD_STORE(24, Z6, Z7)

#define HEADS_STORE_4_5 \
	HEAD_STORE(32, Z8, Z9); \
	HEAD_STORE(40, Z10, Z11)

#define HEADS_STORE_6_7 \
	HEAD_STORE(48, Z12, Z13); \
	HEAD_STORE(56, Z14, Z15)

#define HEADS_STORE_8_9 \
	HEAD_STORE(64, Z16, Z17); \
	HEAD_STORE(72, Z18, Z19)

// HEADS_POINTERS loads the ten weight pointers of the table at w+8(FP).
#define HEADS_POINTERS \
	MOVQ w+8(FP), R15; \
	MOVQ 0(R15), AX; \
	MOVQ 8(R15), BX; \
	MOVQ 16(R15), DX; \
	MOVQ 24(R15), DI; \
	MOVQ 32(R15), R8; \
	MOVQ 40(R15), R9; \
	MOVQ 48(R15), R10; \
	MOVQ 56(R15), R11; \
	MOVQ 64(R15), R12; \
	MOVQ 72(R15), R13

// The AVX2 versions (8 output floats a head): head i's outputs in Yi, the
// position's values in Y10, broadcast weights in Y11..Y15.
#define YHEAD_LOAD(off, a) \
	MOVQ    off(R15), R14; \
	VMOVUPS (R14), a

#define YHEAD_STORE(off, a) \
	MOVQ    off(R15), R14; \
	VMOVUPS a, (R14)

#define YHEAD_MAC(r, t, a, d) \
	VBROADCASTSS d(r)(CX*4), t; \
	VFMADD231PS  Y10, t, a

#define YHEADS_LOAD_0_1 \
	YHEAD_LOAD(0, Y0); \
	YHEAD_LOAD(8, Y1)

#define YHEADS_LOAD_2_3 \
	YHEAD_LOAD(16, Y2); \
	YHEAD_LOAD(24, Y3)

#define YHEADS_LOAD_4_5 \
	YHEAD_LOAD(32, Y4); \
	YHEAD_LOAD(40, Y5)

#define YHEADS_LOAD_6_7 \
	YHEAD_LOAD(48, Y6); \
	YHEAD_LOAD(56, Y7)

#define YHEADS_LOAD_8_9 \
	YHEAD_LOAD(64, Y8); \
	YHEAD_LOAD(72, Y9)

#define YHEADS_MAC_0_1(d) \
	YHEAD_MAC(AX, Y11, Y0, d); \
	YHEAD_MAC(BX, Y12, Y1, d)

#define YHEADS_MAC_2_3(d) \
	YHEAD_MAC(DX, Y13, Y2, d); \
	YHEAD_MAC(DI, Y14, Y3, d)

#define YHEADS_MAC_4_5(d) \
	YHEAD_MAC(R8, Y15, Y4, d); \
	YHEAD_MAC(R9, Y11, Y5, d)

#define YHEADS_MAC_6_7(d) \
	YHEAD_MAC(R10, Y12, Y6, d); \
	YHEAD_MAC(R11, Y13, Y7, d)

#define YHEADS_MAC_8_9(d) \
	YHEAD_MAC(R12, Y14, Y8, d); \
	YHEAD_MAC(R13, Y15, Y9, d)

#define YHEADS_STORE_0_1 \
	YHEAD_STORE(0, Y0); \
	YHEAD_STORE(8, Y1)

#define YHEADS_STORE_2_3 \
	YHEAD_STORE(16, Y2); \
	YHEAD_STORE(24, Y3)

#define YHEADS_STORE_4_5 \
	YHEAD_STORE(32, Y4); \
	YHEAD_STORE(40, Y5)

#define YHEADS_STORE_6_7 \
	YHEAD_STORE(48, Y6); \
	YHEAD_STORE(56, Y7)

#define YHEADS_STORE_8_9 \
	YHEAD_STORE(64, Y8); \
	YHEAD_STORE(72, Y9)

// The kernels' heads by count: HEADS_LOAD_n, HEADS_MAC_n and HEADS_STORE_n
// for the first n heads (YHEADS_* likewise).
#define HEADS_LOAD_2 \
	HEADS_LOAD_0_1

#define HEADS_LOAD_4 \
	HEADS_LOAD_0_1; \
	HEADS_LOAD_2_3

#define HEADS_LOAD_6 \
	HEADS_LOAD_0_1; \
	HEADS_LOAD_2_3; \
	HEADS_LOAD_4_5

#define HEADS_LOAD_8 \
	HEADS_LOAD_0_1; \
	HEADS_LOAD_2_3; \
	HEADS_LOAD_4_5; \
	HEADS_LOAD_6_7

#define HEADS_LOAD_10 \
	HEADS_LOAD_0_1; \
	HEADS_LOAD_2_3; \
	HEADS_LOAD_4_5; \
	HEADS_LOAD_6_7; \
	HEADS_LOAD_8_9

#define HEADS_MAC_2(d) \
	HEADS_MAC_0_1(d)

#define HEADS_MAC_4(d) \
	HEADS_MAC_0_1(d); \
	HEADS_MAC_2_3(d)

#define HEADS_MAC_6(d) \
	HEADS_MAC_0_1(d); \
	HEADS_MAC_2_3(d); \
	HEADS_MAC_4_5(d)

#define HEADS_MAC_8(d) \
	HEADS_MAC_0_1(d); \
	HEADS_MAC_2_3(d); \
	HEADS_MAC_4_5(d); \
	HEADS_MAC_6_7(d)

#define HEADS_MAC_10(d) \
	HEADS_MAC_0_1(d); \
	HEADS_MAC_2_3(d); \
	HEADS_MAC_4_5(d); \
	HEADS_MAC_6_7(d); \
	HEADS_MAC_8_9(d)

#define HEADS_STORE_2 \
	HEADS_STORE_0_1

#define HEADS_STORE_4 \
	HEADS_STORE_0_1; \
	HEADS_STORE_2_3

#define HEADS_STORE_6 \
	HEADS_STORE_0_1; \
	HEADS_STORE_2_3; \
	HEADS_STORE_4_5

#define HEADS_STORE_8 \
	HEADS_STORE_0_1; \
	HEADS_STORE_2_3; \
	HEADS_STORE_4_5; \
	HEADS_STORE_6_7

#define HEADS_STORE_10 \
	HEADS_STORE_0_1; \
	HEADS_STORE_2_3; \
	HEADS_STORE_4_5; \
	HEADS_STORE_6_7; \
	HEADS_STORE_8_9

#define YHEADS_LOAD_2 \
	YHEADS_LOAD_0_1

#define YHEADS_LOAD_4 \
	YHEADS_LOAD_0_1; \
	YHEADS_LOAD_2_3

#define YHEADS_LOAD_6 \
	YHEADS_LOAD_0_1; \
	YHEADS_LOAD_2_3; \
	YHEADS_LOAD_4_5

#define YHEADS_LOAD_8 \
	YHEADS_LOAD_0_1; \
	YHEADS_LOAD_2_3; \
	YHEADS_LOAD_4_5; \
	YHEADS_LOAD_6_7

#define YHEADS_LOAD_10 \
	YHEADS_LOAD_0_1; \
	YHEADS_LOAD_2_3; \
	YHEADS_LOAD_4_5; \
	YHEADS_LOAD_6_7; \
	YHEADS_LOAD_8_9

#define YHEADS_MAC_2(d) \
	YHEADS_MAC_0_1(d)

#define YHEADS_MAC_4(d) \
	YHEADS_MAC_0_1(d); \
	YHEADS_MAC_2_3(d)

#define YHEADS_MAC_6(d) \
	YHEADS_MAC_0_1(d); \
	YHEADS_MAC_2_3(d); \
	YHEADS_MAC_4_5(d)

#define YHEADS_MAC_8(d) \
	YHEADS_MAC_0_1(d); \
	YHEADS_MAC_2_3(d); \
	YHEADS_MAC_4_5(d); \
	YHEADS_MAC_6_7(d)

#define YHEADS_MAC_10(d) \
	YHEADS_MAC_0_1(d); \
	YHEADS_MAC_2_3(d); \
	YHEADS_MAC_4_5(d); \
	YHEADS_MAC_6_7(d); \
	YHEADS_MAC_8_9(d)

#define YHEADS_STORE_2 \
	YHEADS_STORE_0_1

#define YHEADS_STORE_4 \
	YHEADS_STORE_0_1; \
	YHEADS_STORE_2_3

#define YHEADS_STORE_6 \
	YHEADS_STORE_0_1; \
	YHEADS_STORE_2_3; \
	YHEADS_STORE_4_5

#define YHEADS_STORE_8 \
	YHEADS_STORE_0_1; \
	YHEADS_STORE_2_3; \
	YHEADS_STORE_4_5; \
	YHEADS_STORE_6_7

#define YHEADS_STORE_10 \
	YHEADS_STORE_0_1; \
	YHEADS_STORE_2_3; \
	YHEADS_STORE_4_5; \
	YHEADS_STORE_6_7; \
	YHEADS_STORE_8_9

// EIGHT unrolls a group of eight positions: values loads a position's
// values (and steps on), mac(d) adds them for the heads, d the byte
// offset of the position's weights.
#define EIGHT(values, mac) \
	values; \
	mac(0); \
	values; \
	mac(4); \
	values; \
	mac(8); \
	values; \
	mac(12); \
	values; \
	mac(16); \
	values; \
	mac(20); \
	values; \
	mac(24); \
	values; \
	mac(28)
