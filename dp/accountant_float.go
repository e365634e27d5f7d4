package dp

import "math"

// Rounding policy of the accountants.
//
// Every ε (and every σ, ρ or δ bound) an accountant reports is meant to be
// on the safe side of the exact real-number value of the formula it
// implements: ε, σ and δ-bounds are rounded up, ρ and μ budgets down. The
// arithmetic is float64, so "rounded up" rests on one stated assumption:
//
//	Go's math.Exp, Log, Log1p, Expm1, Sqrt, Sinh, Cosh and Erfc have a
//	relative error of at most 8 ulps (they are the FreeBSD msun algorithms,
//	documented at < 1 ulp).
//
// Under it, each formula below carries an explicit error allowance: closed
// forms are evaluated with at most a few dozen roundings and are inflated
// by acctUp / acctSumUp, whose allowances (≥ 16 ulps per operation, or
// (n+32) ulps of Σ|tᵢ| for a sum of n terms) dominate the accumulated
// error; the Gaussian-DP δ(ε) is propagated in log space with the bounds
// written out in gdpLogDeltaUp. Bisections return an end point that passed
// the (inflated) test, never a midpoint.

// acctU is the unit roundoff of float64 (half an ulp of 1).
const acctU = 0x1p-53

// acctUp returns a float ≥ x·(1 + ulps·u), i.e. an upper bound on a real
// number that x approximates to within ulps units of roundoff (relative).
// ±Inf and NaN pass through.
func acctUp(x, ulps float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Nextafter(x+math.Abs(x)*ulps*acctU, math.Inf(1))
}

// acctDown returns a float ≤ x·(1 − ulps·u) for x ≥ 0 (and symmetrically
// for x < 0): a lower bound on a real number x approximates to within ulps
// units of roundoff.
func acctDown(x, ulps float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Nextafter(x-math.Abs(x)*ulps*acctU, math.Inf(-1))
}

// acctSumUp returns an upper bound on the exact sum of terms that are each
// known to within 32 ulps (relative): the float sum plus (n+32)·u·Σ|tᵢ|,
// which covers the (n−1)·u·Σ|tᵢ| of recursive summation and the terms' own
// errors. All-zero terms give exactly 0. An infinite term gives +Inf (or
// NaN for ∞ − ∞, which the callers never produce).
func acctSumUp(terms ...float64) float64 {
	s, abs := 0.0, 0.0
	for _, t := range terms {
		s += t
		abs += math.Abs(t)
	}
	if math.IsInf(s, 0) || math.IsNaN(s) || abs == 0 {
		return s
	}
	return math.Nextafter(s+abs*float64(len(terms)+32)*acctU, math.Inf(1))
}

// acctBisectFirst returns the smallest float x in (lo, hi] with ok(x)
// (exactly, on the float64 lattice) for 0 ≤ lo < hi finite, provided
// ok(lo) is false and hi is acceptable; hi is returned unchanged if no
// point inside passes. ok is assumed monotone (false … false true … true);
// if it is not, the result still passed ok or is hi. About 64 calls.
func acctBisectFirst(lo, hi float64, ok func(float64) bool) float64 {
	l, h := math.Float64bits(lo), math.Float64bits(hi)
	for h-l > 1 {
		m := l + (h-l)/2
		if ok(math.Float64frombits(m)) {
			h = m
		} else {
			l = m
		}
	}
	return math.Float64frombits(h)
}

// acctBisectLast returns the largest float x in [lo, hi) with ok(x) for
// 0 ≤ lo < hi finite, provided lo is acceptable and ok(hi) is false; lo is
// returned if no point inside passes.
func acctBisectLast(lo, hi float64, ok func(float64) bool) float64 {
	l, h := math.Float64bits(lo), math.Float64bits(hi)
	for h-l > 1 {
		m := l + (h-l)/2
		if ok(math.Float64frombits(m)) {
			l = m
		} else {
			h = m
		}
	}
	return math.Float64frombits(l)
}

// acctCheckPositive reports an error unless x is finite and > 0.
func acctCheckPositive(name string, x float64) error {
	if !(x > 0) || math.IsInf(x, 0) {
		return acctErrorf("%s = %v must be finite and > 0", name, x)
	}
	return nil
}

// acctCheckDelta reports an error unless 0 < δ < 1.
func acctCheckDelta(name string, d float64) error {
	if !(d > 0 && d < 1) {
		return acctErrorf("%s = %v must be in (0, 1)", name, d)
	}
	return nil
}
