//go:build !race

#include "textflag.h"

// func StoreRelease(addr *uint64, v uint64)
TEXT ·StoreRelease(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	addr+0(FP), AX
	MOVQ	v+8(FP), BX
	MOVQ	BX, (AX)
	RET
