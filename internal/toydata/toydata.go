// Package toydata generates the small seeded datasets that the tests of
// the learning packages share (pairwise, algo, dpalgo), as plain arrays:
// it imports nothing of pairfed, so that package pairwise's own tests can
// use it as well as the packages built on it. Each caller wraps the
// arrays in its dataset type.
package toydata

import (
	"math"
	"math/rand/v2"
)

// AUC returns n records of d features (row-major) and their ±1 labels:
// about 40 % positives, shifted by mu·0.3 along feature 0, the rest
// N(0, 0.3²), every row scaled into the unit ball as the loaders' clipping
// would; for mu ≥ 2 it is nearly separable by e₀.
func AUC(n, d int, mu float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x = make([]float64, n*d)
	y = make([]float64, n)
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
	return x, y
}

// CSR is a sparse matrix in compressed rows: row i's columns are
// Idx[Ptr[i]:Ptr[i+1]], increasing, with values Val.
type CSR struct {
	Ptr []int
	Idx []int32
	Val []float64
}

// Sparse returns the nonzeros of the n×d row-major matrix x.
func Sparse(x []float64, n, d int) CSR {
	m := CSR{Ptr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		for k, v := range x[i*d : (i+1)*d] {
			if v != 0 {
				m.Idx = append(m.Idx, int32(k))
				m.Val = append(m.Val, v)
			}
		}
		m.Ptr[i+1] = len(m.Idx)
	}
	return m
}

// SparseAUC returns n records in d dimensions with nnz nonzeros per row,
// and their ±1 labels (a fraction pos positive): feature 0 always
// (shifted by 0.5 for positives), the others drawn with a skew toward low
// indices so that rows share coordinates; rows in the unit ball. It never
// builds the dense matrix.
func SparseAUC(n, d, nnz int, pos float64, seed uint64) (CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 77))
	m := CSR{Ptr: make([]int, n+1)}
	y := make([]float64, n)
	cols := make(map[int32]float64, nnz)
	for i := range n {
		y[i] = -1
		if rng.Float64() < pos {
			y[i] = 1
		}
		clear(cols)
		cols[0] = 0.3 * rng.NormFloat64()
		if y[i] > 0 {
			cols[0] += 0.5
		}
		for len(cols) < nnz {
			u := rng.Float64()
			c := 1 + int32(u*u*float64(d-1)) // skewed to low indices
			cols[c] = 0.3 * rng.NormFloat64()
		}
		var s float64
		for _, v := range cols {
			s += v * v
		}
		f := 1.0
		if s > 1 {
			f = 1 / math.Sqrt(s)
		}
		for c := int32(0); c < int32(d) && len(cols) > 0; c++ {
			if v, ok := cols[c]; ok {
				m.Idx = append(m.Idx, c)
				m.Val = append(m.Val, v*f)
				delete(cols, c)
			}
		}
		m.Ptr[i+1] = len(m.Idx)
	}
	return m, y
}
