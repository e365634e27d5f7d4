//go:build !purego

#include "textflag.h"
#include "prefetch_amd64.h"

// func prefetch(row []float64)
//
// PREFETCHT0 of every cache line of row: a hint, with no effect on
// results; it does not fault on any address.
TEXT ·prefetch(SB), NOSPLIT, $0-24
	PREFETCH_LINES(row_base+0(FP), row_len+8(FP), 8, loop, done)
	RET

// func prefetchInt32(row []int32)
//
// prefetch for 4-byte elements.
TEXT ·prefetchInt32(SB), NOSPLIT, $0-24
	PREFETCH_LINES(row_base+0(FP), row_len+8(FP), 4, loop, done)
	RET
