package dp

import "math"

// Zero-concentrated differential privacy.
//
// [BS16] Bun, Steinke, "Concentrated Differential Privacy:
// Simplifications, Extensions, and Lower Bounds", TCC 2016
// (arXiv:1605.02065). A mechanism is ρ-zCDP if D_α(M(x)‖M(x')) ≤ ρα for
// every α > 1 and neighbours x, x' (Def 1.1), i.e. (α, ρα)-RDP for all α.
//   - Prop 1.6: the Gaussian mechanism with ℓ2 sensitivity Δ is
//     Δ²/(2σ²)-zCDP;
//   - Prop 1.4: ε-DP implies ε²/2-zCDP;
//   - Lemma 2.3: ρᵢ-zCDP mechanisms compose (adaptively) to Σρᵢ-zCDP;
//   - Prop 1.3: ρ-zCDP implies (ρ + 2√(ρ log(1/δ)), δ)-DP for every δ > 0.
// The tighter conversion goes through RDP: (α, ρα)-RDP for every α, then
// Canonne, Kamath, Steinke 2020 Prop 12 (RDPToDP), minimized over the
// accountant's grid of orders.

// zcdpEpsilonUp is an upper bound on ρ + 2√(ρ log(1/δ)) for ρ ≥ 0 and
// δ ∈ (0, 1) (no validation).
func zcdpEpsilonUp(rho, delta float64) float64 {
	if math.IsInf(rho, 1) {
		return rho
	}
	l := acctUp(-math.Log(delta), 4)
	return acctSumUp(rho, 2*math.Sqrt(rho*l))
}

// EpsilonForRho returns ε = ρ + 2√(ρ log(1/δ)) ([BS16] Prop 1.3; [H20]
// Lemma 3), rounded up: every ρ-zCDP mechanism is (ε, δ)-DP.
func EpsilonForRho(rho, delta float64) (float64, error) {
	if !(rho >= 0) || math.IsInf(rho, 0) {
		return 0, acctErrorf("ρ = %v must be finite and ≥ 0", rho)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	return zcdpEpsilonUp(rho, delta), nil
}

// RhoForEpsilonDelta returns the ρ solving ρ + 2√(ρ log(1/δ)) = ε, the
// zCDP budget that [H20] Algs 1–4, step 3, derive from the (ε, δ) request
// (so that Prop 1.3 of [BS16] turns the ρ-zCDP run back into (ε, δ)-DP).
// Closed form: √ρ = √(log(1/δ) + ε) − √(log(1/δ)), evaluated as
// ε/(√(log(1/δ) + ε) + √(log(1/δ))) to avoid cancellation. The result is
// rounded down and checked: EpsilonForRho(ρ, δ) ≤ ε holds for the
// returned ρ (it is within ~1e-14 relative of the exact root).
func RhoForEpsilonDelta(eps, delta float64) (float64, error) {
	if err := acctCheckPositive("ε", eps); err != nil {
		return 0, err
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	l := -math.Log(delta)
	s := eps / (math.Sqrt(l+eps) + math.Sqrt(l))
	rho := acctDown(s*s, 8)
	for i := 0; zcdpEpsilonUp(rho, delta) > eps; i++ {
		if i > 200 {
			return 0, acctErrorf("cannot round ρ for ε = %v, δ = %v", eps, delta)
		}
		rho = acctDown(rho, 16)
	}
	return rho, nil
}

// ZCDPEpsilonViaRDP returns the (ε, δ) conversion of ρ-zCDP through RDP:
// ρ-zCDP is (α, ρα)-RDP for every α > 1 ([BS16] Def 1.1), and
// RDPToDP (Canonne, Kamath, Steinke 2020 Prop 12, with the classic
// conversion as a fallback) is minimized over the orders of RDPOrders. It
// is never larger than EpsilonForRho up to the grid (Prop 1.3 is the
// classic conversion minimized over continuous α). Also returns the order.
func ZCDPEpsilonViaRDP(rho, delta float64) (eps, order float64, err error) {
	if !(rho >= 0) || math.IsInf(rho, 0) {
		return 0, 0, acctErrorf("ρ = %v must be finite and ≥ 0", rho)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, 0, err
	}
	eps, order = math.Inf(1), 0
	for _, a := range rdpOrders {
		e, _ := rdpToDPUp(a, acctUp(a*rho, 4), delta)
		if e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}
