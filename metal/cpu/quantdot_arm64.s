#include "textflag.h"

// NEON blocked q4/q8 kernels: per group of 32, SDOT forms four exact int32
// partial sums; eight groups are reduced with ADDP into two registers
// (groups 0-3 and 4-7), and the float part runs four lanes at a time with
// separate multiplies and adds (never FMLA):
//     acc[k] += (f16→f32(wscale[k]) · xscale[k]) · float32(isum[k])
// exactly the portable reference order (quantdot.go). Instructions the Go
// assembler lacks are encoded with WORD; all operate on 128-bit registers.

// SDOT Vd.4S, Vn.16B, Vm.16B
#define SDOT(d, n, m) WORD $(0x4E809400 | ((m)<<16) | ((n)<<5) | (d))
// ADDP Vd.4S, Vn.4S, Vm.4S: pairwise sums of the concatenation n:m
#define ADDP4S(d, n, m) WORD $(0x4EA0BC00 | ((m)<<16) | ((n)<<5) | (d))
// SCVTF Vd.4S, Vn.4S
#define SCVTF4S(d, n) WORD $(0x4E21D800 | ((n)<<5) | (d))
// FCVTL Vd.4S, Vn.4H (low four halves) and FCVTL2 (high four)
#define FCVTL(d, n) WORD $(0x0E217800 | ((n)<<5) | (d))
#define FCVTL2(d, n) WORD $(0x4E217800 | ((n)<<5) | (d))
// FMUL/FADD Vd.4S, Vn.4S, Vm.4S
#define FMUL4S(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FADD4S(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
// SHL Vd.4S, Vn.4S, #sh
#define SHL4S(d, n, sh) WORD $(0x4F205400 | ((sh)<<16) | ((n)<<5) | (d))
// SUB Vd.4S, Vn.4S, Vm.4S
#define SUB4S(d, n, m) WORD $(0x6EA08400 | ((m)<<16) | ((n)<<5) | (d))
// MOVI Vd.16B, #0 (via EOR-free zeroing)
#define ZERO(d) WORD $(0x4F000400 | (d))

// Q8GROUP: group sums into V<g> from 32 weight and 32 activation bytes.
#define Q8GROUP(g) \
	VLD1.P 32(R9), [V16.B16, V17.B16]; \
	VLD1.P 32(R2), [V18.B16, V19.B16]; \
	ZERO(g); \
	SDOT(g, 16, 18); \
	SDOT(g, 17, 19)

// Q4GROUP: low nibbles are elements 0-15, high nibbles 16-31; both fit
// signed bytes, so SDOT takes them as they are.
#define Q4GROUP(g) \
	VLD1.P 16(R9), [V16.B16]; \
	VAND V30.B16, V16.B16, V17.B16; \
	VUSHR $4, V16.B16, V18.B16; \
	VLD1.P 32(R2), [V19.B16, V20.B16]; \
	ZERO(g); \
	SDOT(g, 17, 19); \
	SDOT(g, 18, 20)

// REDUCE: V10 = group sums 0-3, V13 = group sums 4-7.
#define REDUCE \
	ADDP4S(8, 0, 1); \
	ADDP4S(9, 2, 3); \
	ADDP4S(10, 8, 9); \
	ADDP4S(11, 4, 5); \
	ADDP4S(12, 6, 7); \
	ADDP4S(13, 11, 12)

// XSUB3: subtract 8·Σx per group (q4 offset correction).
#define XSUB3 \
	VLD1.P 32(R4), [V14.S4, V15.S4]; \
	SHL4S(14, 14, 3); \
	SHL4S(15, 15, 3); \
	SUB4S(10, 10, 14); \
	SUB4S(13, 13, 15)

// COMBINE: acc lanes 0-3 (V28) and 4-7 (V29) += (ws·xs)·float(isum).
#define COMBINE \
	SCVTF4S(10, 10); \
	SCVTF4S(13, 13); \
	VLD1.P 16(R10), [V25.B16]; \
	FCVTL(21, 25); \
	FCVTL2(22, 25); \
	VLD1.P 32(R3), [V23.S4, V24.S4]; \
	FMUL4S(21, 21, 23); \
	FMUL4S(22, 22, 24); \
	FMUL4S(21, 21, 10); \
	FMUL4S(22, 22, 13); \
	FADD4S(28, 28, 21); \
	FADD4S(29, 29, 22)

// LOADARGS: R0/R1 weight row quants/scales (R9/R10 walk them per row),
// R2/R3/R4 activation quants/scales/sums, R5 blocks, R6 rows, R8 acc;
// R11 and R12 step R2 and R3/R4 from the end of a row's blocks to the next
// row.
#define LOADARGS \
	MOVD w+0(FP), R0; \
	MOVD ws+8(FP), R1; \
	MOVD xq+16(FP), R2; \
	MOVD xs+24(FP), R3; \
	MOVD xsum+32(FP), R4; \
	MOVD blocks+40(FP), R5; \
	MOVD rows+48(FP), R6; \
	MOVD cols+56(FP), R7; \
	MOVD orows+64(FP), R14; \
	MOVD acc+72(FP), R8; \
	LSL $8, R5, R11; \
	SUB R11, R7, R11; \
	LSR $3, R7, R12; \
	LSL $5, R5, R13; \
	SUB R13, R12, R12; \
	VMOVI $15, V30.B16

// NEXTWROW moves to the next weight row (quants cols>>wshift bytes on,
// scales cols/16) and rewinds the activations to the first row.
#define NEXTWROW(wshift) \
	LSR $wshift, R7, R15; \
	ADD R15, R0, R0; \
	LSR $4, R7, R15; \
	ADD R15, R1, R1; \
	MOVD xq+16(FP), R2; \
	MOVD xs+24(FP), R3; \
	MOVD xsum+32(FP), R4; \
	MOVD rows+48(FP), R6

#define ROWSTART(done) \
	CBZ R6, done; \
	MOVD R0, R9; \
	MOVD R1, R10; \
	MOVD R5, R13; \
	ZERO(28); \
	ZERO(29)

#define ROWEND(next) \
	VST1.P [V28.S4, V29.S4], 32(R8); \
	ADD R11, R2, R2; \
	ADD R12, R3, R3; \
	ADD R12, R4, R4; \
	SUB $1, R6, R6; \
	B next

// func q4BlocksNEON(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)
TEXT ·q4BlocksNEON(SB), NOSPLIT, $0-80
	LOADARGS

q4row:
	ROWSTART(q4done)
	CBZ R13, q4end

q4loop:
	Q4GROUP(0)
	Q4GROUP(1)
	Q4GROUP(2)
	Q4GROUP(3)
	Q4GROUP(4)
	Q4GROUP(5)
	Q4GROUP(6)
	Q4GROUP(7)
	REDUCE
	XSUB3
	COMBINE
	SUB $1, R13, R13
	CBNZ R13, q4loop

q4end:
	ROWEND(q4row)

q4done:
	SUB $1, R14, R14
	CBZ R14, q4finish
	NEXTWROW(1)
	B q4row

q4finish:
	RET

// func q8BlocksNEON(w, ws *byte, xq *int8, xs *float32, xsum *int32, blocks, rows, cols, orows int, acc *laneAcc)
TEXT ·q8BlocksNEON(SB), NOSPLIT, $0-80
	LOADARGS

q8row:
	ROWSTART(q8done)
	CBZ R13, q8end

q8loop:
	Q8GROUP(0)
	Q8GROUP(1)
	Q8GROUP(2)
	Q8GROUP(3)
	Q8GROUP(4)
	Q8GROUP(5)
	Q8GROUP(6)
	Q8GROUP(7)
	REDUCE
	ADD $32, R4, R4
	COMBINE
	SUB $1, R13, R13
	CBNZ R13, q8loop

q8end:
	ROWEND(q8row)

q8done:
	SUB $1, R14, R14
	CBZ R14, q8finish
	NEXTWROW(0)
	B q8row

q8finish:
	RET
