package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// dp-gd: full-batch pairwise gradient descent with Gaussian noise on every
// full gradient, the tight per-step sensitivity, few steps and exact
// Gaussian-DP composition.
//
// # Mechanism
//
// For t = 1..T: g_t = ∇L(w_{t−1}; D) + N(0, σ²I_p), with
// ∇L(w; D) = 1/(n(n−1)) Σ_{i≠j} ∇f(w; z_i, z_j) (the loss part of FullGradient;
// the regularizer λw reads no record and is added after the noise),
// w_t = Π_W(w_{t−1} − η(g_t + λw_{t−1})), output w̄ = (1/T) Σ_t w_t. Every
// iterate is post-processing of the released noisy gradients.
//
// # Neighbouring relation and sensitivity (replace one record)
//
// D' replaces z_k = (x_k, y_k) by z'_k, all norms ≤ R. Every loss here is
// symmetric in the pair (the AUC losses are symmetrized, the metric losses
// depend on x − x' through an even function), so the 2(n−1) ordered pairs
// that contain k contribute 2·Σ_{j≠k} ∇f(w; z_k, z_j), and
//
//	∇L(D) − ∇L(D') = 2/(n(n−1)) · Σ_{j≠k} [∇f(w; z_k, z_j) − ∇f(w; z'_k, z_j)].
//
// Linear AUC losses: ∇f(w; z_k, z_j) = ψ_kj (x_k − x_j) with ψ_kj = ∂f/∂h,
// zero unless y_j ≠ y_k. Write ψ ∈ [lo, hi] (signed, for the orientation of
// a positive k) for the range of ∂f/∂h over ‖w‖ ≤ B, ‖x‖ ≤ R.
//
//   - Same label (y_k = y'_k): for each j of the other class the term is
//     ψx_k − ψ'x'_k − (ψ − ψ')x_j, of norm ≤ R(|ψ| + |ψ'| + |ψ − ψ'|), which
//     is 2R·max(|ψ|, |ψ'|) when ψ, ψ' have the same sign and at most
//     2R(hi − lo) otherwise: per-j bound 2R·max(|lo|, |hi|, hi − lo).
//   - Label flip: for each j exactly one of the two gradients is non-zero,
//     of norm ≤ 2R·max(|lo|, |hi|) = G.
//
// So Δ = 2·(n−1)·c_j/(n(n−1)) = 2c_j/n with c_j = 2R·max(|lo|, |hi|, hi − lo).
// For the decreasing losses (hinge: ψ ∈ [−1, 0]; logistic: ψ ∈ (−2, 0)) this
// is Δ = 2G/n with the loss's G = 2R, 4R — half of the generic 4G/n. For the
// square loss ψ = −2(1 − h), h ∈ [−2RB, 2RB]: lo = −2(1 + 2RB),
// hi = −2(1 − 2RB), so c_j = G when 2RB ≤ 1 and 2R·max(2 + 4RB, 8RB)
// otherwise.
//
// Metric losses: ∇f = ψ (x_k − x_j)(x_k − x_j)ᵀ, ‖·‖_F ≤ G; the two terms
// of a j may have opposite signs (the pair type changes with the label), so
// each j contributes ≤ 2G and Δ = 4G/n (the generic bound).
//
// TestGDSensitivityBruteForce checks Δ against random and adversarial
// replacements at random and adversarial w.
//
// # Calibration and accounting
//
// The T releases are Gaussian with equal σ, so they compose to μ-GDP with
// μ = √T·Δ'/σ exactly (Dong, Roth & Su 2019, Cor 3.3), and the T releases
// are (ε, δ)-DP iff one Gaussian release of sensitivity √T·Δ' is: σ =
// AnalyticGaussianSigma(ε, δ, √T·Δ'), Δ' = Δ + g√p the snapped sensitivity
// (dp/noise.go).
//
// # Hyperparameters, a written rule (from n, p, ε, δ, R, B only)
//
// Projected (sub)gradient descent with gradients of second moment
// ≤ G̃² = G_F² + pσ² (G_F = G + λB bounds ‖∇F‖) and iterate averaging has
// excess risk ≤ 2B·G̃/√T at η = 2B/(G̃√T) (Bubeck 2015, Thm 3.2 / 6.1,
// diameter 2B). With σ = √T·Δ/μ this is 2B·√(G_F²/T + pΔ²/μ²): more steps
// help until T* = (G_F·μ/(Δ√p))², after which the noise term dominates. We
// take T = min(T*, 100, budget), with budget = ⌊4·10⁹/(n²)⌋ (≥ 1) for the
// losses whose gradient costs O(n²) (logistic, metric) and no budget for the
// linear square and hinge losses, whose gradient costs O(n·d + n log n)
// (aucFastGradient). When no radius is given, B = PrivateParamRadius (the
// privacy term of the bound set to the loss at 0). --steps and --eta
// override T and η; privacy does not depend on η.

var gdAlg = &pairwise.Algorithm{
	Name:       "dp-gd",
	PairCost:   pairwise.PairsFullBatch,
	GaussianDP: true,
	TuneLoss:   "hinge",
	Title:      "full-batch pairwise gradient descent, Gaussian noise per step at the tight Δ = 2G/n (AUC) / 4G/n (metric), GDP composition, averaged iterates",
	Paper:      "pairfed (noisy GD, cf. Bassily, Smith & Thakurta 2014; pairwise sensitivity of [K22] tightened)",
	Ref:        "private_gd.go",
	Setting:    "full-batch",
	Tasks:      bothTasks,
	Assumptions: "convex G-Lipschitz pairwise loss over a bounded parameter set (utility: projected GD with averaging, " +
		"Bubeck 2015 Thm 3.2); privacy needs only the gradient bound",
	Private:  true,
	Requires: pairwise.Requirements{Lipschitz: true, BoundedDomain: true},
	PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours. Each of the T steps releases the full pairwise loss gradient plus " +
		"N(0, σ²I_p); sensitivity 2c/n (AUC, c = 2R·max|∂f/∂h| over the pair) or 4G/n (metric); the T equal-σ Gaussian releases " +
		"compose exactly as √T·Δ/σ-GDP (Dong, Roth & Su 2019), σ from the analytic Gaussian mechanism.",
}

func init() {
	gdAlg.Run = runDPGD
	gdAlg.ParamRadius = PrivateParamRadius
	pairwise.Register(gdAlg)
}

// GDSteps is the default T of dp-gd (see the file comment): min(T*, 100,
// budget), T* = ⌈(G_F·μ/(Δ√p))²⌉, μ the GDP parameter of (ε, δ).
func GDSteps(n, p int, gF, sens, mu float64, quadratic bool) int {
	ts := math.Ceil(math.Pow(gF*mu/(sens*math.Sqrt(float64(p))), 2))
	T := math.Min(ts, 100)
	if quadratic {
		T = math.Min(T, math.Floor(4e9/(float64(n)*float64(n))))
	}
	if !(T >= 1) {
		T = 1
	}
	return int(T)
}

// gdLossGradient writes the loss part (no λ) of the full pairwise gradient
// into g: the O(n·d + n log n) forms for the linear square and hinge
// losses, else FullGradient's (O(n₊n₋ + n·d) linear, O(n²d + nd²) metric).
// It reports whether the fast form was used.
func gdLossGradient(obj pairwise.Objective, w, g []float64) bool {
	if pairwise.AUCFastGradient(obj, w, g) {
		return true
	}
	pairwise.FullGradient(obj, w, g)
	if l := obj.Lambda(); l != 0 {
		pairwise.Axpy(-l, w, g)
	}
	return false
}

func runDPGD(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	_, rep, err := pairwise.PrivateSetup(gdAlg, obj, &cfg)
	if err != nil {
		return nil, err
	}
	name := gdAlg.Name
	n, p := obj.Data().N, obj.NumParams()
	switch {
	case n < 2:
		return nil, fmt.Errorf("%s needs at least 2 records", name)
	case cfg.Eta < 0 || math.IsNaN(cfg.Eta) || math.IsInf(cfg.Eta, 0):
		return nil, fmt.Errorf("%s: step size η = %v must be finite and ≥ 0 (0: the default rule)", name, cfg.Eta)
	case cfg.Steps < 0:
		return nil, fmt.Errorf("%s: steps %d must be ≥ 0 (0: the default rule)", name, cfg.Steps)
	case cfg.Passes != 0:
		return nil, fmt.Errorf("%s is full-batch: give the number of steps T (--steps), not passes", name)
	case cfg.Averaging != "" && cfg.Averaging != pairwise.AvgPaper && cfg.Averaging != pairwise.AvgUniform && cfg.Averaging != pairwise.AvgLast:
		return nil, fmt.Errorf("%s outputs the average of its iterates (or the last with averaging %q); %q does not apply", name, pairwise.AvgLast, cfg.Averaging)
	case cfg.Init != nil && len(cfg.Init) != p:
		return nil, fmt.Errorf("%s: initial model has %d parameters, want %d", name, len(cfg.Init), p)
	case len(cfg.Checkpoints) > 0 && cfg.OnCheckpoint == nil:
		return nil, fmt.Errorf("%s: checkpoints %v given without OnCheckpoint", name, cfg.Checkpoints)
	}
	pr := cfg.Privacy
	R, B := pr.FeatureRadius, obj.Constraint().Radius()
	sens, why, err := GDSensitivity(obj, R)
	if err != nil {
		return nil, err
	}
	mu, err := gaussianMu(pr.Epsilon, pr.Delta)
	if err != nil {
		return nil, err
	}
	lossG := obj.Loss().Props(R, B).Lipschitz
	gF := lossG + obj.Lambda()*B
	isLin := pairwise.IsLinear(obj)
	fast := isLin && (obj.Loss().Name() == "square" || obj.Loss().Name() == "hinge")
	var notes []string
	T := cfg.Steps
	if T == 0 {
		T = GDSteps(n, p, gF, sens, mu, !fast)
		notes = append(notes, fmt.Sprintf("T = min(⌈(G_F·μ/(Δ√p))²⌉, 100%s) = %d (G_F = %.4g, μ = %.4g)", map[bool]string{true: "", false: ", ⌊4·10⁹/n²⌋"}[fast], T, gF, mu))
	} else {
		notes = append(notes, fmt.Sprintf("T = %d given", T))
	}
	sigma, err := calibrateSnapped(pr.Epsilon, pr.Delta, math.Sqrt(float64(T))*sens, T*p)
	if err != nil {
		return nil, err
	}
	eta := cfg.Eta
	gTilde := math.Sqrt(gF*gF + float64(p)*sigma*sigma)
	if eta == 0 {
		eta = 2 * B / (gTilde * math.Sqrt(float64(T)))
		notes = append(notes, fmt.Sprintf("η = 2B/(√(G_F² + pσ²)·√T) = %.4g (projected GD with averaging, Bubeck 2015 Thm 3.2)", eta))
	} else {
		notes = append(notes, fmt.Sprintf("η = %g given", eta))
	}
	w := cfg.InitialModel(p)
	obj.Project(w)
	iters := newNoisyIterates(obj, &cfg)
	g := make([]float64, p)
	var grads int64
	for t := 1; t <= T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		gdLossGradient(obj, w, g)
		pr.Noise.AddGaussian(g, sigma) // the release
		if l := obj.Lambda(); l != 0 {
			pairwise.Axpy(l, w, g)
		}
		grads += int64(n) * int64(n-1)
		pairwise.Axpy(-eta, g, w)
		obj.Project(w)
		iters.add(t, w)
	}
	out := iters.output(T, w)

	g0 := dpSnapped(sens, sigma, p)
	rep.Sigmas = make([]float64, T)
	rep.Sensitivity = make([]float64, T)
	for t := range rep.Sigmas {
		rep.Sigmas[t] = sigma
		rep.Sensitivity[t] = g0
	}
	rep.Releases = T
	rep.G = lossG
	rep.Formula = fmt.Sprintf("σ = analytic Gaussian σ(ε, δ, √T·Δ') (Balle & Wang 2018), Δ' = Δ + g√p; %s", why)
	rep.Accountant = "T equal-σ Gaussian releases, μ = √T·Δ'/σ-GDP exactly (Dong, Roth & Su 2019 Cor 3.3); iterates are post-processing"
	if fast {
		notes = append(notes, "full gradient in O(n·d + n log n) (class moments / sorted scores), equal to the pair sum")
	}
	rep.Notes = append(notes, "output: the average of the projected iterates (or the last with --averaging last)")
	return &pairwise.Result{W: out, Steps: T, PairGrads: grads, Privacy: rep}, nil
}

// dpSnapped is the per-release sensitivity after the secure mechanism's
// rounding of p coordinates to the grid of σ.
func dpSnapped(sens, sigma float64, p int) float64 {
	return dp.SnappedL2Sensitivity(sens, dp.GaussianGranularity(sigma), p)
}
