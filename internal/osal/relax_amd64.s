#include "textflag.h"

// func Relax()
TEXT ·Relax(SB), NOSPLIT|NOFRAME, $0-0
	PAUSE
	RET

