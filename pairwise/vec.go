package pairwise

import (
	"math"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
)

// Small dense kernels. They are written as plain loops so the compiler can
// inline them into the per-pair step, which must not allocate.

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(a); i += 2 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
	}
	if i < len(a) {
		s0 += a[i] * b[i]
	}
	return s0 + s1
}

// diffDot returns wᵀ(a − b): the kernel package's Go reference, whose
// summation order the AVX kernel reproduces (one copy of the loop).
func diffDot(w, a, b []float64) float64 { return kernel.DiffDotGo(w, a, b) }

// axpy does y += a·x.
func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

func scale(a float64, x []float64) {
	for i := range x {
		x[i] *= a
	}
}

// Norm2 returns the Euclidean norm of x.
func Norm2(x []float64) float64 { return math.Sqrt(dot(x, x)) }

// Dot returns aᵀb.
func Dot(a, b []float64) float64 { return dot(a, b) }

// Axpy does y += a·x (len(y) ≥ len(x)).
func Axpy(a float64, x, y []float64) { axpy(a, x, y) }

// Scale does x *= a.
func Scale(a float64, x []float64) { scale(a, x) }
