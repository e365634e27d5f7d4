//go:build !purego

package kernel

//go:noescape
func axpyAVX(a float64, x, y []float64)

// Axpy computes AxpyGo bit for bit: with AVX2 eight entries per iteration
// (axpyAVX: VMULPD then VADDPD per lane, no FMA).
func Axpy(a float64, x, y []float64) {
	if !UseAVX2 || len(x) < 4 {
		AxpyGo(a, x, y)
		return
	}
	if len(y) < len(x) {
		panic("kernel: Axpy: y shorter than x")
	}
	axpyAVX(a, x, y)
}
