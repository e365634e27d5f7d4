// Package synth holds what the synthetic-data scripts (scripts/regret,
// scripts/fedpairrule) draw alike.
package synth

import (
	"math"
	"math/rand/v2"
)

// Orthonormal returns k+1 orthonormal vectors of length d drawn from rng
// by Gram–Schmidt on standard normal draws (a draw within 1e-8 of the
// span of the previous ones is redrawn). The draws are the scripts'
// recorded sequence: the same rng state gives the same vectors.
func Orthonormal(d, k int, rng *rand.Rand) [][]float64 {
	vecs := make([][]float64, k+1)
	for i := range vecs {
		v := make([]float64, d)
		for {
			for j := range v {
				v[j] = rng.NormFloat64()
			}
			for _, p := range vecs[:i] {
				c := 0.0
				for j := range v {
					c += v[j] * p[j]
				}
				for j := range v {
					v[j] += -c * p[j]
				}
			}
			nv := 0.0
			for _, x := range v {
				nv += x * x
			}
			if nv = math.Sqrt(nv); nv > 1e-8 {
				for j := range v {
					v[j] /= nv
				}
				break
			}
		}
		vecs[i] = v
	}
	return vecs
}

// Shuffle returns the n = len(y) records of x (row-major, d values each)
// and their labels in the order of one rng.Perm(n) (so that no algorithm
// sees the classes in blocks): record i of the result is record perm[i].
func Shuffle(x, y []float64, d int, rng *rand.Rand) (xs, ys []float64) {
	n := len(y)
	perm := rng.Perm(n)
	xs, ys = make([]float64, n*d), make([]float64, n)
	for i, p := range perm {
		copy(xs[i*d:(i+1)*d], x[p*d:(p+1)*d])
		ys[i] = y[p]
	}
	return xs, ys
}
