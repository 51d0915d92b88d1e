#include "textflag.h"
#include "go_asm.h"
#include "quantdot_tile_amd64.h"

// Packed q4 and q8 matrix kernels for AVX-512 VNNI. The q4 one is q4TileVNNI
// (quantdot_tiled_amd64.s) without its pack step, for two 16-row halves
// at once. The weights of a tile of 32 rows were laid out at load time
// (packed.go) so that the 64-byte vectors of a group are the transposed
// dword slices the tiled kernel builds with permutes, followed by the
// rows' float16 scales: a group is eight aligned loads, the nibble split
// and two scale conversions, read as one sequential stream (slice k of a
// group is 128 bytes: rows 0-15, then 16-31; the scales the 64 bytes
// after the last slice).
//
// Why 32 rows: a kernel on 16-row tiles was bound by its loads, not by
// VPDPBUSD, once it had several activation rows: each activation dword
// was a broadcast memory operand of one VPDPBUSD, and with the bias,
// scale and accumulator traffic of each row it issued about 1.5 loads
// per VPDPBUSD, where about two loads a cycle can issue. Here each
// broadcast dword serves both halves, about 0.75 loads per VPDPBUSD.
// (Two 16-row tiles read as two streams at once were slower from memory;
// for one activation row, two 32-row tiles at once measured the same as
// one, three alternating pairs.) One activation row has kernels of its
// own (quantdot_packed32row_amd64.s).
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

// P32_ROW adds one activation row's share of a group to its lane
// accumulators, for the 32-row kernels: AX holds the row's 32 quants,
// (R9)(R10*1) its bias and (R8)(R10*1) its scale, R11 its lane-(g mod 8)
// accumulators (both halves); the group's weight slices (as unsigned
// bytes) are Z16..Z23 (rows 0-15) and Z24..Z31 (rows 16-31), their scales
// Z12 and Z11.
//
// Integer sums, starting from the bias (−8·Σx for q4 weights stored as
// q+8, −128·Σx for q8 stored as q+128): lane i of Z13 (Z14) is weight row
// i of the first (second) half. Each half's eight VPDPBUSD
// run as two chains of four (Z9 and Z10 take the odd dwords), added at
// the end: integer sums are exact in any order, and one chain of
// eight, at about four cycles a VPDPBUSD, held products of few
// activation rows to about half the unit's rate (one thread, in
// cache: 2 rows 336 → 503 GOPS, 5 rows 418 → 554; four chains of two
// measured the same as two of four). Then (wscale · xscale) ·
// float32(isum) is added to the lane-(g mod 8) slot.
#define P32_ROW \
	VPBROADCASTD (R9)(R10*1), Z13; \
	VMOVDQA32    Z13, Z14; \
	VPXORD       Z9, Z9, Z9; \
	VPXORD       Z10, Z10, Z10; \
	PAIR_DOT(0, Z0, Z16, Z24, Z13, Z14); \
	PAIR_DOT(4, Z1, Z17, Z25, Z9, Z10); \
	PAIR_DOT(8, Z2, Z18, Z26, Z13, Z14); \
	PAIR_DOT(12, Z3, Z19, Z27, Z9, Z10); \
	PAIR_DOT(16, Z4, Z20, Z28, Z13, Z14); \
	PAIR_DOT(20, Z5, Z21, Z29, Z9, Z10); \
	PAIR_DOT(24, Z6, Z22, Z30, Z13, Z14); \
	PAIR_DOT(28, Z7, Z23, Z31, Z9, Z10); \
	VPADDD       Z9, Z13, Z13; \
	VPADDD       Z10, Z14, Z14; \
	VCVTDQ2PS    Z13, Z13; \
	VCVTDQ2PS    Z14, Z14; \
	VBROADCASTSS (R8)(R10*1), Z0; \
	VMULPS       Z0, Z12, Z1; \
	VMULPS       Z0, Z11, Z2; \
	VMULPS       Z13, Z1, Z1; \
	VMULPS       Z14, Z2, Z2; \
	VADDPS       (R11), Z1, Z1; \
	VMOVUPS      Z1, (R11); \
	VADDPS       64(R11), Z2, Z2; \
	VMOVUPS      Z2, 64(R11)

// P32_ARGS loads the kernels' arguments, readies the zeroing of the
// lane accumulators (16 registers' worth per row: R12 of them from R11)
// and sets BX to the prefetch lead for the rows (kernels.packedLead).
#define P32_ARGS \
	PACKED_ARGS(const_packedVNNIFarRows); \
	SHLQ    $4, R12; \
	VPXORD  Z0, Z0, Z0

// P32_ZERO zeroes one accumulator register's worth; R12 counts down.
#define P32_ZERO \
	VMOVUPS Z0, (R11); \
	ADDQ    $64, R11; \
	DECQ    R12

// P32_ROWS_START widens the group's scales, at soff(SI) (Z12: rows 0-15,
// Z11: 16-31), and points AX, R10, R11 and R12 at the first activation row.
#define P32_ROWS_START(soff) \
	VCVTPH2PS soff(SI), Z12; \
	VCVTPH2PS soff+32(SI), Z11; \
	PACKED_ROWS_START

// P32_SUM writes one activation row's 32 outputs, lane sums in the
// reference order, and steps to the next; R12 counts down.
#define P32_SUM \
	LANE_SUM(0, 128, (AX)); \
	LANE_SUM(64, 128, 64(AX)); \
	ADDQ $1024, R11; \
	ADDQ R10, AX; \
	DECQ R12

// func q4Packed32VNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// w: the tile's group 0 block (576 bytes per group: 512 of quants, then
// the 32 rows' scales); the other arguments are q4TileVNNI's, with 32
// outputs per activation row. facc holds
// rows·1024 bytes: for each row, eight slots (g mod 8) of both halves'
// 16 lanes.
TEXT ·q4Packed32VNNI(SB), NOSPLIT, $0-88
	P32_ARGS
	MOVQ         $0x0f0f0f0f0f0f0f0f, AX
	VPBROADCASTQ AX, Z15

p4zero:
	P32_ZERO
	JNE p4zero

p4group:
	PACKED_PREFETCH_Q4(BX*1)

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
	P32_ROWS_START(512)

p4row:
	P32_ROW
	PACKED_NEXT_ROW($1024)
	JNE p4row

	PACKED_NEXT_GROUP($576, $128, $1023)
	JNE p4group

	PACKED_SUMS_START

p4sum:
	P32_SUM
	JNE p4sum

	VZEROUPPER
	RET

// func q8Packed32VNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// q4Packed32VNNI for q8 weights, packed as unsigned bytes q+128 (packed.go):
// a group is sixteen 64-byte vectors (1 KiB) read straight into the slice
// registers, with no nibbles to split, then the scales (1088 bytes in
// all), and the activations' bias is −128·Σx.
TEXT ·q8Packed32VNNI(SB), NOSPLIT, $0-88
	P32_ARGS

p8zero:
	P32_ZERO
	JNE p8zero

p8group:
	PACKED_PREFETCH_Q8(BX*1)

	PACKED_Q8_SLICES
	P32_ROWS_START(1024)

p8row:
	P32_ROW
	PACKED_NEXT_ROW($1024)
	JNE p8row

	PACKED_NEXT_GROUP($1088, $128, $1023)
	JNE p8group

	PACKED_SUMS_START

p8sum:
	P32_SUM
	JNE p8sum

	VZEROUPPER
	RET
