#include "textflag.h"
#include "go_asm.h"
#include "quantdot_tile_amd64.h"

// Packed q4 matrix kernels on tiles of eight rows: AVX2, and AVX2 with
// AVX-VNNI (the AVX-512 VNNI one, on tiles of 32 rows, is in
// quantdot_packed32_amd64.s). Both have q4PackedAVX2's signature and
// differ only in how a row's group sum is formed (AVX2_TILE_ROW,
// AVXVNNI_TILE_ROW).

DATA packedOnes16<>+0(SB)/8, $0x0001000100010001
DATA packedOnes16<>+8(SB)/8, $0x0001000100010001
DATA packedOnes16<>+16(SB)/8, $0x0001000100010001
DATA packedOnes16<>+24(SB)/8, $0x0001000100010001
GLOBL packedOnes16<>(SB), RODATA|NOPTR, $32

// P8_ARGS loads the arguments, the nibble mask (Y7) and the prefetch lead
// for the rows (BX: kernels.packedLead, far for up to packedAVX2FarRows
// rows), and readies the zeroing of the lane accumulators (R12 of 32
// bytes from R11).
#define P8_ARGS \
	PACKED_ARGS(const_packedAVX2FarRows); \
	MOVQ         $0x0f0f0f0f0f0f0f0f, AX; \
	MOVQ         AX, X7; \
	VPBROADCASTQ X7, Y7; \
	SHLQ         $3, R12; \
	VXORPS       Y0, Y0, Y0

// P8_ZERO zeroes one lane accumulator; R12 counts down.
#define P8_ZERO \
	VMOVUPS Y0, (R11); \
	ADDQ    $32, R11; \
	DECQ    R12

// P8_GROUP prefetches the group BX bytes ahead (as q4Packed32VNNI: its
// 144 bytes touch at most three lines, those of its first byte, of 64
// bytes on and of its last byte), splits its slices into W0..W3 = Y8..Y11
// (low nibbles) and W4..W7 = Y12..Y15 (high), widens its scales into Y4
// and points AX, R10, R11 and R12 at the first activation row.
#define P8_GROUP \
	PREFETCHT0   (SI)(BX*1); \
	PREFETCHT0   64(SI)(BX*1); \
	PREFETCHT0   143(SI)(BX*1); \
	VMOVDQU      (SI), Y0; \
	VMOVDQU      32(SI), Y1; \
	VMOVDQU      64(SI), Y2; \
	VMOVDQU      96(SI), Y3; \
	VPAND        Y7, Y0, Y8; \
	VPSRLW       $4, Y0, Y12; \
	VPAND        Y7, Y12, Y12; \
	VPAND        Y7, Y1, Y9; \
	VPSRLW       $4, Y1, Y13; \
	VPAND        Y7, Y13, Y13; \
	VPAND        Y7, Y2, Y10; \
	VPSRLW       $4, Y2, Y14; \
	VPAND        Y7, Y14, Y14; \
	VPAND        Y7, Y3, Y11; \
	VPSRLW       $4, Y3, Y15; \
	VPAND        Y7, Y15, Y15; \
	VCVTPH2PS    128(SI), Y4; \
	PACKED_ROWS_START

// P8Q8_GROUP is P8_GROUP for a packed q8 group (272 bytes: eight 32-byte
// slices of unsigned bytes q+128, then the scales): the slices load
// straight into W0..W7 = Y8..Y15, in element order as AVXVNNI_TILE_ROW
// pairs them with the activations, and five prefetches cover its lines.
#define P8Q8_GROUP \
	PREFETCHT0 (SI)(BX*1); \
	PREFETCHT0 64(SI)(BX*1); \
	PREFETCHT0 128(SI)(BX*1); \
	PREFETCHT0 192(SI)(BX*1); \
	PREFETCHT0 271(SI)(BX*1); \
	VMOVDQU    (SI), Y8; \
	VMOVDQU    32(SI), Y9; \
	VMOVDQU    64(SI), Y10; \
	VMOVDQU    96(SI), Y11; \
	VMOVDQU    128(SI), Y12; \
	VMOVDQU    160(SI), Y13; \
	VMOVDQU    192(SI), Y14; \
	VMOVDQU    224(SI), Y15; \
	VCVTPH2PS  256(SI), Y4; \
	PACKED_ROWS_START

// P8_NEXT_SUM steps to the next row's; R12 counts down.
#define P8_NEXT_SUM \
	ADDQ $256, R11; \
	ADDQ R10, AX; \
	DECQ R12

// AVXVNNI_TILE_ROW is AVX2_TILE_ROW with VPDPBUSD: each dword lane's four
// products go straight into an int32 sum, one instruction for what
// VPMADDUBSW, VPADDW and (once a group) VPMADDWD do. The sum starts from
// the bias and runs as two chains of four (Y0, Y1), added at the end:
// integer sums are exact in any order, so the bits are AVX2_TILE_ROW's.
#define AVXVNNI_TILE_ROW \
	VPBROADCASTD (R9)(R10*1), Y0; \
	VPXOR        Y1, Y1, Y1; \
	VPBROADCASTD 0(AX), Y2; \
	VPBROADCASTD 4(AX), Y3; \
	VPBROADCASTD 8(AX), Y5; \
	VPBROADCASTD 12(AX), Y6; \
	VPDPBUSD_VEX(0, 8, 2); \
	VPDPBUSD_VEX(1, 9, 3); \
	VPDPBUSD_VEX(0, 10, 5); \
	VPDPBUSD_VEX(1, 11, 6); \
	VPBROADCASTD 16(AX), Y2; \
	VPBROADCASTD 20(AX), Y3; \
	VPBROADCASTD 24(AX), Y5; \
	VPBROADCASTD 28(AX), Y6; \
	VPDPBUSD_VEX(0, 12, 2); \
	VPDPBUSD_VEX(1, 13, 3); \
	VPDPBUSD_VEX(0, 14, 5); \
	VPDPBUSD_VEX(1, 15, 6); \
	VPADDD       Y1, Y0, Y0; \
	VCVTDQ2PS    Y0, Y0; \
	VBROADCASTSS (R8)(R10*1), Y1; \
	VMULPS       Y1, Y4, Y1; \
	VMULPS       Y0, Y1, Y1; \
	VADDPS       (R11), Y1, Y1; \
	VMOVUPS      Y1, (R11)

// P8_KERNEL is the whole of an 8-row packed kernel: group loads a group
// of bbytes bytes into W0..W7 and its scales (P8_GROUP, P8Q8_GROUP), row
// adds one activation row's share of it (AVX2_TILE_ROW,
// AVXVNNI_TILE_ROW). Its labels are local to the TEXT it is expanded in.
#define P8_KERNEL(group, bbytes, row) \
	P8_ARGS; \
zero: \
	P8_ZERO; \
	JNE zero; \
nextgroup: \
	group; \
nextrow: \
	row; \
	PACKED_NEXT_ROW($256); \
	JNE nextrow; \
	PACKED_NEXT_GROUP(bbytes, $32, $255); \
	JNE nextgroup; \
	PACKED_SUMS_START; \
sum: \
	AVX2_TILE_SUM; \
	P8_NEXT_SUM; \
	JNE sum; \
	VZEROUPPER; \
	RET

// func q4PackedAVX2(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// q4PackedVNNI for tiles of eight rows in AVX2: q4TileAVX2 without its
// pack step. A group is 128 contiguous bytes (four 32-byte dword slices,
// lane i = weight row i) followed by its eight float16 scales (16 bytes);
// lane accumulators are facc[r][g mod 8][8 float32].
TEXT ·q4PackedAVX2(SB), NOSPLIT, $0-88
	P8_KERNEL(P8_GROUP, $144, AVX2_TILE_ROW(packedOnes16<>(SB)))

// func q4PackedAVXVNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// q4PackedAVX2 with AVX-VNNI's VPDPBUSD (AVXVNNI_TILE_ROW): the same
// packed tiles, sums and bits.
TEXT ·q4PackedAVXVNNI(SB), NOSPLIT, $0-88
	P8_KERNEL(P8_GROUP, $144, AVXVNNI_TILE_ROW)

// func q8PackedAVXVNNI(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// q4PackedAVXVNNI for packed q8 matrices (P8Q8_GROUP), the activations'
// bias −128·Σx. AVX2 has no such kernel: VPMADDUBSW's int16 pair sums
// would saturate on full bytes (2·255·127), where VPDPBUSD adds into
// int32.
TEXT ·q8PackedAVXVNNI(SB), NOSPLIT, $0-88
	P8_KERNEL(P8Q8_GROUP, $272, AVXVNNI_TILE_ROW)
