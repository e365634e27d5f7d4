package dp

import (
	"fmt"
	"math"
)

// Objective perturbation's privacy profile: the calibration of
// dpalgo/private_objpert.go (dp-objpert), whose file comment has the
// mechanism and the proof. Summary of what is proved there, for
// replace-one neighbours, a convex loss whose per-record gradient is
// c·z with |c| ≤ 1 and ‖z‖ ≤ 1 and whose per-record Hessian is rank one
// with eigenvalue ≤ β, a ridge Λ and noise b ~ N(0, σ²I_p) added to the
// objective:
//
//   - the privacy loss at the output is at most
//     ε_J + max(2|A| + a², 2|B| + b²)/(2σ²), with ε_J = ln(1 + β/Λ) (the
//     two Jacobian determinants), A = ⟨b, z − z'⟩, B = ⟨b, z + z'⟩,
//     a = ‖z − z'‖, b = ‖z + z'‖, a² + b² ≤ 4;
//   - for thresholds w ≥ w₀ = 2σ²(ε − ε_J), Pr[2|A| + a² > w] is a convex
//     function h_w of a² with h_w(0) = 0 when
//     (w − 4)w² ≥ 16σ²(3w + 4) (ObjPertConvex), so the union bound over the
//     two terms is at most h_w(4): the tail of the folded Gaussian loss
//     μ|Z| + μ²/2 with μ = 2/σ, and δ(ε) ≤ 2·δ_G(ε − ε_J; μ) where δ_G is
//     the Gaussian mechanism's exact curve (GaussianDPDelta);
//   - without the condition each term is at most h_w(4) and
//     δ(ε) ≤ 4·δ_G(ε − ε_J; μ);
//   - the secure sampler's discrete noise adds (1 + e^ε)·p·(SecureGaussianTV
//     + 2^−44) (its distance from a rounded continuous Gaussian, and the
//     cell-averaging of the staircase density the proof works with).

// ObjPertJacobian returns ε_J = ln(1 + β/Λ), the bound on the log-ratio
// of the two Jacobian determinants of objective perturbation with a
// ridge Λ and per-record Hessians of eigenvalue ≤ β.
func ObjPertJacobian(beta, lambda float64) float64 {
	return acctUp(math.Log1p(beta/lambda), 4)
}

// ObjPertConvex reports whether the convexity condition of the tail
// bound holds for every threshold w ≥ w0 at noise σ: w0 ≥ 4, P(w0) ≥ 0
// and P'(w0) ≥ 0 for P(w) = (w − 4)w² − 16σ²(3w + 4) (P is convex for
// w > 4/3, so it stays ≥ 0 beyond w0).
func ObjPertConvex(w0, sigma float64) bool {
	if !(w0 >= 4) {
		return false
	}
	s2 := sigma * sigma
	P := (w0-4)*w0*w0 - 16*s2*(3*w0+4)
	dP := 3*w0*w0 - 8*w0 - 48*s2
	// Both are differences of positive terms: ask for a margin of 10⁻⁹
	// relative, far above their rounding.
	return P >= 1e-9*(w0*w0*w0+16*s2*(3*w0+4)) && dP >= 1e-9*(3*w0*w0+8*w0+48*s2)
}

// objPertTV is the per-coordinate total-variation allowance of the
// secure discrete noise in objective perturbation: the sampler's distance
// from round(N(0, σ²)) (SecureGaussianTV) plus 2^−44 for replacing the
// continuous Gaussian density φ by its average f̄ over the cells of the
// sampler's grid g ≤ σ·2^−46. Within a cell log φ moves by at most
// κ(b) ≤ (‖b‖g√p + pg²/4)/σ², so TV(f̄, φ) ≤ E[e^κ − 1] ≤ 2E[κ] + P(κ > 1)
// ≤ 2·2^−46(p + p·2^−48) + 2^−1000 ≤ p·2^−44 (E‖b‖ ≤ σ√p;
// dpalgo/private_objpert.go).
const objPertTV = SecureGaussianTV + 0x1p-44

// ObjPertDelta returns an upper bound on δ(ε) of objective perturbation
// with noise σ per coordinate over p coordinates and Jacobian term ε_J
// (see the comment above): 1 when 2σ²(ε − ε_J) < 4. It panics on σ ≤ 0,
// ε < 0, ε_J < 0 or p < 1 (programmer error).
func ObjPertDelta(sigma, eps, epsJ float64, p int64) float64 {
	if !(sigma > 0) || !(eps >= 0) || !(epsJ >= 0) || p < 1 {
		panic("dp: ObjPertDelta needs σ > 0, ε ≥ 0, ε_J ≥ 0 and p ≥ 1")
	}
	e := eps - epsJ
	w0 := 2 * sigma * sigma * e
	if !(w0 >= 4) {
		return 1
	}
	factor := 4.0
	if ObjPertConvex(w0, sigma) {
		factor = 2
	}
	d := factor*GaussianDPDelta(2/sigma, e) + (1+math.Exp(eps))*float64(p)*objPertTV
	return math.Min(1, acctUp(d, 4))
}

// ObjPertSigma returns the smallest σ (up to a relative 10⁻¹², rounded
// up) with ObjPertDelta(σ, ε, ε_J, p) ≤ δ. ObjPertDelta is non-increasing
// in σ (each of its cases is, and the convexity condition, once it holds,
// holds for every larger σ), so bisection finds it.
func ObjPertSigma(eps, delta, epsJ float64, p int64) (float64, error) {
	switch {
	case !(eps > 0) || math.IsInf(eps, 0):
		return 0, fmt.Errorf("dp: objective perturbation: ε = %v must be finite and > 0", eps)
	case !(delta > 0 && delta < 1):
		return 0, fmt.Errorf("dp: objective perturbation needs δ in (0, 1), got %v", delta)
	case !(epsJ >= 0) || !(epsJ < eps):
		return 0, fmt.Errorf("dp: objective perturbation: the Jacobian term ε_J = %v must be in [0, ε = %v)", epsJ, eps)
	case p < 1:
		return 0, fmt.Errorf("dp: objective perturbation needs at least one coordinate, got %d", p)
	}
	if floor := 2 * float64(p) * objPertTV; delta <= floor*(1+math.Exp(eps)) {
		return 0, fmt.Errorf("dp: objective perturbation: δ = %g is below the discrete noise's allowance %.3g for %d coordinates", delta, floor*(1+math.Exp(eps)), p)
	}
	hi := 1.0
	for ObjPertDelta(hi, eps, epsJ, p) > delta {
		hi *= 2
		if hi > MaxScale {
			return 0, fmt.Errorf("dp: objective perturbation: no σ ≤ %g reaches δ = %g at ε = %g", MaxScale, delta, eps)
		}
	}
	lo := hi / 2
	for ObjPertDelta(lo, eps, epsJ, p) <= delta && lo > MinScale {
		hi, lo = lo, lo/2
	}
	for hi-lo > 1e-12*hi {
		mid := lo + (hi-lo)/2
		if ObjPertDelta(mid, eps, epsJ, p) <= delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
