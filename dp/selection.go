package dp

import (
	"math"
)

// Private selection by random repetition.
//
// [PS22] Papernot & Steinke, "Hyperparameter Tuning with Rényi
// Differential Privacy", ICLR 2022 (arXiv:2110.03620), Thm 2.
// [LT19] Liu & Talwar, "Private Selection from Private Candidates",
// STOC 2019 (random stopping, Thm 3.1: 3ε for an ε-DP base algorithm).
//
// Let Q be a randomized algorithm returning a candidate and a score. A
// draws K from the truncated negative binomial distribution D_{η,γ} (for
// η = 1 the geometric distribution P[K = k] = γ(1 − γ)^{k−1}, k ≥ 1, the
// random stopping of [LT19]), runs Q K times on the same data with fresh
// randomness and returns the candidate of the best score (only that one).
//
// [PS22] Thm 2: if Q is (λ, ε)-RDP and (λ̂, ε̂)-RDP, with λ > 1, λ̂ ≥ 1, then
// A is (λ, ε')-RDP with
//
//	ε' = ε + (1 + η)·(1 − 1/λ̂)·ε̂ + (1 + η)·log(1/γ)/λ̂ + log(E[K])/(λ − 1).
//
// λ̂ is free, so the middle terms are minimized over it. For a Q that is
// μ-GDP — here every candidate is a (composition of) Gaussian release(s)
// calibrated exactly, Q's total is μ-GDP, and μ-GDP implies
// (λ, λρ)-RDP at every order with ρ = μ²/2 (the Rényi divergences of a
// post-processing of N(0,1) vs N(μ,1), Dong, Roth & Su 2019 Prop 2.12,
// never exceed theirs) — the middle term is
//
//	(1 + η)·min_{λ̂ ≥ 1} [(λ̂ − 1)ρ + L/λ̂],  L = log(1/γ),
//
// attained at λ̂* = √(L/ρ) when that is ≥ 1 (value (1 + η)(2√(Lρ) − ρ)),
// else at λ̂ = 1 (value (1 + η)L). A's RDP curve is then converted to
// (ε, δ)-DP at every order of the accountant's grid (RDPToDP: the better of
// [CKS20] Prop 12 and [M17] Prop 3) and minimized.
//
// As a check of the constants, a pure ε-DP Q has ε̂ ≤ ε at every order;
// letting λ, λ̂ → ∞ gives ε' → 3ε for η = 1: [LT19] Thm 3.1.

// Selection is the distribution of the number of repetitions K: the
// geometric distribution with success (stopping) probability Gamma, i.e.
// [PS22]'s truncated negative binomial with η = 1 and [LT19]'s random
// stopping.
type Selection struct {
	Gamma float64 // γ ∈ (0, 1): P[K = k] = γ(1 − γ)^{k−1}; E[K] = 1/γ
}

// Validate checks γ.
func (s Selection) Validate() error {
	if !(s.Gamma > 0 && s.Gamma < 1) {
		return acctErrorf("selection: γ = %v must be in (0, 1) (E[K] = 1/γ repetitions)", s.Gamma)
	}
	return nil
}

// ExpectedRuns is E[K] = 1/γ.
func (s Selection) ExpectedRuns() float64 { return 1 / s.Gamma }

// Runs are drawn by SampleRuns (exactsample.go): exact Bernoulli(γ) coins,
// so K has exactly the law above for the float64 γ the accountant uses.

// selectionConst is (1 + η)·min_{λ̂ ≥ 1}[(λ̂ − 1)ρ + L/λ̂] for η = 1.
func (s Selection) selectionConst(rho float64) float64 {
	L := -math.Log(s.Gamma)
	if rho <= 0 {
		return 0 // a Q that reveals nothing: λ̂ → ∞
	}
	if L >= rho { // λ̂* = √(L/ρ) ≥ 1
		return 2 * (2*math.Sqrt(L*rho) - rho)
	}
	return 2 * L
}

// GDPRDP returns A's RDP at order alpha > 1 ([PS22] Thm 2 with η = 1) when
// every run of Q is μ-GDP, rounded up.
func (s Selection) GDPRDP(alpha, mu float64) float64 {
	rho := mu * mu / 2
	return acctUp(alpha*rho+s.selectionConst(rho)+math.Log(s.ExpectedRuns())/(alpha-1), 8)
}

// SelectionEpsilon returns the ε at δ that the repeated selection A with
// μ-GDP runs satisfies: the minimum over the RDP orders of RDPToDP of
// Selection.GDPRDP.
func SelectionEpsilon(s Selection, mu, delta float64) (float64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if err := acctCheckPositive("μ", mu); err != nil {
		return 0, err
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	taus := make([]float64, len(rdpOrders))
	for i, a := range rdpOrders {
		taus[i] = s.GDPRDP(a, mu)
	}
	eps, _, err := RDPEpsilon(rdpOrders, taus, delta)
	return eps, err
}

// SelectionMu returns the largest per-run μ (to a relative 10⁻⁹, rounded
// down) for which the repeated selection is (ε, δ)-DP by SelectionEpsilon,
// or an error when even a vanishing μ cannot reach ε (the log(E[K]) and
// log(1/γ) terms alone exceed it).
func SelectionMu(s Selection, eps, delta float64) (float64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, acctErrorf("selection: ε = %v must be finite and > 0", eps)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	ok := func(mu float64) bool {
		e, err := SelectionEpsilon(s, mu, delta)
		return err == nil && e <= eps
	}
	lo := 1e-9
	if !ok(lo) {
		return 0, acctErrorf("selection: no per-run budget reaches ε = %g at δ = %g with E[K] = %g repetitions (the cost of the random repetition alone is larger): raise ε or γ", eps, delta, s.ExpectedRuns())
	}
	hi := 1.0
	for ok(hi) {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return lo, nil
		}
	}
	for hi-lo > 1e-9*lo {
		m := (lo + hi) / 2
		if ok(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return lo, nil
}
