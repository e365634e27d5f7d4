package dp

import (
	"errors"
	"math"
	"testing"
)

// exactRoundingTV computes TV(N_ℤ(0, s²), round(N(0, s²))) numerically:
// the discrete pmf normalized over |k| ≤ 60s (the rest has mass < 1e-700),
// the rounded pmf from erfc differences (accurate in relative terms on
// each tail), summed over the same range.
func exactRoundingTV(s float64) float64 {
	K := int(math.Ceil(60 * s))
	w := make([]float64, K+1)
	z := 0.0
	for k := 0; k <= K; k++ {
		w[k] = math.Exp(-float64(k*k) / (2 * s * s))
		if k == 0 {
			z += w[k]
		} else {
			z += 2 * w[k]
		}
	}
	r := s * math.Sqrt2
	tv := 0.0
	for k := 0; k <= K; k++ {
		var q float64
		if k == 0 {
			q = math.Erf(0.5 / r)
		} else {
			q = 0.5 * (math.Erfc((float64(k)-0.5)/r) - math.Erfc((float64(k)+0.5)/r))
		}
		d := math.Abs(w[k]/z - q)
		if k > 0 {
			d *= 2
		}
		tv += d
	}
	return tv / 2
}

// Lemma 1 of discrete_gdp.go, checked where it can be: the exact TV is
// below the bound for every cut n and below the closed form (≤ 1/s²) at
// small s, where the lemma claims it as much as at s = 2^46. The exact
// TV is also ≥ 0.005/s² (its leading term is ≈ 0.02/s²), so the
// computation is not vacuous and the lemma's rate is the right one.
func TestRoundingTVLemma(t *testing.T) {
	var ss []float64
	for s := 1; s <= 50; s++ {
		ss = append(ss, float64(s))
	}
	ss = append(ss, 1.37, 2.5, 7.31, 19.9, 33.3)
	for _, s := range ss {
		tv := exactRoundingTV(s)
		closed := roundingTVBound(s)
		if !(tv <= closed) || closed > 1/(s*s) {
			t.Fatalf("s = %v: exact TV %.6g, closed-form bound %.6g, 1/s² = %.6g", s, tv, closed, 1/(s*s))
		}
		if tv < 0.005/(s*s) {
			t.Fatalf("s = %v: exact TV %.6g is below 0.005/s²: the numerics are off", s, tv)
		}
		for _, n := range []float64{math.Ceil(2 * s * math.Sqrt(1+math.Log(s))), math.Ceil(4 * s), math.Ceil(8 * s), math.Ceil(36 * s)} {
			if b := roundingTVBoundCut(s, n); !(tv <= b) || b > closed*(1+1e-9) && n == math.Ceil(2*s*math.Sqrt(1+math.Log(s))) {
				t.Fatalf("s = %v, n = %v: exact TV %.6g, bound %.6g (closed form %.6g)", s, n, tv, b, closed)
			}
		}
	}
}

// The constants used by the certificate follow from the lemmas: the closed
// form decreases in s, so its value at s = 2^46 bounds every secure grid
// (s ∈ [2^46, 2^47)); SecureGaussianTV covers η_fp ≤ 1.50006·2^−53 plus it.
func TestSecureGaussianTVConstants(t *testing.T) {
	s0 := 0x1p46
	if b := roundingTVBound(s0); !(b+1e-280 <= RoundedGaussianTV) || b > 0.36/(s0*s0) {
		t.Fatalf("η_r(2^46) ≤ %.6g: not within RoundedGaussianTV = %v or 0.36/s²", b, RoundedGaussianTV)
	}
	if roundingTVBound(2*s0) > roundingTVBound(s0) {
		t.Fatal("the rounding bound is not largest at s = 2^46")
	}
	if b := roundingTVBoundCut(s0, math.Ceil(12*s0)); b+1e-280 > RoundedGaussianTV {
		t.Fatalf("η_r(2^46) with the cut at 12s: %.6g", b)
	}
	if fp := 1.50006 * 0x1p-53; !(fp+RoundedGaussianTV <= SecureGaussianTV) {
		t.Fatalf("η_fp + η_r = %.8g exceeds SecureGaussianTV = %v", fp+RoundedGaussianTV, SecureGaussianTV)
	}
}

// The certificate's δ includes the discrete-noise term: for the same μ,
// a plan that draws N secure coordinates certifies δ larger than the ideal
// continuous plan's by DiscreteDelta > 0, never more than the
// total-variation variant's (1 + e^ε)·N·η, and its ε at δ is not smaller.
// Dim per noised release is the default N.
func TestCertifyGaussianDiscreteTerm(t *testing.T) {
	sens := []float64{1, 1, 0, 1}
	sig := []float64{3, 3, 0, 3}
	for _, eps := range []float64{0.5, 1, 4, 12} {
		delta := 1e-5
		ideal, err := CertifyGaussian(GaussianPlan{Sensitivities: sens}, sig, eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		if ideal.DiscreteDelta != 0 {
			t.Fatalf("ideal plan has a discrete term %v", ideal.DiscreteDelta)
		}
		for _, n := range []int64{3 * 256, 2_560_000, 1e9} {
			c, err := CertifyGaussian(GaussianPlan{Sensitivities: sens, Coordinates: n}, sig, eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			tvTerm := DiscreteGaussianDelta(eps, n)
			if !(c.DiscreteDelta > 0) || c.DiscreteDelta > tvTerm+1e-12*c.Delta {
				t.Fatalf("ε=%g N=%d: discrete term %.6g, want in (0, %.6g]", eps, n, c.DiscreteDelta, tvTerm)
			}
			if !(c.Delta >= ideal.Delta+c.DiscreteDelta*(1-1e-9)) || c.Epsilon < ideal.Epsilon || c.Mu != ideal.Mu {
				t.Fatalf("ε=%g N=%d: certificate %+v vs ideal %+v", eps, n, c, ideal)
			}
		}
	}
	withDim, err := CertifyGaussian(GaussianPlan{Sensitivities: sens, Dim: 256}, sig, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := CertifyGaussian(GaussianPlan{Sensitivities: sens, Dim: 256, Coordinates: 3 * 256}, sig, 1, 1e-5)
	if err != nil || explicit != withDim {
		t.Fatalf("Dim 256 × 3 noised releases: %+v; explicit N = 768: %+v, %v", withDim, explicit, err)
	}
	// Disjoint parts: one release's coordinates, so a release calibrated
	// alone (e.g. at a site) gets exactly the σ it gets with the others.
	dis := GaussianPlan{Sensitivities: []float64{4, 1, 0.25}, Disjoint: true, Dim: 256}
	all, _, err := CalibrateGaussian(dis, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range dis.Sensitivities {
		one, _, err := CalibrateGaussian(GaussianPlan{Sensitivities: []float64{d}, Dim: 256}, 1, 1e-5)
		if err != nil || one[0] != all[i] {
			t.Fatalf("disjoint release %d: σ %v with the others, %v (%v) alone", i, all[i], one, err)
		}
	}
	c1, err1 := CertifyGaussian(dis, all, 1, 1e-5)
	c2, err2 := CertifyGaussian(GaussianPlan{Sensitivities: dis.Sensitivities, Disjoint: true, Dim: 256, Coordinates: 256}, all, 1, 1e-5)
	if err1 != nil || err2 != nil || c1 != c2 || !(c1.DiscreteDelta > 0) {
		t.Fatalf("disjoint default N: %+v (%v) vs N = 256: %+v (%v)", c1, err1, c2, err2)
	}
	if _, err := CertifyGaussian(GaussianPlan{Sensitivities: sens, Coordinates: -1}, sig, 1, 1e-5); !errors.Is(err, ErrInvalidAccounting) {
		t.Fatalf("negative coordinate count: err = %v", err)
	}
}

// Calibration with the discrete term still certifies the request and is
// minimal; at realistic sizes (10⁴ steps at d = 256, δ = 10⁻⁵) the term is
// below δ/1000 and moves σ by less than 1e-4 relative, and its rounding
// part alone ((1 + e^ε)·N·RoundedGaussianTV) is below 1e-20. A budget the
// term exhausts is refused.
func TestCalibrateGaussianDiscreteTerm(t *testing.T) {
	const steps, d = 10_000, 256
	delta := 1e-5
	plan := GaussianPlan{Sensitivities: []float64{1, 1, 1, 1}, Dim: d, Coordinates: steps * d}
	few := GaussianPlan{Sensitivities: plan.Sensitivities, Dim: d} // N = 4·d by default
	for _, eps := range []float64{0.5, 1, 2, 8, 30} {
		sig, c, err := CalibrateGaussian(plan, eps, delta)
		if err != nil {
			t.Fatalf("ε=%g: %v", eps, err)
		}
		if !c.Covers(eps, delta) || !(c.DiscreteDelta > 0) {
			t.Fatalf("ε=%g: certificate %+v", eps, c)
		}
		less, err := CertifyGaussian(plan, shrink(sig, 1e-9), eps, delta)
		if err != nil || less.Covers(eps, delta) {
			t.Fatalf("ε=%g: σ's 1e-9 smaller still certified (%+v, %v)", eps, less, err)
		}
		if eps <= 2 {
			if c.DiscreteDelta > delta/1000 {
				t.Fatalf("ε=%g: discrete term %.6g is not below δ/1000", eps, c.DiscreteDelta)
			}
			if r := (1 + math.Exp(eps)) * steps * d * RoundedGaussianTV; r > 1e-20 {
				t.Fatalf("ε=%g: rounding part %.3g ≥ 1e-20", eps, r)
			}
			s0, _, err := CalibrateGaussian(few, eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			if rel := sig[0]/s0[0] - 1; rel < -1e-12 || rel > 1e-4 {
				t.Fatalf("ε=%g: σ %.12g vs %.12g with 4·d coordinates (relative %.3g)", eps, sig[0], s0[0], rel)
			}
		}
	}
	_, _, err := CalibrateGaussian(GaussianPlan{Sensitivities: []float64{1}, Coordinates: 1e15}, 1, 1e-6)
	if !errors.Is(err, ErrInvalidAccounting) {
		t.Fatalf("N = 10¹⁵ at δ = 10⁻⁶: err = %v, want a refusal", err)
	}
}

// SecureGaussianTargets: with no secure coordinates the one target is the
// request less the failure probability; with n coordinates every target is
// stricter than that (ε₀ ≤ ε, δ₀ < δ − fail), the total-variation one by
// exactly its term, and a count whose term exhausts δ leaves none.
func TestSecureGaussianTargets(t *testing.T) {
	eps, delta, fail := 1.0, 1e-5, 1e-6
	ts := SecureGaussianTargets(eps, delta, fail, 0)
	if len(ts) != 1 || ts[0].Epsilon != eps || ts[0].Delta > delta-fail || ts[0].Delta < (delta-fail)*(1-1e-12) {
		t.Fatalf("n = 0: targets %+v", ts)
	}
	ts = SecureGaussianTargets(eps, delta, fail, 2_560_000)
	if len(ts) != 2 {
		t.Fatalf("n = 2.56e6: %d targets %+v, want the two variants", len(ts), ts)
	}
	tv := DiscreteGaussianDelta(eps, 2_560_000)
	if ts[0].Epsilon != eps || ts[0].Delta+tv+fail > delta || ts[0].Delta < (delta-fail-tv)*(1-1e-12) {
		t.Fatalf("total-variation target %+v, term %v", ts[0], tv)
	}
	if !(ts[1].Epsilon < eps) || eps-ts[1].Epsilon > 2*2_560_000*SecureGaussianLogRatio*(1+1e-9) || !(ts[1].Delta < delta-fail) {
		t.Fatalf("multiplicative target %+v", ts[1])
	}
	if ts := SecureGaussianTargets(eps, 1e-6, 0, 1e15); len(ts) != 0 {
		t.Fatalf("N = 10¹⁵ at δ = 10⁻⁶: targets %+v, want none", ts)
	}
}
