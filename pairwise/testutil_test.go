package pairwise

import "github.com/pairfed/pairfed/internal/toydata"

// toyAUC returns a seeded dataset whose positives are shifted by mu along
// feature 0 (toydata.AUC): for mu ≥ 2 it is nearly separable by w = e_0.
func toyAUC(n, d int, mu float64, seed uint64) *Dataset {
	x, y := toydata.AUC(n, d, mu, seed)
	return NewDense(x, y, d)
}

// toSparse converts a dense dataset to CSR.
func toSparse(s *Dataset) *Dataset {
	m := toydata.Sparse(s.X, s.N, s.D)
	return &Dataset{N: s.N, D: s.D, Y: append([]float64(nil), s.Y...), Ptr: m.Ptr, Idx: m.Idx, Val: m.Val}
}
