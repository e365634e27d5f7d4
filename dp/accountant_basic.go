package dp

import "math"

// Composition of (ε, δ)-DP releases.
//
// [DR14] Dwork, Roth, "The Algorithmic Foundations of Differential
// Privacy", 2014:
//   - Thm 3.16 (basic composition): (εᵢ, δᵢ)-DP mechanisms compose to
//     (Σεᵢ, Σδᵢ)-DP; Thm 3.6: the Laplace mechanism of scale b on a
//     statistic of ℓ1 sensitivity Δ₁ is Δ₁/b-DP.
//   - Thm 3.20 (advanced composition; Dwork, Rothblum, Vadhan, "Boosting
//     and Differential Privacy", FOCS 2010): for every δ' > 0 the k-fold
//     adaptive composition of (ε, δ)-DP mechanisms is (ε', kδ + δ')-DP
//     with ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1). For releases with
//     different (εᵢ, δᵢ), Compose applies it with ε = max εᵢ and
//     δ = max δᵢ (each release is also (max εᵢ, max δᵢ)-DP).

// AdvancedComposition returns the (ε', δ_total) of the k-fold adaptive
// composition of (eps, delta)-DP mechanisms at slack δ' = deltaPrime
// ([DR14] Thm 3.20): ε' = √(2k ln(1/δ'))·ε + k·ε·(e^ε − 1) and
// δ_total = k·δ + δ', both rounded up. It does not take the minimum with
// basic composition (k·ε, k·δ); Compose does.
func AdvancedComposition(k int, eps, delta, deltaPrime float64) (epsTotal, deltaTotal float64, err error) {
	if k < 1 {
		return 0, 0, acctErrorf("advanced composition needs k ≥ 1 releases, got %d", k)
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return 0, 0, acctErrorf("ε = %v must be finite and ≥ 0", eps)
	}
	if !(delta >= 0 && delta < 1) {
		return 0, 0, acctErrorf("δ = %v must be in [0, 1)", delta)
	}
	if err := acctCheckDelta("δ'", deltaPrime); err != nil {
		return 0, 0, err
	}
	epsTotal, deltaTotal = advancedUp(float64(k), eps, delta, deltaPrime)
	return epsTotal, deltaTotal, nil
}

// advancedUp evaluates [DR14] Thm 3.20 with upward rounding (no
// validation).
func advancedUp(k, eps, delta, deltaPrime float64) (epsTotal, deltaTotal float64) {
	l := acctUp(-math.Log(deltaPrime), 4)
	epsTotal = acctSumUp(math.Sqrt(2*k*l)*eps, k*eps*math.Expm1(eps))
	deltaTotal = acctSumUp(k*delta, deltaPrime)
	return epsTotal, deltaTotal
}
