package algo

// Test fixtures: copies of the engine's (package pairwise's test files),
// which this package cannot see.

import (
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
)

// toyAUC returns a seeded dataset whose positives are shifted by mu along
// feature 0: for mu ≥ 2 it is nearly separable by w = e_0.
func toyAUC(n, d int, mu float64, seed uint64) *pairwise.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		y[i] = -1
		if rng.Float64() < 0.4 {
			y[i] = 1
		}
		for k := 0; k < d; k++ {
			x[i*d+k] = rng.NormFloat64() * 0.3
		}
		if y[i] > 0 {
			x[i*d] += mu * 0.3
		}
		// keep ‖x‖ ≤ 1 as the loaders' clipping would
		var s float64
		for k := 0; k < d; k++ {
			s += x[i*d+k] * x[i*d+k]
		}
		if s > 1 {
			for k := 0; k < d; k++ {
				x[i*d+k] /= math.Sqrt(s)
			}
		}
	}
	return pairwise.NewDense(x, y, d)
}

// toSparse converts a dense dataset to CSR.
func toSparse(s *pairwise.Dataset) *pairwise.Dataset {
	out := &pairwise.Dataset{N: s.N, D: s.D, Y: append([]float64(nil), s.Y...), Ptr: make([]int, s.N+1)}
	for i := 0; i < s.N; i++ {
		for k, v := range s.Row(i) {
			if v != 0 {
				out.Idx = append(out.Idx, int32(k))
				out.Val = append(out.Val, v)
			}
		}
		out.Ptr[i+1] = len(out.Idx)
	}
	return out
}
