#include "textflag.h"

// func prefetch(p *uint16, n int)
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD n+8(FP), R1
	ADD  R0, R1, R1

line:
	CMP  R1, R0
	BHS  done
	PRFM (R0), PLDL1KEEP
	ADD  $64, R0
	B    line

done:
	RET
