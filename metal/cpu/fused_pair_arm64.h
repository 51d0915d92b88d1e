// The parts of the NEON two-head score loops (scoresPairNEON on widened
// keys, scoresPairHalfNEON on float16 ones, fused_arm64.s): four positions
// at a time over blocks×8 dimensions, head 0's sums in V0..V7 and head
// 1's in V8..V15 (two registers a position), the query blocks in
// V16..V19. Arguments: out0, out1, q0, q1, k, stride (bytes), groups,
// blocks, scale.
#define NP_ARGS \
	MOVD  out0+0(FP), R0; \
	MOVD  out1+8(FP), R1; \
	MOVD  k+32(FP), R2; \
	MOVD  stride+40(FP), R3; \
	MOVD  groups+48(FP), R4; \
	MOVD  blocks+56(FP), R5; \
	FMOVS scale+64(FP), F30

// ZERO8 zeroes V0..V7.
#define ZERO8 \
	ZERO(0); \
	ZERO(1); \
	ZERO(2); \
	ZERO(3); \
	ZERO(4); \
	ZERO(5); \
	ZERO(6); \
	ZERO(7)

// NP_GROUP starts four positions at R2 (rows R6..R9), R13 blocks to go.
#define NP_GROUP \
	MOVD R2, R6; \
	ADD  R3, R6, R7; \
	ADD  R3, R7, R8; \
	ADD  R3, R8, R9; \
	MOVD q0+16(FP), R10; \
	MOVD q1+24(FP), R11; \
	MOVD R5, R13; \
	ZERO8; \
	ZERO(8); \
	ZERO(9); \
	ZERO(10); \
	ZERO(11); \
	ZERO(12); \
	ZERO(13); \
	ZERO(14); \
	ZERO(15)

// NP_BLOCK adds one block of eight dimensions, each position's keys
// loaded by key (HKEY or FKEY).
#define NP_BLOCK(key) \
	VLD1.P 32(R10), [V16.S4, V17.S4]; \
	VLD1.P 32(R11), [V18.S4, V19.S4]; \
	key(R6, 0); \
	key(R7, 1); \
	key(R8, 2); \
	key(R9, 3)

// NP_PUT folds, scales and stores the group's eight scores, moves to the
// next four positions and counts R4 down.
#define NP_PUT \
	LANESUM(24, 0, 1, 28); \
	LANESUM(25, 2, 3, 29); \
	LANESUM(26, 4, 5, 28); \
	LANESUM(27, 6, 7, 29); \
	LANESUM(20, 8, 9, 28); \
	LANESUM(21, 10, 11, 29); \
	LANESUM(22, 12, 13, 28); \
	LANESUM(23, 14, 15, 29); \
	FMULS   F30, F24, F24; \
	FMULS   F30, F25, F25; \
	FMULS   F30, F26, F26; \
	FMULS   F30, F27, F27; \
	FMULS   F30, F20, F20; \
	FMULS   F30, F21, F21; \
	FMULS   F30, F22, F22; \
	FMULS   F30, F23, F23; \
	FMOVS.P F24, 4(R0); \
	FMOVS.P F25, 4(R0); \
	FMOVS.P F26, 4(R0); \
	FMOVS.P F27, 4(R0); \
	FMOVS.P F20, 4(R1); \
	FMOVS.P F21, 4(R1); \
	FMOVS.P F22, 4(R1); \
	FMOVS.P F23, 4(R1); \
	ADD     R3<<2, R2, R2; \
	SUB     $1, R4, R4
