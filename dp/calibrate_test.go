package dp

import (
	"errors"
	"math"
	"testing"
)

// shrink returns the σ's scaled down by 1 − f.
func shrink(s []float64, f float64) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x * (1 - f)
	}
	return out
}

// CalibrateGaussian returns σ's that its certificate covers and that are
// minimal: 1e-9 less noise is no longer certified.
func TestCalibrateGaussianMinimalAndCertified(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan GaussianPlan
	}{
		{"one release", GaussianPlan{Sensitivities: []float64{0.3}}},
		{"ten sequential", GaussianPlan{Sensitivities: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}},
		{"sequential, uneven split", GaussianPlan{Sensitivities: []float64{1, 0.5, 0.25}, Split: []float64{1, 1, 1}}},
		{"disjoint", GaussianPlan{Sensitivities: []float64{4, 1, 0.25, 0}, Disjoint: true}},
		{"failure event", GaussianPlan{Sensitivities: []float64{2}, FailureDelta: 1e-4}},
		{"snapping allowance", GaussianPlan{Sensitivities: []float64{1, 1}, Dim: 1 << 20}},
	} {
		for _, eps := range []float64{0.1, 0.5, 1, 2, 8, 20} {
			delta := 1e-3
			sig, c, err := CalibrateGaussian(tc.plan, eps, delta)
			if err != nil {
				t.Fatalf("%s ε=%g: %v", tc.name, eps, err)
			}
			if !c.Covers(eps, delta) || c.Epsilon > eps || c.Delta > delta {
				t.Fatalf("%s ε=%g: certificate %+v does not cover the request", tc.name, eps, c)
			}
			again, err := CertifyGaussian(tc.plan, sig, eps, delta)
			if err != nil || again != c {
				t.Fatalf("%s ε=%g: re-certifying gives %+v, %v; want %+v", tc.name, eps, again, err, c)
			}
			less, err := CertifyGaussian(tc.plan, shrink(sig, 1e-9), eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			if less.Covers(eps, delta) {
				t.Fatalf("%s ε=%g: σ's 1e-9 smaller are still certified (%+v): calibration is not minimal", tc.name, eps, less)
			}
			for i, d := range tc.plan.Sensitivities {
				if (d == 0) != (sig[i] == 0) {
					t.Fatalf("%s: release %d has Δ = %v but σ = %v", tc.name, i, d, sig[i])
				}
			}
		}
	}
}

// The closed forms behind the calibration: one release matches
// AnalyticGaussianSigma; k equal sequential releases need √k times its σ;
// disjoint releases each need their own single-release σ.
func TestCalibrateGaussianClosedForms(t *testing.T) {
	eps, delta := 1.0, 1e-5
	one, err := AnalyticGaussianSigma(eps, delta, 1)
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*want }
	s, _, err := CalibrateGaussian(GaussianPlan{Sensitivities: []float64{1}}, eps, delta)
	if err != nil || !near(s[0], one) {
		t.Fatalf("one release: σ = %v, %v; want ≈ %v", s, err, one)
	}
	s, _, err = CalibrateGaussian(GaussianPlan{Sensitivities: []float64{1, 1, 1, 1}}, eps, delta)
	if err != nil || !near(s[0], 2*one) {
		t.Fatalf("4 releases: σ = %v, %v; want ≈ %v", s, err, 2*one)
	}
	s, _, err = CalibrateGaussian(GaussianPlan{Sensitivities: []float64{3, 1}, Disjoint: true}, eps, delta)
	if err != nil || !near(s[0], 3*one) || !near(s[1], one) {
		t.Fatalf("disjoint: σ = %v, %v; want ≈ [%v %v]", s, err, 3*one, one)
	}
}

// The classical calibration σ = Δ√(2 ln(1.25/δ))/ε is not certified at
// ε = 8 (the bug of issue 10), and δ ≤ failure δ cannot be calibrated.
func TestCertifyGaussianRefusesClassicalAtLargeEpsilon(t *testing.T) {
	eps, delta := 8.0, 1e-3
	classic := math.Sqrt(2*math.Log(1.25/delta)) / eps
	c, err := CertifyGaussian(GaussianPlan{Sensitivities: []float64{1}}, []float64{classic}, eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	if c.Covers(eps, delta) || !(c.Epsilon > eps) {
		t.Fatalf("classical σ at ε = 8 certified: %+v", c)
	}
	_, _, err = CalibrateGaussian(GaussianPlan{Sensitivities: []float64{1}, FailureDelta: delta}, eps, delta)
	if !errors.Is(err, ErrInvalidAccounting) {
		t.Fatalf("failure δ = δ: err = %v, want ErrInvalidAccounting", err)
	}
}

// Memoized calibration returns the same σ's as a fresh one, and callers
// own their copies.
func TestCalibrateGaussianMemoized(t *testing.T) {
	p := GaussianPlan{Sensitivities: []float64{1, 2}, Dim: 3}
	a, ca, err := CalibrateGaussian(p, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	a[0] = -1 // must not corrupt the memo
	b, cb, err := CalibrateGaussian(p, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	c, cc, err := calibrateGaussian(p, 1, 1e-5)
	if err != nil || b[0] != c[0] || b[1] != c[1] || cb != cc || ca != cc {
		t.Fatalf("memoized %v %+v, fresh %v %+v (%v)", b, cb, c, cc, err)
	}
}

// The memo of CalibrateGaussian keys every field of the plan: two plans
// that differ only in Coordinates (the discrete-noise δ term's N) must not
// share a result — the second would otherwise be certified for the
// first's, smaller, N.
func TestCalibrateGaussianMemoKeysCoordinates(t *testing.T) {
	small := GaussianPlan{Sensitivities: []float64{1}, Coordinates: 1}
	large := GaussianPlan{Sensitivities: []float64{1}, Coordinates: 1 << 40}
	s1, c1, err := CalibrateGaussian(small, 1, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	s2, c2, err := CalibrateGaussian(large, 1, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if !(s2[0] > s1[0]) || !(c2.DiscreteDelta > c1.DiscreteDelta) {
		t.Fatalf("N = 1: σ %v (discrete δ %g); N = 2⁴⁰: σ %v (discrete δ %g): the larger N must need more noise", s1, c1.DiscreteDelta, s2, c2.DiscreteDelta)
	}
	if c, err := CertifyGaussian(large, s2, 1, 1e-9); err != nil || !c.Covers(1, 1e-9) {
		t.Fatalf("the calibrated σ does not certify its own plan: %+v, %v", c, err)
	}
}
