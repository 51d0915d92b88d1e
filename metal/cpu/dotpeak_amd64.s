#include "textflag.h"
#include "quantdot_tile_amd64.h"

// The loops Backend.DotPeak times: twelve independent accumulators, so the
// rate is the instruction's throughput, not its latency.

// func dotPeakVNNI(iters int)
// Twelve VPDPBUSD on zmm an iteration: 12·64 multiply-adds.
TEXT ·dotPeakVNNI(SB), NOSPLIT, $0-8
	MOVQ   iters+0(FP), CX
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13

vnniloop:
	VPDPBUSD Z12, Z13, Z0
	VPDPBUSD Z12, Z13, Z1
	VPDPBUSD Z12, Z13, Z2
	VPDPBUSD Z12, Z13, Z3
	VPDPBUSD Z12, Z13, Z4
	VPDPBUSD Z12, Z13, Z5
	VPDPBUSD Z12, Z13, Z6
	VPDPBUSD Z12, Z13, Z7
	VPDPBUSD Z12, Z13, Z8
	VPDPBUSD Z12, Z13, Z9
	VPDPBUSD Z12, Z13, Z10
	VPDPBUSD Z12, Z13, Z11
	DECQ     CX
	JNE      vnniloop
	VZEROUPPER
	RET

// func dotPeakAVX2(iters int)
// Twelve VPMADDUBSW on ymm an iteration: 12·32 multiply-adds.
TEXT ·dotPeakAVX2(SB), NOSPLIT, $0-8
	MOVQ   iters+0(FP), CX
	VPXOR  Y12, Y12, Y12
	VPXOR  Y13, Y13, Y13

avx2loop:
	VPMADDUBSW Y12, Y13, Y0
	VPMADDUBSW Y12, Y13, Y1
	VPMADDUBSW Y12, Y13, Y2
	VPMADDUBSW Y12, Y13, Y3
	VPMADDUBSW Y12, Y13, Y4
	VPMADDUBSW Y12, Y13, Y5
	VPMADDUBSW Y12, Y13, Y6
	VPMADDUBSW Y12, Y13, Y7
	VPMADDUBSW Y12, Y13, Y8
	VPMADDUBSW Y12, Y13, Y9
	VPMADDUBSW Y12, Y13, Y10
	VPMADDUBSW Y12, Y13, Y11
	DECQ       CX
	JNE        avx2loop
	VZEROUPPER
	RET

// func dotPeakAVXVNNI(iters int)
// Twelve AVX-VNNI VPDPBUSD on ymm an iteration (VPDPBUSD_VEX,
// quantdot_tile_amd64.h): 12·32 multiply-adds.
TEXT ·dotPeakAVXVNNI(SB), NOSPLIT, $0-8
	MOVQ  iters+0(FP), CX
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13

avxvnniloop:
	VPDPBUSD_VEX(0, 13, 12)
	VPDPBUSD_VEX(1, 13, 12)
	VPDPBUSD_VEX(2, 13, 12)
	VPDPBUSD_VEX(3, 13, 12)
	VPDPBUSD_VEX(4, 13, 12)
	VPDPBUSD_VEX(5, 13, 12)
	VPDPBUSD_VEX(6, 13, 12)
	VPDPBUSD_VEX(7, 13, 12)
	VPDPBUSD_VEX(8, 13, 12)
	VPDPBUSD_VEX(9, 13, 12)
	VPDPBUSD_VEX(10, 13, 12)
	VPDPBUSD_VEX(11, 13, 12)
	DECQ CX
	JNE  avxvnniloop
	VZEROUPPER
	RET
