#include "textflag.h"

// Both kernels compute, per group of 32, the exact int32 sum of weight ×
// activation products, then combine groups in order exactly as the
// portable dotQ4Ref/dotQ8Ref do: sum += (f16→f32(wscale) · xscale) ·
// float32(isum), in scalar float32, so results are bit-identical.

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

// func dotQ4AVX2(w, ws *byte, xq *int8, xs *float32, xsum *int32, groups int) float32
TEXT ·dotQ4AVX2(SB), NOSPLIT, $0-52
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), DX
	MOVQ xq+16(FP), DI
	MOVQ xs+24(FP), R8
	MOVQ xsum+32(FP), R9
	MOVQ groups+40(FP), CX
	VMOVDQU nibmask<>(SB), Y15
	VMOVDQU ones16<>(SB), Y14
	VXORPS X6, X6, X6

q4loop:
	VMOVDQU (SI), X0            // 16 bytes: element j low nibble, j+16 high nibble
	VPSRLW $4, X0, X1
	VINSERTI128 $1, X1, Y0, Y0
	VPAND Y15, Y0, Y0           // 32 unsigned weights u = q+8, in element order
	VMOVDQU (DI), Y1            // 32 signed activations
	VPMADDUBSW Y1, Y0, Y2       // 16 × int16 pair sums u·x
	VPMADDWD Y14, Y2, Y2        // 8 × int32
	VEXTRACTI128 $1, Y2, X3
	VPADDD X3, X2, X2
	VPSHUFD $0x4e, X2, X3
	VPADDD X3, X2, X2
	VPSHUFD $0xb1, X2, X3
	VPADDD X3, X2, X2
	VMOVD X2, AX                // Σ u·x
	MOVL (R9), BX
	SHLL $3, BX
	SUBL BX, AX                 // Σ q·x = Σ u·x − 8·Σ x
	VCVTSI2SSL AX, X4, X4
	MOVWLZX (DX), BX
	VMOVD BX, X5
	VCVTPH2PS X5, X5
	VMULSS (R8), X5, X5         // wscale · xscale
	VMULSS X4, X5, X5
	VADDSS X5, X6, X6
	ADDQ $16, SI
	ADDQ $2, DX
	ADDQ $32, DI
	ADDQ $4, R8
	ADDQ $4, R9
	DECQ CX
	JNE q4loop

	VZEROUPPER
	MOVSS X6, ret+48(FP)
	RET

// func dotQ8AVX2(w, ws *byte, xq *int8, xs *float32, groups int) float32
TEXT ·dotQ8AVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), DX
	MOVQ xq+16(FP), DI
	MOVQ xs+24(FP), R8
	MOVQ groups+32(FP), CX
	VMOVDQU ones16<>(SB), Y14
	VXORPS X6, X6, X6

q8loop:
	VMOVDQU (SI), Y0            // 32 signed weights
	VMOVDQU (DI), Y1            // 32 signed activations
	VPABSB Y0, Y2               // |w|, unsigned
	VPSIGNB Y0, Y1, Y3          // x · sign(w)
	VPMADDUBSW Y3, Y2, Y4       // 16 × int16: |w|·x·sign(w) = w·x
	VPMADDWD Y14, Y4, Y4
	VEXTRACTI128 $1, Y4, X3
	VPADDD X3, X4, X4
	VPSHUFD $0x4e, X4, X3
	VPADDD X3, X4, X4
	VPSHUFD $0xb1, X4, X3
	VPADDD X3, X4, X4
	VMOVD X4, AX
	VCVTSI2SSL AX, X4, X4
	MOVWLZX (DX), BX
	VMOVD BX, X5
	VCVTPH2PS X5, X5
	VMULSS (R8), X5, X5
	VMULSS X4, X5, X5
	VADDSS X5, X6, X6
	ADDQ $32, SI
	ADDQ $2, DX
	ADDQ $32, DI
	ADDQ $4, R8
	DECQ CX
	JNE q8loop

	VZEROUPPER
	MOVSS X6, ret+40(FP)
	RET
