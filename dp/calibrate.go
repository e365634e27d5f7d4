package dp

import (
	"fmt"
	"math"
)

// Calibration of Gaussian releases by exact Gaussian-DP accounting: the one
// code path every Gaussian private algorithm (local and federated) uses to
// choose its σ's (CalibrateGaussian) and to state what given σ's certify
// (CertifyGaussian).
//
// A run's Gaussian releases are described by a GaussianPlan: the ℓ2
// sensitivity Δᵢ of each release under the run's neighbouring relation,
// how the noise is split among them (σᵢ = c·splitᵢ), whether they read
// disjoint parts of the records (parallel composition), and the failure
// probability δ_f of the event on which the Δᵢ hold (0 when they hold
// always). The guarantee certified for σ's is
//
//	μ = √Σᵢ (Δ'ᵢ/σᵢ)²   (sequential: [DRS19] Cor 3.3, exact for adaptive
//	                      composition of Gaussian mechanisms)
//	μ = maxᵢ Δ'ᵢ/σᵢ      (disjoint: a record changes one release, the others
//	                      are post-processing given the earlier outputs)
//
// μ-GDP is (ε, δ_μ(ε))-DP with δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
// ([DRS19] Cor 2.13, [BW18] Thm 8), and no smaller δ holds for Gaussian
// noise: the accounting is exact, not a bound. The failure event adds δ_f
// (conditioning on the sampling randomness, which is never released):
// the run is (ε, δ_μ(ε) + δ_f)-DP.
//
// Δ'ᵢ = Δᵢ + σᵢ·2⁻⁴⁶·√Dim is the sensitivity after the secure noise's
// snapping to its grid (noise.go: g ≤ σ·2⁻⁴⁶, SnappedL2Sensitivity); it
// is used when Dim > 0.
//
// CalibrateGaussian returns the smallest common scale c (up to a few ulps)
// for which the certificate covers the request: μ* is the largest μ with
// δ_μ(ε) ≤ δ − δ_f (AnalyticGaussianSigma with Δ = 1 gives 1/μ* rounded
// up), c follows in closed form, and the result is certified again by
// CertifyGaussian and raised by a few ulps until it passes — so whatever
// the floating-point rounding, the returned σ's are certified by the same
// function that reports them.

// GaussianPlan describes the Gaussian releases of one run.
type GaussianPlan struct {
	// Sensitivities are the ℓ2 sensitivities Δᵢ ≥ 0 (0: a release that
	// reads no record, e.g. a data-independent point).
	Sensitivities []float64
	// Split fixes the ratios of the noise, σᵢ = c·Split[i] (Split[i] > 0
	// wherever Δᵢ > 0); nil means σᵢ ∝ Δᵢ, i.e. every release gets the
	// same share μᵢ of the budget.
	Split []float64
	// Disjoint: release i reads only the i-th of disjoint, data-independent
	// parts of the records (parallel composition).
	Disjoint bool
	// FailureDelta is the probability (over secret randomness, independent
	// of the data) of the event on which the Δᵢ may fail; it is added to δ.
	FailureDelta float64
	// Dim is the number of noised coordinates per release (for the
	// snapping allowance); 0 skips the allowance.
	Dim int
}

// Certificate is what Gaussian noise certifies for a plan.
type Certificate struct {
	// Mu is the composed Gaussian-DP μ (the worst part for Disjoint).
	Mu float64 `json:"mu"`
	// Epsilon is the smallest ε certified at the requested δ (exact
	// accountant, rounded up); +Inf when δ ≤ FailureDelta.
	Epsilon float64 `json:"epsilon"`
	// Delta is the δ certified at the requested ε: δ_μ(ε) + FailureDelta,
	// rounded up.
	Delta float64 `json:"delta"`
}

// Covers reports whether the certificate gives (eps, delta)-DP: both the
// certified ε at δ and the certified δ at ε are within the request.
func (c Certificate) Covers(eps, delta float64) bool {
	return c.Epsilon <= eps && c.Delta <= delta
}

func (p GaussianPlan) check(sigmas []float64) error {
	if len(p.Sensitivities) == 0 {
		return acctErrorf("a Gaussian plan needs at least one release")
	}
	if p.Split != nil && len(p.Split) != len(p.Sensitivities) {
		return acctErrorf("plan has %d sensitivities but %d split weights", len(p.Sensitivities), len(p.Split))
	}
	if sigmas != nil && len(sigmas) != len(p.Sensitivities) {
		return acctErrorf("plan has %d sensitivities but %d σ's", len(p.Sensitivities), len(sigmas))
	}
	if !(p.FailureDelta >= 0 && p.FailureDelta < 1) {
		return acctErrorf("failure δ = %v must be in [0, 1)", p.FailureDelta)
	}
	if p.Dim < 0 {
		return acctErrorf("dimension %d must be ≥ 0", p.Dim)
	}
	for i, d := range p.Sensitivities {
		if !(d >= 0) || math.IsInf(d, 0) {
			return acctErrorf("release %d: sensitivity Δ = %v must be finite and ≥ 0", i+1, d)
		}
		if d == 0 {
			continue
		}
		if p.Split != nil && (!(p.Split[i] > 0) || math.IsInf(p.Split[i], 0)) {
			return acctErrorf("release %d: split weight %v must be finite and > 0", i+1, p.Split[i])
		}
		if sigmas != nil && (!(sigmas[i] > 0) || math.IsInf(sigmas[i], 0)) {
			return acctErrorf("release %d: σ = %v must be finite and > 0 (its sensitivity is %v)", i+1, sigmas[i], d)
		}
	}
	return nil
}

// mu returns the composed μ of the plan with noise sigmas, rounded up.
func (p GaussianPlan) mu(sigmas []float64) float64 {
	snap := 0.0
	if p.Dim > 0 {
		snap = 0x1p-46 * math.Sqrt(float64(p.Dim))
	}
	var terms []float64
	worst := 0.0
	for i, d := range p.Sensitivities {
		if d == 0 {
			continue
		}
		m := acctUp((d+sigmas[i]*snap)/sigmas[i], 4)
		worst = math.Max(worst, m)
		terms = append(terms, acctUp(m*m, 2))
	}
	if p.Disjoint || len(terms) <= 1 {
		return worst // one release: μ = Δ′/σ, composed or not
	}
	return acctUp(math.Sqrt(acctSumUp(terms...)), 4)
}

// CertifyGaussian returns the certificate of the plan's releases with noise
// sigmas at the request (eps, delta): the certified ε at delta and the
// certified δ at eps (see the file comment). It errors on invalid input;
// a certificate that does not cover the request is not an error (see
// Certificate.Covers).
func CertifyGaussian(p GaussianPlan, sigmas []float64, eps, delta float64) (Certificate, error) {
	if sigmas == nil {
		return Certificate{}, acctErrorf("no σ's to certify")
	}
	if err := p.check(sigmas); err != nil {
		return Certificate{}, err
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return Certificate{}, acctErrorf("ε = %v must be finite and ≥ 0", eps)
	}
	if !(delta > 0 && delta < 1) {
		return Certificate{}, acctErrorf("δ = %v must be in (0, 1)", delta)
	}
	mu := p.mu(sigmas)
	c := Certificate{Mu: mu}
	if mu == 0 {
		c.Delta = p.FailureDelta
		if p.FailureDelta >= delta {
			c.Epsilon = math.Inf(1)
		}
		return c, nil
	}
	c.Delta = math.Min(1, acctSumUp(GaussianDPDelta(mu, eps), p.FailureDelta))
	c.Epsilon = math.Inf(1)
	if rest := delta - p.FailureDelta; rest > 0 {
		rest = acctDown(rest, 4)
		if e, err := GaussianDPEpsilon(mu, rest); err == nil {
			c.Epsilon = e
		}
	}
	return c, nil
}

// CalibrateGaussian returns the smallest σ's (σᵢ = c·splitᵢ, up to a few
// ulps of c) whose certificate covers (eps, delta), and that certificate.
// Releases with Δᵢ = 0 get σᵢ = 0 (they read no record and need no noise).
func CalibrateGaussian(p GaussianPlan, eps, delta float64) ([]float64, Certificate, error) {
	if err := p.check(nil); err != nil {
		return nil, Certificate{}, err
	}
	if err := acctCheckPositive("ε", eps); err != nil {
		return nil, Certificate{}, err
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return nil, Certificate{}, err
	}
	rest := delta - p.FailureDelta
	if !(rest > 0) {
		return nil, Certificate{}, acctErrorf("δ = %v leaves nothing for the Gaussian noise after the failure probability %v of the sensitivity bound", delta, p.FailureDelta)
	}
	if p.Disjoint && p.Split == nil && len(p.Sensitivities) > 1 {
		// Parallel composition, each release its own budget: calibrate
		// each alone (so a release gets the same σ whether it is
		// calibrated with the others or on its own, e.g. at a site).
		sigmas := make([]float64, len(p.Sensitivities))
		for i, d := range p.Sensitivities {
			if d == 0 {
				continue
			}
			one := GaussianPlan{Sensitivities: []float64{d}, Disjoint: true, FailureDelta: p.FailureDelta, Dim: p.Dim}
			s, _, err := CalibrateGaussian(one, eps, delta)
			if err != nil {
				return nil, Certificate{}, err
			}
			sigmas[i] = s[0]
		}
		c, err := CertifyGaussian(p, sigmas, eps, delta)
		if err == nil && !c.Covers(eps, delta) {
			err = acctErrorf("internal error: per-release calibration not certified (%+v)", c)
		}
		return sigmas, c, err
	}
	split := func(i int) float64 {
		if p.Split != nil {
			return p.Split[i]
		}
		return p.Sensitivities[i]
	}
	// Σ (Δᵢ/splitᵢ)² or max Δᵢ/splitᵢ: μ = that/c (before snapping).
	var terms []float64
	worst := 0.0
	for i, d := range p.Sensitivities {
		if d == 0 {
			continue
		}
		r := d / split(i)
		terms = append(terms, r*r)
		worst = math.Max(worst, r)
	}
	sigmas := make([]float64, len(p.Sensitivities))
	if len(terms) == 0 {
		c, err := CertifyGaussian(p, sigmas, eps, delta)
		if err == nil && !c.Covers(eps, delta) {
			err = acctErrorf("failure probability %v alone exceeds δ = %v", p.FailureDelta, delta)
		}
		return sigmas, c, err
	}
	inv, err := AnalyticGaussianSigma(eps, acctDown(rest, 4), 1) // 1/μ*, rounded up
	if err != nil {
		return nil, Certificate{}, err
	}
	k := worst
	if !p.Disjoint && len(terms) > 1 {
		k = math.Sqrt(acctSumUp(terms...))
	}
	scale := inv * k
	for try := 0; try < 200; try++ {
		for i, d := range p.Sensitivities {
			sigmas[i] = 0
			if d > 0 {
				sigmas[i] = acctUp(scale*split(i), 2)
			}
		}
		c, err := CertifyGaussian(p, sigmas, eps, delta)
		if err != nil {
			return nil, Certificate{}, err
		}
		if c.Covers(eps, delta) {
			return sigmas, c, nil
		}
		scale = acctUp(scale, math.Ldexp(8, try/4)) // a few ulps, then faster
	}
	return nil, Certificate{}, fmt.Errorf("dp: %w: no σ certified for ε = %v, δ = %v (plan %+v)", ErrNoAccountant, eps, delta, p)
}
