package pairwise

import "unsafe"

// prefetch asks the CPU to bring row's cache lines into cache (PREFETCHT0,
// prefetch_amd64.s): a hint that never changes a result.
//
//go:noescape
func prefetch(row []float64)

// prefetchInt32 is prefetch for a row of CSR column indices: the same
// bytes seen as ⌈len/2⌉ float64s (a hint; nothing is read as a value).
func prefetchInt32(row []int32) {
	if len(row) > 0 {
		prefetch(unsafe.Slice((*float64)(unsafe.Pointer(&row[0])), (len(row)+1)/2))
	}
}
