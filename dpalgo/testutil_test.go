package dpalgo

// Test fixtures shared by the tests of this package: the seeded toy
// datasets of internal/toydata in pairwise's types. The reference
// gradient is the engine's (pairwise.PairLoopGradient).

import (
	"math"

	"github.com/pairfed/pairfed/internal/toydata"
	"github.com/pairfed/pairfed/pairwise"
)

// toyAUC returns a seeded dataset whose positives are shifted by mu along
// feature 0 (toydata.AUC): for mu ≥ 2 it is nearly separable by w = e_0.
func toyAUC(n, d int, mu float64, seed uint64) *pairwise.Dataset {
	x, y := toydata.AUC(n, d, mu, seed)
	return pairwise.NewDense(x, y, d)
}

// toSparse converts a dense dataset to CSR.
func toSparse(s *pairwise.Dataset) *pairwise.Dataset {
	m := toydata.Sparse(s.X, s.N, s.D)
	return &pairwise.Dataset{N: s.N, D: s.D, Y: append([]float64(nil), s.Y...), Ptr: m.Ptr, Idx: m.Idx, Val: m.Val}
}

// sparseAUC is toydata.SparseAUC's CSR dataset.
func sparseAUC(n, d, nnz int, pos float64, seed uint64) *pairwise.Dataset {
	m, y := toydata.SparseAUC(n, d, nnz, pos, seed)
	return &pairwise.Dataset{N: n, D: d, Y: y, Ptr: m.Ptr, Idx: m.Idx, Val: m.Val}
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			return false
		}
	}
	return true
}

// diffDot returns wᵀ(a − b).
func diffDot(w, a, b []float64) float64 {
	var s float64
	for k, v := range w {
		s += v * (a[k] - b[k])
	}
	return s
}
