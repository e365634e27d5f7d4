package dp

import (
	"math"
	"testing"
)

// TestSplitGDPCertifies runs the split end to end with a stand-in
// training mechanism calibrated by CalibrateGaussian at (ε, δ_train) and
// checks that the combined certificate covers the request, and that the
// split spends the budget: the combined μ is within 0.2 % of μ* (the
// largest μ the request allows), so neither part was given less than the
// proof needs.
func TestSplitGDPCertifies(t *testing.T) {
	for _, c := range []struct {
		eps, delta, share float64
		d                 int
		train             GaussianPlan
	}{
		{1, 1.25e-4, 0.1, 24, GaussianPlan{Sensitivities: []float64{2}, Dim: 49, Coordinates: 49}},
		{0.5, 4e-4, 0.1, 19, GaussianPlan{Sensitivities: []float64{2, 2, 1}, Dim: 19}},
		{0.1, 1e-6, 0.3, 123, GaussianPlan{Sensitivities: []float64{0.01}, Dim: 123}},
		{2, 1e-5, 0.05, 8, GaussianPlan{Sensitivities: []float64{1, 1, 1, 1}, FailureDelta: 1e-7, Dim: 8}},
	} {
		coords := RangeCoordinates(c.d, RangeConfig{})
		muR, dt, ok, err := SplitGDP(c.eps, c.delta, c.share, coords)
		if err != nil || !ok {
			t.Fatalf("%+v: ok %v, err %v", c, ok, err)
		}
		if !(dt > 0 && dt < c.delta) {
			t.Fatalf("%+v: δ_train = %v", c, dt)
		}
		sig, cert, err := CalibrateGaussian(c.train, c.eps, dt)
		if err != nil || !cert.Covers(c.eps, dt) {
			t.Fatalf("%+v: training calibration %v %+v", c, err, cert)
		}
		x := make([][]float64, 3)
		for i := range x {
			x[i] = make([]float64, c.d)
		}
		r, err := EstimateRanges(3, c.d, table(x), RangeConfig{Mu: muR}, NewSeededNoise(1))
		if err != nil {
			t.Fatal(err)
		}
		coordsT := c.train.coordinates(sig)
		all, err := CertifyWithRanges(r, GaussianPlan{Sensitivities: c.train.Sensitivities, FailureDelta: c.train.FailureDelta}, sig, coordsT, c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if !all.Covers(c.eps, c.delta) {
			t.Errorf("%+v: the run certifies (%v, %v) at μ = %v, beyond the request", c, all.Epsilon, all.Delta, all.Mu)
		}
		inv, _ := AnalyticGaussianSigma(c.eps, c.delta, 1)
		if muStar := 1 / inv; all.Mu < 0.998*muStar || all.Mu > muStar {
			t.Errorf("%+v: combined μ = %v, want within 0.2 %% below μ* = %v", c, all.Mu, muStar)
		}
		// The μ-GDP split gives the ranges far more than basic
		// composition's share of ε and δ does.
		re, rd, _, _, err := SplitBudget(c.eps, c.delta, c.share)
		if err != nil {
			t.Fatal(err)
		}
		invB, _ := AnalyticGaussianSigma(re, rd, 1)
		if muR <= 1/invB {
			t.Errorf("%+v: μ_range = %v is not above basic composition's %v", c, muR, 1/invB)
		}
	}
}

// TestSplitGDPConvexity: the split is refused (ok false) when μ* is beyond
// the convexity bound μ*² ≤ 2(√(1 + ε²) − 1), and accepted just inside.
func TestSplitGDPConvexity(t *testing.T) {
	for _, eps := range []float64{0.1, 1, 3} {
		muC := math.Sqrt(2 * (math.Sqrt(1+eps*eps) - 1))
		for _, f := range []float64{0.9, 1.1} {
			delta := GaussianDPDelta(muC*f, eps) * 1.01 // μ* ≈ f·μc
			_, _, ok, err := SplitGDP(eps, delta, 0.1, 100)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (f < 1) {
				t.Errorf("ε = %v, μ* ≈ %v·μc: ok = %v", eps, f, ok)
			}
		}
	}
	for _, c := range [][3]float64{{0, 1e-5, 0.1}, {1, 0, 0.1}, {1, 1e-5, 1}, {1, 1e-5, math.NaN()}} {
		if _, _, _, err := SplitGDP(c[0], c[1], c[2], 10); err == nil {
			t.Errorf("SplitGDP%v: no error", c)
		}
	}
}

// TestCertifyWithRangesRefuses: too little training noise is caught.
func TestCertifyWithRangesRefuses(t *testing.T) {
	muR, dt, ok, err := SplitGDP(1, 1e-5, 0.1, RangeCoordinates(4, RangeConfig{}))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	x := [][]float64{{1, 2, 3, 4}}
	r, err := EstimateRanges(1, 4, table(x), RangeConfig{Mu: muR}, NewSeededNoise(1))
	if err != nil {
		t.Fatal(err)
	}
	plan := GaussianPlan{Sensitivities: []float64{2}, Dim: 4}
	sig, _, err := CalibrateGaussian(plan, 1, dt)
	if err != nil {
		t.Fatal(err)
	}
	sig[0] *= 0.9
	c, err := CertifyWithRanges(r, GaussianPlan{Sensitivities: plan.Sensitivities}, sig, 4, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if c.Covers(1, 1e-5) {
		t.Errorf("σ·0.9 in training still certified: %+v", c)
	}
	if _, err := CertifyWithRanges(r, GaussianPlan{Sensitivities: []float64{2}, Disjoint: true}, sig, 4, 1, 1e-5); err == nil {
		t.Error("disjoint training accepted")
	}
}
