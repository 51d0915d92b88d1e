#include "textflag.h"
#include "go_asm.h"
#include "quantdot_tile_amd64.h"

// One-row packed q4 and q8 kernels for AVX-512 VNNI: q4Packed32VNNI and
// q8Packed32VNNI (quantdot_packed32_amd64.s) for a single activation row,
// the matrix-vector product of a decode step, with the same integer sums,
// float products and accumulator order, so their results are the same
// bits.
//
// Why a kernel of its own: a decode step streams the weights from memory
// and does little work per byte, yet two threads read them at about 0.65
// of the probe's rate with the many-row kernel, against 0.87-0.94 for a
// loop of only its loads and nibble split, and about 0.76 with its
// VPDPBUSD as well but no float work: the more instructions a group
// takes, the fewer groups, and so cache lines, the core keeps in flight
// (in cache the same kernel reads 55 GB/s on one thread, so it is not
// short of arithmetic). Shorter VPDPBUSD chains, a second tile read
// beside the first, and a prefetch of every other line instead of every
// line measured the same or worse. Fewer instructions did help: here
// every activation dword is a broadcast operand of its VPDPBUSD (the
// many-row kernels broadcast it once into a register for both halves,
// fewer loads where they are bound by loads), the weights are operands of
// the nibble split instead of loads of their own, and there is no row
// loop: about 70 instructions a group instead of 90. Single-stream decode
// of the 0.6B q4 model (model.BenchmarkDecode0_6BQ4, two threads, four
// alternating pairs): 109-110 → 125-128 tokens/s at the 10th-percentile
// step, 0.52-0.55 → 0.61-0.65 of the bandwidth bound.

// ROW_DOT adds activation dword off(DI) times weight slice a of the first
// half to acc0 and times slice b of the second to acc1.
#define ROW_DOT(off, a, b, acc0, acc1) \
	VPDPBUSD.BCST off(DI), a, acc0; \
	VPDPBUSD.BCST off(DI), b, acc1

// ROW_GROUP adds the row's share of a group to its lane-(g mod 8)
// accumulators at (R11)(R13*1): P32_ROW with the group's scales at
// soff(SI), the row's quants at DI, its scale at (R8), its bias at (R9).
#define ROW_GROUP(soff) \
	VCVTPH2PS     soff(SI), Z12; \
	VCVTPH2PS     soff+32(SI), Z11; \
	VPBROADCASTD  (R9), Z13; \
	VMOVDQA32     Z13, Z14; \
	VPXORD        Z9, Z9, Z9; \
	VPXORD        Z10, Z10, Z10; \
	ROW_DOT(0, Z16, Z24, Z13, Z14); \
	ROW_DOT(4, Z17, Z25, Z9, Z10); \
	ROW_DOT(8, Z18, Z26, Z13, Z14); \
	ROW_DOT(12, Z19, Z27, Z9, Z10); \
	ROW_DOT(16, Z20, Z28, Z13, Z14); \
	ROW_DOT(20, Z21, Z29, Z9, Z10); \
	ROW_DOT(24, Z22, Z30, Z13, Z14); \
	ROW_DOT(28, Z23, Z31, Z9, Z10); \
	VPADDD        Z9, Z13, Z13; \
	VPADDD        Z10, Z14, Z14; \
	VCVTDQ2PS     Z13, Z13; \
	VCVTDQ2PS     Z14, Z14; \
	VBROADCASTSS  (R8), Z0; \
	VMULPS        Z0, Z12, Z1; \
	VMULPS        Z0, Z11, Z2; \
	VMULPS        Z13, Z1, Z1; \
	VMULPS        Z14, Z2, Z2; \
	VADDPS        (R11)(R13*1), Z1, Z1; \
	VMOVUPS       Z1, (R11)(R13*1); \
	VADDPS        64(R11)(R13*1), Z2, Z2; \
	VMOVUPS       Z2, 64(R11)(R13*1)

// ROW_ARGS loads the arguments and readies the zeroing of the lane
// accumulators (1 KiB from facc: ROW_ZERO); BX is the prefetch lead.
#define ROW_ARGS \
	MOVQ   w+0(FP), SI; \
	MOVQ   groups+8(FP), R14; \
	MOVQ   xq+16(FP), DI; \
	MOVQ   xs+24(FP), R8; \
	MOVQ   xbias+32(FP), R9; \
	MOVQ   facc+40(FP), R11; \
	XORQ   R13, R13; \
	VPXORD Z0, Z0, Z0; \
	MOVQ   $const_packedNearLead, BX; \
	MOVQ   $1024, AX

// ROW_ZERO zeroes the 64 bytes below (R11)(AX*1); AX counts down.
#define ROW_ZERO \
	VMOVUPS Z0, -64(R11)(AX*1); \
	SUBQ    $64, AX

// ROW_NEXT steps past a group's block of bbytes bytes; R14 counts down.
#define ROW_NEXT(bbytes) \
	ADDQ bbytes, SI; \
	ADDQ $32, DI; \
	ADDQ $4, R8; \
	ADDQ $4, R9; \
	ADDQ $128, R13; \
	ANDQ $1023, R13; \
	DECQ R14

// ROW_SUM writes the row's 32 outputs, lane sums in the reference order.
#define ROW_SUM \
	MOVQ out+48(FP), AX; \
	LANE_SUM(0, 128, (AX)); \
	LANE_SUM(64, 128, 64(AX))

// NIBBLES_AT is NIBBLES of the four dword slices at off(SI), off+128(SI),
// off+256(SI) and off+384(SI), read as operands (a packed group, Z15 the
// mask) rather than loaded first: fewer instructions in flight per group.
#define NIBBLES_AT(off, w0, w1, w2, w3, w4, w5, w6, w7) \
	VPANDD off(SI), Z15, w0; \
	VPSRLW $4, off(SI), w4; \
	VPANDD Z15, w4, w4; \
	VPANDD off+128(SI), Z15, w1; \
	VPSRLW $4, off+128(SI), w5; \
	VPANDD Z15, w5, w5; \
	VPANDD off+256(SI), Z15, w2; \
	VPSRLW $4, off+256(SI), w6; \
	VPANDD Z15, w6, w6; \
	VPANDD off+384(SI), Z15, w3; \
	VPSRLW $4, off+384(SI), w7; \
	VPANDD Z15, w7, w7

// func q4Packed32VNNIRow(w *byte, groups int, xq *int8, xs *float32, xbias *int32, facc, out *float32)
//
// q4Packed32VNNI for one activation row: w is the tile's first group
// block (576 bytes a group: 512 of quants, 64 of scales), xq, xs and xbias
// the row's quants, scales and biases (32, 4 and 4 bytes a group), facc 1
// KiB of scratch, out the row's 32 outputs.
TEXT ·q4Packed32VNNIRow(SB), NOSPLIT, $0-56
	ROW_ARGS

r4zero:
	ROW_ZERO
	JNE r4zero

	MOVQ         $0x0f0f0f0f0f0f0f0f, AX
	VPBROADCASTQ AX, Z15

r4group:
	PACKED_PREFETCH_Q4(BX*1)
	NIBBLES_AT(0, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	NIBBLES_AT(64, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31)
	ROW_GROUP(512)
	ROW_NEXT($576)
	JNE r4group

	ROW_SUM
	VZEROUPPER
	RET

// func q8Packed32VNNIRow(w *byte, groups int, xq *int8, xs *float32, xbias *int32, facc, out *float32)
//
// q4Packed32VNNIRow for q8 weights (1088 bytes a group: 1024 of quants
// as unsigned bytes q+128, 64 of scales): the slices load straight into
// their registers.
TEXT ·q8Packed32VNNIRow(SB), NOSPLIT, $0-56
	ROW_ARGS

r8zero:
	ROW_ZERO
	JNE r8zero

r8group:
	PACKED_PREFETCH_Q8(BX*1)

	PACKED_Q8_SLICES
	ROW_GROUP(1024)
	ROW_NEXT($1088)
	JNE r8group

	ROW_SUM
	VZEROUPPER
	RET
