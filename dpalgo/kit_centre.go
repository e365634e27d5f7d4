package dpalgo

import "github.com/pairfed/pairfed/pairwise"

// The private centre's release (dp-lda's release A, also dp-objpert's
// and fed-dp-lda's sites'): Σ x_i/R₀ with replace-one sensitivity 2, and
// the centre read from its noisy (possibly summed) value.

// LDACentreVector returns Σ x_i/R₀ over ds, release A's exact vector.
func LDACentreVector(ds *pairwise.Dataset, R0 float64) []float64 {
	v := make([]float64, ds.D)
	for i := 0; i < ds.N; i++ {
		ds.AddScaled(v, i, 1/R0)
	}
	return v
}

// LDACentre returns ĉ = R₀·v/n clamped into the R₀-ball, from a (noisy,
// possibly summed over sites) release A vector of n records.
func LDACentre(v []float64, n, R0 float64) []float64 {
	c := make([]float64, len(v))
	for j := range c {
		c[j] = v[j] * R0 / n
	}
	if nc := pairwise.Norm2(c); nc > R0 {
		pairwise.Scale(R0/nc, c)
	}
	return c
}
