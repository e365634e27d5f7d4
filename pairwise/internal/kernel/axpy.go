package kernel

// AxpyGo is Axpy's reference: y[i] += a·x[i] for i < len(x) (len(y) ≥
// len(x)), each entry y_i + fl(a·x_i) rounded once more (pairwise's axpy).
func AxpyGo(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}
