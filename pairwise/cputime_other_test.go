//go:build !unix

package pairwise

func cpuNanos() int64 { return 0 }
