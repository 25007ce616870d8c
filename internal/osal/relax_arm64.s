#include "textflag.h"

// func Relax()
// ISB stalls the pipeline for tens of cycles, like x86's PAUSE; YIELD is a
// no-op on most cores.
TEXT ·Relax(SB), NOSPLIT|NOFRAME, $0-0
	ISB	$15
	RET
