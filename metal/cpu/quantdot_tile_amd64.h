// Shared steps of the q4 tile kernels (quantdot_tiled_amd64.s,
// quantdot_packed_amd64.s, quantdot_packed32_amd64.s).

// VNNI_TILE_ROW adds one activation row's share of a group to its lane
// accumulators: AX holds the row's 32 quants, (R9)(R10*1) its bias and
// (R8)(R10*1) its scale, R11 its lane-(g mod 8) accumulators; the group's
// unpacked weights are W0..W7 = Z16..Z23 and their scales Z12. Eight
// VPDPBUSD leave in lane i the exact Σ u·x − 8·Σx of weight row i; then
// lane i of (wscale · xscale) · float32(isum) is added to the accumulator
// (multiply and add separate, no FMA, as the portable reference).
#define VNNI_TILE_ROW \
	VPBROADCASTD  (R9)(R10*1), Z13; \
	VPDPBUSD.BCST 0(AX), Z16, Z13; \
	VPDPBUSD.BCST 4(AX), Z17, Z13; \
	VPDPBUSD.BCST 8(AX), Z18, Z13; \
	VPDPBUSD.BCST 12(AX), Z19, Z13; \
	VPDPBUSD.BCST 16(AX), Z20, Z13; \
	VPDPBUSD.BCST 20(AX), Z21, Z13; \
	VPDPBUSD.BCST 24(AX), Z22, Z13; \
	VPDPBUSD.BCST 28(AX), Z23, Z13; \
	VCVTDQ2PS     Z13, Z13; \
	VMULPS.BCST   (R8)(R10*1), Z12, Z14; \
	VMULPS        Z13, Z14, Z14; \
	VADDPS        (R11), Z14, Z14; \
	VMOVUPS       Z14, (R11)

// LANE_SUM writes to dst the 16 outputs of one activation row whose
// eight lane accumulators are at off(R11) + step·j, j < 8, summed in the
// reference order ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7)).
#define LANE_SUM(off, step, dst) \
	VMOVUPS off+0*step(R11), Z0; \
	VMOVUPS off+1*step(R11), Z1; \
	VMOVUPS off+2*step(R11), Z2; \
	VMOVUPS off+3*step(R11), Z3; \
	VMOVUPS off+4*step(R11), Z4; \
	VMOVUPS off+5*step(R11), Z5; \
	VMOVUPS off+6*step(R11), Z6; \
	VMOVUPS off+7*step(R11), Z7; \
	VADDPS  Z4, Z0, Z0; \
	VADDPS  Z6, Z2, Z2; \
	VADDPS  Z2, Z0, Z0; \
	VADDPS  Z5, Z1, Z1; \
	VADDPS  Z7, Z3, Z3; \
	VADDPS  Z3, Z1, Z1; \
	VADDPS  Z1, Z0, Z0; \
	VMOVUPS Z0, dst

// VNNI_TILE_SUM writes to (AX) the 16 outputs of the activation row whose
// eight lane accumulators start at R11, in the reference order.
#define VNNI_TILE_SUM LANE_SUM(0, 64, (AX))

// NIBBLES splits the four dword slices s0..s3 of a group (lane i: four
// bytes of weight row i) into w0..w3 (low nibbles) and w4..w7 (high
// nibbles); mask holds 0x0f in every byte.
#define NIBBLES(mask, s0, s1, s2, s3, w0, w1, w2, w3, w4, w5, w6, w7) \
	VPANDD mask, s0, w0; \
	VPSRLW $4, s0, w4; \
	VPANDD mask, w4, w4; \
	VPANDD mask, s1, w1; \
	VPSRLW $4, s1, w5; \
	VPANDD mask, w5, w5; \
	VPANDD mask, s2, w2; \
	VPSRLW $4, s2, w6; \
	VPANDD mask, w6, w6; \
	VPANDD mask, s3, w3; \
	VPSRLW $4, s3, w7; \
	VPANDD mask, w7, w7

// VNNI_UNPACK splits the four dword slices s0..s3 of a group into W0..W3
// = Z16..Z19 (low nibbles) and W4..W7 = Z20..Z23 (high nibbles); Z31
// holds 0x0f in every byte.
#define VNNI_UNPACK(s0, s1, s2, s3) \
	NIBBLES(Z31, s0, s1, s2, s3, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)

// AVX2_TILE_ROW is VNNI_TILE_ROW for tiles of eight weight rows in AVX2:
// W0..W7 = Y8..Y15, the rows' scales in Y4, lane accumulators at R11
// (32 bytes a slot). VPMADDUBSW and VPADDW form, per lane, int16 sums of
// byte pairs (each at most 2·15·127, eight of them below 2^15), which
// VPMADDWD by ones (a 32-byte constant of int16 1s) widens to the group's
// int32 sum; the bias then makes it Σ q·x.
#define AVX2_TILE_ROW(ones) \
	VPBROADCASTD 0(AX), Y2; \
	VPMADDUBSW   Y2, Y8, Y0; \
	VPBROADCASTD 4(AX), Y2; \
	VPMADDUBSW   Y2, Y9, Y1; \
	VPADDW       Y1, Y0, Y0; \
	VPBROADCASTD 8(AX), Y2; \
	VPMADDUBSW   Y2, Y10, Y1; \
	VPADDW       Y1, Y0, Y0; \
	VPBROADCASTD 12(AX), Y2; \
	VPMADDUBSW   Y2, Y11, Y1; \
	VPADDW       Y1, Y0, Y0; \
	VPBROADCASTD 16(AX), Y2; \
	VPMADDUBSW   Y2, Y12, Y1; \
	VPADDW       Y1, Y0, Y0; \
	VPBROADCASTD 20(AX), Y2; \
	VPMADDUBSW   Y2, Y13, Y1; \
	VPADDW       Y1, Y0, Y0; \
	VPBROADCASTD 24(AX), Y2; \
	VPMADDUBSW   Y2, Y14, Y1; \
	VPADDW       Y1, Y0, Y0; \
	VPBROADCASTD 28(AX), Y2; \
	VPMADDUBSW   Y2, Y15, Y1; \
	VPADDW       Y1, Y0, Y0; \
	VPMADDWD     ones, Y0, Y0; \
	VPBROADCASTD (R9)(R10*1), Y1; \
	VPADDD       Y1, Y0, Y0; \
	VCVTDQ2PS    Y0, Y0; \
	VBROADCASTSS (R8)(R10*1), Y1; \
	VMULPS       Y1, Y4, Y1; \
	VMULPS       Y0, Y1, Y1; \
	VADDPS       (R11), Y1, Y1; \
	VMOVUPS      Y1, (R11)

// AVX2_TILE_SUM writes to (AX) the eight outputs of the activation row
// whose eight lane accumulators start at R11, in the reference order.
#define AVX2_TILE_SUM \
	VMOVUPS (R11), Y0; \
	VMOVUPS 32(R11), Y1; \
	VMOVUPS 64(R11), Y2; \
	VMOVUPS 96(R11), Y3; \
	VMOVUPS 128(R11), Y4; \
	VMOVUPS 160(R11), Y5; \
	VMOVUPS 192(R11), Y6; \
	VMOVUPS 224(R11), Y7; \
	VADDPS  Y4, Y0, Y0; \
	VADDPS  Y6, Y2, Y2; \
	VADDPS  Y2, Y0, Y0; \
	VADDPS  Y5, Y1, Y1; \
	VADDPS  Y7, Y3, Y3; \
	VADDPS  Y3, Y1, Y1; \
	VADDPS  Y1, Y0, Y0; \
	VMOVUPS Y0, (AX)

// VPDPBUSD_VEX(d, w, a) is AVX-VNNI's VPDPBUSD Yd += Yw·Ya (unsigned bytes
// of Yw times signed bytes of Ya, four products a dword lane), in the VEX
// encoding the assembler does not produce: it knows only the EVEX one,
// which needs AVX-512 VL, where AVX-VNNI CPUs (Intel's from Alder Lake
// on, AMD's from Zen 5) run the VEX one.
#define VPDPBUSD_VEX(d, w, a) \
	BYTE $0xC4; \
	BYTE $(((1-((d>>3)&1))<<7) + 64 + ((1-((a>>3)&1))<<5) + 2); \
	BYTE $(((15-w)<<3) + 5); \
	BYTE $0x50; \
	BYTE $(0xC0 + ((d&7)<<3) + (a&7))

// PACKED_ARGS loads the many-row packed kernels' arguments: the weights
// (SI), groups (R14), the activations' quants, scales and biases (DI, R8,
// R9), the lane accumulators (R11, and R13 the slot of group 0) and the
// activation rows (R12); and sets BX to their prefetch lead:
// packedFarLead for up to farRows rows, else packedNearLead
// (kernels.packedLead).
#define PACKED_ARGS(farRows) \
	MOVQ    w+0(FP), SI; \
	MOVQ    groups+8(FP), R14; \
	MOVQ    xq+16(FP), DI; \
	MOVQ    xs+24(FP), R8; \
	MOVQ    xbias+32(FP), R9; \
	XORQ    R13, R13; \
	MOVQ    facc+64(FP), R11; \
	MOVQ    rows+56(FP), R12; \
	MOVQ    $const_packedNearLead, BX; \
	MOVQ    $const_packedFarLead, CX; \
	CMPQ    R12, $farRows; \
	CMOVQLE CX, BX

// PACKED_ROWS_START points the packed kernels' AX, R10, R11 and R12 at
// the first activation row's quants, scale and bias offset, and the
// group's lane accumulator slot (R13) of its accumulators.
#define PACKED_ROWS_START \
	MOVQ DI, AX; \
	XORQ R10, R10; \
	MOVQ facc+64(FP), R11; \
	ADDQ R13, R11; \
	MOVQ rows+56(FP), R12

// PACKED_NEXT_ROW steps them to the next activation row, whose
// accumulators are acc bytes on; R12 counts down.
#define PACKED_NEXT_ROW(acc) \
	ADDQ $32, AX; \
	ADDQ $4, R10; \
	ADDQ acc, R11; \
	DECQ R12

// PACKED_NEXT_GROUP steps the packed kernels past a group's block of
// bbytes bytes, its activations and their scales and biases, and R13 to
// the next group's lane accumulator slot (slot bytes on, modulo slots+1);
// R14 counts down.
#define PACKED_NEXT_GROUP(bbytes, slot, slots) \
	ADDQ bbytes, SI; \
	ADDQ xgstep+40(FP), DI; \
	MOVQ sgstep+48(FP), AX; \
	ADDQ AX, R8; \
	ADDQ AX, R9; \
	ADDQ slot, R13; \
	ANDQ slots, R13; \
	DECQ R14

// PACKED_SUMS_START points the packed kernels' R11, AX, R10 and R12 at
// the first activation row's lane accumulators and outputs.
#define PACKED_SUMS_START \
	MOVQ facc+64(FP), R11; \
	MOVQ out+72(FP), AX; \
	MOVQ ostride+80(FP), R10; \
	MOVQ rows+56(FP), R12

// PACKED_PREFETCH_Q4 asks for every line of the packed q4 group block
// (576 bytes) lead bytes past SI: the stream is sequential, but the
// hardware prefetchers alone leave a decode row (little work per byte)
// waiting on memory (one core read 12.9 GB/s of weights without this
// prefetch, 18-20 with it; distances of 1 to 16 KiB and the hint kinds T0,
// T1, T2 and NTA measured alike, a prefetch of every other line worse).
// lead is a register (R*1) holding the distance: packedNearLead in the
// row kernels, in the many-row ones what kernels.packedLead says for
// their rows (packed.go).
#define PACKED_PREFETCH_Q4(lead) \
	PREFETCHT0 (SI)(lead); \
	PREFETCHT0 64(SI)(lead); \
	PREFETCHT0 128(SI)(lead); \
	PREFETCHT0 192(SI)(lead); \
	PREFETCHT0 256(SI)(lead); \
	PREFETCHT0 320(SI)(lead); \
	PREFETCHT0 384(SI)(lead); \
	PREFETCHT0 448(SI)(lead); \
	PREFETCHT0 512(SI)(lead)

// PACKED_PREFETCH_Q8 is PACKED_PREFETCH_Q4 for a packed q8 group block
// (1088 bytes).
#define PACKED_PREFETCH_Q8(lead) \
	PACKED_PREFETCH_Q4(lead); \
	PREFETCHT0 576(SI)(lead); \
	PREFETCHT0 640(SI)(lead); \
	PREFETCHT0 704(SI)(lead); \
	PREFETCHT0 768(SI)(lead); \
	PREFETCHT0 832(SI)(lead); \
	PREFETCHT0 896(SI)(lead); \
	PREFETCHT0 960(SI)(lead); \
	PREFETCHT0 1024(SI)(lead)

// PACKED_Q8_SLICES loads a packed q8 group's sixteen slices at SI into
// Z16..Z23 (rows 0-15) and Z24..Z31 (rows 16-31).
#define PACKED_Q8_SLICES \
	VMOVDQU64 0(SI), Z16; \
	VMOVDQU64 64(SI), Z24; \
	VMOVDQU64 128(SI), Z17; \
	VMOVDQU64 192(SI), Z25; \
	VMOVDQU64 256(SI), Z18; \
	VMOVDQU64 320(SI), Z26; \
	VMOVDQU64 384(SI), Z19; \
	VMOVDQU64 448(SI), Z27; \
	VMOVDQU64 512(SI), Z20; \
	VMOVDQU64 576(SI), Z28; \
	VMOVDQU64 640(SI), Z21; \
	VMOVDQU64 704(SI), Z29; \
	VMOVDQU64 768(SI), Z22; \
	VMOVDQU64 832(SI), Z30; \
	VMOVDQU64 896(SI), Z23; \
	VMOVDQU64 960(SI), Z31
