package pairwise

import "golang.org/x/sys/cpu"

// haveAVX2 selects the AVX2 kernels of the sgd-prev step
// (sgdprev_amd64.s); without it the loops run the Go functions, which
// compute the same values.
var haveAVX2 = cpu.X86.HasAVX2

// diffDotAVX is diffDot(w, a, b), bit for bit (len(a), len(b) ≥ len(w)),
// after prefetching pa and pb.
//
//go:noescape
func diffDotAVX(w, a, b, pa, pb []float64) float64

// updateFlushAVX is updateFlush(w, xi, xj, a, r, r2, sum, prev, pend), bit
// for bit; xi, xj, sum and prev have length ≥ len(w).
//
//go:noescape
func updateFlushAVX(w, xi, xj, sum, prev []float64, a, pend, r, r2 float64)

// prevStepAVX is one active step of the hinge or square loss (score,
// step, update and projection; see sgdprev_amd64.s): it reports whether w
// changed.
//
//go:noescape
func prevStepAVX(p *prevStepArgs) bool

// addRepeatAVX is addRepeat(sum, w, m), bit for bit (m ≥ 1).
//
//go:noescape
func addRepeatAVX(sum, w []float64, m int)
