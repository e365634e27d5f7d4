package dpalgo

import (
	"fmt"
	"math"
	"sync"

	"github.com/pairfed/pairfed/pairwise"
)

// pairGradGap returns Γ, a bound on the change of one pair's gradient when
// one of its two records is replaced, at the same parameter w:
//
//	‖∇ℓ(w; z, z_j) − ∇ℓ(w; z′, z_j)‖ ≤ Γ   for all z, z′, z_j of norm ≤ R, w ∈ W
//
// (and the same with the pair's order swapped), for the loss alone — the
// regularizer (λ/2)‖w‖² is the same on both sides and cancels. The
// triangle inequality gives Γ ≤ 2G_ℓ, which the papers use. For the AUC
// losses it is smaller:
//
// Proof (AUC). The gradient is d·(x − x_j) with d = ∂f/∂h. For a FIXED
// partner z_j the coefficient d keeps one sign whatever z is: the AUC
// losses are symmetrized with s = (y − y_j)/2, which for y_j = −1 is 0 or
// +1 and for y_j = +1 is 0 or −1; d = −c·σ(…) (logistic, c = y − y_j),
// −s (hinge) or −2s(1 − s·h) (square) then lies in an interval [m, M]
// containing 0 (0 for a same-label z). Let a = x, a′ = x′, b = x_j (norms
// ≤ R) and d, d′ ∈ [m, M]:
//
//	‖d(a − b) − d′(a′ − b)‖ = ‖d·a − d′·a′ − (d − d′)·b‖
//	                        ≤ R(|d| + |d′| + |d − d′|),
//
// which is 2R·max(|d|, |d′|) when d, d′ have the same sign and 2R|d − d′|
// otherwise: Γ = 2R·(max(M, 0) − min(m, 0)).
//   - logistic: d ∈ [−2, 0] (y_j = −1; symmetric for +1): Γ = 4R = G.
//   - hinge: d ∈ {−1, 0}: Γ = 2R = G.
//   - square: d = −2(1 − h), |h| ≤ 2RB: d ∈ [−2(1+2RB), max(0, 2(2RB−1))]:
//     Γ = 4R(1+2RB) = G when 2RB ≤ 1, else 2R·8RB = 16R²B (between G and
//     2G). For RB > 1/2 the one-sign argument does not apply, so "Γ = G"
//     is not proved there; a brute-force search (TestPairGradGapBruteForce)
//     finds no change above G at R = B = 1, so 16R²B may be loose, but it
//     is what is proved and what is used.
//
// The bound is attained (logistic and hinge): d = −2 (resp. −1) at x = −x_j
// with ‖x_j‖ = R versus a same-label z′ (d′ = 0) changes the gradient by
// 2R·|d|.
//
// Metric losses: the coefficient's sign depends on whether the labels
// agree (τ, y·y′), so flipping z's label at the same x changes the sign.
// Hinge: Γ = 2G, attained (a label flip at W = 0 turns +vvᵀ into −vvᵀ).
// Logistic on a PSD parameter set (psd: frobenius-psd, nuclear-psd, psd):
// the gradient is g = c·vvᵀ, v = x − x_j (‖v‖ ≤ 2R, ‖vvᵀ‖_F = ‖v‖² ≤ G =
// 4R²), with c = σ(h − 1) for a similar pair and c = −σ(1 − h) for a
// dissimilar one, h = vᵀWv. W ⪰ 0 with ‖W‖_op ≤ ‖W‖_F ≤ B gives
// h ∈ [0, 4R²B], so c ∈ (0, s₊] or [−s₋, 0) with s₊ = σ(4R²B − 1) and
// s₋ = σ(1). Replacing z by z′ (v′, c′):
//
//	‖g − g′‖²_F = c²‖v‖⁴ + c′²‖v′‖⁴ − 2cc′(vᵀv′)².
//
// If c, c′ have the same sign the last term is ≤ 0: ‖g − g′‖ ≤
// √2·max(s₊, s₋)·G. Otherwise ‖g − g′‖ ≤ |c|‖v‖² + |c′|‖v′‖² ≤ (s₊ + s₋)G.
// So Γ ≤ G·max{√2·max(s₊, s₋), s₊ + s₋} (< 1.74G; 1.684G at R = B = 1).
// The opposite-sign case is tightened by metricLogisticOpposite, which
// couples h and h′ through W (1.377G at R = B = 1, where the brute force
// finds 1.225G). Without a PSD set h can be negative and c approach ±1:
// Γ = 2G is kept.
func pairGradGap(obj pairwise.Objective, R float64) (float64, string) {
	return lossPairGradGap(obj.Loss(), R, obj.Constraint().Radius(), isPSDConstraint(obj.Constraint().Name()))
}

// isPSDConstraint reports whether the named constraint keeps W ⪰ 0.
func isPSDConstraint(name string) bool {
	return name == "frobenius-psd" || name == "nuclear-psd" || name == "psd"
}

// lossPairGradGap is pairGradGap for a loss, feature radius R, parameter
// radius B and whether the parameter set is PSD (metric task; false is
// always safe).
func lossPairGradGap(loss pairwise.Loss, R, B float64, psd bool) (float64, string) {
	G := loss.Props(R, B).Lipschitz
	if loss.Task() != pairwise.TaskAUC {
		if loss.Name() == "logistic" && psd {
			sp, sm := pairwise.SigmoidNeg(1-4*R*R*B), pairwise.SigmoidNeg(-1) // σ(4R²B − 1), σ(1)
			opp := sp + sm
			if t := 4 * R * R * B; t > 0 && !math.IsInf(t, 0) {
				opp = math.Min(opp, metricLogisticOpposite(t))
			}
			f := math.Min(2, math.Max(math.Sqrt2*math.Max(sp, sm), opp)*(1+1e-12))
			return f * G, fmt.Sprintf("Γ = %.4gG (metric logistic loss on a PSD set: max{√2·max(s₊, s₋), opposite-sign bound %.4g}, s₊ = σ(4R²B − 1), s₋ = σ(1))", f, opp)
		}
		return 2 * G, "Γ = 2G (metric loss: the gradient's sign follows the label agreement)"
	}
	switch loss.Name() {
	case "logistic", "hinge":
		return G, "Γ = G (AUC loss: for a fixed partner the gradient coefficient keeps one sign)"
	case "square":
		if 2*R*B <= 1 {
			return G, "Γ = G (AUC square loss with 2RB ≤ 1: the coefficient keeps one sign)"
		}
		return math.Min(16*R*R*B, 2*G), "Γ = 16R²B (AUC square loss with 2RB > 1: the coefficient ranges over [−2(1+2RB), 2(2RB−1)])"
	}
	return 2 * G, "Γ = 2G"
}

// paramDiameter is D = sup_{w,w′ ∈ W} ‖w − w′‖: 2r for a ball of radius r;
// √2·r for the PSD sets of radius r (‖X − Y‖_F² = ‖X‖² + ‖Y‖² − 2⟨X, Y⟩ ≤
// 2r² because ⟨X, Y⟩ ≥ 0 for PSD X, Y, attained by r·e₁e₁ᵀ and r·e₂e₂ᵀ; r
// when d = 1); 2·Radius otherwise; +Inf without a radius.
//
// Any release that is a point of W (a projected iterate) or a convex
// combination of such points (an average of projected iterates; W is
// convex) has ℓ2 sensitivity ≤ D, whatever the data: the "diameter bound"
// used by every output-perturbation algorithm below, which needs no
// stability argument and holds with probability 1.
func paramDiameter(obj pairwise.Objective) float64 {
	return constraintDiameter(obj.Constraint(), obj.Data().D)
}

// binomialQuantile returns the smallest integer c ≥ 0 with
// P(X > c) ≤ gamma for X ~ Binomial(N, p), computed from the exact pmf
// (log-gamma, summed from the top), with a relative allowance of 1e-9 on
// the tail for rounding: the returned c is never too small.
func binomialQuantile(N int, p, gamma float64) int {
	k := bqKey{N, p, gamma}
	bqMu.Lock()
	v, ok := bqMemo[k]
	bqMu.Unlock()
	if ok {
		return v
	}
	v = binomialQuantileUncached(N, p, gamma)
	bqMu.Lock()
	if len(bqMemo) >= 1<<12 {
		clear(bqMemo)
	}
	bqMemo[k] = v
	bqMu.Unlock()
	return v
}

// binomialQuantile is pure and costs O(N) Lgamma calls; every private run
// calls it with the same arguments (the audit runs thousands), so its
// results are memoized (at most 4096 entries, then cleared).
type bqKey struct {
	n        int
	p, gamma float64
}

var (
	bqMu   sync.Mutex
	bqMemo = map[bqKey]int{}
)

func binomialQuantileUncached(N int, p, gamma float64) int {
	if p >= 1 {
		return N
	}
	if p <= 0 || N <= 0 {
		return 0
	}
	lgN, _ := math.Lgamma(float64(N) + 1)
	lp, lq := math.Log(p), math.Log1p(-p)
	logpmf := func(k int) float64 {
		a, _ := math.Lgamma(float64(k) + 1)
		b, _ := math.Lgamma(float64(N-k) + 1)
		return lgN - a - b + float64(k)*lp + float64(N-k)*lq
	}
	tail := 0.0 // P(X > c) for the current c
	for c := N; c > 0; c-- {
		t := tail + math.Exp(logpmf(c)) // P(X ≥ c) = P(X > c−1)
		if t*(1+1e-9) > gamma {
			return c
		}
		tail = t
	}
	return 0
}

// metricLogisticOpposite bounds, in units of G = 4R², the change of a
// metric logistic pair gradient when a similar pair (c = σ(h − 1), v) is
// replaced by a dissimilar one (c′ = −σ(1 − h′), v′) or back, on a PSD set
// of radius B, with t = 4R²B = G·B > 0 finite:
//
//	‖g − g′‖² = c²a² + c′²a′² + 2|cc′|·a·a′·κ,   a = ‖v‖², a′ = ‖v′‖² ≤ G,
//
// κ = (uᵀu′)² for the unit directions u, u′. The two coefficients are
// coupled through W: with P = u′ᵀWu′ ∈ [0, B] and u = √κ·u′ + √(1−κ)·e
// (e ⊥ u′, up to signs), ‖W^{1/2}u‖ ≤ √κ‖W^{1/2}u′‖ + √(1−κ)‖W^{1/2}e‖,
// so Q = uᵀWu ≤ Q* = min{B, (√κ√P + √(1−κ)√B)²}. The expression grows
// with c = σ(aQ − 1), so with Q and a: |c|a ≤ X = G·σ(G·Q* − 1); and
// |c′|a′ = a′σ(1 − a′P) ≤ Y(P) = max_{a′≤G} a′σ(1 − a′P), which does not
// grow with P. Hence ‖g − g′‖²/G² ≤ Φ(κ, P) = X̃² + Ỹ² + 2X̃Ỹκ (X̃ = X/G,
// Ỹ = Y/G). The supremum over κ ∈ [0, 1], P ∈ [0, B] is bounded on a grid
// of cells with each factor at its cell maximum (Q* at the cell's largest
// κ in its first term and smallest κ in its second, the largest P; Y at
// the smallest P, itself bounded over cells of a′ by a′_hi·σ(1 − a′_lo·P);
// κ at its largest), so the value returned is a certified upper bound,
// whatever the grid's resolution (which only decides how close it is to
// the supremum: 1.377 at t = 4, against the uncoupled σ(t − 1) + σ(1) =
// 1.684). Memoized per t.
func metricLogisticOpposite(t float64) float64 {
	mloMu.Lock()
	v, ok := mloMemo[t]
	mloMu.Unlock()
	if ok {
		return v
	}
	const N = 400 // cells per axis
	sig := func(u float64) float64 { return pairwise.SigmoidNeg(-u) }
	// Ỹ_j: the bound on Y/G over P̃ ∈ [P̃_j, P̃_{j+1}] (P̃ = P/B, α = a′/G),
	// Ỹ(P̃_j) ≤ max_k α_{k+1}·σ(1 − α_k·t·P̃_j).
	yb := make([]float64, N)
	for j := range yb {
		pl := float64(j) / N
		for k := 0; k < N; k++ {
			yb[j] = math.Max(yb[j], float64(k+1)/N*sig(1-float64(k)/N*t*pl))
		}
	}
	best := 0.0
	for i := 0; i < N; i++ {
		kl, kh := float64(i)/N, float64(i+1)/N
		for j := 0; j < N; j++ {
			ph := float64(j+1) / N
			q := math.Sqrt(kh)*math.Sqrt(ph) + math.Sqrt(1-kl)
			q = math.Min(1, q*q) // Q*/B
			x := sig(t*q - 1)
			y := yb[j]
			best = math.Max(best, x*x+y*y+2*x*y*kh)
		}
	}
	v = math.Sqrt(best) * (1 + 1e-9)
	mloMu.Lock()
	if len(mloMemo) >= 1<<10 { // t comes from flags and job specs: bounded
		clear(mloMemo)
	}
	mloMemo[t] = v
	mloMu.Unlock()
	return v
}

var (
	mloMu   sync.Mutex
	mloMemo = map[float64]float64{} // t → metricLogisticOpposite(t)
)

// constraintDiameter returns ‖C‖₂ = max_{w, w' ∈ C} ‖w − w'‖ for the parameter
// sets of pairfed: 2r for a ball of radius r; √2·r for the PSD sets of
// radius r (‖W − W'‖² = ‖W‖² + ‖W'‖² − 2⟨W, W'⟩ ≤ 2r² since ⟨W, W'⟩ ≥ 0 for
// PSD W, W', attained by r·e₁e₁ᵀ and r·e₂e₂ᵀ; r when d = 1).
func constraintDiameter(c pairwise.Projector, d int) float64 {
	r := c.Radius()
	switch c.Name() {
	case "frobenius-psd", "nuclear-psd":
		if d == 1 {
			return r
		}
		return math.Sqrt2 * r
	}
	return 2 * r
}

// GDSensitivity returns the tight ℓ2 sensitivity, under replacement of
// one of the n records (norms ≤ R), of the loss part of the full pairwise
// gradient 1/(n(n−1)) Σ_{i≠j} ∇f at any w in obj's parameter set, with a
// sentence saying why (see the file comment).
func GDSensitivity(obj pairwise.Objective, R float64) (float64, string, error) {
	n := float64(obj.Data().N)
	B := obj.Constraint().Radius()
	if obj.Task() == pairwise.TaskMetric {
		G := obj.Loss().Props(R, B).Lipschitz
		if math.IsInf(G, 0) || math.IsNaN(G) {
			return 0, "", fmt.Errorf("dpalgo: the metric %s loss has no finite gradient bound at R = %g, B = %g", obj.Loss().Name(), R, B)
		}
		return 4 * G / n, fmt.Sprintf("Δ = 4G/n, G = %g (metric: the two pair gradients of a j may have opposite signs)", G), nil
	}
	var lo, hi float64
	switch obj.Loss().(type) {
	case pairwise.AUCHinge:
		lo, hi = -1, 0
	case pairwise.AUCLogistic:
		lo, hi = -2, 0
	case pairwise.AUCSquare:
		if math.IsInf(B, 1) {
			return 0, "", fmt.Errorf("dpalgo: the square loss has unbounded gradients without a parameter radius: use --constraint l2 --param-radius B")
		}
		lo, hi = -2*(1+2*R*B), -2*(1-2*R*B)
	default:
		return 0, "", fmt.Errorf("dpalgo: no sensitivity bound for the %s AUC loss", obj.Loss().Name())
	}
	c := 2 * R * math.Max(math.Max(math.Abs(lo), math.Abs(hi)), hi-lo)
	return 2 * c / n, fmt.Sprintf("Δ = 2c/n, c = 2R·max(|lo|, |hi|, hi − lo) = %g for ∂f/∂h ∈ [%g, %g] (each other-class record's pair gradients change by ≤ c)", c, lo, hi), nil
}
