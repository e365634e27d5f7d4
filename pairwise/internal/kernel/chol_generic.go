//go:build !amd64 || purego

package kernel

// CholLower is CholLowerGo off amd64 and under purego.
func CholLower(l []float64, d int) bool { return CholLowerGo(l, d) }

// CholSolve is CholSolveGo off amd64 and under purego.
func CholSolve(l []float64, d int, x []float64) { CholSolveGo(l, d, x) }

// CopyNoNaN is CopyNoNaNGo off amd64 and under purego.
func CopyNoNaN(dst, src []float64) bool { return CopyNoNaNGo(dst, src) }

// MatVec4 is MatVec4Go off amd64 and under purego.
func MatVec4(w []float64, d int, x []float64, y *[4]float64) { MatVec4Go(w, d, x, y) }

// CholLowerRecip is CholLowerRecipGo off amd64 and under purego.
func CholLowerRecip(l []float64, d int) bool { return CholLowerRecipGo(l, d) }

// CholSolveRecip is CholSolveRecipGo off amd64 and under purego.
func CholSolveRecip(l []float64, d int, x []float64) { CholSolveRecipGo(l, d, x) }

// Axpy is AxpyGo off amd64 and under purego.
func Axpy(a float64, x, y []float64) { AxpyGo(a, x, y) }
