#include "textflag.h"

// func prefetch(row []float64)
//
// PREFETCHT0 of every cache line of row: a hint, with no effect on
// results; it does not fault on any address.
TEXT ·prefetch(SB), NOSPLIT, $0-24
	MOVQ row_base+0(FP), AX
	MOVQ row_len+8(FP), CX
	LEAQ (AX)(CX*8), CX // end
	ANDQ $~63, AX       // the first line
loop:
	CMPQ AX, CX
	JGE  done
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  loop
done:
	RET

// func prefetchInt32(row []int32)
//
// prefetch for 4-byte elements.
TEXT ·prefetchInt32(SB), NOSPLIT, $0-24
	MOVQ row_base+0(FP), AX
	MOVQ row_len+8(FP), CX
	LEAQ (AX)(CX*4), CX // end
	ANDQ $~63, AX       // the first line
loop32:
	CMPQ AX, CX
	JGE  done32
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  loop32
done32:
	RET
