#include "textflag.h"
#include "go_asm.h"
#include "quantdot_tile_amd64.h"

// Packed q4 matrix kernel for AVX2 (the AVX-512 VNNI one, on tiles of
// 32 rows, is in quantdot_packed32_amd64.s).

DATA packedOnes16<>+0(SB)/8, $0x0001000100010001
DATA packedOnes16<>+8(SB)/8, $0x0001000100010001
DATA packedOnes16<>+16(SB)/8, $0x0001000100010001
DATA packedOnes16<>+24(SB)/8, $0x0001000100010001
GLOBL packedOnes16<>(SB), RODATA|NOPTR, $32

// func q4PackedAVX2(w *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// q4PackedVNNI for tiles of eight rows in AVX2: q4TileAVX2 without its
// pack step. A group is 128 contiguous bytes (four 32-byte dword slices,
// lane i = weight row i) followed by its eight float16 scales (16 bytes);
// lane accumulators are facc[r][g mod 8][8 float32].
TEXT ·q4PackedAVX2(SB), NOSPLIT, $0-88
	MOVQ w+0(FP), SI
	MOVQ groups+8(FP), R14
	MOVQ xq+16(FP), DI
	MOVQ xs+24(FP), R8
	MOVQ xbias+32(FP), R9
	XORQ R13, R13
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	MOVQ AX, X7
	VPBROADCASTQ X7, Y7

	// Zero the lane accumulators; BX is the prefetch lead for the rows
	// (kernels.packedLead).
	MOVQ facc+64(FP), R11
	MOVQ rows+56(FP), R12
	MOVQ    $const_packedNearLead, BX
	MOVQ    $const_packedFarLead, CX
	CMPQ    R12, $const_packedAVX2FarRows
	CMOVQLE CX, BX
	SHLQ $3, R12
	VXORPS Y0, Y0, Y0

p2zero:
	VMOVUPS Y0, (R11)
	ADDQ $32, R11
	DECQ R12
	JNE  p2zero

p2group:
	// As q4Packed32VNNI: a prefetch on top of the hardware's, of every
	// line of the group BX bytes ahead: its 144 bytes touch at most three
	// lines, those of its first byte, of 64 bytes on and of its last byte.
	PREFETCHT0 (SI)(BX*1)
	PREFETCHT0 64(SI)(BX*1)
	PREFETCHT0 143(SI)(BX*1)

	// W0..W3 = Y8..Y11 (low nibbles), W4..W7 = Y12..Y15 (high).
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VPAND  Y7, Y0, Y8
	VPSRLW $4, Y0, Y12
	VPAND  Y7, Y12, Y12
	VPAND  Y7, Y1, Y9
	VPSRLW $4, Y1, Y13
	VPAND  Y7, Y13, Y13
	VPAND  Y7, Y2, Y10
	VPSRLW $4, Y2, Y14
	VPAND  Y7, Y14, Y14
	VPAND  Y7, Y3, Y11
	VPSRLW $4, Y3, Y15
	VPAND  Y7, Y15, Y15
	VCVTPH2PS 128(SI), Y4

	MOVQ DI, AX
	XORQ R10, R10
	MOVQ facc+64(FP), R11
	ADDQ R13, R11
	MOVQ rows+56(FP), R12

p2row:
	AVX2_TILE_ROW(packedOnes16<>(SB))
	ADDQ $32, AX
	ADDQ $4, R10
	ADDQ $256, R11
	DECQ R12
	JNE  p2row

	ADDQ $144, SI
	ADDQ xgstep+40(FP), DI
	MOVQ sgstep+48(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ $32, R13
	ANDQ $255, R13
	DECQ R14
	JNE  p2group

	MOVQ facc+64(FP), R11
	MOVQ out+72(FP), AX
	MOVQ ostride+80(FP), R10
	MOVQ rows+56(FP), R12

p2sum:
	AVX2_TILE_SUM
	ADDQ $256, R11
	ADDQ R10, AX
	DECQ R12
	JNE  p2sum

	VZEROUPPER
	RET
