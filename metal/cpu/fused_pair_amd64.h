#ifndef FUSED_PAIR_AMD64_H
#define FUSED_PAIR_AMD64_H

// PAIR_ARGS loads the arguments of the two-head score loops of AVX2 and
// AVX-512 (scoresPair*, scoresPairHalf*: out0, out1, q0, q1, k, stride
// (bytes), groups, blocks, scale): DI out0 and BX out1 − out0, SI q1 − q0,
// R8 k, DX the stride and R9 three strides, R12 the groups, R13 the
// blocks, and the scale broadcast into vscale.
#define PAIR_ARGS(vscale) \
	MOVQ         out0+0(FP), DI; \
	MOVQ         out1+8(FP), BX; \
	SUBQ         DI, BX; \
	MOVQ         q1+24(FP), SI; \
	SUBQ         q0+16(FP), SI; \
	MOVQ         k+32(FP), R8; \
	MOVQ         stride+40(FP), DX; \
	MOVQ         groups+48(FP), R12; \
	MOVQ         blocks+56(FP), R13; \
	VBROADCASTSS scale+64(FP), vscale; \
	LEAQ         (DX)(DX*2), R9

#endif
