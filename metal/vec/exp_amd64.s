#include "textflag.h"

// Eight copies of each constant of the exponential (exp.go) that the loop
// reads from memory; the others stay in registers.
DATA expln2hi<>+0(SB)/4, $0x3f318000
DATA expln2hi<>+4(SB)/4, $0x3f318000
DATA expln2hi<>+8(SB)/4, $0x3f318000
DATA expln2hi<>+12(SB)/4, $0x3f318000
DATA expln2hi<>+16(SB)/4, $0x3f318000
DATA expln2hi<>+20(SB)/4, $0x3f318000
DATA expln2hi<>+24(SB)/4, $0x3f318000
DATA expln2hi<>+28(SB)/4, $0x3f318000
GLOBL expln2hi<>(SB), RODATA|NOPTR, $32

DATA expln2lo<>+0(SB)/4, $0xb95e8083
DATA expln2lo<>+4(SB)/4, $0xb95e8083
DATA expln2lo<>+8(SB)/4, $0xb95e8083
DATA expln2lo<>+12(SB)/4, $0xb95e8083
DATA expln2lo<>+16(SB)/4, $0xb95e8083
DATA expln2lo<>+20(SB)/4, $0xb95e8083
DATA expln2lo<>+24(SB)/4, $0xb95e8083
DATA expln2lo<>+28(SB)/4, $0xb95e8083
GLOBL expln2lo<>(SB), RODATA|NOPTR, $32

DATA expc2<>+0(SB)/4, $0x3f000000
DATA expc2<>+4(SB)/4, $0x3f000000
DATA expc2<>+8(SB)/4, $0x3f000000
DATA expc2<>+12(SB)/4, $0x3f000000
DATA expc2<>+16(SB)/4, $0x3f000000
DATA expc2<>+20(SB)/4, $0x3f000000
DATA expc2<>+24(SB)/4, $0x3f000000
DATA expc2<>+28(SB)/4, $0x3f000000
GLOBL expc2<>(SB), RODATA|NOPTR, $32

DATA expc3<>+0(SB)/4, $0x3e2aaaab
DATA expc3<>+4(SB)/4, $0x3e2aaaab
DATA expc3<>+8(SB)/4, $0x3e2aaaab
DATA expc3<>+12(SB)/4, $0x3e2aaaab
DATA expc3<>+16(SB)/4, $0x3e2aaaab
DATA expc3<>+20(SB)/4, $0x3e2aaaab
DATA expc3<>+24(SB)/4, $0x3e2aaaab
DATA expc3<>+28(SB)/4, $0x3e2aaaab
GLOBL expc3<>(SB), RODATA|NOPTR, $32

DATA expc4<>+0(SB)/4, $0x3d2aaaab
DATA expc4<>+4(SB)/4, $0x3d2aaaab
DATA expc4<>+8(SB)/4, $0x3d2aaaab
DATA expc4<>+12(SB)/4, $0x3d2aaaab
DATA expc4<>+16(SB)/4, $0x3d2aaaab
DATA expc4<>+20(SB)/4, $0x3d2aaaab
DATA expc4<>+24(SB)/4, $0x3d2aaaab
DATA expc4<>+28(SB)/4, $0x3d2aaaab
GLOBL expc4<>(SB), RODATA|NOPTR, $32

DATA expc5<>+0(SB)/4, $0x3c088889
DATA expc5<>+4(SB)/4, $0x3c088889
DATA expc5<>+8(SB)/4, $0x3c088889
DATA expc5<>+12(SB)/4, $0x3c088889
DATA expc5<>+16(SB)/4, $0x3c088889
DATA expc5<>+20(SB)/4, $0x3c088889
DATA expc5<>+24(SB)/4, $0x3c088889
DATA expc5<>+28(SB)/4, $0x3c088889
GLOBL expc5<>(SB), RODATA|NOPTR, $32

DATA expc6<>+0(SB)/4, $0x3ab60b61
DATA expc6<>+4(SB)/4, $0x3ab60b61
DATA expc6<>+8(SB)/4, $0x3ab60b61
DATA expc6<>+12(SB)/4, $0x3ab60b61
DATA expc6<>+16(SB)/4, $0x3ab60b61
DATA expc6<>+20(SB)/4, $0x3ab60b61
DATA expc6<>+24(SB)/4, $0x3ab60b61
DATA expc6<>+28(SB)/4, $0x3ab60b61
GLOBL expc6<>(SB), RODATA|NOPTR, $32

DATA expbias<>+0(SB)/4, $0x0000007f
DATA expbias<>+4(SB)/4, $0x0000007f
DATA expbias<>+8(SB)/4, $0x0000007f
DATA expbias<>+12(SB)/4, $0x0000007f
DATA expbias<>+16(SB)/4, $0x0000007f
DATA expbias<>+20(SB)/4, $0x0000007f
DATA expbias<>+24(SB)/4, $0x0000007f
DATA expbias<>+28(SB)/4, $0x0000007f
GLOBL expbias<>(SB), RODATA|NOPTR, $32

// func expWeightsAsm(w, x *float32, n int, m, invT float32) float64
// ExpWeights over n floats (a multiple of 8), eight at a time, each
// operation expWeight's in the same order, separate VMULPS and VADDPS
// (no FMA), so every weight has its bits; weights whose power is below
// expMin (or NaN) are masked to +0. The sums: lanes 0-3 and 4-7 widened
// to float64 into Y8 and Y9, folded as ExpWeights says.
TEXT ·expWeightsAsm(SB), NOSPLIT, $0-40
	MOVQ         w+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	VBROADCASTSS invT+28(FP), Y14
	MOVL         $0xc2ae0000, AX // expMin
	MOVL         AX, X13
	VBROADCASTSS X13, Y13
	MOVL         $0x3fb8aa3b, AX // log2e
	MOVL         AX, X12
	VBROADCASTSS X12, Y12
	MOVL         $0x4b400000, AX // expRound
	MOVL         AX, X11
	VBROADCASTSS X11, Y11
	MOVL         $0x3f800000, AX // 1
	MOVL         AX, X10
	VBROADCASTSS X10, Y10
	VXORPD       Y8, Y8, Y8
	VXORPD       Y9, Y9, Y9
	XORQ         DX, DX

exploop:
	VMOVUPS   (SI)(DX*4), Y0
	VSUBPS    Y15, Y0, Y0        // x − m
	VMULPS    Y14, Y0, Y0        // d
	VCMPPS    $29, Y13, Y0, Y1   // d >= expMin (ordered: NaN fails)
	VMULPS    Y12, Y0, Y2
	VADDPS    Y11, Y2, Y2
	VSUBPS    Y11, Y2, Y2        // k
	VMULPS    expln2hi<>(SB), Y2, Y3
	VSUBPS    Y3, Y0, Y3         // r = d − k·ln2hi
	VMULPS    expln2lo<>(SB), Y2, Y4
	VSUBPS    Y4, Y3, Y3         // r −= k·ln2lo
	VMULPS    expc6<>(SB), Y3, Y4
	VADDPS    expc5<>(SB), Y4, Y4
	VMULPS    Y3, Y4, Y4
	VADDPS    expc4<>(SB), Y4, Y4
	VMULPS    Y3, Y4, Y4
	VADDPS    expc3<>(SB), Y4, Y4
	VMULPS    Y3, Y4, Y4
	VADDPS    expc2<>(SB), Y4, Y4
	VMULPS    Y3, Y4, Y4
	VADDPS    Y10, Y4, Y4
	VMULPS    Y3, Y4, Y4
	VADDPS    Y10, Y4, Y4
	VCVTPS2DQ Y2, Y5
	VPADDD    expbias<>(SB), Y5, Y5
	VPSLLD    $23, Y5, Y5
	VMULPS    Y5, Y4, Y4         // p·2^k
	VANDPS    Y1, Y4, Y4
	VMOVUPS   Y4, (DI)(DX*4)
	VCVTPS2PD X4, Y6
	VADDPD    Y6, Y8, Y8
	VEXTRACTF128 $1, Y4, X7
	VCVTPS2PD X7, Y7
	VADDPD    Y7, Y9, Y9
	ADDQ      $8, DX
	CMPQ      DX, CX
	JB        exploop

	VADDPD       Y9, Y8, Y8       // lanes (0+4), (1+5), (2+6), (3+7)
	VEXTRACTF128 $1, Y8, X9
	VADDPD       X9, X8, X8       // ((0+4)+(2+6)), ((1+5)+(3+7))
	VPERMILPD    $1, X8, X9
	VADDSD       X9, X8, X8
	VZEROUPPER
	MOVSD        X8, ret+32(FP)
	RET
