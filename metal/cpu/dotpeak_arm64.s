#include "textflag.h"

// The loop Backend.DotPeak times: twelve independent accumulators, so the
// rate is the instruction's throughput, not its latency.

// SDOT Vd.4S, Vn.16B, Vm.16B
#define SDOT4S(d, n, m) WORD $(0x4E809400 | ((m)<<16) | ((n)<<5) | (d))

// func dotPeakSDOT(iters int)
// Twelve SDOT an iteration: 12·16 multiply-adds.
TEXT ·dotPeakSDOT(SB), NOSPLIT, $0-8
	MOVD iters+0(FP), R0
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16

sdotloop:
	SDOT4S(0, 12, 13)
	SDOT4S(1, 12, 13)
	SDOT4S(2, 12, 13)
	SDOT4S(3, 12, 13)
	SDOT4S(4, 12, 13)
	SDOT4S(5, 12, 13)
	SDOT4S(6, 12, 13)
	SDOT4S(7, 12, 13)
	SDOT4S(8, 12, 13)
	SDOT4S(9, 12, 13)
	SDOT4S(10, 12, 13)
	SDOT4S(11, 12, 13)
	SUB  $1, R0, R0
	CBNZ R0, sdotloop
	RET
