package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// dp-objpert: logistic regression by objective perturbation — the exact
// minimizer of a ridge-logistic objective to which a Gaussian linear term
// was added — with a certified solver and a small output noise that covers
// the solver's last digits (approximate minima perturbation).
//
// # Why
//
// DP-SGD and noisy gradient descent pay for every step they take; the
// releases of dp-lda are d²-sized. Objective perturbation (Chaudhuri,
// Monteleoni & Sarwate 2011; Kifer, Smith & Thakurta 2012) adds ONE
// p-vector of noise, inside the objective, and then solves it exactly,
// curvature included: the logistic model's optimum at the noise of a single
// Gaussian release. On data where the logistic model fits better than the
// Fisher discriminant and n is large (ijcnn1, a9a) it is the most accurate
// private linear model pairfed has (docs/results/regret-failing.md,
// "dp-objpert and dp-select").
//
// # Mechanism
//
//  1. Release A, the centre (dp-lda's, private_lda.go): ĉ = R·v̂_A/n
//     clamped into the R-ball, v̂_A = Σ_i x_i/R + N(0, σ_A²I), Δ = 2.
//
//  2. Records u_i = R(x_i − ĉ)/‖x_i − ĉ‖ (0 at ĉ), the directions of dp-lda,
//     and z_i = (a·u_i/R, b) with b = κ/2, a = κ√3/2, κ = 1 − 2⁻⁴⁰, so
//     ‖z_i‖ ≤ 1 in floating point (the trailing b carries the intercept).
//     Given ĉ this is a per-record map. (Measured, with the first form's
//     equal split below, against the records themselves, clipped to R and
//     not centred, the textbook form: ijcnn1
//     0.915 vs 0.919 at ε = 1, but diabetes 0.71 vs 0.69 and, on the
//     synthetic grid, the largest s₊ where it trails dp-lda by more than
//     0.01 falls from ≈ 38 (−0.017 on a held-out cell) to ≈ 15:
//     docs/results/regret-failing.md.)
//
//     The split b² = 1/4 of the unit norm. The noise bᵀθ is isotropic, so
//     whatever the intercept's coordinate takes of ‖z‖ ≤ 1 is taken from
//     the features' signal-to-noise, which is ∝ a. But the intercept must
//     still carry the class offset o (the log-odds of the positive share):
//     it does so with θ₀ = o/b, and the ridge's pull Λθ₀ and the
//     coordinate's own noise reach the residual sum Σ_i y_iσ(−y_iθᵀz_i)
//     as (Λ|o|/b + σ)/b, which must stay small against the minority
//     count. b = 1/2 gives the features 1.22× the signal-to-noise of the
//     equal split a = b = κ/√2 (the first form) at twice its intercept
//     term; b = 1/4, and b = 1/√(d + 1) (the intercept weighted like one
//     feature), gain more where the classes are balanced but lose where
//     the minority is small for that term (3 % positives at d = 50:
//     −0.029 and −0.051 against dp-lda, b = 1/2 −0.024) or d is small
//     (d = 5: −0.029 against −0.008). Measured on the synthetic shapes of
//     docs/results/regret-objpert.md, which has both forms.
//
//  3. With labels y_i ∈ {±1}, p = d + 1,
//
//     J_b(θ) = Σ_i ℓ(y_i θᵀz_i) + (Λ/2)‖θ‖² + bᵀθ,   ℓ(m) = ln(1 + e^{−m}),
//
// b drawn once from the secure sampler at scale σ (b = g·K, K the discrete
// Gaussian on the grid g ≤ σ2⁻⁴⁶). The solver (Newton with backtracking, a
// strongly convex smooth objective) returns θ_c with a CERTIFIED bound
// ‖∇J_b(θ_c)‖ ≤ γ in exact arithmetic (opCertify: the float gradient with
// compensated sums plus a bound on every rounding), γ = 10⁻¹¹n + 10⁻⁹
// public. The release is θ_out = θ_c + N(0, σ₂²I_p) (secure, snapped), and
// the model is its first d coordinates, applied to the records (θᵀz ranks
// as θ_{1:d}ᵀu; as for dp-lda the score on x is that direction's).
//
// # Privacy (replace-one neighbours, n public)
//
// Budget: (ε_A, δ_A) = (ε, δ)/20 for the centre, (ε₂, δ₂) = (ε, δ)/100
// for the output noise, (ε₁, δ₁) the rest for the perturbed minimizer,
// composed by basic (adaptive) composition: steps 1–5 below are for the
// minimizer on the records z_i, which are per-record functions of the
// data once ĉ is released.
//
// 1. The ideal mechanism. Let b̃ = gK + U with U uniform on the grid cell
// (b̃ has the staircase density f(b) = P(K = round(b/g))/g^p) and
// θ* = argmin J_{b̃}. F_D(θ) = Σ_i ℓ_i + (Λ/2)‖θ‖² is Λ-strongly convex and
// smooth, so θ ↦ b = −∇F_D(θ) is a bijection and the density of θ* is
// p_D(θ) = f(−∇F_D(θ))·det ∇²F_D(θ). For D' replacing record k (z, y) by
// (z', y'): ∇F_{D'} = ∇F_D + ∇ℓ'(θ) − ∇ℓ(θ), where ∇ℓ = c·z with
// c = −yσ(−yθᵀz) ∈ (−1, 1) — so the shift s = b_{D'} − b_D = c'z' − cz —
// and ∇²F_D = H₀ + a·zzᵀ with H₀ ⪰ ΛI the Hessian without record k and
// a ∈ [0, β] its loss's second derivative (β = 1/4): with a' that of
// (z', y'), the determinant ratio (1 + a·zᵀH₀⁻¹z)/(1 + a'·z'ᵀH₀⁻¹z') lies
// in [1/(1 + β/Λ), 1 + β/Λ] (‖z‖, ‖z'‖ ≤ 1).
//
// 2. The privacy loss at θ, with b = b_D(θ) ~ the noise law under D:
// L = [‖b + s‖² − ‖b‖²]/(2σ²) ± ln det-ratio (for a continuous N(0, σ²I)
// b; step 4 handles the discrete one). 2bᵀs + ‖s‖² is convex in (c, c'),
// so over |c|, |c'| ≤ 1 it is largest at a corner: s = ±(z − z') or
// ±(z + z'), i.e. L ≤ ε_J + max(2|A| + a², 2|B| + b²)/(2σ²) with
// ε_J = ln(1 + β/Λ), A = bᵀ(z − z') ~ N(0, σ²a²), B = bᵀ(z + z')
// ~ N(0, σ²b²), a² + b² = 2(‖z‖² + ‖z'‖²) ≤ 4. c depends on θ (hence on
// b), which the corner bound absorbs: it holds for every θ.
//
// 3. δ. δ(ε) = E[(1 − e^{ε−L})₊] = ∫_ε^∞ e^{ε−v} P(L > v) dv, so a bound on
// the tail P(L > v) for v ≥ ε gives δ. With w = 2σ²(v − ε_J),
// P(L > v) ≤ h_w(a²) + h_w(b²), h_w(t) = 2Q((w − t)/(2σ√t)) (h_w(0) = 0).
// h_w″ = 2φ(k)(k·k′² − k″) with k(t) = (w − t)/(2σ√t), which is ≥ 0 iff
// (w − t)(w + t)² ≥ 4σ²t(3w + t); for t ≤ 4 it suffices that
// (w − 4)w² ≥ 16σ²(3w + 4) (dp.ObjPertConvex checks it for every
// w ≥ w₀ = 2σ²(ε − ε_J)). A convex h_w with h_w(0) = 0 has
// h_w(t) + h_w(S − t) ≤ h_w(S) ≤ h_w(4) (h_w grows with t), and h_w(4) is
// the tail of μ|Z| + μ²/2 with μ = 2/σ — the folded Gaussian loss, whose
// hockey-stick integral is exactly 2δ_G(ε − ε_J; μ) when
// ε − ε_J ≥ μ²/2 (w₀ ≥ 4). Without the condition each term is ≤ h_w(4)
// (because (w − t)/√t falls with t) and δ ≤ 4δ_G. The other direction
// (D' against D) is the same argument with the roles swapped.
//
// 4. The discrete noise. TV(b̃, N(0, σ²I)) ≤ p·(SecureGaussianTV + 2⁻⁴⁴)
// (dp/objpert.go: the sampler against round(N(0, σ²)), and the cell average
// of the Gaussian density against itself), and the map b̃ ↦ θ* is the same
// under both laws, so the ideal mechanism is (ε₁, δ₁)-DP with
// δ₁ ≥ dp.ObjPertDelta(σ, ε₁, ε_J, p) (which adds (1 + e^ε)·p·TV).
//
// 5. What the implementation computes. It draws b = gK (no U) and returns
// θ_c with ‖∇J_b(θ_c)‖ ≤ γ certified. Then ‖∇J_{b̃}(θ_c)‖ ≤ γ + ‖U‖ ≤
// γ + g√p/2 and, by Λ-strong convexity, ‖θ_c − θ*‖ ≤ r = (γ + g√p/2)/Λ.
// Given D and θ*, b̃ = −∇F_D(θ*) and hence K = round(b̃/g) and θ_c are
// determined: h = θ_c − θ* is a function of (D, θ*) with
// ‖h(D, θ*) − h(D', θ*)‖ ≤ 2r. θ_out = θ* + (h + Z) is post-processing of
// (θ*, h + Z), the adaptive composition of the ideal mechanism and a
// Gaussian mechanism of sensitivity 2r (its (ε₂, δ₂) by calibrateSnapped):
// with release A, (ε_A + ε₁ + ε₂, δ_A + δ₁ + δ₂) = (ε, δ). (Iyengar et
// al. 2019's approximate minima perturbation, with the grid's U absorbed
// in the same slack.)
//
// If the solver cannot certify γ, the run stops with an error before any
// release — an event that would depend on the data, so the margin matters.
// The certificate's rounding allowance does not grow with ‖θ‖ (opCertify:
// the margins are summed error-free and σ'(m)·|m| ≤ 1/e): ≈ 15u·n per
// coordinate, 10⁻¹⁵·n·√p, far below γ for every p MaxDim allows. What
// Newton's iterates reach is the float gradient at a rounded θ, ≈ u·‖H‖‖θ‖;
// the ridge Λ ≥ 1 keeps ‖θ‖ moderate even on separable records
// (TestObjPertCertificate: 9·10⁻¹³ on ordinary data; on separable data
// with a ridge of 10⁻³, ‖θ‖ = 6.6·10³, still 12× below γ).
//
// # Hyperparameters (public, from ε only)
//
// ε_J = ε₁/10, so Λ = β/(e^{ε_J} − 1) (2.4 at ε = 1), but at least 1 (from
// ε ≈ 2.4 on, where ε_J = ln(5/4) is then less than a tenth): the Jacobian
// term costs at most a tenth of the budget, and Λ is a ridge that is
// negligible against n·Var(z) for the n where this mechanism is useful
// and keeps ‖θ‖ moderate (above). The output noise's share (1 %) and γ
// make σ₂ ≈ 10⁻³–10⁻² of the perturbation's own noise in θ.
//
// # When it is the default
//
// On the synthetic grid it trails dp-lda when the minority class is small
// for the dimension: with s₊ = μ·min(n₊, n₋)/(d + 1) below ≈ 15 by 0.01–0.1
// AUC (the Fisher discriminant's noise falls as 1/n, the logistic
// optimum's as 1/min(n₊, n₋) along the directions the minority's curvature
// must pin). The class counts are private, so the default picks it through
// dp-select (private_select.go), which releases a noisy count first.
var objPertAlg = &pairwise.Algorithm{
	Name:    "dp-objpert",
	MaxDim:  sspMaxDim,
	Title:   "logistic regression by objective perturbation: the certified minimizer of a ridge-logistic objective plus one Gaussian linear term",
	Paper:   "pairfed (objective perturbation of Chaudhuri, Monteleoni & Sarwate 2011 and Kifer, Smith & Thakurta 2012, approximate minima perturbation of Iyengar et al. 2019; the replace-one tail bound and the certified solver are pairfed's)",
	Ref:     "private_objpert.go",
	Setting: "full-batch",
	Tasks:   []pairwise.Task{pairwise.TaskAUC},
	Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer; fits the ridge-logistic model with an intercept whatever --loss " +
		"(the proof needs the logistic loss's |ℓ'| ≤ 1 and ℓ'' ≤ 1/4)",
	Private:          true,
	NoiseInObjective: true,
	CentresPrivately: true,
	PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours (n public). A Gaussian centre (Δ = 2, (ε, δ)/20), then objective perturbation on the records' directions from it: one Gaussian vector b in the " +
		"objective (Jacobian term ln(1 + 1/(4Λ)), gradient corners of norm ≤ 2, δ ≤ 2·δ_G(ε₁ − ε_J; 2/σ) by a convex tail bound, " +
		"dp.ObjPertSigma), a certified solver and a Gaussian output noise of sensitivity 2(γ + g√p/2)/Λ for the solver's " +
		"residual; basic composition of the three ((ε, δ) = 5 % + 94 % + 1 %).",
}

func init() {
	objPertAlg.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, _ *rand.Rand) (*pairwise.Result, error) {
		return runObjPert(ctx, obj, cfg)
	}
	pairwise.Register(objPertAlg)
}

// The written rule's constants (see the file comment).
const (
	opBeta        = 0.25              // the logistic loss's ℓ'' bound for ‖z‖ ≤ 1
	opJacShare    = 0.1               // ε_J = ε₁/10
	opOutputShare = 0.01              // (ε₂, δ₂) = (ε, δ)/100
	opCentreShare = 0.05              // (ε_A, δ_A) = (ε, δ)/20
	opBias        = (1 - 0x1p-40) / 2 // b: the intercept's coordinate of z
)

// opFeat is a = κ√(1 − 1/4), the length of the features' part of z (the
// file comment, step 2): a² + b² = κ² < 1.
var opFeat = math.Sqrt(0.75) * (1 - 0x1p-40)

// ObjPertPlan is dp-objpert's public calibration for n records of d
// features at (ε, δ).
type ObjPertPlan struct {
	P             int     // parameters, d + 1
	EpsA, DeltaA  float64 // the centre release's share
	SigmaA        float64 // its noise (Δ = 2 on Σ x/R)
	Eps1, Delta1  float64 // the perturbed minimizer's share
	EpsJ, Lambda  float64 // the Jacobian term and the ridge
	Sigma         float64 // the objective's noise
	Eps2, Delta2  float64 // the output noise's share
	Gamma, Radius float64 // the certified gradient bound γ and r = (γ + g√p/2)/Λ
	Sigma2, Sens2 float64 // the output noise and its sensitivity 2r + g₂√p (snapped)
	Cert          float64 // the certified δ at ε: ObjPertDelta + the output release's δ
}

// NewObjPertPlan returns the plan (the file comment's rule).
func NewObjPertPlan(n, d int, eps, delta float64) (ObjPertPlan, error) {
	if n < 2 || d < 1 {
		return ObjPertPlan{}, fmt.Errorf("dp-objpert needs n ≥ 2 records and d ≥ 1 features, got n = %d, d = %d", n, d)
	}
	if !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) {
		return ObjPertPlan{}, fmt.Errorf("dp-objpert needs ε > 0 finite and δ in (0, 1), got ε = %v, δ = %v", eps, delta)
	}
	var pl ObjPertPlan
	pl.P = d + 1
	pl.EpsA, pl.DeltaA = eps*opCentreShare, delta*opCentreShare
	pl.Eps2, pl.Delta2 = eps*opOutputShare, delta*opOutputShare
	// the rest, so that the three shares add up to at most (ε, δ) in
	// exact arithmetic (basic composition, and the certificate printed at ε)
	pl.Eps1, pl.Delta1 = dp.BudgetRest(eps, pl.EpsA, pl.Eps2), dp.BudgetRest(delta, pl.DeltaA, pl.Delta2)
	sA, err := calibrateSnapped(pl.EpsA, pl.DeltaA*0.999, 2, d)
	if err != nil {
		return ObjPertPlan{}, fmt.Errorf("dp-objpert: the centre: %w", err)
	}
	pl.SigmaA = sA
	pl.Lambda = math.Max(1, opBeta/math.Expm1(opJacShare*pl.Eps1))
	pl.EpsJ = dp.ObjPertJacobian(opBeta, pl.Lambda)
	s, err := dp.ObjPertSigma(pl.Eps1, pl.Delta1, pl.EpsJ, int64(pl.P))
	if err != nil {
		return ObjPertPlan{}, fmt.Errorf("dp-objpert: %w", err)
	}
	pl.Sigma = s
	g := dp.GaussianGranularity(s)
	pl.Gamma = 1e-11*float64(n) + 1e-9
	pl.Radius = (pl.Gamma + g*math.Sqrt(float64(pl.P))/2) / pl.Lambda * (1 + 1e-12)
	pl.Sigma2, err = calibrateSnapped(pl.Eps2, pl.Delta2*0.999, 2*pl.Radius, pl.P) // a margin for the recomputed certificate's rounding
	if err != nil {
		return ObjPertPlan{}, fmt.Errorf("dp-objpert: the output noise: %w", err)
	}
	g2 := dp.GaussianGranularity(pl.Sigma2)
	pl.Sens2 = dp.SnappedL2Sensitivity(2*pl.Radius, g2, pl.P)
	gA := dp.GaussianGranularity(pl.SigmaA)
	pl.Cert = dp.GaussianDPDelta(dp.SnappedL2Sensitivity(2, gA, d)/pl.SigmaA, pl.EpsA) + dp.DiscreteGaussianDelta(pl.EpsA, int64(d)) +
		dp.ObjPertDelta(pl.Sigma, pl.Eps1, pl.EpsJ, int64(pl.P)) +
		dp.GaussianDPDelta(pl.Sens2/pl.Sigma2, pl.Eps2) + dp.DiscreteGaussianDelta(pl.Eps2, int64(pl.P))
	if pl.Cert > delta {
		return ObjPertPlan{}, fmt.Errorf("dp-objpert: the calibration certifies δ = %.4g > %.4g (a bug: please report it)", pl.Cert, delta)
	}
	return pl, nil
}

// opRows reads the records as z_i = (a·u_i/R, b), u_i the direction of
// x_i from the released centre scaled to R (the file comment); without a
// centre (nil: the tests' raw form) u_i = x_i.
type opRows struct {
	ds     *pairwise.Dataset
	scale  float64 // a/R
	p      int
	centre []float64
}

// row writes z_i into dst (len p).
func (o *opRows) row(dst []float64, i int) []float64 {
	d := o.p - 1
	x := o.ds.DenseRowTo(dst[:d], i)
	sc := o.scale
	if o.centre != nil {
		pairwise.Axpy(-1, o.centre, x)
		if nr := pairwise.Norm2(x); nr > 0 {
			sc = opFeat / nr // a·(R(x − ĉ)/‖x − ĉ‖)/R
		} else {
			sc = 0
		}
	}
	for j := 0; j < d; j++ {
		x[j] *= sc
	}
	dst[d] = opBias
	return dst
}

// opValue returns J_b(θ) (float; the line search's merit function).
func opValue(o *opRows, lam float64, b, th, z []float64) float64 {
	var f float64
	for i := 0; i < o.ds.N; i++ {
		f += pairwise.SoftplusNeg(o.ds.Y[i] * pairwise.Dot(o.row(z, i), th))
	}
	for j, t := range th {
		f += lam/2*t*t + b[j]*t
	}
	return f
}

// opBlock is the number of rows whose rank-k update of the Hessian is
// one BLAS call.
const opBlock = 256

// opGradHess writes ∇J_b(θ) into g and ∇²J_b(θ) into H (float; Newton's
// direction, not the certificate).
func opGradHess(o *opRows, lam float64, b, th, g []float64, H *mat.SymDense, z, blk []float64) {
	p := o.p
	for j := range g {
		g[j] = lam*th[j] + b[j]
	}
	H.Zero()
	k := 0
	flush := func() {
		if k > 0 {
			H.SymRankK(H, 1, mat.NewDense(k, p, blk[:k*p]).T())
			k = 0
		}
	}
	for i := 0; i < o.ds.N; i++ {
		zi := o.row(z, i)
		y := o.ds.Y[i]
		s := pairwise.SigmoidNeg(y * pairwise.Dot(zi, th))
		pairwise.Axpy(-y*s, zi, g)
		r := math.Sqrt(s * (1 - s))
		dst := blk[k*p : (k+1)*p]
		for j, v := range zi {
			dst[j] = r * v
		}
		if k++; k == opBlock {
			flush()
		}
	}
	flush()
	for a := 0; a < p; a++ {
		H.SetSym(a, a, H.At(a, a)+lam)
	}
}

// opCertify returns an upper bound, in exact arithmetic, on ‖∇J_b(θ)‖₂
// for the float θ, b and records z_i: the float gradient, its sums
// compensated (Neumaier), plus a bound on every rounding (u = 2⁻⁵³):
//
//   - the margin m_i = θᵀz_i, summed with error-free transformations
//     (Ogita, Rump & Oishi's Dot2: TwoSum and an FMA for each product's
//     error): e_m = |m̂ − m| ≤ (u|m̂| + γ_p²Σ_k|θ_k z_ik|)(1 + 2u),
//     γ_p = pu/(1 − pu); σ'(ξ) = σ(ξ)σ(−ξ) ≤ min(¼, e^{−|ξ|}), so
//     ĉ_i = −yσ̂(−y m̂) is within min(¼, e^{−(|m̂| − e_m)})·e_m + 5u of c_i
//     (σ̂ = pairwise.SigmoidNeg, 1/(1 + eᵗ) or e^{−t}/(1 + e^{−t}), has relative, hence absolute, error ≤ 4u) — at most
//     ≈ 0.4u + 5u whatever ‖θ‖, since |m|e^{−|m|} ≤ 1/e;
//   - each term t_ij = ĉ_i z_ij is rounded once (u|t|), and the compensated
//     sum is within (2u + 4nu²)Σ|t| of the sum of the rounded terms;
//   - g_j = Λθ_j + b_j + S_j is two products/sums more (2u each on the
//     magnitudes), and the norms are taken with a (1 + (p + 3)u) margin.
func opCertify(o *opRows, lam float64, b, th []float64) float64 {
	const u = 0x1p-53
	p, n := o.p, o.ds.N
	gp := float64(p) * u / (1 - float64(p)*u)
	sum := make([]float64, p)
	comp := make([]float64, p)
	abs := make([]float64, p)
	cerr := make([]float64, p)
	z := make([]float64, p)
	for i := 0; i < n; i++ {
		zi := o.row(z, i)
		y := o.ds.Y[i]
		// Dot2: s + cc is θᵀz with the error bound above.
		var sm, cc, am float64
		for k, v := range zi {
			pr := th[k] * v
			pe := math.FMA(th[k], v, -pr)
			t := sm + pr
			bz := t - sm
			cc += (sm - (t - bz)) + (pr - bz) + pe
			sm = t
			am += math.Abs(pr)
		}
		m := sm + cc
		em := (u*math.Abs(m) + gp*gp*am*(1+2*u)) * (1 + 2*u)
		c := -y * pairwise.SigmoidNeg(y*m)
		ec := math.Min(0.25, math.Exp(-(math.Abs(m)-em)))*em*(1+4*u) + 5*u
		for j, v := range zi {
			t := c * v
			s := sum[j] + t
			if math.Abs(sum[j]) >= math.Abs(t) {
				comp[j] += (sum[j] - s) + t
			} else {
				comp[j] += (t - s) + sum[j]
			}
			sum[j] = s
			abs[j] += math.Abs(t)
			cerr[j] += ec * math.Abs(v)
		}
	}
	var gn, en float64
	for j := 0; j < p; j++ {
		S := sum[j] + comp[j]
		g := lam*th[j] + b[j] + S
		e := cerr[j]*(1+float64(n+2)*u) + (3*u+4*float64(n)*u*u)*abs[j]*(1+float64(n+2)*u) +
			2*u*(math.Abs(lam*th[j])+math.Abs(b[j])+math.Abs(S)) + 2*u*math.Abs(g)
		gn += g * g
		en += e * e
	}
	return (math.Sqrt(gn) + math.Sqrt(en)) * (1 + float64(p+3)*u) * (1 + 1e-9)
}

// opSolve minimizes J_b by Newton's method with backtracking from θ = 0
// until opCertify proves ‖∇J_b(θ)‖ ≤ gamma. It returns θ, the Newton
// steps taken and the certified bound.
func opSolve(ctx context.Context, o *opRows, lam float64, b []float64, gamma float64) ([]float64, int, float64, error) {
	p := o.p
	th := make([]float64, p)
	cand := make([]float64, p)
	g := make([]float64, p)
	z := make([]float64, p)
	blk := make([]float64, opBlock*p)
	H := mat.NewSymDense(p, nil)
	step := mat.NewVecDense(p, nil)
	var ch mat.Cholesky
	f := opValue(o, lam, b, th, z)
	for it := 0; it < 200; it++ {
		if err := ctx.Err(); err != nil {
			return nil, it, 0, err
		}
		opGradHess(o, lam, b, th, g, H, z, blk)
		if pairwise.Norm2(g) <= gamma/2 {
			if c := opCertify(o, lam, b, th); c <= gamma {
				return th, it, c, nil
			}
		}
		if !ch.Factorize(H) {
			return nil, it, 0, fmt.Errorf("dp-objpert: the Hessian (⪰ ΛI by construction) failed to factorize: %w", errObjPertNumeric)
		}
		if err := ch.SolveVecTo(step, mat.NewVecDense(p, g)); err != nil {
			return nil, it, 0, fmt.Errorf("dp-objpert: Newton step: %v: %w", err, errObjPertNumeric)
		}
		dir := step.RawVector().Data
		slope := pairwise.Dot(g, dir)
		t, moved := 1.0, false
		if slope <= 1e-9*(1+math.Abs(f)) {
			// The Newton decrement gᵀH⁻¹g is below what f's rounding
			// can measure: the full step, in Newton's region of
			// quadratic convergence (the next certificate decides).
			for j := range th {
				th[j] -= dir[j]
			}
			f = opValue(o, lam, b, th, z)
			continue
		}
		for ls := 0; ls < 60; ls++ {
			for j := range cand {
				cand[j] = th[j] - t*dir[j]
			}
			if fc := opValue(o, lam, b, cand, z); fc <= f-1e-4*t*slope {
				copy(th, cand)
				f, moved = fc, true
				break
			}
			t /= 2
		}
		if !moved {
			// At the float floor: no decrease is measurable. The
			// certificate decides.
			if c := opCertify(o, lam, b, th); c <= gamma {
				return th, it + 1, c, nil
			}
			return nil, it + 1, 0, fmt.Errorf("dp-objpert: the solver stalled with ‖∇J‖ ≈ %.3g above the certified bound γ = %.3g: %w", pairwise.Norm2(g), gamma, errObjPertNumeric)
		}
	}
	if c := opCertify(o, lam, b, th); c <= gamma {
		return th, 200, c, nil
	}
	return nil, 200, 0, fmt.Errorf("dp-objpert: 200 Newton steps did not certify ‖∇J‖ ≤ γ = %.3g: %w", gamma, errObjPertNumeric)
}

// errObjPertNumeric marks a solver that could not certify its bound (the
// file comment: a programming error, not a data-dependent event).
var errObjPertNumeric = fmt.Errorf("numerical failure, nothing released (please report it)")

func runObjPert(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig) (*pairwise.Result, error) {
	a := objPertAlg
	rep, err := statsReleaseSetup(ctx, a, false, obj, &cfg)
	if err != nil {
		return nil, err
	}
	if !pairwise.IsLinear(obj) {
		return nil, fmt.Errorf("%s fits a linear scorer; the objective is not linear", a.Name)
	}
	ds := obj.Data()
	if ds.D > sspMaxDim {
		return nil, fmt.Errorf("%s solves a (d+1)×(d+1) Newton system per step: d = %d is above the limit %d", a.Name, ds.D, sspMaxDim)
	}
	pr := cfg.Privacy // --calibration paper: refused by the registry (no PaperCalibration)
	pl, err := NewObjPertPlan(ds.N, ds.D, pr.Epsilon, pr.Delta)
	if err != nil {
		return nil, err
	}
	// Release A: the centre (dp-lda's, private_lda.go).
	R := pr.FeatureRadius
	vA := LDACentreVector(ds, R)
	pr.Noise.AddGaussian(vA, pl.SigmaA)
	centre := LDACentre(vA, float64(ds.N), R)
	o := &opRows{ds: ds, scale: opFeat / R, p: pl.P, centre: centre}
	b := make([]float64, pl.P)
	pr.Noise.AddGaussian(b, pl.Sigma)
	th, steps, cert, err := opSolve(ctx, o, pl.Lambda, b, pl.Gamma)
	if err != nil {
		return nil, err
	}
	pr.Noise.AddGaussian(th, pl.Sigma2)
	w := append([]float64(nil), th[:ds.D]...)
	obj.Project(w) // a rescaling at most: AUC is unchanged
	rep.G, rep.L, rep.Alpha = 0, 0, 0
	rep.Mechanism = "objective-perturbation"
	rep.Releases = 3 // the centre, the perturbed minimizer, the output noise
	rep.Sigmas = []float64{pl.SigmaA, pl.Sigma, pl.Sigma2}
	rep.Sensitivity = []float64{2, 2, pl.Sens2}
	rep.SetNoiseDim(pl.P)
	rep.SetCertificate(pr.Epsilon, pl.Cert)
	rep.Formula = fmt.Sprintf("σ_A = %.4g for the centre (Δ = 2) at (ε_A, δ_A) = (%.3g, %.3g); σ = %.4g: the smallest with dp.ObjPertDelta(σ, ε₁ = %.4g, ε_J = %.4g, p = %d) ≤ δ₁ = %.3g; σ₂ = %.4g for the output's sensitivity %.3g at (ε₂, δ₂) = (%.3g, %.3g)",
		pl.SigmaA, pl.EpsA, pl.DeltaA, pl.Sigma, pl.Eps1, pl.EpsJ, pl.P, pl.Delta1, pl.Sigma2, pl.Sens2, pl.Eps2, pl.Delta2)
	rep.Accountant = "a Gaussian centre, objective perturbation's tail bound (dp/objpert.go) and a Gaussian output release, basic composition; certified δ at ε from the three"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("release A (the centre, R = %g): ‖ĉ‖ = %.4g; records z = (a·u/R, b), u = R(x − ĉ)/‖x − ĉ‖, a = κ√3/2, b = κ/2, κ = 1 − 2⁻⁴⁰; ridge Λ = max(1, 1/(4(e^{ε₁/10} − 1))) = %.4g (ε_J = ln(1 + 1/(4Λ)) = %.4g)", R, pairwise.Norm2(centre), pl.Lambda, pl.EpsJ),
		fmt.Sprintf("Newton: %d steps; certified ‖∇J‖ ≤ %.3g ≤ γ = %.3g, so ‖θ − θ*‖ ≤ r = %.3g", steps, cert, pl.Gamma, pl.Radius),
		fmt.Sprintf("fitted the ridge-logistic model with an intercept, whatever --loss (%s); the model is θ's first d coordinates", obj.Loss().Name()))
	if cfg.Init != nil {
		rep.Notes = append(rep.Notes, "the initial model is ignored: the model is the perturbed objective's minimizer")
	}
	return &pairwise.Result{W: w, Steps: steps, PairGrads: int64(steps) * int64(ds.N), Privacy: rep}, nil
}
