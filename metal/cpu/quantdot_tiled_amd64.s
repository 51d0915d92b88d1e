#include "textflag.h"
#include "quantdot_tile_amd64.h"

// Tiled q4 matrix-matrix kernel for AVX-512 VNNI. Sixteen weight rows meet
// every activation row of the call, one group of 32 at a time:
//
//   pack:  the tile's 16 bytes of group g in each of the 16 weight rows are
//          transposed so that register W_k holds, in dword lane i, the four
//          weights of elements 4k..4k+3 of weight row i (k < 4: low nibbles,
//          k >= 4: high nibbles), unpacked to bytes 0..15. This is done once
//          per group and shared by all activation rows.
//   rows:  for activation row r, eight VPDPBUSD with the activation's four
//          bytes 4k..4k+3 broadcast leave in lane i the exact sum
//          Σ u·x − 8·Σx of weight row i (the accumulator starts at the
//          −8·Σx bias). No horizontal reduction is needed.
//   float: lane i of (wscale · xscale) · float32(isum) is added to the
//          lane-(g mod 8) accumulator of (r, i), kept in memory at
//          facc[r][g mod 8][i]; multiplies and adds are separate (no FMA).
//
// At the end each (r, i) sums its eight lane accumulators as
// ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7)): exactly the portable reference
// (quantdot.go), so results are bit-identical to every other kernel.

// VPERMT2D indices of the two transpose steps (see q4TileVNNI).
DATA tileIdxA<>+0(SB)/4, $0
DATA tileIdxA<>+4(SB)/4, $4
DATA tileIdxA<>+8(SB)/4, $8
DATA tileIdxA<>+12(SB)/4, $12
DATA tileIdxA<>+16(SB)/4, $16
DATA tileIdxA<>+20(SB)/4, $20
DATA tileIdxA<>+24(SB)/4, $24
DATA tileIdxA<>+28(SB)/4, $28
DATA tileIdxA<>+32(SB)/4, $1
DATA tileIdxA<>+36(SB)/4, $5
DATA tileIdxA<>+40(SB)/4, $9
DATA tileIdxA<>+44(SB)/4, $13
DATA tileIdxA<>+48(SB)/4, $17
DATA tileIdxA<>+52(SB)/4, $21
DATA tileIdxA<>+56(SB)/4, $25
DATA tileIdxA<>+60(SB)/4, $29
GLOBL tileIdxA<>(SB), RODATA|NOPTR, $64

DATA tileIdxB<>+0(SB)/4, $2
DATA tileIdxB<>+4(SB)/4, $6
DATA tileIdxB<>+8(SB)/4, $10
DATA tileIdxB<>+12(SB)/4, $14
DATA tileIdxB<>+16(SB)/4, $18
DATA tileIdxB<>+20(SB)/4, $22
DATA tileIdxB<>+24(SB)/4, $26
DATA tileIdxB<>+28(SB)/4, $30
DATA tileIdxB<>+32(SB)/4, $3
DATA tileIdxB<>+36(SB)/4, $7
DATA tileIdxB<>+40(SB)/4, $11
DATA tileIdxB<>+44(SB)/4, $15
DATA tileIdxB<>+48(SB)/4, $19
DATA tileIdxB<>+52(SB)/4, $23
DATA tileIdxB<>+56(SB)/4, $27
DATA tileIdxB<>+60(SB)/4, $31
GLOBL tileIdxB<>(SB), RODATA|NOPTR, $64

DATA tileIdx0<>+0(SB)/4, $0
DATA tileIdx0<>+4(SB)/4, $1
DATA tileIdx0<>+8(SB)/4, $2
DATA tileIdx0<>+12(SB)/4, $3
DATA tileIdx0<>+16(SB)/4, $4
DATA tileIdx0<>+20(SB)/4, $5
DATA tileIdx0<>+24(SB)/4, $6
DATA tileIdx0<>+28(SB)/4, $7
DATA tileIdx0<>+32(SB)/4, $16
DATA tileIdx0<>+36(SB)/4, $17
DATA tileIdx0<>+40(SB)/4, $18
DATA tileIdx0<>+44(SB)/4, $19
DATA tileIdx0<>+48(SB)/4, $20
DATA tileIdx0<>+52(SB)/4, $21
DATA tileIdx0<>+56(SB)/4, $22
DATA tileIdx0<>+60(SB)/4, $23
GLOBL tileIdx0<>(SB), RODATA|NOPTR, $64

DATA tileIdx1<>+0(SB)/4, $8
DATA tileIdx1<>+4(SB)/4, $9
DATA tileIdx1<>+8(SB)/4, $10
DATA tileIdx1<>+12(SB)/4, $11
DATA tileIdx1<>+16(SB)/4, $12
DATA tileIdx1<>+20(SB)/4, $13
DATA tileIdx1<>+24(SB)/4, $14
DATA tileIdx1<>+28(SB)/4, $15
DATA tileIdx1<>+32(SB)/4, $24
DATA tileIdx1<>+36(SB)/4, $25
DATA tileIdx1<>+40(SB)/4, $26
DATA tileIdx1<>+44(SB)/4, $27
DATA tileIdx1<>+48(SB)/4, $28
DATA tileIdx1<>+52(SB)/4, $29
DATA tileIdx1<>+56(SB)/4, $30
DATA tileIdx1<>+60(SB)/4, $31
GLOBL tileIdx1<>(SB), RODATA|NOPTR, $64

DATA tileIota<>+0(SB)/4, $0
DATA tileIota<>+4(SB)/4, $1
DATA tileIota<>+8(SB)/4, $2
DATA tileIota<>+12(SB)/4, $3
DATA tileIota<>+16(SB)/4, $4
DATA tileIota<>+20(SB)/4, $5
DATA tileIota<>+24(SB)/4, $6
DATA tileIota<>+28(SB)/4, $7
DATA tileIota<>+32(SB)/4, $8
DATA tileIota<>+36(SB)/4, $9
DATA tileIota<>+40(SB)/4, $10
DATA tileIota<>+44(SB)/4, $11
DATA tileIota<>+48(SB)/4, $12
DATA tileIota<>+52(SB)/4, $13
DATA tileIota<>+56(SB)/4, $14
DATA tileIota<>+60(SB)/4, $15
GLOBL tileIota<>(SB), RODATA|NOPTR, $64

DATA tileNib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL tileNib<>(SB), RODATA|NOPTR, $8

// TILE4 loads into Zd the 16 bytes of the current group of four
// consecutive weight rows starting at base, one row per 128-bit lane
// (BX is the row stride, CX three row strides).
#define TILE4(base, zd, xd) \
	VMOVDQU (base), xd; \
	VINSERTI32X4 $1, (base)(BX*1), zd, zd; \
	VINSERTI32X4 $2, (base)(BX*2), zd, zd; \
	VINSERTI32X4 $3, (base)(CX*1), zd, zd

// func q4TileVNNI(w, ws *byte, wstride, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int)
//
// w: group 0 of weight row 0 of the tile (rows wstride bytes apart);
// ws: weight row 0's first f16 scale (rows groups·2 bytes apart; the two
// bytes before it must be readable); xq/xs/xbias: group 0 of activation
// row 0's quants, scale and −8·Σx bias in the tiled layout
// (actquant_tiled.go: rows 32 and 4 bytes apart, groups xgstep and sgstep
// bytes apart); facc: rows·8·16 float32 of scratch; out: output (r, i) at
// out + r·ostride + 4i.
TEXT ·q4TileVNNI(SB), NOSPLIT, $0-104
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), DX
	MOVQ wstride+16(FP), BX
	LEAQ (BX)(BX*2), CX
	MOVQ groups+24(FP), R14
	MOVQ xq+32(FP), DI
	MOVQ xs+40(FP), R8
	MOVQ xbias+48(FP), R9
	XORQ R13, R13
	MOVQ BX, AX
	SHLQ $4, AX
	ADDQ AX, w+0(FP)

	VPBROADCASTQ tileNib<>(SB), Z31
	VMOVDQU32 tileIdxA<>(SB), Z30
	VMOVDQU32 tileIdxB<>(SB), Z29
	VMOVDQU32 tileIdx0<>(SB), Z28
	VMOVDQU32 tileIdx1<>(SB), Z27
	// Z26: byte offsets of the 16 weight rows' scales.
	MOVQ groups+24(FP), AX
	SHLQ $1, AX
	VPBROADCASTD AX, Z26
	VPMULLD tileIota<>(SB), Z26, Z26

	// Zero the lane accumulators.
	MOVQ facc+80(FP), R11
	MOVQ rows+72(FP), R12
	SHLQ $3, R12
	VPXORD Z0, Z0, Z0

tilezero:
	VMOVUPS Z0, (R11)
	ADDQ $64, R11
	DECQ R12
	JNE  tilezero

tilegroup:
	// Weights stream once from memory, but a tile reads its rows' groups
	// across the rows, which hardware prefetchers do not follow: each
	// group prefetches the next 256 bytes of the following tile (the 16
	// rows after this tile's, contiguous), which covers it by the last
	// group. w's argument slot holds the position.
	MOVQ w+0(FP), R10
	PREFETCHT0 (R10)
	PREFETCHT0 64(R10)
	PREFETCHT0 128(R10)
	PREFETCHT0 192(R10)
	ADDQ $256, R10
	MOVQ R10, w+0(FP)

	// Pack: Z0..Z3 hold rows 0-3, 4-7, 8-11, 12-15 (dword 4j+k = row
	// 4a+j, bytes 4k..4k+3).
	TILE4(SI, Z0, X0)
	LEAQ (SI)(BX*4), AX
	TILE4(AX, Z1, X1)
	LEAQ (AX)(BX*4), AX
	TILE4(AX, Z2, X2)
	LEAQ (AX)(BX*4), AX
	TILE4(AX, Z3, X3)

	// Step 1: lane 8kk+i = row i (of eight) dword kk (A) or kk+2 (B).
	VMOVDQA64 Z0, Z4
	VPERMT2D  Z1, Z30, Z4 // A01
	VPERMT2D  Z1, Z29, Z0 // B01
	VMOVDQA64 Z2, Z6
	VPERMT2D  Z3, Z30, Z6 // A23
	VPERMT2D  Z3, Z29, Z2 // B23

	// Step 2: lane i = row i dword k, k = 0..3 in Z8, Z4, Z9, Z0.
	VMOVDQA64 Z4, Z8
	VPERMT2D  Z6, Z28, Z8
	VPERMT2D  Z6, Z27, Z4
	VMOVDQA64 Z0, Z9
	VPERMT2D  Z2, Z28, Z9
	VPERMT2D  Z2, Z27, Z0

	// Unpack nibbles: W0..W3 = Z16..Z19 (low), W4..W7 = Z20..Z23 (high).
	VNNI_UNPACK(Z8, Z4, Z9, Z0)

	// Weight scales of the 16 rows, widened to float32 in Z12: one gather
	// of dwords brings the f16 scales of a pair of groups (kept in Z10 for
	// the odd group); the last group of an odd count gathers the dword
	// ending with its scale instead (the one before it is in bounds: group
	// 0's is preceded by quants or padding).
	BTQ  $6, R13
	JCS  tileodd
	KXNORW      K1, K1, K1
	CMPQ R14, $1
	JEQ  tilelast
	VPGATHERDD  (DX)(Z26*1), K1, Z10
	VPMOVDW     Z10, Y12
	VCVTPH2PS   Y12, Z12
	JMP  tilescaled

tilelast:
	VPGATHERDD  -2(DX)(Z26*1), K1, Z10

tileodd:
	VPSRLD      $16, Z10, Z12
	VPMOVDW     Z12, Y12
	VCVTPH2PS   Y12, Z12

tilescaled:
	MOVQ DI, AX
	XORQ R10, R10
	MOVQ facc+80(FP), R11
	ADDQ R13, R11
	MOVQ rows+72(FP), R12

tilerow:
	VNNI_TILE_ROW
	ADDQ $32, AX
	ADDQ $4, R10
	ADDQ $512, R11
	DECQ R12
	JNE  tilerow

	ADDQ $16, SI
	ADDQ $2, DX
	ADDQ xgstep+56(FP), DI
	MOVQ sgstep+64(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ $64, R13
	ANDQ $511, R13
	DECQ R14
	JNE  tilegroup

	// Lane sums in the reference order, 16 outputs per activation row.
	MOVQ facc+80(FP), R11
	MOVQ out+88(FP), AX
	MOVQ ostride+96(FP), R10
	MOVQ rows+72(FP), R12

tilesum:
	VNNI_TILE_SUM
	ADDQ $512, R11
	ADDQ R10, AX
	DECQ R12
	JNE  tilesum

	VZEROUPPER
	RET

DATA tileOnes16<>+0(SB)/8, $0x0001000100010001
DATA tileOnes16<>+8(SB)/8, $0x0001000100010001
DATA tileOnes16<>+16(SB)/8, $0x0001000100010001
DATA tileOnes16<>+24(SB)/8, $0x0001000100010001
GLOBL tileOnes16<>(SB), RODATA|NOPTR, $32

DATA tileNib32<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA tileNib32<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA tileNib32<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA tileNib32<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL tileNib32<>(SB), RODATA|NOPTR, $32

// TILE2 loads into Yd the 16 bytes of the current group of weight rows
// base and base + 4·BX, one per 128-bit lane.
#define TILE2(base, yd, xd) \
	VMOVDQU (base), xd; \
	VINSERTI128 $1, (base)(BX*4), yd, yd

// func q4TileAVX2(w, ws *byte, wstride, groups int, xq *int8, xs *float32, xbias *int32, xgstep, sgstep, rows int, facc, out *float32, ostride int, wsidx *int32)
//
// The AVX2 form of q4TileVNNI with eight weight rows (one per 32-bit lane
// of a 256-bit register): VPMADDUBSW and VPADDW form, per lane, int16 sums
// of byte pairs (each at most 2·15·127, eight of them below 2^15), which
// VPMADDWD widens to the group's int32 sum. wsidx holds the byte offsets
// of the eight rows' scales (i·groups·2). Lane accumulators are
// facc[r][g mod 8][8 float32].
TEXT ·q4TileAVX2(SB), NOSPLIT, $0-112
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), DX
	MOVQ wstride+16(FP), BX
	MOVQ groups+24(FP), R14
	MOVQ xq+32(FP), DI
	MOVQ xs+40(FP), R8
	MOVQ xbias+48(FP), R9
	XORQ R13, R13
	MOVQ BX, AX
	SHLQ $3, AX
	ADDQ AX, w+0(FP)

	MOVQ facc+80(FP), R11
	MOVQ rows+72(FP), R12
	SHLQ $3, R12
	VXORPS Y0, Y0, Y0

t2zero:
	VMOVUPS Y0, (R11)
	ADDQ $32, R11
	DECQ R12
	JNE  t2zero

t2group:
	// Prefetch the next tile as q4TileVNNI does, 128 bytes per group.
	MOVQ w+0(FP), R10
	PREFETCHT0 (R10)
	PREFETCHT0 64(R10)
	ADDQ $128, R10
	MOVQ R10, w+0(FP)

	// Pack: lane 4j+k of Y(j) = row j (low lane) / j+4 (high) dword k,
	// then a 4×4 dword transpose per 128-bit lane: lane i of T_k = row i
	// dword k, T0..T3 in Y0..Y3.
	LEAQ (SI)(BX*2), AX
	TILE2(SI, Y0, X0)
	LEAQ (SI)(BX*1), CX
	TILE2(CX, Y1, X1)
	TILE2(AX, Y2, X2)
	ADDQ BX, AX
	TILE2(AX, Y3, X3)
	VPUNPCKLDQ  Y1, Y0, Y4
	VPUNPCKHDQ  Y1, Y0, Y5
	VPUNPCKLDQ  Y3, Y2, Y6
	VPUNPCKHDQ  Y3, Y2, Y7
	VPUNPCKLQDQ Y6, Y4, Y0
	VPUNPCKHQDQ Y6, Y4, Y1
	VPUNPCKLQDQ Y7, Y5, Y2
	VPUNPCKHQDQ Y7, Y5, Y3

	// W0..W3 = Y8..Y11 (low nibbles), W4..W7 = Y12..Y15 (high).
	VPAND  tileNib32<>(SB), Y0, Y8
	VPSRLW $4, Y0, Y12
	VPAND  tileNib32<>(SB), Y12, Y12
	VPAND  tileNib32<>(SB), Y1, Y9
	VPSRLW $4, Y1, Y13
	VPAND  tileNib32<>(SB), Y13, Y13
	VPAND  tileNib32<>(SB), Y2, Y10
	VPSRLW $4, Y2, Y14
	VPAND  tileNib32<>(SB), Y14, Y14
	VPAND  tileNib32<>(SB), Y3, Y11
	VPSRLW $4, Y3, Y15
	VPAND  tileNib32<>(SB), Y15, Y15

	// Scales: the dword ending with each row's f16 scale of this group
	// (the two bytes before it are readable), high halves widened in Y4.
	MOVQ       wsidx+104(FP), AX
	VMOVDQU    (AX), Y5
	VPCMPEQD   Y6, Y6, Y6
	VPGATHERDD Y6, -2(DX)(Y5*1), Y4
	VPSRLD     $16, Y4, Y4
	VPACKUSDW  Y4, Y4, Y4
	VPERMQ     $0x08, Y4, Y4
	VCVTPH2PS  X4, Y4

	MOVQ DI, AX
	XORQ R10, R10
	MOVQ facc+80(FP), R11
	ADDQ R13, R11
	MOVQ rows+72(FP), R12

t2row:
	AVX2_TILE_ROW(tileOnes16<>(SB))
	ADDQ $32, AX
	ADDQ $4, R10
	ADDQ $256, R11
	DECQ R12
	JNE  t2row

	ADDQ $16, SI
	ADDQ $2, DX
	ADDQ xgstep+56(FP), DI
	MOVQ sgstep+64(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ $32, R13
	ANDQ $255, R13
	DECQ R14
	JNE  t2group

	MOVQ facc+80(FP), R11
	MOVQ out+88(FP), AX
	MOVQ ostride+96(FP), R10
	MOVQ rows+72(FP), R12

t2sum:
	AVX2_TILE_SUM
	ADDQ $256, R11
	ADDQ R10, AX
	DECQ R12
	JNE  t2sum

	VZEROUPPER
	RET
