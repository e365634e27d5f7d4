package pairwise

// prefetch asks the CPU to bring row's cache lines into cache (PREFETCHT0,
// prefetch_amd64.s): a hint that never changes a result.
//
//go:noescape
func prefetch(row []float64)

// prefetchInt32 is prefetch for a row of CSR column indices.
//
//go:noescape
func prefetchInt32(row []int32)
