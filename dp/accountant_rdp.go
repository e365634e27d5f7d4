package dp

import "math"

// Rényi differential privacy.
//
// [M17] Mironov, "Rényi Differential Privacy", CSF 2017 (arXiv:1702.07476).
// A mechanism is (α, τ)-RDP if D_α(M(x)‖M(x')) ≤ τ for neighbours x, x'.
//   - Prop 1: (α, τᵢ)-RDP mechanisms compose adaptively to (α, Στᵢ)-RDP;
//   - Prop 3: (α, τ)-RDP implies (τ + log(1/δ)/(α−1), δ)-DP ("classic");
//   - Prop 6 / Table II: the Laplace mechanism of scale b, sensitivity 1;
//   - Table II: the Gaussian mechanism, τ = α/(2σ²) at sensitivity 1.
// [CKS20] Canonne, Kamath, Steinke, "The Discrete Gaussian for
// Differential Privacy", NeurIPS 2020 (arXiv:2004.00010), Prop 12: (α, τ)-RDP
// implies (ε, δ)-DP for ε = τ + log((α−1)/α) − (log δ + log α)/(α−1)
// (the same bound is in Balle, Barthe, Gaboardi, Hsu, Sato 2020,
// "Hypothesis testing interpretations and Rényi differential privacy").
// Since log((α−1)/α) < 0 and log α > 0 it is always below the classic
// one; both are computed and the smaller taken.

// rdpOrders is the fixed grid of orders: α = 1 + 2^(j/16) for
// j = −112 … 320, i.e. α − 1 from 2⁻⁷ to 2²⁰ with 16 points per octave
// (433 orders). A fixed grid makes every RDP-based ε monotone in the set of
// releases (a pointwise larger curve has a larger minimum); its spacing
// (4.4% in α−1) costs well under 0.1% of ε near the optimum.
var rdpOrders = func() []float64 {
	var o []float64
	for j := -112; j <= 320; j++ {
		o = append(o, 1+math.Exp2(float64(j)/16))
	}
	return o
}()

// RDPOrders returns a copy of the orders the RDP and zCDP accountants
// minimize over.
func RDPOrders() []float64 { return append([]float64(nil), rdpOrders...) }

// GaussianRDP returns τ(α) = α Δ²/(2σ²), the exact Rényi divergence of
// order α between N(0, σ²I) and N(v, σ²I) with ‖v‖₂ = Δ ([M17] Table II),
// rounded up. α > 1; +Inf gives +Inf.
func GaussianRDP(alpha, sensitivity, sigma float64) float64 {
	r := sensitivity / sigma
	return acctUp(alpha*r*r/2, 8)
}

// LaplaceRDP returns an upper bound on the order-α Rényi divergence of the
// Laplace mechanism, noise of density exp(−|z|/b)/(2b) per coordinate on a
// statistic of ℓ1 sensitivity Δ₁ ([M17] Prop 6, with b' = b/Δ₁):
//
//	τ(α) = 1/(α−1) · log( α/(2α−1)·e^{(α−1)/b'} + (α−1)/(2α−1)·e^{−α/b'} ),
//
// and the minimum with the pure-DP bounds PureRDP(α, Δ₁/b) and Δ₁/b (the
// mechanism is Δ₁/b-DP, Dwork & Roth Thm 3.6). For vectors this is still
// valid: with c = Δ₁/b, a shift v with Σ|vⱼ|/b ≤ c costs Σ f(|vⱼ|/b)
// where f(t) = 1/(α−1)·log(α/(2α−1)e^{(α−1)t} + (α−1)/(2α−1)e^{−αt}) is
// the one-dimensional divergence at shift t; f is convex (log-sum-exp of
// affine functions) with f(0) = 0 and f'(0) = 0, hence nondecreasing and
// superadditive on t ≥ 0, so Σ f(tⱼ) ≤ f(Σ tⱼ) ≤ f(c). α = +Inf gives c.
func LaplaceRDP(alpha, sensitivity, b float64) float64 {
	c := sensitivity / b
	cUp := acctUp(c, 2)
	if math.IsInf(alpha, 1) {
		return cUp
	}
	am1 := alpha - 1
	t1 := math.Log(alpha/(2*alpha-1)) + am1*c
	t2 := math.Log(am1/(2*alpha-1)) - alpha*c
	hi, lo := t1, t2
	if lo > hi {
		hi, lo = lo, hi
	}
	w := math.Exp(lo - hi)
	lse := hi + math.Log1p(w)
	// Absolute error of lse = hi + log1p(w): t1 and t2 are each within
	// 4u(1 + |t| + αc) (a log of a quotient, a product with c — itself
	// rounded — and a sum); an error in lo − hi moves log1p(w) by at most
	// w/(1+w) ≤ w times it; log1p, exp and the last sum add a few u·|lse|.
	// Doubled for margin.
	eHi := 8 * acctU * (1 + math.Abs(hi) + alpha*c)
	eLo := 8 * acctU * (1 + math.Abs(lo) + alpha*c)
	e := eHi + w*(eHi+eLo+8*acctU*math.Abs(lo-hi)) + 8*acctU*(1+math.Abs(lse))
	v := acctUp((lse+e)/am1, 4)
	if math.IsNaN(v) { // only for absurd αc ≈ 1e308, where ∞·0 appears
		v = math.Inf(1)
	}
	if p := PureRDP(alpha, cUp); p < v {
		v = p
	}
	if cUp < v {
		v = cUp
	}
	return v
}

// PureRDP returns an upper bound on the order-α Rényi divergence of any
// ε-DP mechanism: the exact worst case, attained by randomized response,
//
//	τ(α) = 1/(α−1) · log( (e^{αε} + e^{(1−α)ε}) / (1 + e^ε) )
//	     = 1/(α−1) · log( cosh((α−½)ε) / cosh(ε/2) ),
//
// together with the bounds ε and αε²/2 ([BS16] Prop 1.4), the minimum of
// the three. Proof of the first (T. Steinke, "Sharp RDP & zCDP from Pure
// DP", differentialprivacy.org 2024, Thm 4): with Z = P(y)/Q(y) the likelihood
// ratio under y ~ Q, ε-DP gives Z ∈ [e^{−ε}, e^ε] and E[Z] = 1, and
// e^{(α−1)τ} = E[Z^α]; z ↦ z^α is convex, so it lies below its chord on
// [e^{−ε}, e^ε], and E[Z^α] is at most the chord's value at E[Z] = 1,
// which is the expression above. Evaluated as
// log1p(2 sinh(αε/2) sinh((α−1)ε/2)/cosh(ε/2))/(α−1) (no cancellation for
// small ε), or for αε > 600 as ε + (log1p(e^{−(2α−1)ε}) − log1p(e^{−ε}))/(α−1).
func PureRDP(alpha, eps float64) float64 {
	if eps == 0 {
		return 0
	}
	if math.IsInf(alpha, 1) {
		return eps
	}
	am1 := alpha - 1
	var v float64
	if alpha*eps <= 600 {
		q := 2 * math.Sinh(alpha*eps/2) * math.Sinh(am1*eps/2) / math.Cosh(eps/2)
		// sinh and cosh amplify the rounding of their arguments by up to
		// their size (≤ αε/2 each): allow 48 + 4αε ulps.
		v = acctUp(math.Log1p(q)/am1, 48+4*alpha*eps)
	} else {
		d := math.Log1p(math.Exp(-(2*alpha-1)*eps)) - math.Log1p(math.Exp(-eps))
		v = eps + d/am1
		v += 16 * acctU * (eps + (2+alpha*eps)/am1)
		v = acctUp(v, 4)
	}
	if eps < v {
		v = eps
	}
	if z := acctUp(alpha*eps*eps/2, 8); z < v {
		v = z
	}
	return v
}

// rdpToDPUp returns upper bounds on the CKS20 Prop 12 conversion and the
// classic [M17] Prop 3 conversion of (α, τ)-RDP at δ, each clamped at 0
// ((ε, δ)-DP implies (ε', δ)-DP for ε' ≥ ε). No validation.
func rdpToDPUp(alpha, tau, delta float64) (cks, classic float64) {
	if math.IsInf(tau, 1) {
		return tau, tau
	}
	if math.IsInf(alpha, 1) {
		return tau, tau
	}
	am1 := alpha - 1
	ld := math.Log(delta)
	classic = acctSumUp(tau, -ld/am1)
	if alpha < 2 {
		// log((α−1)/α) as log(α−1) − log α: α−1 is exact here (Sterbenz)
		// and both logs are well conditioned, unlike log1p(−1/α) near α = 1.
		cks = acctSumUp(tau, math.Log(am1), -math.Log(alpha), -ld/am1, -math.Log(alpha)/am1)
	} else {
		cks = acctSumUp(tau, math.Log1p(-1/alpha), -ld/am1, -math.Log(alpha)/am1)
	}
	if cks > classic {
		cks = classic
	}
	return math.Max(cks, 0), math.Max(classic, 0)
}

// RDPToDP converts an (α, τ)-RDP guarantee to (ε, δ)-DP: it returns
// ε = min(τ + log((α−1)/α) − (log δ + log α)/(α−1) [CKS20 Prop 12],
// τ + log(1/δ)/(α−1) [M17 Prop 3]), at least 0, rounded up.
func RDPToDP(alpha, tau, delta float64) (float64, error) {
	if !(alpha > 1) {
		return 0, acctErrorf("RDP order α = %v must be > 1", alpha)
	}
	if !(tau >= 0) {
		return 0, acctErrorf("RDP value τ = %v must be ≥ 0", tau)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	e, _ := rdpToDPUp(alpha, tau, delta)
	return e, nil
}

// RDPToDPClassic is the classic conversion τ + log(1/δ)/(α−1) ([M17]
// Prop 3), rounded up; RDPToDP is never larger.
func RDPToDPClassic(alpha, tau, delta float64) (float64, error) {
	if !(alpha > 1) {
		return 0, acctErrorf("RDP order α = %v must be > 1", alpha)
	}
	if !(tau >= 0) {
		return 0, acctErrorf("RDP value τ = %v must be ≥ 0", tau)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	_, c := rdpToDPUp(alpha, tau, delta)
	return c, nil
}

// RDPEpsilon converts an RDP curve given at orders[i] (taus[i] = τ(αᵢ)) to
// (ε, δ)-DP: the minimum over the orders of RDPToDP, and the order that
// attains it.
func RDPEpsilon(orders, taus []float64, delta float64) (eps, order float64, err error) {
	if len(orders) != len(taus) || len(orders) == 0 {
		return 0, 0, acctErrorf("RDPEpsilon needs as many τ as orders (got %d and %d, at least one)", len(taus), len(orders))
	}
	eps = math.Inf(1)
	for i, a := range orders {
		e, err := RDPToDP(a, taus[i], delta)
		if err != nil {
			return 0, 0, err
		}
		if e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}
