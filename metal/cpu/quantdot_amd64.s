#include "textflag.h"

// Blocked q4/q8 kernels: each loop iteration handles eight groups of 32.
// For every group the exact int32 sum of weight × activation products is
// formed in vector lanes, the eight groups' lane sums are reduced into one
// register (lane k = group k of the block), and the float part runs eight
// groups wide with no fused multiply-add:
//     acc[k] += (f16→f32(wscale[k]) · xscale[k]) · float32(isum[k])
// which is exactly the portable reference (see quantdot.go). The kernels
// store the eight lane accumulators; Go adds any tail groups and the lanes.

DATA nibmask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibmask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibmask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibmask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibmask<>(SB), RODATA|NOPTR, $32

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

DATA signbit8<>+0(SB)/8, $0x8080808080808080
DATA signbit8<>+8(SB)/8, $0x8080808080808080
DATA signbit8<>+16(SB)/8, $0x8080808080808080
DATA signbit8<>+24(SB)/8, $0x8080808080808080
GLOBL signbit8<>(SB), RODATA|NOPTR, $32

DATA pairperm<>+0(SB)/4, $0
DATA pairperm<>+4(SB)/4, $4
DATA pairperm<>+8(SB)/4, $1
DATA pairperm<>+12(SB)/4, $5
DATA pairperm<>+16(SB)/4, $2
DATA pairperm<>+20(SB)/4, $6
DATA pairperm<>+24(SB)/4, $3
DATA pairperm<>+28(SB)/4, $7
GLOBL pairperm<>(SB), RODATA|NOPTR, $32

// The q4 kernels read activations in the permuted layout of
// qacts.permuteQ4 (DI): per four groups, their first halves then their
// second halves, which line up with 64 weight bytes split into low and
// high nibbles, so no weight shuffling is needed.

// Q4PAIR_AVX2 leaves in dst the int32 partial sums of two groups (32
// weight bytes at woff(SI)): lanes 0-3 the first group, 4-7 the second.
// Low- and high-nibble int16 pair sums (|.| <= 2·15·127) add without
// overflow before widening.
#define Q4PAIR_AVX2(woff, xlo, xhi, dst) \
	VMOVDQU woff(SI), Y0; \
	VPSRLW $4, Y0, Y1; \
	VPAND Y15, Y0, Y0; \
	VPAND Y15, Y1, Y1; \
	VPMADDUBSW xlo(DI), Y0, Y0; \
	VPMADDUBSW xhi(DI), Y1, Y1; \
	VPADDW Y1, Y0, Y0; \
	VPMADDWD Y14, Y0, dst

// Q4QUAD_VNNI leaves in dst the int32 partial sums of four groups (64
// weight bytes at woff(SI)): 128-bit lane k holds group k.
#define Q4QUAD_VNNI(woff, xlo, xhi, dst) \
	VMOVDQU64 woff(SI), Z0; \
	VPSRLW $4, Z0, Z1; \
	VPANDQ Z16, Z0, Z0; \
	VPANDQ Z16, Z1, Z1; \
	VPXORQ dst, dst, dst; \
	VPDPBUSD xlo(DI), Z0, dst; \
	VPDPBUSD xhi(DI), Z1, dst

// REDUCE_PAIRS sums Y2..Y5 (groups 0,1 | 2,3 | 4,5 | 6,7, four lanes
// each) into Y2 with lane k holding group k; Y12 holds pairperm.
#define REDUCE_PAIRS \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y5, Y4, Y4; \
	VPHADDD Y4, Y2, Y2; \
	VPERMD Y2, Y12, Y2

// Q8PAIR_VNNI: u = w+128 (sign bit flipped) is unsigned; Σ w·x = Σ u·x −
// 128·Σ x, corrected once per block. dst's 256-bit halves hold the two
// groups of the 64 weight bytes at off(SI).
#define Q8PAIR_VNNI(off, dst) \
	VPXORQ off(SI), Z17, Z0; \
	VPXORQ dst, dst, dst; \
	VPDPBUSD off(DI), Z0, dst

// Q8GROUP_AVX2: w·x as |w| · (x·sign(w)), the unsigned × signed form.
#define Q8GROUP_AVX2(off, dst) \
	VMOVDQU off(SI), Y0; \
	VMOVDQU off(DI), Y1; \
	VPABSB Y0, Y12; \
	VPSIGNB Y0, Y1, Y1; \
	VPMADDUBSW Y1, Y12, dst; \
	VPMADDWD Y14, dst, dst

// REDUCE8 sums the eight lanes of each of Y2..Y9 (groups 0..7) into Y2,
// lane k holding group k.
#define REDUCE8 \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y5, Y4, Y4; \
	VPHADDD Y7, Y6, Y6; \
	VPHADDD Y9, Y8, Y8; \
	VPHADDD Y4, Y2, Y2; \
	VPHADDD Y8, Y6, Y6; \
	VPERM2I128 $0x20, Y6, Y2, Y3; \
	VPERM2I128 $0x31, Y6, Y2, Y4; \
	VPADDD Y4, Y3, Y2

// COMBINE converts the block's group sums in Y2 and adds their scaled
// values to the accumulators in Y10, in the reference's order.
#define COMBINE \
	VCVTDQ2PS Y2, Y2; \
	VCVTPH2PS (DX), Y11; \
	VMULPS (R8), Y11, Y11; \
	VMULPS Y2, Y11, Y11; \
	VADDPS Y11, Y10, Y10

// XSUB subtracts (Σx of each group) << shift from the group sums in Y2.
#define XSUB(shift) \
	VMOVDQU (R9), Y11; \
	VPSLLD $shift, Y11, Y11; \
	VPSUBD Y11, Y2, Y2

// LOADARGS sets up orows weight rows against rows activation rows (each
// weight row meets every activation row while it is in L1):
// SI/DX walk the weight quants and scales (reset from R13/R14 per row),
// DI/R8/R9 the activation quants, scales and sums, CX counts blocks, AX
// the output accumulators, R10 rows; R11 and R12 step DI and R8/R9 from the
// end of one activation row's blocks to the start of the next.
#define LOADARGS \
	MOVQ w+0(FP), R13; \
	MOVQ ws+8(FP), R14; \
	MOVQ xq+16(FP), DI; \
	MOVQ xs+24(FP), R8; \
	MOVQ xsum+32(FP), R9; \
	MOVQ blocks+40(FP), BX; \
	MOVQ rows+48(FP), R10; \
	MOVQ cols+56(FP), R11; \
	MOVQ acc+72(FP), AX; \
	MOVQ R11, R12; \
	SHRQ $3, R12; \
	MOVQ BX, CX; \
	SHLQ $8, CX; \
	SUBQ CX, R11; \
	MOVQ BX, CX; \
	SHLQ $5, CX; \
	SUBQ CX, R12; \
	VMOVDQU nibmask<>(SB), Y15; \
	VMOVDQU ones16<>(SB), Y14; \
	VMOVDQU pairperm<>(SB), Y12

// NEXTWROW moves to the next weight row (its quants are wshift of cols
// bytes further on, its scales cols/16 bytes) and rewinds the activations,
// or falls through to finish after the last weight row.
#define NEXTWROW(wshift, row, finish) \
	DECQ orows+64(FP); \
	JEQ finish; \
	MOVQ cols+56(FP), CX; \
	SHRQ $wshift, CX; \
	ADDQ CX, R13; \
	MOVQ cols+56(FP), CX; \
	SHRQ $4, CX; \
	ADDQ CX, R14; \
	MOVQ xq+16(FP), DI; \
	MOVQ xs+24(FP), R8; \
	MOVQ xsum+32(FP), R9; \
	MOVQ rows+48(FP), R10; \
	JMP row

#define LOADZMASKS \
	VPBROADCASTQ nibmask<>(SB), Z16; \
	VPBROADCASTQ signbit8<>(SB), Z17

// ROWSTART begins the next activation row (or ends when none is left).
#define ROWSTART(done) \
	TESTQ R10, R10; \
	JEQ done; \
	MOVQ R13, SI; \
	MOVQ R14, DX; \
	MOVQ BX, CX; \
	VXORPS Y10, Y10, Y10

// ROWEND stores the row's accumulators and steps to the next row.
#define ROWEND(next) \
	VMOVUPS Y10, (AX); \
	ADDQ $32, AX; \
	ADDQ R11, DI; \
	ADDQ R12, R8; \
	ADDQ R12, R9; \
	DECQ R10; \
	JMP next

#define NEXTBLOCK(wstep) \
	ADDQ $wstep, SI; \
	ADDQ $16, DX; \
	ADDQ $256, DI; \
	ADDQ $32, R8; \
	ADDQ $32, R9; \
	DECQ CX

// func q4BlocksAVX2(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)
TEXT ·q4BlocksAVX2(SB), NOSPLIT, $0-80
	LOADARGS
q4avx2row:
	ROWSTART(q4avx2done)
	TESTQ CX, CX
	JEQ q4avx2end

// Weights stream once from memory: prefetch 1 KiB (eight blocks) ahead.
q4avx2loop:
	PREFETCHT0 1024(SI)
	PREFETCHT0 1088(SI)
	Q4PAIR_AVX2(0, 0, 64, Y2)
	Q4PAIR_AVX2(32, 32, 96, Y3)
	Q4PAIR_AVX2(64, 128, 192, Y4)
	Q4PAIR_AVX2(96, 160, 224, Y5)
	REDUCE_PAIRS
	XSUB(3)
	COMBINE
	NEXTBLOCK(128)
	JNE q4avx2loop

q4avx2end:
	ROWEND(q4avx2row)

q4avx2done:
	NEXTWROW(1, q4avx2row, q4avx2finish)

q4avx2finish:
	VZEROUPPER
	RET

// func q8BlocksAVX2(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)
TEXT ·q8BlocksAVX2(SB), NOSPLIT, $0-80
	LOADARGS
q8avx2row:
	ROWSTART(q8avx2done)
	TESTQ CX, CX
	JEQ q8avx2end

q8avx2loop:
	Q8GROUP_AVX2(0, Y2)
	Q8GROUP_AVX2(32, Y3)
	Q8GROUP_AVX2(64, Y4)
	Q8GROUP_AVX2(96, Y5)
	Q8GROUP_AVX2(128, Y6)
	Q8GROUP_AVX2(160, Y7)
	Q8GROUP_AVX2(192, Y8)
	Q8GROUP_AVX2(224, Y9)
	REDUCE8
	COMBINE
	NEXTBLOCK(256)
	JNE q8avx2loop

q8avx2end:
	ROWEND(q8avx2row)

q8avx2done:
	NEXTWROW(0, q8avx2row, q8avx2finish)

q8avx2finish:
	VZEROUPPER
	RET

// func q4BlocksVNNI(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)
TEXT ·q4BlocksVNNI(SB), NOSPLIT, $0-80
	LOADARGS
	LOADZMASKS
q4vnnirow:
	ROWSTART(q4vnnidone)
	TESTQ CX, CX
	JEQ q4vnniend

// Weights stream once from memory: prefetch 1 KiB (eight blocks) ahead.
q4vnniloop:
	PREFETCHT0 1024(SI)
	PREFETCHT0 1088(SI)
	Q4QUAD_VNNI(0, 0, 64, Z2)
	Q4QUAD_VNNI(64, 128, 192, Z4)
	VEXTRACTI64X4 $1, Z2, Y3
	VEXTRACTI64X4 $1, Z4, Y5
	REDUCE_PAIRS
	XSUB(3)
	COMBINE
	NEXTBLOCK(128)
	JNE q4vnniloop

q4vnniend:
	ROWEND(q4vnnirow)

q4vnnidone:
	NEXTWROW(1, q4vnnirow, q4vnnifinish)

q4vnnifinish:
	VZEROUPPER
	RET

// func q8BlocksVNNI(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)
TEXT ·q8BlocksVNNI(SB), NOSPLIT, $0-80
	LOADARGS
	LOADZMASKS
q8vnnirow:
	ROWSTART(q8vnnidone)
	TESTQ CX, CX
	JEQ q8vnniend

q8vnniloop:
	Q8PAIR_VNNI(0, Z2)
	Q8PAIR_VNNI(64, Z4)
	Q8PAIR_VNNI(128, Z6)
	Q8PAIR_VNNI(192, Z8)
	VEXTRACTI64X4 $1, Z2, Y3
	VEXTRACTI64X4 $1, Z4, Y5
	VEXTRACTI64X4 $1, Z6, Y7
	VEXTRACTI64X4 $1, Z8, Y9
	REDUCE8
	XSUB(7)
	COMBINE
	NEXTBLOCK(256)
	JNE q8vnniloop

q8vnniend:
	ROWEND(q8vnnirow)

q8vnnidone:
	NEXTWROW(0, q8vnnirow, q8vnnifinish)

q8vnnifinish:
	VZEROUPPER
	RET
