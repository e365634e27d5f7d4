package dpalgo

import (
	"math"
	"testing"

	"github.com/pairfed/pairfed/dp"
)

// The multiplier for given n, d and σ: κ = 2σ√d/n against
// κ* = 4/(√(3/4)·RecommendCentre), clamped to [1/4, 1].
func TestLDARidgeMultiplier(t *testing.T) {
	ref := 4 / (math.Sqrt(1-ldaCentreShare) * RecommendCentre) // ≈ 0.745
	if math.Abs(ref-ldaRidgeRef) > 1e-12 {
		t.Fatalf("κ* = %v, want 4/(√(3/4)·RecommendCentre) = %v", ldaRidgeRef, ref)
	}
	// n = 1000, d = 16: κ = 8σ/1000.
	for _, c := range []struct{ frac, want float64 }{
		{3, 1}, {1, 1}, {0.6, 0.6}, {0.5, 0.5}, {0.25, 0.25}, {0.1, 0.25},
	} {
		sigma := c.frac * ref * 1000 / 8
		if got := LDARidgeMultiplier(1000, 16, sigma); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("κ = %g·κ*: c = %v, want %v", c.frac, got, c.want)
		}
	}
}

// For a single site at (n, d, ε, δ) the multiplier is RecommendCentre/t,
// t = μn/√d, clamped: dp-lda's own calibration (LDAPlan) gives σ_B.
func TestLDARidgeMultiplierFromShape(t *testing.T) {
	for _, c := range []struct {
		n, d int
		eps  float64
	}{{614, 8, 1}, {8000, 256, 0.5}, {256, 64, 1}, {256, 256, 2}, {100, 100, 0.1}, {1437, 64, 0.5}} {
		delta := dp.DefaultDelta(c.n)
		sig, _, err := dp.CalibrateGaussian(LDAPlan(c.d), c.eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		mu, err := gaussianMu(c.eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		tt := mu * float64(c.n) / math.Sqrt(float64(c.d))
		want := math.Min(1, math.Max(0.25, RecommendCentre/tt))
		got := LDARidgeMultiplier(float64(c.n), c.d, sig[1])
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("n = %d, d = %d, ε = %g (t = %.3g): c = %.4g, want ≈ RecommendCentre/t = %.4g", c.n, c.d, c.eps, tt, got, want)
		}
	}
}

// LDALambda: the edge rule is SSPLambda; the scaled rule multiplies the
// edge term only, and at c = 1 is SSPLambda bit for bit.
func TestLDALambda(t *testing.T) {
	s := &SSPStats{D: 16, N: 1000, SumPos: make([]float64, 16), SumNeg: make([]float64, 16), Mom: make([]float64, 16*17/2)}
	R := 1.5
	for _, sigma := range []float64{200, 50, 5} {
		edge := SSPLambda(s, R, sigma)
		if got := LDALambda(s, R, sigma, LDARidgeEdge); got != edge {
			t.Errorf("σ = %g: edge rule %v, SSPLambda %v", sigma, got, edge)
		}
		c := LDARidgeMultiplier(s.N, s.D, sigma)
		got := LDALambda(s, R, sigma, LDARidgeScaled)
		if c == 1 && got != edge {
			t.Errorf("σ = %g: c = 1 but λ %v ≠ SSPLambda %v", sigma, got, edge)
		}
		want := c*(edge-1e-6*R*R) + 1e-6*R*R
		if math.Abs(got-want) > 1e-12*edge {
			t.Errorf("σ = %g: scaled λ = %v, want c·edge = %v (c = %v)", sigma, got, want, c)
		}
	}
}
