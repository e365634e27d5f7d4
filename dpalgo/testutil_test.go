package dpalgo

// Test fixtures shared by the tests of this package: copies of the
// engine's (package pairwise's test files), which the external package
// cannot see.

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

// pairLoopGradient is the definition: the O(n²) loop over ordered pairs,
// each pair's gradient (AddGrad into a zeroed buffer) added to a
// compensated (Neumaier) sum, so that the reference itself carries no
// accumulated rounding: its error is ~2⁻⁵³ relative to the sum of the
// pair gradients' magnitudes.
func pairLoopGradient(obj pairwise.Objective, w []float64) []float64 {
	n := obj.Data().N
	p := obj.NumParams()
	sum, comp, tmp := make([]float64, p), make([]float64, p), make([]float64, p)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			clear(tmp)
			if !obj.AddGrad(tmp, w, i, j, 1) {
				continue
			}
			for k, v := range tmp {
				t := sum[k] + v
				if math.Abs(sum[k]) >= math.Abs(v) {
					comp[k] += (sum[k] - t) + v
				} else {
					comp[k] += (v - t) + sum[k]
				}
				sum[k] = t
			}
		}
	}
	inv := 1 / float64(n*(n-1))
	for k := range sum {
		sum[k] = (sum[k] + comp[k]) * inv
	}
	pairwise.Axpy(obj.Lambda(), w, sum)
	return sum
}

// sparseAUC is a seeded CSR dataset of n records in d dimensions with nnz
// nonzeros per row: feature 0 always (shifted for positives), the others
// drawn with a skew toward low indices so that rows share coordinates and
// updates overlap; rows in the unit ball. It never builds the dense matrix.
func sparseAUC(n, d, nnz int, pos float64, seed uint64) *pairwise.Dataset {
	rng := rand.New(rand.NewPCG(seed, 77))
	ds := &pairwise.Dataset{N: n, D: d, Y: make([]float64, n), Ptr: make([]int, n+1)}
	cols := make(map[int32]float64, nnz)
	for i := range n {
		ds.Y[i] = -1
		if rng.Float64() < pos {
			ds.Y[i] = 1
		}
		clear(cols)
		cols[0] = 0.3 * rng.NormFloat64()
		if ds.Y[i] > 0 {
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
				ds.Idx = append(ds.Idx, c)
				ds.Val = append(ds.Val, v*f)
				delete(cols, c)
			}
		}
		ds.Ptr[i+1] = len(ds.Idx)
	}
	return ds
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
