package pairwise

import "golang.org/x/sys/cpu"

// logisticChunkAVX is logisticChunkSumsGo with four pairs per AVX
// instruction (fullgrad_amd64.s): the same per-pair operations (multiply,
// add 1, divide 4 by it, each correctly rounded, no FMA) and the same
// summation order, so the same bits (TestLogisticChunkAVXMatchesGo).
//
//go:noescape
func logisticChunkAVX(u, v, in, out []float64)

func init() {
	if cpu.X86.HasAVX {
		logisticChunkSums = logisticChunkChecked
	}
}

// logisticChunkChecked calls the assembly after the bounds checks Go would
// make: in as long as v, out as long as u (it panics otherwise: a
// programmer error).
func logisticChunkChecked(u, v, in, out []float64) {
	if len(in) < len(v) || len(out) < len(u) {
		panic("pairwise: logisticChunkSums: in shorter than v or out shorter than u")
	}
	logisticChunkAVX(u, v, in, out)
}
