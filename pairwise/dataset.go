package pairwise

import (
	"fmt"
	"math"
)

// Dataset is a labelled sample S = {z_i = (x_i, y_i) : i ∈ [n]} held in memory,
// either dense (row-major X, len N·D) or sparse (CSR: Ptr, Idx, Val).
// Exactly one representation is set. Labels are ±1 (y = +1 is the positive
// class). The data package builds Datasets from files; everything in pairwise
// only reads them. Methods panic on out-of-range indices (programmer error);
// Validate reports data problems.
type Dataset struct {
	N, D int
	Y    []float64 // labels in {−1, +1}, len N

	X []float64 // dense row-major, len N·D; nil when sparse

	Ptr []int     // CSR row pointers, len N+1; nil when dense
	Idx []int32   // CSR column indices (0-based, strictly increasing per row)
	Val []float64 // CSR values
}

// NewDense returns a dense dataset over x (row-major n×d) and y. It does not copy.
func NewDense(x []float64, y []float64, d int) *Dataset {
	n := len(y)
	if len(x) != n*d {
		panic(fmt.Sprintf("pairwise: NewDense: len(x)=%d, want n·d=%d", len(x), n*d))
	}
	return &Dataset{N: n, D: d, Y: y, X: x}
}

// IsSparse reports whether the dataset uses the CSR representation.
func (s *Dataset) IsSparse() bool { return s.X == nil && s.Ptr != nil }

// Row returns the dense row i (a view, not a copy). It panics on sparse data.
func (s *Dataset) Row(i int) []float64 {
	if s.X == nil {
		panic("pairwise: Row on sparse dataset")
	}
	return s.X[i*s.D : (i+1)*s.D : (i+1)*s.D]
}

// SparseRow returns the indices and values of row i of a sparse dataset.
func (s *Dataset) SparseRow(i int) ([]int32, []float64) {
	a, b := s.Ptr[i], s.Ptr[i+1]
	return s.Idx[a:b], s.Val[a:b]
}

// Dot returns wᵀx_i.
func (s *Dataset) Dot(i int, w []float64) float64 {
	if s.X != nil {
		return dot(s.Row(i), w)
	}
	idx, val := s.SparseRow(i)
	var r float64
	for k, j := range idx {
		r += val[k] * w[j]
	}
	return r
}

// AddScaled does dst += a·x_i.
func (s *Dataset) AddScaled(dst []float64, i int, a float64) {
	if s.X != nil {
		axpy(a, s.Row(i), dst)
		return
	}
	idx, val := s.SparseRow(i)
	for k, j := range idx {
		dst[j] += a * val[k]
	}
}

// DenseRowTo writes x_i into dst (len D) and returns dst.
func (s *Dataset) DenseRowTo(dst []float64, i int) []float64 {
	if s.X != nil {
		copy(dst, s.Row(i))
		return dst
	}
	for k := range dst {
		dst[k] = 0
	}
	idx, val := s.SparseRow(i)
	for k, j := range idx {
		dst[j] = val[k]
	}
	return dst
}

// SqNorm returns ‖x_i‖².
func (s *Dataset) SqNorm(i int) float64 {
	if s.X != nil {
		r := s.Row(i)
		return dot(r, r)
	}
	_, val := s.SparseRow(i)
	return dot(val, val)
}

// MaxNorm returns max_i ‖x_i‖, the empirical feature radius.
func (s *Dataset) MaxNorm() float64 {
	var m float64
	for i := 0; i < s.N; i++ {
		m = math.Max(m, s.SqNorm(i))
	}
	return math.Sqrt(m)
}

// NumPositive returns the number of records with y = +1.
func (s *Dataset) NumPositive() int {
	c := 0
	for _, y := range s.Y {
		if y > 0 {
			c++
		}
	}
	return c
}

// Slice returns records [lo, hi) of s as a dataset sharing s's storage (no
// copy of any record; capacities cut, so an append cannot write into the
// rest). A CSR slice gets its own row pointers, rebased to start at 0. It
// panics unless 0 ≤ lo ≤ hi ≤ N (programmer error).
func (s *Dataset) Slice(lo, hi int) *Dataset {
	if lo < 0 || lo > hi || hi > s.N {
		panic(fmt.Sprintf("pairwise: Slice: records [%d, %d) of %d", lo, hi, s.N))
	}
	p := &Dataset{N: hi - lo, D: s.D, Y: s.Y[lo:hi:hi]}
	switch {
	case s.X != nil:
		p.X = s.X[lo*s.D : hi*s.D : hi*s.D]
	case s.Ptr != nil:
		a, b := s.Ptr[lo], s.Ptr[hi]
		p.Idx, p.Val = s.Idx[a:b:b], s.Val[a:b:b]
		p.Ptr = make([]int, hi-lo+1)
		for i := range p.Ptr {
			p.Ptr[i] = s.Ptr[lo+i] - a
		}
	}
	return p
}

// ToDense returns a dense copy (or s itself if already dense).
func (s *Dataset) ToDense() *Dataset {
	if s.X != nil {
		return s
	}
	out := &Dataset{N: s.N, D: s.D, Y: append([]float64(nil), s.Y...), X: make([]float64, s.N*s.D)}
	for i := 0; i < s.N; i++ {
		s.DenseRowTo(out.X[i*s.D:(i+1)*s.D], i)
	}
	return out
}

// Validate checks shapes, label values and finiteness, and returns an error
// naming the first offending record.
func (s *Dataset) Validate() error {
	if s.N <= 0 || s.D <= 0 {
		return fmt.Errorf("pairwise: empty dataset (n=%d, d=%d)", s.N, s.D)
	}
	if len(s.Y) != s.N {
		return fmt.Errorf("pairwise: %d labels for %d records", len(s.Y), s.N)
	}
	for i, y := range s.Y {
		if y != 1 && y != -1 {
			return fmt.Errorf("pairwise: record %d: label %v is not ±1", i, y)
		}
	}
	switch {
	case s.X != nil && s.Ptr != nil:
		return fmt.Errorf("pairwise: dataset has both dense and sparse storage")
	case s.X != nil:
		if len(s.X) != s.N*s.D {
			return fmt.Errorf("pairwise: dense storage has %d values, want %d", len(s.X), s.N*s.D)
		}
		for k, v := range s.X {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("pairwise: record %d feature %d is %v", k/s.D, k%s.D+1, v)
			}
		}
	case s.Ptr != nil:
		if len(s.Ptr) != s.N+1 || s.Ptr[0] != 0 || s.Ptr[s.N] != len(s.Idx) || len(s.Idx) != len(s.Val) {
			return fmt.Errorf("pairwise: inconsistent CSR storage")
		}
		for i := 0; i < s.N; i++ {
			if s.Ptr[i+1] < s.Ptr[i] {
				return fmt.Errorf("pairwise: record %d: decreasing row pointer", i)
			}
			idx, val := s.SparseRow(i)
			for k, j := range idx {
				if j < 0 || int(j) >= s.D || (k > 0 && j <= idx[k-1]) {
					return fmt.Errorf("pairwise: record %d: feature index %d out of order or outside [0,%d)", i, j, s.D)
				}
				if math.IsNaN(val[k]) || math.IsInf(val[k], 0) {
					return fmt.Errorf("pairwise: record %d feature %d is %v", i, j+1, val[k])
				}
			}
		}
	default:
		return fmt.Errorf("pairwise: dataset has no feature storage")
	}
	return nil
}
