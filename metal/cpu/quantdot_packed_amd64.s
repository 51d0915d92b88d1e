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
