// The constants of exp32 (fused_exp.go) for the SIMD exponentials
// (fused_amd64.s, fused_arm64.s), in the order the kernels load them.

DATA expConsts<>+0(SB)/4, $0xc2ae0000  // expLo = -87
DATA expConsts<>+4(SB)/4, $0x42b00000  // expHi = 88
DATA expConsts<>+8(SB)/4, $0x3fb8aa3b  // expLog2e
DATA expConsts<>+12(SB)/4, $0x4b400000 // expMagic = 1.5·2^23
DATA expConsts<>+16(SB)/4, $0x3f318000 // expLn2Hi
DATA expConsts<>+20(SB)/4, $0xb95e8083 // expLn2Lo
DATA expConsts<>+24(SB)/4, $0x39500d01 // 1/5040
DATA expConsts<>+28(SB)/4, $0x3ab60b61 // 1/720
DATA expConsts<>+32(SB)/4, $0x3c088889 // 1/120
DATA expConsts<>+36(SB)/4, $0x3d2aaaab // 1/24
DATA expConsts<>+40(SB)/4, $0x3e2aaaab // 1/6
DATA expConsts<>+44(SB)/4, $0x3f000000 // 1/2
DATA expConsts<>+48(SB)/4, $0x3f800000 // 1
DATA expConsts<>+52(SB)/4, $0x3f800000 // 1
DATA expConsts<>+56(SB)/4, $0xb4c0007f // 127 - 0x4B400000 (mod 2^32)
GLOBL expConsts<>(SB), RODATA|NOPTR, $60
