// Instruction encodings and shared steps of the NEON q4 tile kernels
// (quantdot_tiled_arm64.s, quantdot_packed_arm64.s). Instructions the Go
// assembler lacks are encoded with WORD.

// SDOT Vd.4S, Vn.16B, Vm.4B[i]
#define SDOTE(d, n, m, i) WORD $(0x4F80E000 | (((i)&1)<<21) | ((m)<<16) | (((i)>>1)<<11) | ((n)<<5) | (d))
// TRN1/TRN2 of 32-bit (S) and 64-bit (D) elements
#define TRN1S(d, n, m) WORD $(0x4E802800 | ((m)<<16) | ((n)<<5) | (d))
#define TRN2S(d, n, m) WORD $(0x4E806800 | ((m)<<16) | ((n)<<5) | (d))
#define TRN1D(d, n, m) WORD $(0x4EC02800 | ((m)<<16) | ((n)<<5) | (d))
#define TRN2D(d, n, m) WORD $(0x4EC06800 | ((m)<<16) | ((n)<<5) | (d))
// SUB Vd.16B, Vn.16B, Vm.16B
#define SUB16B(d, n, m) WORD $(0x6E208400 | ((m)<<16) | ((n)<<5) | (d))
// SCVTF Vd.4S, Vn.4S; FCVTL/FCVTL2 Vd.4S from the low/high four halves
#define SCVTF4S(d, n) WORD $(0x4E21D800 | ((n)<<5) | (d))
#define FCVTL(d, n) WORD $(0x0E217800 | ((n)<<5) | (d))
#define FCVTL2(d, n) WORD $(0x4E217800 | ((n)<<5) | (d))
// FMUL/FADD Vd.4S, Vn.4S, Vm.4S; FMULE: FMUL Vd.4S, Vn.4S, Vm.S[0]
#define FMUL4S(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FADD4S(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FMULE(d, n, m) WORD $(0x4F809000 | ((m)<<16) | ((n)<<5) | (d))
// EXT Vd.16B, Vn.16B, Vm.16B, #8; FADDP Sd, Vn.2S
#define EXT8(d, n, m) WORD $(0x6E004000 | ((m)<<16) | ((n)<<5) | (d))
#define FADDP2S(d, n) WORD $(0x7E30D800 | ((n)<<5) | (d))
// MOVI Vd.16B, #0
#define ZERO(d) WORD $(0x4F000400 | (d))

// NEON_TILE_ROW adds one activation row's share of a group to its lane
// accumulators: R16 walks the row's 32 quants, R17 its scales, R19 points
// at its lane-(g mod 8) accumulators (two registers, weight rows 0-3 and
// 4-7); the group's signed weights are in V16..V31 (lane i = weight row
// i; even registers rows 0-3, odd rows 4-7; V16.. low nibbles, V24.. high)
// and their scales in V9, V10. The integer sums run as four chains of four
// SDOT (V3, V4 the low nibbles', V14, V15 the high ones'), added at the
// end: integer sums are exact in any order, and with four SDOT pipes of
// a few cycles' latency, two chains of eight leave a group of few
// activation rows waiting on latency, as one chain of eight did the
// AVX-512 kernel (which two chains made 1.3-1.5× faster at 2-5 rows).
// Not yet timed on Apple silicon. The float part is the portable reference's:
// (wscale · xscale) · float32(isum) added to the accumulator, no FMA.
#define NEON_TILE_ROW \
	VLD1.P 32(R16), [V0.B16, V1.B16]; \
	ZERO(3); \
	ZERO(4); \
	ZERO(14); \
	ZERO(15); \
	SDOTE(3, 16, 0, 0); \
	SDOTE(4, 17, 0, 0); \
	SDOTE(3, 18, 0, 1); \
	SDOTE(4, 19, 0, 1); \
	SDOTE(3, 20, 0, 2); \
	SDOTE(4, 21, 0, 2); \
	SDOTE(3, 22, 0, 3); \
	SDOTE(4, 23, 0, 3); \
	SDOTE(14, 24, 1, 0); \
	SDOTE(15, 25, 1, 0); \
	SDOTE(14, 26, 1, 1); \
	SDOTE(15, 27, 1, 1); \
	SDOTE(14, 28, 1, 2); \
	SDOTE(15, 29, 1, 2); \
	SDOTE(14, 30, 1, 3); \
	SDOTE(15, 31, 1, 3); \
	VADD V14.S4, V3.S4, V3.S4; \
	VADD V15.S4, V4.S4, V4.S4; \
	SCVTF4S(3, 3); \
	SCVTF4S(4, 4); \
	FMOVS.P 4(R17), F2; \
	FMULE(5, 9, 2); \
	FMULE(6, 10, 2); \
	FMUL4S(5, 5, 3); \
	FMUL4S(6, 6, 4); \
	VLD1 (R19), [V12.S4, V13.S4]; \
	FADD4S(12, 12, 5); \
	FADD4S(13, 13, 6); \
	VST1 [V12.S4, V13.S4], (R19)

// NEON_TILE_SUM loads the eight lane accumulators of one activation row
// from R19 (stepping it on) and leaves in V16, V17 its eight outputs,
// summed in the reference order ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7)).
#define NEON_TILE_SUM \
	VLD1.P 64(R19), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	VLD1.P 64(R19), [V4.S4, V5.S4, V6.S4, V7.S4]; \
	VLD1.P 64(R19), [V8.S4, V9.S4, V10.S4, V11.S4]; \
	VLD1.P 64(R19), [V12.S4, V13.S4, V14.S4, V15.S4]; \
	FADD4S(16, 0, 8); \
	FADD4S(17, 1, 9); \
	FADD4S(18, 4, 12); \
	FADD4S(19, 5, 13); \
	FADD4S(16, 16, 18); \
	FADD4S(17, 17, 19); \
	FADD4S(20, 2, 10); \
	FADD4S(21, 3, 11); \
	FADD4S(22, 6, 14); \
	FADD4S(23, 7, 15); \
	FADD4S(20, 20, 22); \
	FADD4S(21, 21, 23); \
	FADD4S(16, 16, 20); \
	FADD4S(17, 17, 21)

// AND Vd.16B, Vn.16B, Vm.16B; USHR Vd.16B, Vn.16B, #4
#define AND16B(d, n, m) WORD $(0x4E201C00 | ((m)<<16) | ((n)<<5) | (d))
#define USHR4(d, n) WORD $(0x6F0C0400 | ((n)<<5) | (d))

// NIBBLES splits the packed bytes of register s into signed weights:
// V(lo) = (s & 15) − 8, V(hi) = (s >> 4) − 8 (V7 holds 15 and V11 8 in
// every byte; V4 is scratch).
#define NIBBLES(s, lo, hi) \
	AND16B(4, s, 7); \
	SUB16B(lo, 4, 11); \
	USHR4(4, s); \
	SUB16B(hi, 4, 11)
