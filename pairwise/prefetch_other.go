//go:build !amd64

package pairwise

// prefetch is a no-op on platforms without the assembly hint.
func prefetch(row []float64) {}

// prefetchInt32 is a no-op on platforms without the assembly hint.
func prefetchInt32(row []int32) {}
