package dp

import "math"

// Gaussian differential privacy: exact accounting for un-subsampled
// Gaussian releases.
//
// [DRS19] Dong, Roth, Su, "Gaussian Differential Privacy", 2019
// (arXiv:1905.02383):
//   - Thm 2.7: adding N(0, σ²I) to a statistic of ℓ2 sensitivity Δ is
//     μ-GDP with μ = Δ/σ (tight: the trade-off function of N(0, σ²)
//     against N(Δ, σ²) is G_μ itself);
//   - Cor 3.3: the (adaptive) composition of μᵢ-GDP mechanisms is μ-GDP
//     with μ = √(Σ μᵢ²), exactly;
//   - Cor 2.13: μ-GDP ⇔ (ε, δ(ε))-DP for every ε ≥ 0, where
//     δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
//
// [BW18] Balle, Wang, "Improving the Gaussian Mechanism for Differential
// Privacy: Analytical Calibration and Optimal Denoising", ICML 2018,
// Thm 8: the Gaussian mechanism is (ε, δ)-DP iff
// Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) ≤ δ — the same curve with μ = Δ/σ.
// So for Gaussian releases without subsampling the privacy loss
// distribution is known in closed form and these accountants are exact up
// to the documented rounding.

// acctLogPhi returns log Φ(x) for the standard normal CDF Φ, accurate in
// relative terms for every x (no underflow to −Inf for x ≥ −1.3e154).
//
//   - x > 0: log(1 − ½ erfc(x/√2)) via Log1p;
//   - −30 < x ≤ 0: log(½ erfc(−x/√2)) (erfc stays ≥ 9e-198, a normal float);
//   - x ≤ −30: the asymptotic series of the Mills ratio (Abramowitz &
//     Stegun 26.2.12), Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − … ), summed to
//     the x⁻¹⁶ term. The series alternates and its remainder is smaller
//     than the first omitted term, 17!!/x¹⁸ < 1e-19 for |x| ≥ 30.
func acctLogPhi(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 0:
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x > -30:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	case math.IsInf(x, -1):
		return math.Inf(-1)
	}
	t := 1 / (x * x)
	// 1 + s = 1 − t + 3t² − 15t³ + … = 1 − t(1 − 3t(1 − 5t(1 − …(1 − 15t)))).
	s := 0.0
	for k := 8; k >= 1; k-- {
		s = -float64(2*k-1) * t * (1 + s)
	}
	return -0.5*x*x - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log1p(s)
}

// gdpLogDeltaUp returns an upper bound on log δ_μ(ε), the log of the exact
// δ(ε) of μ-GDP (DRS19 Cor 2.13), for μ > 0 and ε ≥ 0.
//
// With a = −ε/μ + μ/2 and b = −ε/μ − μ/2 it computes, in log space so that
// neither e^ε nor Φ(b) over- or underflows,
//
//	la = log Φ(a),  lb = log Φ(b) + ε,  δ = e^la (1 − e^{lb−la}).
//
// Error allowance: la and lb are each within ea, eb (absolute, in log
// space, i.e. relative on the values) of their exact values, where the
// allowances cover the rounding of a, b (|d log Φ(x)/dx| = φ(x)/Φ(x) ≤
// |x| + 1: for x ≤ 0 by Birnbaum's 1942 bound φ/Φ < (|x| + √(x²+4))/2, for
// x > 0 it is < φ(0)/Φ(0) < 1; times the ≤ 2u·(ε/μ + μ/2) error of a or b)
// and of logΦ itself.
// Then log δ ≤ la + ea + log(1 − r) + r(ea + eb + e_t)/(1 − r), r = e^{lb−la},
// because 1 − r·e^{−e} ≤ (1 − r)(1 + re/(1 − r)). Whenever the difference
// is ill-conditioned (r → 1) the allowance grows and the trivial bound
// δ ≤ Φ(a) takes over; the result is never below the exact value.
func gdpLogDeltaUp(mu, eps float64) float64 {
	if math.IsInf(eps, 1) {
		return math.Inf(-1)
	}
	x := eps / mu
	s := x + mu/2 // ≥ |a|, = |b|
	a, b := -x+mu/2, -x-mu/2
	la := acctLogPhi(a)
	lb := acctLogPhi(b) + eps
	ea := 16 * acctU * (1 + math.Abs(la) + (math.Abs(a)+1)*s)
	eb := 16 * acctU * (1 + math.Abs(lb) + eps + (math.Abs(b)+1)*s)
	trivial := la + ea // δ ≤ Φ(a)
	if math.IsInf(la, -1) {
		return la
	}
	if !(lb < la) {
		return acctUp(trivial, 4)
	}
	t := lb - la
	r := math.Exp(t)
	l := la + math.Log(-math.Expm1(t))
	e := ea + r*(ea+eb+8*acctU*(1+math.Abs(t)))/(1-r) + 16*acctU*(1+math.Abs(l))
	up := l + e
	if trivial < up {
		up = trivial
	}
	return acctUp(up, 4)
}

// GaussianDPDelta returns an upper bound on δ(ε) of μ-GDP,
// δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) ([DRS19] Cor 2.13; [BW18]
// Thm 8 with μ = Δ/σ): every μ-GDP mechanism — in particular k Gaussian
// releases with μ = √Σ(Δᵢ/σᵢ)² — is (ε, GaussianDPDelta(μ, ε))-DP, and no
// smaller δ holds for the Gaussian mechanism. The value is exact to within
// the rounding allowance of gdpLogDeltaUp and always on the high side: the
// allowance is ≈ 1e-13 relative in ordinary ranges and grows like
// (ε/μ)²/(1 − r) ulps where the two terms nearly cancel (ε/μ ≫ μ; e.g.
// 4e-9 at μ = 0.02, ε = 0.5, where δ = 3e-141). It panics on μ ≤ 0, NaN or ε < 0 (programmer
// error; validate inputs first).
func GaussianDPDelta(mu, eps float64) float64 {
	if !(mu > 0) || !(eps >= 0) {
		panic("dp: GaussianDPDelta needs μ > 0 and ε ≥ 0")
	}
	if math.IsInf(mu, 1) {
		return 1
	}
	d := math.Exp(gdpLogDeltaUp(mu, eps))
	if d > 1 {
		d = 1
	}
	return d
}

// GaussianDPEpsilon returns the smallest ε ≥ 0 such that μ-GDP is
// (ε, δ)-DP, rounded up: the exact curve δ(ε) of [DRS19] Cor 2.13 is
// strictly decreasing in ε, and the returned ε is the smallest float64
// whose upper bound on δ(ε) (gdpLogDeltaUp) is ≤ δ, found by bisection on
// the float64 lattice (tolerance: one ulp of ε, plus the ≈1e-13 relative
// allowance on δ). If that allowance ever made the test fail at the
// bracket's top, the top itself is returned: it is the zCDP bound
// ε = ρ + 2√(ρ log(1/δ)) with ρ = μ²/2 ([BS16] Prop 1.3 and 1.6, as the
// composed release is a single Gaussian of sensitivity μ and σ = 1), valid
// on its own.
func GaussianDPEpsilon(mu, delta float64) (float64, error) {
	if err := acctCheckPositive("μ", mu); err != nil {
		return 0, err
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	logDelta := acctDown(math.Log(delta), 4)
	ok := func(eps float64) bool { return gdpLogDeltaUp(mu, eps) <= logDelta }
	if ok(0) {
		return 0, nil
	}
	hi := zcdpEpsilonUp(acctUp(mu*mu/2, 4), delta)
	if math.IsInf(hi, 1) {
		return hi, nil
	}
	if !ok(hi) {
		return hi, nil
	}
	return acctBisectFirst(0, hi, ok), nil
}

// AnalyticGaussianSigma returns the smallest σ (rounded up) such that
// adding N(0, σ²I) to a statistic of ℓ2 sensitivity Δ is (ε, δ)-DP: the
// analytic Gaussian mechanism of [BW18] (Thm 8, Alg 1), for any ε > 0
// (unlike GaussianSigma it needs no ε < 1). The condition
// δ_{Δ/σ}(ε) ≤ δ is monotone in μ = Δ/σ; the largest passing μ is found
// by bisection on the float64 lattice, starting from the μ that the zCDP
// conversion already certifies, and σ = Δ/μ is rounded up.
func AnalyticGaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := acctCheckPositive("ε", eps); err != nil {
		return 0, err
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	if err := acctCheckPositive("sensitivity Δ", sensitivity); err != nil {
		return 0, err
	}
	logDelta := acctDown(math.Log(delta), 4)
	ok := func(mu float64) bool { return gdpLogDeltaUp(mu, eps) <= logDelta }
	// μ certified by zCDP: μ²/2 + μ√(2L) ≤ ε with L = log(1/δ), i.e.
	// μ = 2ε/(√(2L + 2ε) + √(2L)), rounded down.
	l := -math.Log(delta)
	lo := acctDown(2*eps/(math.Sqrt(2*l+2*eps)+math.Sqrt(2*l)), 16)
	// Guard the rounding: a few steps of 64 ulps, then halving (any
	// smaller μ is still a valid lower end of the bisection), so that the
	// loop ends after at most ≈ 1100 iterations whatever ε is (ε = 1e-300
	// once spun here for ever, stepping 64 ulps at a time).
	for i := 0; zcdpEpsilonUp(acctUp(lo*lo/2, 4), delta) > eps && lo > 0; i++ {
		if i < 16 {
			lo = acctDown(lo, 64)
		} else {
			lo /= 2
		}
	}
	if !(lo > 0) {
		return 0, acctErrorf("ε = %v is too small to calibrate at δ = %v", eps, delta)
	}
	hi := 2 * lo
	for i := 0; ok(hi) && i < 2100; i++ {
		lo, hi = hi, 2*hi
	}
	if math.IsInf(hi, 1) {
		return 0, acctErrorf("no finite σ found for ε = %v, δ = %v", eps, delta)
	}
	mu := acctBisectLast(lo, hi, ok)
	sigma := acctUp(sensitivity/mu, 2)
	if math.IsInf(sigma, 1) {
		return 0, acctErrorf("σ = Δ/μ overflows for Δ = %v, ε = %v, δ = %v", sensitivity, eps, delta)
	}
	return sigma, nil
}

// GaussianSigma returns the classic calibration σ = Δ√(2 ln(1.25/δ))/ε of
// Dwork & Roth, "The Algorithmic Foundations of Differential Privacy",
// 2014, Thm A.1 (Thm 3.22 in the main text), rounded up. The theorem needs
// ε ∈ (0, 1): for ε ≥ 1 the formula is not a valid calibration, and this
// function returns an error (use AnalyticGaussianSigma, which is valid for
// every ε and never larger). Thm A.1 asks for c² > 2 ln(1.25/δ) strictly
// with σ ≥ cΔ/ε; the upward rounding makes the inequality strict.
func GaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := acctCheckPositive("ε", eps); err != nil {
		return 0, err
	}
	if eps >= 1 {
		return 0, acctErrorf("ε = %v: the classic Gaussian calibration (Dwork & Roth Thm A.1) holds only for ε < 1; use AnalyticGaussianSigma", eps)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	if err := acctCheckPositive("sensitivity Δ", sensitivity); err != nil {
		return 0, err
	}
	sigma := acctUp(sensitivity*math.Sqrt(2*math.Log(1.25/delta))/eps, 16)
	if math.IsInf(sigma, 1) {
		return 0, acctErrorf("σ overflows for Δ = %v, ε = %v, δ = %v", sensitivity, eps, delta)
	}
	return sigma, nil
}
