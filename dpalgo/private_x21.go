package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The differentially private full-batch algorithms of
//
//	[X21] Xue, Yang, Huai, Wang. Differentially Private Pairwise Learning
//	Revisited. IJCAI 2021.
//
// All four perturb projected gradient descent (PGD) on the empirical pairwise
// risk L(w; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j) (+ (λ/2)‖w‖² when the
// objective has λ), computed exactly by FullGradient:
//
//	dpgdsc  Alg 1   output perturbation, strongly convex  (Lemma 1, Thm 1)
//	dpgdc2  Alg 2   gradient perturbation, convex          (Thm 2)
//	dpegd   Alg 3   epoch PGD on disjoint subsets, convex  (Lemma 7, Thm 3)
//	dpgdc   Alg 4   output perturbation, convex            (appendix C.3, Lemma 7, Thm 4)
//
// Privacy model (all four): record-level DP, neighbouring datasets differ in
// one record (replacement, [X21] §2), every record ‖x‖ ≤ R (checked by
// PrivateSetup). G, L and α are never typed in: they are the bounds
// Objective.Props(R) proves for the chosen loss, λ and parameter set. Noise
// is drawn only from cfg.Privacy.Noise: AddGaussian for δ > 0, AddLaplace
// (i.i.d. Lap(λ) per coordinate, as the boxes print) for δ = 0.
//
// Dimension d. The boxes write noise in R^d. pairfed noises every
// coordinate of the parameter vector, p = Objective.NumParams() of them (d
// for AUC, d² for a d×d metric W, each entry noised independently), and the
// Laplace scales' √d and Theorems 2–3's d are that p: the ℓ1 sensitivity
// bound ‖v‖₁ ≤ √p‖v‖₂ behind λ = …√d… holds for the p noised coordinates.
//
// Outputs. [X21] Def 2 asks for w_priv ∈ R^d, so the AUC outputs are returned
// as printed, unprojected. For metric learning (Example 1, C = {W ∈ S^d_+,
// ‖W‖_F ≤ 1}) the final noisy W is projected onto C so that it is a metric;
// the projection is post-processing and costs no privacy.
//
// Step sizes and iteration counts. Defaults come from each theorem; cfg.Eta
// and cfg.Steps override them where the privacy proof allows (each Run says
// which). A step size above the bound the privacy lemma needs (η ≤ 2/(L+α)
// in Lemma 1, η ≤ 2/L in Lemma 7) is refused. The initial point is cfg.Init
// (default 0): it must not depend on the private data.
//
// Calibration (calibrate.go). The boxes use the classical calibration
// σ = √(2 ln(1.25/δ))Δ/ε (Def 3), which is proved for ε < 1 only (Dwork &
// Roth 2014, Thm A.1), Alg 2 prints a composed σ whose constant is not
// derived in the paper, and every sensitivity uses 2G per pair gradient and
// no diameter bound. By default (CalibrationExact) each algorithm calibrates
// with CalibrateGaussian / CalibrateLaplace for the tight sensitivity proved
// beside its code (exact Gaussian DP: μ = Δ/σ per release, √(Σμ_t²) for a
// composition, the worst epoch for disjoint epochs; Balle & Wang 2018,
// Thm 8; Dong, Roth & Su 2019, Cor 2.13 and 3.3). Under CalibrationPaper
// the printed formula is used unchanged and certified the same way for the
// proven sensitivity; a printed σ that is not certified is refused before
// any noise is drawn, whatever the noise source.

const x21Paper = "[X21] Xue, Yang, Huai, Wang. Differentially Private Pairwise Learning Revisited. IJCAI 2021"

// x21Losses are the smooth losses of pairfed; Requirements.Check is the
// authority (the AUC square loss is smooth and convex with a bounded set).
var x21Losses = []string{"logistic", "square"}

func init() {
	registerPGD(&pairwise.Algorithm{
		Name:     "dpgdsc",
		PairCost: pairwise.PairsFullBatch,
		Title:    "DPGDSC: output perturbation of full-batch PGD, strongly convex losses",
		Paper:    x21Paper,
		Ref:      "Alg 1 (Lemma 1, Thm 1)",
		Setting:  "full-batch",
		Tasks:    bothTasks,
		Losses:   x21Losses,
		Assumptions: "ℓ G-Lipschitz, L-smooth, α-strongly convex (α = λ > 0; Assumption 1) over a bounded C; " +
			"η ≤ 2/(L+α); [X21] §5 uses λ = 1e-3 (AUC), 1e-2 (metric)",
		NeedsStrongConvexity: true,
		Private:              true,
		Requires:             pairwise.Requirements{Convex: true, Lipschitz: true, Smooth: true, StronglyConvex: true, BoundedDomain: true},
		PureDP:               true,
		PrivacyModel: "record-level (ε, δ)-DP (δ > 0: Gaussian, σ = 8√(2 ln(1.25/δ))G/(αnε)) or ε-DP (δ = 0: Laplace, " +
			"λ = 8G√d/(αnε) per coordinate) of the last PGD iterate, one release; ℓ2 sensitivity 8G/(αn) ([X21] Lemma 1)",
	}, runDPGDSC)
	registerPGD(&pairwise.Algorithm{
		Name:        "dpgdc2",
		PairCost:    pairwise.PairsFullBatch,
		Title:       "DPGDC2: gradient-perturbed full-batch PGD, averaged iterates, convex losses",
		Paper:       x21Paper,
		Ref:         "Alg 2 (Thm 2)",
		Setting:     "full-batch",
		Tasks:       bothTasks,
		Losses:      x21Losses,
		Assumptions: "ℓ convex, G-Lipschitz, L-smooth (Assumption 2) over a bounded C; η ≤ 2/L; δ > 0 only",
		Private:     true,
		Requires:    pairwise.Requirements{Convex: true, Lipschitz: true, Smooth: true, BoundedDomain: true},
		PrivacyModel: "record-level (ε, δ)-DP, δ > 0 only: T Gaussian gradient releases, σ = 4G√(1.25·T·log(1/δ))/(nε) " +
			"([X21] Alg 2), gradient sensitivity 4G/n, composed as the paper states (C.4) and checked by exact Gaussian composition",
	}, runDPGDC2)
	registerPGD(&pairwise.Algorithm{
		Name:        "dpegd",
		PairCost:    pairwise.PairsFullBatch,
		Title:       "DPEGD: epoch PGD on disjoint halving subsets, noisy average per epoch, convex losses",
		Paper:       x21Paper,
		Ref:         "Alg 3 (Lemma 7, Thm 3)",
		Setting:     "full-batch",
		Tasks:       bothTasks,
		Losses:      x21Losses,
		Assumptions: "ℓ convex, G-Lipschitz, L-smooth (Assumption 2) over a bounded C; η ≤ 2/L",
		Private:     true,
		Requires:    pairwise.Requirements{Convex: true, Lipschitz: true, Smooth: true, BoundedDomain: true},
		PureDP:      true,
		PrivacyModel: "record-level (ε, δ)-DP (Gaussian, σ_i = 4√(2 ln(1.25/δ))Gη_i/ε) or ε-DP (Laplace, λ_i = 4Gη_i√d/ε); " +
			"one release per epoch on a disjoint subset D_i, sensitivity 4Gη_i; parallel composition ([X21] Thm 3, C.5)",
	}, runDPEGD)
	registerPGD(&pairwise.Algorithm{
		Name:        "dpgdc",
		PairCost:    pairwise.PairsFullBatch,
		Title:       "DPGDC: output perturbation of averaged full-batch PGD, convex losses (the sub-optimal baseline)",
		Paper:       x21Paper,
		Ref:         "Alg 4, appendix C.3 (Lemma 7, Thm 4)",
		Setting:     "full-batch",
		Tasks:       bothTasks,
		Losses:      x21Losses,
		Assumptions: "ℓ convex, G-Lipschitz, L-smooth (Assumption 2) over a bounded C; η ≤ 2/L",
		Private:     true,
		Requires:    pairwise.Requirements{Convex: true, Lipschitz: true, Smooth: true, BoundedDomain: true},
		PureDP:      true,
		PrivacyModel: "record-level (ε, δ)-DP (Gaussian, σ = 4√(2 ln(1.25/δ))GTη/(nε)) or ε-DP (Laplace, λ = 4GηT√d/(nε)) " +
			"of the averaged PGD iterates, one release; ℓ2 sensitivity 4ηGT/n ([X21] Lemma 7)",
	}, runDPGDC)
}

// registerPGD binds a ([X21] Alg 1–4, noisy PGD) to its run function and
// registers it.
func registerPGD(a *pairwise.Algorithm, run func(context.Context, *pairwise.Algorithm, pairwise.Objective, pairwise.RunConfig, *rand.Rand) (*pairwise.Result, error)) {
	a.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
		return run(ctx, a, obj, cfg, rng)
	}
	a.PaperCalibration = true
	pairwise.Register(a)
}

// runDPGDSC is [X21] Alg 1 (DPGDSC):
//
//	for t = 1..T: w_t = Π_C(w_{t−1} − η∇L(w_{t−1}; D))                 (steps 1–3)
//	δ > 0: return w_T + ζ, ζ ~ N(0, σ²I), σ = 8√(2 ln(1.25/δ))G/(αnε)   (step 4)
//	δ = 0: return w_T + ζ, ζ_j ~ Lap(λ) i.i.d., λ = 8G√d/(αnε)          (step 5)
//
// Privacy: Lemma 1 bounds ‖w_t − w'_t‖ ≤ 8G/(αn) for every t when
// η ≤ 2/(L+α), whatever T; the Gaussian (Laplace, with ℓ1 ≤ √d·ℓ2)
// mechanism then gives Thm 1. Defaults: η = 2/(L+α), the largest step
// Lemma 1 allows; T = ⌈(L/α)·ln n⌉ (Thm 1: T = Õ((L/α) log n)). cfg.Eta
// overrides η but must satisfy η ≤ 2/(L+α) (refused otherwise); cfg.Steps
// overrides T (privacy does not depend on T). Each step costs one full
// gradient, n(n−1) pair gradients.
func runDPGDSC(ctx context.Context, a *pairwise.Algorithm, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	props, rep, err := pgdSetup(a, obj, &cfg, true)
	if err != nil {
		return nil, err
	}
	priv := cfg.Privacy
	G, L, alpha := props.Lipschitz, props.Smooth, props.StrongConvexity
	n, p := obj.Data().N, obj.NumParams()
	nf, pf := float64(n), float64(p)

	etaMax := 2 / (L + alpha) // Alg 1 input, Lemma 1
	eta := etaMax
	if cfg.Eta > 0 {
		if cfg.Eta > etaMax {
			return nil, fmt.Errorf("%s: η = %g exceeds 2/(L+α) = %g (L = %g, α = %g): [X21] Lemma 1's sensitivity bound, and so the privacy guarantee, needs η ≤ 2/(L+α)", a.Name, cfg.Eta, etaMax, L, alpha)
		}
		eta = cfg.Eta
		rep.Notes = append(rep.Notes, fmt.Sprintf("η = %g given (≤ 2/(L+α) = %g)", eta, etaMax))
	} else {
		rep.Notes = append(rep.Notes, fmt.Sprintf("η = 2/(L+α) = %g, the largest step [X21] Alg 1 / Lemma 1 allow", eta))
	}
	T, err := pgdSteps(a.Name, cfg.Steps, L/alpha*math.Log(nf))
	if err != nil {
		return nil, err
	}
	if cfg.Steps == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("T = ⌈(L/α)·ln n⌉ = %d ([X21] Thm 1: T = Õ((L/α) log n)); --steps overrides", T))
	}

	// The release, fixed before any data-dependent computation.
	//
	// Sensitivity of w_T (pairfed's proof; [X21] Lemma 1 prints 8G/(αn)).
	// F_S = 1/(n(n−1)) Σ_{i≠j} ℓ(·; z_i, z_j) + (λ/2)‖·‖² is α-strongly
	// convex and L-smooth, so for η ≤ 2/(L+α) the step w ↦ w − η∇F_S(w) is a
	// contraction with factor ρ = √(1 − 2ηαL/(α+L)) (Nesterov 2004, Thm
	// 2.1.12: ⟨∇F(x) − ∇F(y), x − y⟩ ≥ αL/(α+L)‖x−y‖² + ‖∇F(x)−∇F(y)‖²/(α+L)),
	// and Π_C is nonexpansive. Replacing z_k by z′_k changes the 2(n−1)
	// ordered pairs that contain k, each pair gradient by ≤ Γ at the same w
	// (pairGradGap), so ‖∇F_S(w) − ∇F_S′(w)‖ ≤ 2Γ/n. With δ_t = ‖w_t − w′_t‖,
	// δ_0 = 0 (same data-independent w_0):
	//
	//	δ_{t+1} ≤ ‖G_S(w_t) − G_S(w′_t)‖ + η‖∇F_S(w′_t) − ∇F_S′(w′_t)‖ ≤ ρδ_t + 2ηΓ/n,
	//
	// hence δ_T ≤ (2ηΓ/n)·(1 − ρ^T)/(1 − ρ) ≤ 2Γ(α+L)/(αLn) (for L ≥ α at
	// most 4Γ/(αn), Lemma 1's 8G/(αn) with Γ = 2G). Moreover w_T ∈ C, so
	// δ_T ≤ ‖C‖₂ (the diameter) whatever the data: Δ = min of the two.
	diam := constraintDiameter(obj.Constraint(), obj.Data().D)
	gamma, gHow := pairGradGap(obj, priv.FeatureRadius)
	stab := contractionSensitivity(eta, L, alpha, gamma, T, n)
	sens := math.Min(stab, diam)
	how := fmt.Sprintf("Δ₂ = min{(2ηΓ/n)(1−ρ^T)/(1−ρ) = %.6g, ‖C‖₂ = %g} with %s, Γ = %g", stab, diam, gHow, gamma)
	paperSens := 8 * G / (alpha * nf) // Lemma 1, eq. (3)
	var ns float64                    // σ (δ > 0) or Laplace λ (δ = 0)
	if priv.Delta > 0 {
		paper := 8 * math.Sqrt(2*math.Log(1.25/priv.Delta)) * G / (alpha * nf * priv.Epsilon)
		rep.Formula = formulaLine(priv, "σ = 8√(2 ln(1.25/δ))·G/(αnε) ([X21] Alg 1 step 4; Δ₂ = 8G/(αn), Lemma 1 eq. (3))")
		rep.Accountant = "single Gaussian release (Gaussian mechanism, [X21] Def 3; Thm 1), certified by exact Gaussian DP"
		sig, err := pairwise.CalibrateGaussian(a.Name, priv, rep, []float64{paper}, []float64{paperSens},
			pairwise.GaussOption{Plan: dp.GaussianPlan{Sensitivities: []float64{sens}}, How: how})
		if err != nil {
			return nil, err
		}
		ns = sig[0]
	} else {
		paper := 8 * G * math.Sqrt(pf) / (alpha * nf * priv.Epsilon)
		rep.Formula = formulaLine(priv, "λ = 8G√d/(αnε), ζ_j ~ Lap(λ) i.i.d. ([X21] Alg 1 step 5; Δ₁ ≤ √d·8G/(αn), Lemma 1)")
		rep.Accountant = "single Laplace release (Laplace mechanism, [X21] Def 4; Thm 1)"
		sig, err := pairwise.CalibrateLaplace(a.Name, priv, rep, []float64{paper}, []float64{math.Sqrt(pf) * paperSens}, []float64{math.Sqrt(pf) * sens}, false,
			fmt.Sprintf("√d·Δ₂ with d = %d, %s", p, how))
		if err != nil {
			return nil, err
		}
		ns = sig[0]
	}
	rep.Releases = 1

	w := pgdStart(obj, &cfg)
	g := make([]float64, p)
	grads, from, period, err := noisyPGDSteps(ctx, obj, w, g, T, eta, nil, nil)
	if err != nil {
		return nil, err
	}
	if from > 0 {
		pgdCycleNote(rep, fmt.Sprintf("w_%d = w_%d of T = %d", from, from-period, T))
	}
	addOutputNoise(priv, w, ns)
	finishMetricOutput(obj, w, rep)
	return &pairwise.Result{W: w, Steps: T, PairGrads: grads, Privacy: rep}, nil
}

// runDPGDC2 is [X21] Alg 2 (DPGDC2), δ > 0 only:
//
//	for t = 1..T: w_t = Π_C(w_{t−1} − η(∇L(w_{t−1}; D) + ζ_t)),
//	              ζ_t ~ N(0, σ²I), σ = 4G√(1.25·T·log(1/δ))/(nε)   (step 2)
//	return w̄_T = (w_0 + … + w_T)/(T + 1)                            (step 4)
//
// Step 4 prints "Σ_{i=0}^T (w_0 + … + w_T)/(T+1)"; the sum sign is a typo
// for the average (Lemma 9 averages w_0..w_T the same way). σ is used
// as printed (log = ln) under --calibration paper; the paper only says it
// follows "by the advanced composition theorem and Gaussian mechanism"
// (C.4) for the gradient sensitivity 4G/n (Lemma 1's proof). By default σ
// is calibrated by exact Gaussian composition for the proven 2Γ/n.
//
// Defaults (Thm 2): T = min{n, n²ε²/(d log(1/δ))} (rounded down, ≥ 1) and
// η = G/(‖C‖₂√T) with ‖C‖₂ the diameter of C — Theorem 2's statement as
// printed. (Its proof ends with η = ‖C‖₂²/(G√T), and the rate-optimal,
// dimensionally consistent choice would be ‖C‖₂/(G√T); we keep the
// statement. Privacy does not depend on η.) The box requires η ≤ 2/L: a
// default above it is lowered to 2/L (noted), a cfg.Eta above it is refused.
// cfg.Steps overrides T, and σ follows the T actually run.
func runDPGDC2(ctx context.Context, a *pairwise.Algorithm, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	props, rep, err := pgdSetup(a, obj, &cfg, true)
	if err != nil {
		return nil, err
	}
	priv := cfg.Privacy
	G, L := props.Lipschitz, props.Smooth
	n, p := obj.Data().N, obj.NumParams()
	nf, pf := float64(n), float64(p)
	logInvDelta := math.Log(1 / priv.Delta)

	T, err := pgdSteps(a.Name, cfg.Steps, math.Floor(math.Min(nf, nf*nf*priv.Epsilon*priv.Epsilon/(pf*logInvDelta))))
	if err != nil {
		return nil, err
	}
	if cfg.Steps == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("T = ⌊min{n, n²ε²/(d log(1/δ))}⌋ = %d with d = %d ([X21] Thm 2); --steps overrides", T, p))
	}
	diam := constraintDiameter(obj.Constraint(), obj.Data().D)
	eta, err := pgdEta(a.Name, rep, cfg.Eta, G/(diam*math.Sqrt(float64(T))), 2/L,
		fmt.Sprintf("η = G/(‖C‖₂√T) = %%g ([X21] Thm 2 as printed; ‖C‖₂ = %g)", diam), "2/L ([X21] Alg 2 input)", false)
	if err != nil {
		return nil, err
	}

	// Sensitivity of one gradient release (pairfed's proof; the paper uses
	// 4G/n, Lemma 1's proof): ∇L(w; D) − ∇L(w; D′) at the same w is
	// 1/(n(n−1)) times the sum over the 2(n−1) ordered pairs containing
	// the replaced record of the pair-gradient changes, each ≤ Γ
	// (pairGradGap), so Δ = 2Γ/n. The T releases are adaptive Gaussian
	// mechanisms on the same records: exact GDP composition.
	paper := 4 * G * math.Sqrt(1.25*float64(T)*logInvDelta) / (nf * priv.Epsilon)
	gamma, gHow := pairGradGap(obj, priv.FeatureRadius)
	sens := 2 * gamma / nf
	rep.Formula = formulaLine(priv, "σ = 4G√(1.25·T·log(1/δ))/(nε) per iteration ([X21] Alg 2 step 2; gradient sensitivity 4G/n)")
	rep.Accountant = fmt.Sprintf("composition of T = %d adaptive Gaussian gradient releases (the paper: \"advanced composition theorem and Gaussian mechanism\", [X21] C.4), certified by exact Gaussian DP", T)
	sens1 := make([]float64, T)
	paperS, paperSens := make([]float64, T), make([]float64, T)
	for t := range sens1 {
		sens1[t], paperS[t], paperSens[t] = sens, paper, 4*G/nf
	}
	sigs, err := pairwise.CalibrateGaussian(a.Name, priv, rep, paperS, paperSens,
		pairwise.GaussOption{Plan: dp.GaussianPlan{Sensitivities: sens1}, How: fmt.Sprintf("Δ₂ = 2Γ/n = %.6g per gradient, %s", sens, gHow)})
	if err != nil {
		return nil, err
	}
	sigma := sigs[0]
	rep.Releases = T

	w := pgdStart(obj, &cfg)
	g := make([]float64, p)
	sum := append([]float64(nil), w...) // w_0
	grads, err := noisyPGD(ctx, obj, w, g, T, eta, func(g []float64) {
		priv.Noise.AddGaussian(g, sigma) // ∇L(w_{t−1}; D) + ζ_t
	}, sum)
	if err != nil {
		return nil, err
	}
	pairwise.Scale(1/float64(T+1), sum)
	finishMetricOutput(obj, sum, rep)
	return &pairwise.Result{W: sum, Steps: T, PairGrads: grads, Privacy: rep}, nil
}

// runDPEGD is [X21] Alg 3 (DPEGD):
//
//	k = log₂ n; D_1..D_k disjoint, |D_i| = n_i = 2^{−i}n for i < k,
//	  D_k the remaining records                                     (step 1)
//	for i = 1..k:
//	  η_i = 4^{−i}η                                                 (step 3)
//	  run n_i PGD steps on L(·; D_i) from w_{i−1} with step η_i;
//	  w̄_i = their average                                            (step 4)
//	  δ > 0: w_i = w̄_i + ζ_i, σ = 4√(2 ln(1.25/δ))Gη_i/ε            (step 5)
//	  δ = 0: w_i = w̄_i + ζ_i, ζ_ij ~ Lap(λ), λ = 4Gη_i√d/ε          (step 6)
//	return w_k                                                      (step 8)
//
// Privacy (C.5): by Lemma 7 with T_i = n_i iterations on n_i records, the
// epoch average has ℓ2 sensitivity 4Gη_iT_i/n_i = 4Gη_i; the subsets are
// disjoint and the epoch holding the changed record starts from the
// previous (already private) output, so the run is as private as one epoch
// (parallel composition). Lemma 7 needs η_i ≤ 2/L.
//
// Readings: "run the PGD method (Step 1-3 in Algorithm 4) … let w̄_i be the
// average parameter" — the average of Alg 4 step 4, (w_1 + … + w_{n_i})/n_i
// (Lemma 9 also includes w_0; both have sensitivity ≤ 4Gη_i). The paper
// assumes n = 2^k; for other n, k = ⌊log₂ n⌋, n_i = ⌊n/2^i⌋ for i < k and
// D_k takes the rest (always ≥ 2 records), which is step 1's wording. The
// subsets are a uniformly random partition drawn from rng (independent of
// the data, so the parallel-composition argument holds).
//
// Defaults (Thm 3): η = (‖C‖₂/G)·min{4/√n, ε/√(d log(1/δ))} for δ > 0 and
// (‖C‖₂/G)·min{4/√n, ε/d} for δ = 0. The box requires η ≤ 2/L: a default
// above it is lowered to 2/L (noted), a cfg.Eta above it is refused. The
// iteration count of each epoch is n_i by the box (the sensitivity uses
// T_i = n_i), so cfg.Steps is refused.
func runDPEGD(ctx context.Context, a *pairwise.Algorithm, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	props, rep, err := pgdSetup(a, obj, &cfg, false)
	if err != nil {
		return nil, err
	}
	priv := cfg.Privacy
	G, L := props.Lipschitz, props.Smooth
	data := obj.Data()
	n, p := data.N, obj.NumParams()
	nf, pf := float64(n), float64(p)

	// Step 1: k = ⌊log₂ n⌋ epochs.
	k := bits.Len(uint(n)) - 1
	sizes := make([]int, k)
	rest := n
	for i := 1; i < k; i++ {
		sizes[i-1] = n >> i
		rest -= sizes[i-1]
	}
	sizes[k-1] = rest
	if n&(n-1) != 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("n = %d is not a power of 2: k = ⌊log₂ n⌋ = %d epochs, n_i = ⌊n/2^i⌋, D_k holds the remaining %d records", n, k, rest))
	}

	diam := constraintDiameter(obj.Constraint(), data.D)
	var etaThm float64
	var etaHow string
	if priv.Delta > 0 {
		etaThm = diam / G * math.Min(4/math.Sqrt(nf), priv.Epsilon/math.Sqrt(pf*math.Log(1/priv.Delta)))
		etaHow = "η = (‖C‖₂/G)·min{4/√n, ε/√(d log(1/δ))} = %g"
	} else {
		etaThm = diam / G * math.Min(4/math.Sqrt(nf), priv.Epsilon/pf)
		etaHow = "η = (‖C‖₂/G)·min{4/√n, ε/d} = %g"
	}
	etaHow += fmt.Sprintf(" ([X21] Thm 3; ‖C‖₂ = %g, d = %d)", diam, p)
	eta, err := pgdEta(a.Name, rep, cfg.Eta, etaThm, 2/L, etaHow, "2/L ([X21] Alg 3 input, Lemma 7)", true)
	if err != nil {
		return nil, err
	}

	// The k releases, fixed before any data-dependent computation.
	//
	// Sensitivity of epoch i's average (pairfed's proof of [X21] Lemma 7;
	// the paper prints 4Gη_iT_i/n_i = 4Gη_i, C.5). The epoch runs T_i = n_i
	// PGD steps on L(·; D_i), n_i records, from a start that does not
	// depend on D_i. L(·; D_i) is convex and L-smooth and η_i ≤ η ≤ 2/L, so
	// w ↦ Π_C(w − η_i∇L(w)) is nonexpansive; replacing a record of D_i
	// changes ∇L(w; D_i) by ≤ 2Γ/n_i at the same w (2(n_i−1) of the
	// n_i(n_i−1) ordered pairs, each by ≤ Γ, pairGradGap). So
	// δ_t ≤ δ_{t−1} + 2η_iΓ/n_i, δ_t ≤ 2η_iΓt/n_i, and the average of
	// w_1..w_{n_i} moves by ≤ (1/n_i)Σ_t 2η_iΓt/n_i = η_iΓ(n_i+1)/n_i
	// (Lemma 7's 4ηGT/n bounds Σ_t t by T², and uses Γ = 2G). The average
	// of points of C lies in C: Δ_i = min{η_iΓ(n_i+1)/n_i, ‖C‖₂}. A record
	// lies in one D_i; the other epochs are post-processing (parallel
	// composition).
	gamma, gHow := pairGradGap(obj, priv.FeatureRadius)
	etas := make([]float64, k)
	sens := make([]float64, k)
	paperSens := make([]float64, k)
	paper := make([]float64, k)
	for i := 1; i <= k; i++ {
		ei := math.Ldexp(eta, -2*i) // η_i = 4^{−i}η (step 3)
		etas[i-1] = ei
		ni := float64(sizes[i-1])
		sens[i-1] = math.Min(ei*gamma*(ni+1)/ni, diam)
		paperSens[i-1] = 4 * G * ei // C.5: 4Gη_iT_i/n_i with T_i = n_i
		if priv.Delta > 0 {
			paper[i-1] = 4 * math.Sqrt(2*math.Log(1.25/priv.Delta)) * G * ei / priv.Epsilon
		} else {
			paper[i-1] = 4 * G * ei * math.Sqrt(pf) / priv.Epsilon
		}
	}
	how := fmt.Sprintf("Δ₂,i = min{η_iΓ(n_i+1)/n_i, ‖C‖₂ = %g} with %s, Γ = %g", diam, gHow, gamma)
	rep.Releases = k
	rep.Disjoint = true
	if priv.Delta > 0 {
		rep.Formula = formulaLine(priv, "σ_i = 4√(2 ln(1.25/δ))·G·η_i/ε, η_i = 4^{−i}η ([X21] Alg 3 steps 3, 5; Δ₂ = 4Gη_iT_i/n_i = 4Gη_i, C.5)")
		rep.Accountant = "parallel composition over k disjoint epochs, one Gaussian release each ([X21] Thm 3, C.5), certified by exact Gaussian DP"
		if _, err := pairwise.CalibrateGaussian(a.Name, priv, rep, paper, paperSens,
			pairwise.GaussOption{Plan: dp.GaussianPlan{Sensitivities: sens, Disjoint: true}, How: how}); err != nil {
			return nil, err
		}
	} else {
		rep.Formula = formulaLine(priv, "λ_i = 4Gη_i√d/ε, η_i = 4^{−i}η, Lap(λ_i) i.i.d. ([X21] Alg 3 steps 3, 6; Δ₁ ≤ √d·4Gη_i)")
		rep.Accountant = "parallel composition over k disjoint epochs, one Laplace release each ([X21] Thm 3, C.5)"
		l1, pl1 := make([]float64, k), make([]float64, k)
		for i := range l1 {
			l1[i], pl1[i] = math.Sqrt(pf)*sens[i], math.Sqrt(pf)*paperSens[i]
		}
		if _, err := pairwise.CalibrateLaplace(a.Name, priv, rep, paper, pl1, l1, true, fmt.Sprintf("√d·Δ₂,i with d = %d, %s", p, how)); err != nil {
			return nil, err
		}
	}

	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if rng != nil {
		order = rng.Perm(n)
	}
	w := pgdStart(obj, &cfg)
	g := make([]float64, p)
	avg := make([]float64, p)
	var grads int64
	start, skipped := 0, 0
	for i := 0; i < k; i++ {
		sub, err := objectiveOver(obj, data.Subset(order[start:start+sizes[i]]), obj.Lambda())
		if err != nil {
			return nil, err
		}
		start += sizes[i]
		for j := range avg {
			avg[j] = 0
		}
		got, from, _, err := noisyPGDSteps(ctx, sub, w, g, sizes[i], etas[i], nil, avg) // T_i = n_i (step 4)
		grads += got
		if err != nil {
			return nil, err
		}
		if from > 0 {
			skipped += sizes[i] - from
		}
		pairwise.Scale(1/float64(sizes[i]), avg) // w̄_i
		addOutputNoise(priv, avg, rep.Sigmas[i])
		copy(w, avg) // w_i = w̄_i + ζ_i, the next epoch's start
	}
	if skipped > 0 {
		pgdCycleNote(rep, fmt.Sprintf("%d of the %d steps repeated earlier iterates of their epoch", skipped, n))
	}
	finishMetricOutput(obj, w, rep)
	steps := 0
	for _, s := range sizes {
		steps += s
	}
	return &pairwise.Result{W: w, Steps: steps, PairGrads: grads, Privacy: rep}, nil
}

// runDPGDC is [X21] Alg 4 (DPGDC, appendix C.3):
//
//	for t = 1..T: w_t = Π_C(w_{t−1} − η∇L(w_{t−1}; D))               (steps 1–3)
//	w_avg = (w_1 + … + w_T)/T                                        (step 4)
//	δ > 0: return w_avg + ζ, ζ ~ N(0, σ²I), σ = 4√(2 ln(1.25/δ))GTη/(nε)   (step 5)
//	δ = 0: return w_avg + ζ, ζ_j ~ Lap(λ), λ = 4GηT√d/(nε)           (step 6)
//
// Step 6 prints "return w̃_T = w_avg^T, where ζ = … ~ Lap(λ)", dropping the
// "+ ζ" of step 5; returning w_avg unperturbed would not be private, so we
// read it as w_avg + ζ. Privacy: Lemma 7 (η ≤ 2/L) bounds the sensitivity
// of w_avg by 4ηGT/n.
//
// Defaults: Theorem 4 fixes neither T nor η, so we take Theorem 2's choices
// for the same PGD on general convex losses: T = min{n, n²ε²/(d log(1/δ))}
// (δ = 0: min{n, n²ε²/d²}, Theorem 3's substitution √(d log 1/δ) → d) and
// η = G/(‖C‖₂√T), lowered to 2/L if above it (noted). cfg.Eta above 2/L is
// refused (Lemma 7); cfg.Steps overrides T and σ follows the T run.
func runDPGDC(ctx context.Context, a *pairwise.Algorithm, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	props, rep, err := pgdSetup(a, obj, &cfg, true)
	if err != nil {
		return nil, err
	}
	priv := cfg.Privacy
	G, L := props.Lipschitz, props.Smooth
	n, p := obj.Data().N, obj.NumParams()
	nf, pf := float64(n), float64(p)

	bound, how := pf*math.Log(1/priv.Delta), "d log(1/δ)"
	if priv.Delta == 0 {
		bound, how = pf*pf, "d²"
	}
	T, err := pgdSteps(a.Name, cfg.Steps, math.Floor(math.Min(nf, nf*nf*priv.Epsilon*priv.Epsilon/bound)))
	if err != nil {
		return nil, err
	}
	if cfg.Steps == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("T = ⌊min{n, n²ε²/(%s)}⌋ = %d with d = %d: [X21] Thm 4 fixes no T, we take Thm 2's; --steps overrides", how, T, p))
	}
	diam := constraintDiameter(obj.Constraint(), obj.Data().D)
	eta, err := pgdEta(a.Name, rep, cfg.Eta, G/(diam*math.Sqrt(float64(T))), 2/L,
		fmt.Sprintf("η = G/(‖C‖₂√T) = %%g ([X21] Thm 4 fixes no η, we take Thm 2's; ‖C‖₂ = %g)", diam), "2/L ([X21] Alg 4 input, Lemma 7)", true)
	if err != nil {
		return nil, err
	}

	Tf := float64(T)
	// Sensitivity of w_avg (pairfed's proof of [X21] Lemma 7, which prints
	// 4ηGT/n): η ≤ 2/L makes the projected gradient step on the convex,
	// L-smooth L(·; D) nonexpansive, and replacing one record changes
	// ∇L(w; D) by ≤ 2Γ/n at the same w (2(n−1) ordered pairs, each by ≤ Γ,
	// pairGradGap). So δ_t ≤ 2ηΓt/n and the average of w_1..w_T moves by
	// ≤ (1/T)Σ_t 2ηΓt/n = ηΓ(T+1)/n (Lemma 7 bounds Σ_t t by T² and takes
	// Γ = 2G: 4ηGT/n). w_avg ∈ C (an average of points of C), so
	// Δ = min{ηΓ(T+1)/n, ‖C‖₂}.
	gamma, gHow := pairGradGap(obj, priv.FeatureRadius)
	stab := eta * gamma * (Tf + 1) / nf
	sens := math.Min(stab, diam)
	sensHow := fmt.Sprintf("Δ₂ = min{ηΓ(T+1)/n = %.6g, ‖C‖₂ = %g} with %s, Γ = %g", stab, diam, gHow, gamma)
	paperSens := 4 * eta * G * Tf / nf // Lemma 7: ‖w_avg − w'_avg‖ ≤ 4ηGT/n
	var ns float64                     // σ (δ > 0) or Laplace λ (δ = 0)
	if priv.Delta > 0 {
		paper := 4 * math.Sqrt(2*math.Log(1.25/priv.Delta)) * G * Tf * eta / (nf * priv.Epsilon)
		rep.Formula = formulaLine(priv, "σ = 4√(2 ln(1.25/δ))·G·T·η/(nε) ([X21] Alg 4 step 5, appendix C.3; Δ₂ = 4ηGT/n, Lemma 7)")
		rep.Accountant = "single Gaussian release (Gaussian mechanism, [X21] Def 3; Thm 4), certified by exact Gaussian DP"
		sig, err := pairwise.CalibrateGaussian(a.Name, priv, rep, []float64{paper}, []float64{paperSens},
			pairwise.GaussOption{Plan: dp.GaussianPlan{Sensitivities: []float64{sens}}, How: sensHow})
		if err != nil {
			return nil, err
		}
		ns = sig[0]
	} else {
		paper := 4 * G * eta * Tf * math.Sqrt(pf) / (nf * priv.Epsilon)
		rep.Formula = formulaLine(priv, "λ = 4GηT√d/(nε), ζ_j ~ Lap(λ) i.i.d. ([X21] Alg 4 step 6, read as w_avg + ζ; Δ₁ ≤ √d·4ηGT/n, Lemma 7)")
		rep.Accountant = "single Laplace release (Laplace mechanism, [X21] Def 4; Thm 4)"
		rep.Notes = append(rep.Notes, "Alg 4 step 6 prints \"return w̃_T = w_avg^T\" without + ζ; read as w_avg + ζ (the unperturbed average is not private)")
		sig, err := pairwise.CalibrateLaplace(a.Name, priv, rep, []float64{paper}, []float64{math.Sqrt(pf) * paperSens}, []float64{math.Sqrt(pf) * sens}, false,
			fmt.Sprintf("√d·Δ₂ with d = %d, %s", p, sensHow))
		if err != nil {
			return nil, err
		}
		ns = sig[0]
	}
	rep.Releases = 1

	w := pgdStart(obj, &cfg)
	g := make([]float64, p)
	avg := make([]float64, p)
	grads, from, period, err := noisyPGDSteps(ctx, obj, w, g, T, eta, nil, avg)
	if err != nil {
		return nil, err
	}
	if from > 0 {
		pgdCycleNote(rep, fmt.Sprintf("w_%d = w_%d of T = %d", from, from-period, T))
	}
	pairwise.Scale(1/Tf, avg) // w_avg^T (step 4)
	addOutputNoise(priv, avg, ns)
	finishMetricOutput(obj, avg, rep)
	return &pairwise.Result{W: avg, Steps: T, PairGrads: grads, Privacy: rep}, nil
}

// pgdSetup is the prologue of an [X21] algorithm: PrivateSetup, the
// knobs its proof fixes (η may be given; T where stepsOK) and n ≥ 2.
func pgdSetup(a *pairwise.Algorithm, obj pairwise.Objective, cfg *pairwise.RunConfig, stepsOK bool) (pairwise.Props, *pairwise.PrivacyReport, error) {
	props, rep, err := pairwise.PrivateSetup(a, obj, cfg)
	if err != nil {
		return pairwise.Props{}, nil, err
	}
	if err := checkFixedKnobs(a.Name, cfg, true, stepsOK); err != nil {
		return pairwise.Props{}, nil, err
	}
	if obj.Data().N < 2 {
		return pairwise.Props{}, nil, fmt.Errorf("%s needs at least 2 records", a.Name)
	}
	return props, rep, nil
}

// pgdCycleNote ([X21] algorithms) is the report's note on steps that repeated earlier iterates.
func pgdCycleNote(rep *pairwise.PrivacyReport, what string) {
	rep.Notes = append(rep.Notes, "the PGD iterates repeat bit for bit ("+what+"): the later steps reuse them without recomputing the gradient — the same output bits as computing them")
}

// pgdStart ([X21] algorithms) returns a copy of w_0 = cfg.Init (default 0). w_0 must not depend
// on the private data: the sensitivity lemmas compare runs from the same w_0.
func pgdStart(obj pairwise.Objective, cfg *pairwise.RunConfig) []float64 {
	w := make([]float64, obj.NumParams())
	if cfg.Init != nil {
		if len(cfg.Init) != len(w) {
			panic(fmt.Sprintf("dpalgo: initial model has %d values, want %d", len(cfg.Init), len(w)))
		}
		copy(w, cfg.Init)
	}
	return w
}

// pgdSteps returns cfg.Steps when set, else the theorem's T (≥ 1; [X21]
// Thms 1–4).
func pgdSteps(name string, steps int, def float64) (int, error) {
	if steps > 0 {
		return steps, nil
	}
	def = math.Ceil(def)
	if math.IsNaN(def) || def > math.MaxInt32 {
		return 0, fmt.Errorf("%s: the theorem's iteration count T = %g is too large to run; give --steps", name, def)
	}
	return max(1, int(def)), nil
}

// pgdEta returns the step size of an [X21] algorithm: cfg.Eta if given (refused above max), else
// the theorem's value, lowered to max if above it when the box requires it
// (clamp) — noted either way.
func pgdEta(name string, rep *pairwise.PrivacyReport, given, def, bound float64, how, boundHow string, privacyBound bool) (float64, error) {
	why := "the box's input condition"
	if privacyBound {
		why = "the sensitivity bound of Lemma 7, and so the privacy guarantee,"
	}
	if given > 0 {
		if given > bound {
			return 0, fmt.Errorf("%s: η = %g exceeds %s = %g: %s needs η ≤ %g", name, given, boundHow, bound, why, bound)
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("η = %g given (≤ %s = %g)", given, boundHow, bound))
		return given, nil
	}
	if def > bound {
		rep.Notes = append(rep.Notes, fmt.Sprintf(how+", above %s = %g: lowered to %g", def, boundHow, bound, bound))
		return bound, nil
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf(how, def))
	return def, nil
}

// contractionSensitivity (dpgdsc, [X21] Alg 1; tighter than Lemma 1) is (2ηΓ/n)·(1 − ρ^T)/(1 − ρ) with
// ρ = √(1 − 2ηαL/(α+L)): the bound on ‖w_T − w′_T‖ of T projected gradient
// steps on an α-strongly convex, L-smooth empirical risk over n records
// whose gradient changes by ≤ 2Γ/n between neighbours (see runDPGDSC).
// Computed without cancellation (1 − ρ = x/(1 + ρ), x = 2ηαL/(α+L)) and
// inflated by 1e-12 for rounding.
func contractionSensitivity(eta, L, alpha, gamma float64, T, n int) float64 {
	step := 2 * eta * gamma / float64(n)
	x := 2 * eta * alpha * L / (alpha + L)
	var sum float64
	switch {
	case !(x > 0):
		sum = float64(T) // no contraction: δ_T ≤ T·2ηΓ/n
	case x >= 1:
		sum = 1 // ρ = 0
	default:
		rho := math.Sqrt(1 - x)
		sum = -math.Expm1(float64(T)*math.Log(rho)) * (1 + rho) / x
		sum = math.Min(sum, float64(T))
	}
	return step * sum * (1 + 1e-12)
}
