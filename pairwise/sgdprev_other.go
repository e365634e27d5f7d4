//go:build !amd64

package pairwise

// haveAVX2 is false off amd64: the loops run the Go functions.
var haveAVX2 = false

func diffDotAVX(w, a, b, pa, pb []float64) float64 { return diffDot(w, a, b) }

func updateFlushAVX(w, xi, xj, sum, prev []float64, a, pend, r, r2 float64) {
	updateFlush(w, xi, xj, a, r, r2, sum, prev, pend)
}

func prevStepAVX(p *prevStepArgs) bool { panic("pairwise: prevStepAVX without AVX2") }

func addRepeatAVX(sum, w []float64, m int) { addRepeat(sum, w, m) }
