#include "textflag.h"
#include "quantdot_tile_amd64.h"

// Packed q4 matrix kernel for AVX-512 VNNI: q4TileVNNI
// (quantdot_tiled_amd64.s) without its pack step, for two 16-row halves
// at once. The weights of a tile of 32 rows were laid out at load time
// (packed.go) so that the 64-byte vectors of a group are the transposed
// dword slices the tiled kernel builds with permutes, and its float16
// scales are contiguous: a group is eight aligned loads, the nibble split
// and two scale conversions, read as one sequential stream (slice k of a
// group is 128 bytes: rows 0-15, then 16-31).
//
// Why 32 rows: a kernel on 16-row tiles was bound by its loads, not by
// VPDPBUSD, once it had several activation rows: each activation dword
// was a broadcast memory operand of one VPDPBUSD, and with the bias,
// scale and accumulator traffic of each row it issued about 1.5 loads
// per VPDPBUSD, where about two loads a cycle can issue. Here each
// broadcast dword serves both halves, about 0.75 loads per VPDPBUSD.
// (Two 16-row tiles read as two streams at once were slower from memory.)
// Every lane's integer sum, float products and accumulator order are the
// tiled kernel's, so the results are bit-identical to the portable
// reference.

// PAIR_DOT adds activation dword off(AX), broadcast into t, times weight
// slice a of the first half to acc0 and times slice b of the second to
// acc1.
#define PAIR_DOT(off, t, a, b, acc0, acc1) \
	VPBROADCASTD off(AX), t; \
	VPDPBUSD     t, a, acc0; \
	VPDPBUSD     t, b, acc1

// func q4Packed32VNNI(w, ws *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// w: the tile's group 0 quants block (512 bytes per group); ws: its group
// 0 scales (64 bytes per group, rows in order); the other arguments are
// q4TileVNNI's, with 32 outputs per activation row. facc holds
// rows·1024 bytes: for each row, eight slots (g mod 8) of both halves'
// 16 lanes.
TEXT ·q4Packed32VNNI(SB), NOSPLIT, $0-96
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), DX
	MOVQ groups+16(FP), R14
	MOVQ xq+24(FP), DI
	MOVQ xs+32(FP), R8
	MOVQ xbias+40(FP), R9
	XORQ R13, R13
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VPBROADCASTQ AX, Z15

	// Zero the lane accumulators: 16 registers' worth per row.
	MOVQ facc+72(FP), R11
	MOVQ rows+64(FP), R12
	SHLQ $4, R12
	VPXORD Z0, Z0, Z0

qzero:
	VMOVUPS Z0, (R11)
	ADDQ $64, R11
	DECQ R12
	JNE  qzero

qgroup:
	// The stream is sequential, but the hardware prefetchers alone leave
	// a decode row (little work per byte) waiting on memory: one core read
	// 12.9 GB/s of weights without this prefetch, 18-20 with it (distances
	// of 1 to 8 KiB measured alike, on 16-row tiles).
	PREFETCHT0 4096(SI)
	PREFETCHT0 4160(SI)
	PREFETCHT0 4224(SI)
	PREFETCHT0 4288(SI)
	PREFETCHT0 4352(SI)
	PREFETCHT0 4416(SI)
	PREFETCHT0 4480(SI)
	PREFETCHT0 4544(SI)

	VMOVDQU64 (SI), Z8
	VMOVDQU64 128(SI), Z9
	VMOVDQU64 256(SI), Z10
	VMOVDQU64 384(SI), Z11
	NIBBLES(Z15, Z8, Z9, Z10, Z11, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	VMOVDQU64 64(SI), Z8
	VMOVDQU64 192(SI), Z9
	VMOVDQU64 320(SI), Z10
	VMOVDQU64 448(SI), Z11
	NIBBLES(Z15, Z8, Z9, Z10, Z11, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31)
	VCVTPH2PS (DX), Z12
	VCVTPH2PS 32(DX), Z11

	MOVQ DI, AX
	XORQ R10, R10
	MOVQ facc+72(FP), R11
	ADDQ R13, R11
	MOVQ rows+64(FP), R12

qrow:
	// Integer sums, starting from the bias −8·Σx: lane i of Z13 (Z14) is
	// weight row i of the first (second) half. Each half's eight VPDPBUSD
	// run as two chains of four (Z9 and Z10 take the odd dwords), added at
	// the end: integer sums are exact in any order, and one chain of
	// eight, at about four cycles a VPDPBUSD, held products of few
	// activation rows to about half the unit's rate (one thread, in
	// cache: 2 rows 336 → 503 GOPS, 5 rows 418 → 554; four chains of two
	// measured the same as two of four).
	VPBROADCASTD (R9)(R10*1), Z13
	VMOVDQA32    Z13, Z14
	VPXORD       Z9, Z9, Z9
	VPXORD       Z10, Z10, Z10
	PAIR_DOT(0, Z0, Z16, Z24, Z13, Z14)
	PAIR_DOT(4, Z1, Z17, Z25, Z9, Z10)
	PAIR_DOT(8, Z2, Z18, Z26, Z13, Z14)
	PAIR_DOT(12, Z3, Z19, Z27, Z9, Z10)
	PAIR_DOT(16, Z4, Z20, Z28, Z13, Z14)
	PAIR_DOT(20, Z5, Z21, Z29, Z9, Z10)
	PAIR_DOT(24, Z6, Z22, Z30, Z13, Z14)
	PAIR_DOT(28, Z7, Z23, Z31, Z9, Z10)
	VPADDD       Z9, Z13, Z13
	VPADDD       Z10, Z14, Z14

	// (wscale · xscale) · float32(isum) added to the lane-(g mod 8) slot.
	VCVTDQ2PS    Z13, Z13
	VCVTDQ2PS    Z14, Z14
	VBROADCASTSS (R8)(R10*1), Z0
	VMULPS       Z0, Z12, Z1
	VMULPS       Z0, Z11, Z2
	VMULPS       Z13, Z1, Z1
	VMULPS       Z14, Z2, Z2
	VADDPS       (R11), Z1, Z1
	VMOVUPS      Z1, (R11)
	VADDPS       64(R11), Z2, Z2
	VMOVUPS      Z2, 64(R11)
	ADDQ         $32, AX
	ADDQ         $4, R10
	ADDQ         $1024, R11
	DECQ         R12
	JNE          qrow

	ADDQ $512, SI
	ADDQ $64, DX
	ADDQ xgstep+48(FP), DI
	MOVQ sgstep+56(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ $128, R13
	ANDQ $1023, R13
	DECQ R14
	JNE  qgroup

	// Lane sums in the reference order, 32 outputs per activation row.
	MOVQ facc+72(FP), R11
	MOVQ out+80(FP), AX
	MOVQ ostride+88(FP), R10
	MOVQ rows+64(FP), R12

qsum:
	LANE_SUM(0, 128, (AX))
	LANE_SUM(64, 128, 64(AX))
	ADDQ $1024, R11
	ADDQ R10, AX
	DECQ R12
	JNE  qsum

	VZEROUPPER
	RET
