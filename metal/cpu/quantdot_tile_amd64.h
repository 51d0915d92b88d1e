// Shared steps of the AVX-512 VNNI tile kernels (quantdot_tiled_amd64.s,
// quantdot_packed_amd64.s).

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

// VNNI_TILE_SUM writes to (AX) the 16 outputs of the activation row whose
// eight lane accumulators start at R11, summed in the reference order
// ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7)).
#define VNNI_TILE_SUM \
	VMOVUPS (R11), Z0; \
	VMOVUPS 64(R11), Z1; \
	VMOVUPS 128(R11), Z2; \
	VMOVUPS 192(R11), Z3; \
	VMOVUPS 256(R11), Z4; \
	VMOVUPS 320(R11), Z5; \
	VMOVUPS 384(R11), Z6; \
	VMOVUPS 448(R11), Z7; \
	VADDPS  Z4, Z0, Z0; \
	VADDPS  Z6, Z2, Z2; \
	VADDPS  Z2, Z0, Z0; \
	VADDPS  Z5, Z1, Z1; \
	VADDPS  Z7, Z3, Z3; \
	VADDPS  Z3, Z1, Z1; \
	VADDPS  Z1, Z0, Z0; \
	VMOVUPS Z0, (AX)

// VNNI_UNPACK splits the four dword slices s0..s3 of a group (lane i:
// four bytes of weight row i) into W0..W3 = Z16..Z19 (low nibbles) and
// W4..W7 = Z20..Z23 (high nibbles); Z31 holds 0x0f in every byte.
#define VNNI_UNPACK(s0, s1, s2, s3) \
	VPANDD Z31, s0, Z16; \
	VPSRLW $4, s0, Z20; \
	VPANDD Z31, Z20, Z20; \
	VPANDD Z31, s1, Z17; \
	VPSRLW $4, s1, Z21; \
	VPANDD Z31, Z21, Z21; \
	VPANDD Z31, s2, Z18; \
	VPSRLW $4, s2, Z22; \
	VPANDD Z31, Z22, Z22; \
	VPANDD Z31, s3, Z19; \
	VPSRLW $4, s3, Z23; \
	VPANDD Z31, Z23, Z23
