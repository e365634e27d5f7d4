package pairwise

import "golang.org/x/sys/cpu"

// havePCG8 selects pcgFill8 (pcg_amd64.s), which needs AVX-512F and DQ.
var havePCG8 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// pcgFill8 runs eight PCG states side by side; see pcg_amd64.s.
//
//go:noescape
func pcgFill8(lanes *[16]uint64, dst []uint64, jump *[4]uint64)

// pcgDraw8 is pcgFill8 with Lemire's reduction for 2 ≤ n < 2³²; see
// pcg_amd64.s.
//
//go:noescape
func pcgDraw8(lanes *[16]uint64, dst []int, raw []uint64, jump *[4]uint64, n, limit uint64) int
