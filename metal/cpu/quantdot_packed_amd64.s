#include "textflag.h"
#include "quantdot_tile_amd64.h"

// Packed q4 matrix kernel for AVX-512 VNNI: q4TileVNNI
// (quantdot_tiled_amd64.s) without its pack step. The weights of a tile
// of 16 rows were laid out at load time (packed.go) so that the four
// 64-byte vectors of a group are the transposed dword slices the tiled
// kernel builds with permutes, and its 16 float16 scales are contiguous. A group is then
// four aligned loads, the nibble split and one scale conversion, read as
// one sequential stream; the per-row work and the float order are the
// tiled kernel's, so results are bit-identical to the portable reference.

// func q4PackedVNNI(w, ws *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// w: the tile's group 0 quants block (256 bytes per group); ws: its group
// 0 scales (32 bytes per group); the other arguments are q4TileVNNI's.
TEXT ·q4PackedVNNI(SB), NOSPLIT, $0-96
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), DX
	MOVQ groups+16(FP), R14
	MOVQ xq+24(FP), DI
	MOVQ xs+32(FP), R8
	MOVQ xbias+40(FP), R9
	XORQ R13, R13
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VPBROADCASTQ AX, Z31

	// Zero the lane accumulators.
	MOVQ facc+72(FP), R11
	MOVQ rows+64(FP), R12
	SHLQ $3, R12
	VPXORD Z0, Z0, Z0

pzero:
	VMOVUPS Z0, (R11)
	ADDQ $64, R11
	DECQ R12
	JNE  pzero

pgroup:
	// The stream is sequential, but the hardware prefetchers alone leave
	// a decode row (little work per byte) waiting on memory: one core read
	// 12.9 GB/s of weights without this prefetch, 18-20 with it (distances
	// of 1 to 8 KiB measured alike).
	PREFETCHT0 4096(SI)
	PREFETCHT0 4160(SI)
	PREFETCHT0 4224(SI)
	PREFETCHT0 4288(SI)

	// Unpack nibbles: W0..W3 = Z16..Z19 (low), W4..W7 = Z20..Z23 (high).
	VMOVDQU64 (SI), Z8
	VMOVDQU64 64(SI), Z9
	VMOVDQU64 128(SI), Z10
	VMOVDQU64 192(SI), Z11
	VNNI_UNPACK(Z8, Z9, Z10, Z11)
	VCVTPH2PS (DX), Z12

	MOVQ DI, AX
	XORQ R10, R10
	MOVQ facc+72(FP), R11
	ADDQ R13, R11
	MOVQ rows+64(FP), R12

prow:
	VNNI_TILE_ROW
	ADDQ $32, AX
	ADDQ $4, R10
	ADDQ $512, R11
	DECQ R12
	JNE  prow

	ADDQ $256, SI
	ADDQ $32, DX
	ADDQ xgstep+48(FP), DI
	MOVQ sgstep+56(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ $64, R13
	ANDQ $511, R13
	DECQ R14
	JNE  pgroup

	// Lane sums in the reference order, 16 outputs per activation row.
	MOVQ facc+72(FP), R11
	MOVQ out+80(FP), AX
	MOVQ ostride+88(FP), R10
	MOVQ rows+64(FP), R12

psum:
	VNNI_TILE_SUM
	ADDQ $512, R11
	ADDQ R10, AX
	DECQ R12
	JNE  psum

	VZEROUPPER
	RET

DATA packedOnes16<>+0(SB)/8, $0x0001000100010001
DATA packedOnes16<>+8(SB)/8, $0x0001000100010001
DATA packedOnes16<>+16(SB)/8, $0x0001000100010001
DATA packedOnes16<>+24(SB)/8, $0x0001000100010001
GLOBL packedOnes16<>(SB), RODATA|NOPTR, $32

// func q4PackedAVX2(w, ws *byte, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// q4PackedVNNI for tiles of eight rows in AVX2: q4TileAVX2 without its
// pack step. A group is 128 contiguous bytes (four 32-byte dword slices,
// lane i = weight row i) and its eight float16 scales 16 bytes of the
// scales stream; lane accumulators are facc[r][g mod 8][8 float32].
TEXT ·q4PackedAVX2(SB), NOSPLIT, $0-96
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), DX
	MOVQ groups+16(FP), R14
	MOVQ xq+24(FP), DI
	MOVQ xs+32(FP), R8
	MOVQ xbias+40(FP), R9
	XORQ R13, R13
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	MOVQ AX, X7
	VPBROADCASTQ X7, Y7

	// Zero the lane accumulators.
	MOVQ facc+72(FP), R11
	MOVQ rows+64(FP), R12
	SHLQ $3, R12
	VXORPS Y0, Y0, Y0

p2zero:
	VMOVUPS Y0, (R11)
	ADDQ $32, R11
	DECQ R12
	JNE  p2zero

p2group:
	// As q4PackedVNNI: a prefetch on top of the hardware's.
	PREFETCHT0 4096(SI)
	PREFETCHT0 4160(SI)

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
	VCVTPH2PS (DX), Y4

	MOVQ DI, AX
	XORQ R10, R10
	MOVQ facc+72(FP), R11
	ADDQ R13, R11
	MOVQ rows+64(FP), R12

p2row:
	AVX2_TILE_ROW(packedOnes16<>(SB))
	ADDQ $32, AX
	ADDQ $4, R10
	ADDQ $256, R11
	DECQ R12
	JNE  p2row

	ADDQ $128, SI
	ADDQ $16, DX
	ADDQ xgstep+48(FP), DI
	MOVQ sgstep+56(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ $32, R13
	ANDQ $255, R13
	DECQ R14
	JNE  p2group

	MOVQ facc+72(FP), R11
	MOVQ out+80(FP), AX
	MOVQ ostride+88(FP), R10
	MOVQ rows+64(FP), R12

p2sum:
	AVX2_TILE_SUM
	ADDQ $256, R11
	ADDQ R10, AX
	DECQ R12
	JNE  p2sum

	VZEROUPPER
	RET
