package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The differentially private algorithms of
//
//	[H20] Huai, Wang, Miao, Xu, Zhang. Pairwise Learning with Differential
//	Privacy Guarantees. AAAI 2020.
//
// All four perturb Pairwise GIGA ([H20] Alg 1 without steps 12–13; the
// non-private `giga`): records arrive as a stream z_1..z_n (the dataset's row
// order; the experiment harness shuffles), the penalty at t is
// L̂_t(w) = 1/(t−1) Σ_{i<t} ℓ(w; z_t, z_i) (eq. (3)), and after a burn-in of
// T₁ = max{⌈16L²/α²⌉, 7} steps
//
//	η_t = (t−1)/(t−2) · 2/(αt),   w_t = Π_C[w_{t−1} − η_t ∇L̂_t(w_{t−1})].
//
//	on-pair-strc  Alg 1  release Π_C(w_t + n_t) at every t > T₁ (ρ-zCDP)
//	on-pair-c     Alg 2  Alg 1 on ℓ + (α/2)‖w − w₀‖²
//	off-pair-strc Alg 3  release Π_C(w̃ + noise), w̃ = (w_1 + … + w_n)/n
//	off-pair-c    Alg 4  Alg 3 on ℓ + (α/2)‖w − w₀‖²
//
// Privacy model: record-level (ε, δ)-DP, δ > 0 only (the paper has no
// pure-DP variant), neighbouring streams differ in one record (Def 1, Def 5);
// for Algs 1–2 the whole output sequence is private. Every record has
// ‖x‖ ≤ R (checked by PrivateSetup); G, L, α are the bounds
// Objective.Props(R) proves for the regularized loss over C, never typed in.
// The sensitivity of the t-th Pairwise GIGA iterate is 8G/(αt) (Lemma 4),
// which assumes the burn-in of T₁ data-independent steps. The default exact
// calibration uses the tighter bound of gigaSensitivities (≈ 2Γ/(αt), Γ the
// pair-gradient gap of the unregularized loss, proof there), which the
// white-box audit's worst case attains; Lemma 4's is kept for --calibration
// paper, whose printed σ's are certified against the tighter bound.
//
// Readings we had to choose (each is noted in Result.Privacy.Notes):
//
//   - Steps 4–7 (Alg 3 step 3) "randomly choose a parameter w_t ∈ C" leave
//     the distribution open. These points are released without noise and
//     must only be independent of the data (Lemma 4); we take the point
//     mass at w_0 = Π_C(cfg.Init) (0 by default), so runs are reproducible.
//     When T₁ ≥ n — common, since 16L²/α² is huge for small α (R = 1,
//     logistic, λ = 1e-3 gives T₁ ≈ 2.6·10⁸) — the algorithm as printed
//     makes no update at all and outputs that point (plus noise, for Alg 3);
//     T₁ is never changed, and the report says so.
//   - Alg 1 step 13 writes the released point into the same symbol w_t.
//     Lemma 4 bounds the sensitivity of the noise-free Pairwise GIGA iterate
//     A_t(D_t), and Theorem 1 composes n − T₁ Gaussian releases of it, so the
//     update of step 11 continues from the noise-free iterate and only the
//     released copy is perturbed (as in the private GIGA of Jain, Kothari &
//     Thakurta 2012 that [H20] extends); Theorem 2's regret decomposition
//     reads the same way.
//   - Algs 2 and 4 regularize with (α/2)‖w − w₀‖² for a centre w₀ ∈ C chosen
//     independently of the data ("randomly" in Alg 2, "any point" in Alg 4).
//     We take w₀ = 0, so ℓ̃ is the objective with λ = α, and
//     G̃ = Props(R).Lipschitz = G + α·sup_C‖w‖. The printed
//     G̃ = G + α‖C‖₂ bounds ‖w − w₀‖ by the diameter, which is needed for a
//     centre anywhere in C; with w₀ = 0 the radius bounds it. α is the
//     algorithm's "parameter α to be defined later": --lambda when given,
//     else α = 1/√n (Theorems 3 and 5 take α = O(1/√n); constant 1 ours).
//   - Algs 1–2 output a sequence; the model returned is the one the paper
//     evaluates, w̄ = (w_1 + … + w_{n−1})/(n−1) of the released outputs
//     (eq. (6), Theorem 4) — post-processing. Algs 3–4 return ŵ (step 10).
//   - log is the natural logarithm throughout (Def 2 writes ln(1.25/δ);
//     Lemma 3 is Bun & Steinke's, in nats; log n in Alg 3 bounds
//     Σ_{t>T₁} 1/t ≤ ln(n/T₁)).

const h20Paper = "[H20] Huai, Wang, Miao, Xu, Zhang. Pairwise Learning with Differential Privacy Guarantees. AAAI 2020"

// gigaVariant selects among [H20] Algs 1–4.
type gigaVariant struct {
	offline bool // Algs 3–4: one Gaussian release of the average (else Algs 1–2: a release per step)
	convex  bool // Algs 2, 4: the algorithm regularizes a convex loss with its own α
}

func init() {
	smooth := pairwise.Requirements{Convex: true, Lipschitz: true, Smooth: true, BoundedDomain: true}
	strong := smooth
	strong.StronglyConvex = true
	registerPrivateGIGA(&pairwise.Algorithm{
		Name:     "on-pair-strc",
		PairCost: pairwise.PairsAllPrevious,
		Title:    "OnPairStrC: online pairwise private GIGA, strongly convex losses (a Gaussian release per step, zCDP)",
		Paper:    h20Paper,
		Ref:      "Alg 1 (Lemma 4, Thm 1)",
		Setting:  "online",
		Tasks:    bothTasks,
		Losses:   []string{"logistic", "square"},
		Assumptions: "ℓ G-Lipschitz, L-smooth, α-strongly convex (α = λ > 0) over a bounded C (Alg 1 step 2, Assumption 1); " +
			"[H20] §Experiments use λ = 1e-3; NEVER TRAINS at practical settings: T₁ = max{⌈16L²/α²⌉, 7} ≥ n (R = 1, logistic, λ = 1e-3: T₁ ≈ 2.6·10⁸) and then it outputs the data-independent initial point (plus noise); it needs α > 4L/√n, and a run with T₁ ≥ n says so in a WARNING",
		NeedsStrongConvexity: true,
		Private:              true,
		Requires:             strong,
		PrivacyModel: "record-level (ε, δ)-DP of the whole output sequence (Def 5), δ > 0 only: ρ-zCDP with ρ + 2√(ρ log(1/δ)) = ε; " +
			"each of the n − T₁ outputs is Π_C(w_t + n_t), σ_t² = 32G²(n − T₁)/(α²t²ρ), sensitivity 8G/(αt) (Lemma 4; the default exact calibration: the tight GIGA recursion ≈ 2Γ/(αt))",
	}, gigaVariant{})
	registerPrivateGIGA(&pairwise.Algorithm{
		Name:     "on-pair-c",
		PairCost: pairwise.PairsAllPrevious,
		Title:    "OnPairC: OnPairStrC on the loss regularized with (α/2)‖w − w₀‖², convex losses",
		Paper:    h20Paper,
		Ref:      "Alg 2 (Thm 3)",
		Setting:  "online",
		Tasks:    bothTasks,
		Losses:   []string{"logistic", "square"},
		Assumptions: "ℓ convex, G-Lipschitz, L-smooth over a bounded C (Alg 2 step 2); α = --lambda or 1/√n (Thm 3: α = O(1/√n)); " +
			"NEVER TRAINS at practical settings: T₁ = max{⌈16L²/α²⌉, 7} ≥ n (R = 1, logistic, λ = 1e-3: T₁ ≈ 2.6·10⁸) and then it outputs the data-independent initial point (plus noise); it needs α > 4L/√n, and a run with T₁ ≥ n says so in a WARNING",
		Private:  true,
		Requires: smooth,
		PrivacyModel: "as on-pair-strc, for ℓ̃ = ℓ + (α/2)‖w‖² with G̃ = G + α·sup_C‖w‖, L̃ = L + α (Alg 2 step 4): " +
			"record-level (ε, δ)-DP of the output sequence via ρ-zCDP",
	}, gigaVariant{convex: true})
	registerPrivateGIGA(&pairwise.Algorithm{
		Name:     "off-pair-strc",
		PairCost: pairwise.PairsAllPrevious,
		Title:    "OffPairStrC: Pairwise GIGA with one Gaussian perturbation of the averaged iterates, strongly convex losses",
		Paper:    h20Paper,
		Ref:      "Alg 3 (Lemma 4, Thm 5)",
		Setting:  "offline",
		Tasks:    bothTasks,
		Losses:   []string{"logistic", "square"},
		Assumptions: "ℓ G-Lipschitz, L-smooth, α-strongly convex (α = λ > 0) over a bounded C (Alg 3 step 2); " +
			"NEVER TRAINS at practical settings: T₁ = max{⌈16L²/α²⌉, 7} ≥ n (R = 1, logistic, λ = 1e-3: T₁ ≈ 2.6·10⁸) and then it outputs the data-independent initial point (plus noise); it needs α > 4L/√n, and a run with T₁ ≥ n says so in a WARNING",
		NeedsStrongConvexity: true,
		Private:              true,
		Requires:             strong,
		PrivacyModel: "record-level (ε, δ)-DP, δ > 0 only: one Gaussian release of w̃ = (w_1 + … + w_n)/n, " +
			"σ² = 128G² log²n log(1.25/δ)/(α²n²ε²) (Alg 3 step 9), sensitivity 8G log n/(αn) (Lemma 4; the default exact calibration: the average of the tight GIGA recursion's bounds)",
	}, gigaVariant{offline: true})
	registerPrivateGIGA(&pairwise.Algorithm{
		Name:     "off-pair-c",
		PairCost: pairwise.PairsAllPrevious,
		Title:    "OffPairC: OffPairStrC on the loss regularized with (α/2)‖w − w₀‖², convex losses",
		Paper:    h20Paper,
		Ref:      "Alg 4 (Thm 5)",
		Setting:  "offline",
		Tasks:    bothTasks,
		Losses:   []string{"logistic", "square"},
		Assumptions: "ℓ convex, G-Lipschitz, L-smooth over a bounded C (Alg 4 step 2); α = --lambda or 1/√n (Thm 5: α = O(1/√n)); " +
			"NEVER TRAINS at practical settings: T₁ = max{⌈16L²/α²⌉, 7} ≥ n (R = 1, logistic, λ = 1e-3: T₁ ≈ 2.6·10⁸) and then it outputs the data-independent initial point (plus noise); it needs α > 4L/√n, and a run with T₁ ≥ n says so in a WARNING",
		Private:  true,
		Requires: smooth,
		PrivacyModel: "as off-pair-strc, for ℓ̃ = ℓ + (α/2)‖w‖² with G̃ = G + α·sup_C‖w‖, L̃ = L + α (Alg 4 step 4): " +
			"record-level (ε, δ)-DP, one Gaussian release",
	}, gigaVariant{offline: true, convex: true})
}

// registerPrivateGIGA binds a to runPrivateGIGA with variant v and registers it.
func registerPrivateGIGA(a *pairwise.Algorithm, v gigaVariant) {
	a.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
		return runPrivateGIGA(ctx, a, v, obj, cfg)
	}
	a.PaperCalibration = true
	pairwise.Register(a)
}

// runPrivateGIGA runs [H20] Alg 1, 2, 3 or 4 (see the file comment).
//
// Alg 1 (OnPairStrC), steps 3–13:
//
//	ρ solves ρ + 2√(ρ log(1/δ)) = ε                               (step 3)
//	t = 1..T₁:     w_t = w_0 (data-independent)                   (steps 4–7)
//	t = T₁+1..n:   η_t = (t−1)/(t−2)·2/(αt)                       (step 10)
//	               v_t = Π_C[v_{t−1} − η_t∇L̂_t(v_{t−1}, D_t)]       (step 11)
//	               σ_t² = 32G²(n − T₁)/(α²t²ρ)                     (step 12)
//	               output w_t = Π_C(v_t + n_t), n_t ~ N(0, σ_t²I)  (steps 12–13)
//	return w̄ = (w_1 + … + w_{n−1})/(n−1)                          (eq. (6))
//
// Each release is a Gaussian mechanism with sensitivity 8G/(αt)
// (Lemma 4), so ρ_t = (8G/(αt))²/(2σ_t²) = ρ/(n − T₁) (Lemma 2), n − T₁
// releases compose to ρ (Lemma 1) and Lemma 3 turns ρ into (ε, δ).
//
// Alg 3 (OffPairStrC), steps 3–10: the same iterates (no per-step noise),
// w̃ = (w_1 + … + w_n)/n (step 8), w̄ = w̃ + N(0, σ²I) with
// σ² = 128G² log²n log(1.25/δ)/(α²n²ε²) (step 9), return Π_C(w̄) (step 10):
// the Gaussian mechanism (Def 2) with Δ = (1/n)Σ_{t>T₁} 8G/(αt) ≤ 8G ln n/(αn).
//
// Algs 2 and 4 run Alg 1 and Alg 3 on ℓ̃ = ℓ + (α/2)‖w‖² (step 3/4).
//
// η_t and T = n are fixed by the algorithm and its proof: cfg.Eta and
// cfg.Steps are refused, as are checkpoints, schedules and averaging modes.
// Before any noise is drawn, the Gaussian releases are calibrated (or,
// under --calibration paper, the printed σ's certified) by exact Gaussian
// DP (CalibrateGaussian): for Alg 1 the printed σ's always pass (the zCDP
// conversion is a valid bound); for Alg 3 the check catches ε beyond the
// range the classical calibration is proved for.
func runPrivateGIGA(ctx context.Context, a *pairwise.Algorithm, v gigaVariant, obj pairwise.Objective, cfg pairwise.RunConfig) (*pairwise.Result, error) {
	props, rep, err := pairwise.PrivateSetup(a, obj, &cfg)
	if err != nil {
		return nil, err
	}
	if err := checkFixedKnobs(a.Name, &cfg, false, false); err != nil {
		return nil, err
	}
	priv := cfg.Privacy
	data := obj.Data()
	n := data.N
	if n < 2 {
		return nil, fmt.Errorf("%s needs at least 2 records", a.Name)
	}
	nf := float64(n)

	if v.convex {
		// Alg 2 step 3 / Alg 4 step 3: ℓ̃ = ℓ + (α/2)‖w − w₀‖², w₀ = 0.
		alpha, how := obj.Lambda(), "--lambda"
		if !(alpha > 0) {
			alpha, how = 1/math.Sqrt(nf), "1/√n (Thm 3/5: α = O(1/√n), constant 1)"
		}
		if alpha != obj.Lambda() {
			reg, err := objectiveOver(obj, data, alpha)
			if err != nil {
				return nil, err
			}
			if props, err = a.Requires.Check(a.Name, reg, priv.FeatureRadius); err != nil {
				return nil, err
			}
			obj = reg
			rep.G, rep.L, rep.Alpha = props.Lipschitz, props.Smooth, props.StrongConvexity
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("ℓ̃ = ℓ + (α/2)‖w − w₀‖² with α = %g from %s and w₀ = 0 (Alg 2/4 step 3): G̃ = %g, L̃ = %g from Props(R); the printed G̃ = G + α‖C‖₂ bounds ‖w − w₀‖ by the diameter, needed only for a centre elsewhere in C", alpha, how, props.Lipschitz, props.Smooth))
	}
	G, L, alpha := props.Lipschitz, props.Smooth, props.StrongConvexity
	if !(alpha > 0) {
		return nil, fmt.Errorf("%s: internal error: α = %v after the strong-convexity check", a.Name, alpha)
	}

	// T₁ = max{⌈16L²/α²⌉, 7} (Alg 1 step 2, Alg 3 step 1), kept as a float:
	// for small α it does not fit an int.
	t1f := math.Max(math.Ceil(16*L*L/(alpha*alpha)), 7)
	inert := t1f >= nf
	T1 := n
	if !inert {
		T1 = int(t1f)
	} else {
		// Up front: at practical settings the algorithm never trains.
		rep.Notes = append(rep.Notes, fmt.Sprintf("WARNING: %s does not train here: T₁ = max{⌈16L²/α²⌉, 7} = %.6g ≥ n = %d (L = %g, α = %g), so the output is the data-independent initial point w_0%s; it needs α > 4L/√n = %.4g (a larger --lambda) or n > T₁", a.Name, t1f, n, props.Smooth, alpha, map[bool]string{true: " (plus noise under --calibration paper; the exact calibration adds none, since it reads no record)", false: ""}[v.offline], 4*props.Smooth/math.Sqrt(nf)))
	}

	p := obj.NumParams()
	w0 := make([]float64, p)
	if cfg.Init != nil {
		if len(cfg.Init) != p {
			panic(fmt.Sprintf("dpalgo: initial model has %d values, want %d", len(cfg.Init), p))
		}
		copy(w0, cfg.Init)
	}
	obj.Project(w0)
	rep.Notes = append(rep.Notes, "the data-independent points w_1..w_{T₁} of steps 4–7 ('randomly choose w_t ∈ C') are all w_0 = Π_C(init) (0 by default)")
	if priv.Epsilon > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("ε = %g > 1: [H20] Theorems 1, 3 and 5 are stated for 0 < ε ≤ 1", priv.Epsilon))
	}

	if !v.offline {
		return privateGIGAOnline(ctx, a, obj, priv, rep, n, T1, t1f, inert, G, L, alpha, w0)
	}
	return privateGIGAOffline(ctx, a, obj, priv, rep, n, T1, t1f, inert, G, L, alpha, w0)
}

// privateGIGAOnline is Alg 1 steps 3–13 and eq. (6) (see runPrivateGIGA).
func privateGIGAOnline(ctx context.Context, a *pairwise.Algorithm, obj pairwise.Objective, priv *pairwise.Privacy, rep *pairwise.PrivacyReport, n, T1 int, t1f float64, inert bool, G, L, alpha float64, w0 []float64) (*pairwise.Result, error) {
	nf := float64(n)
	rho := zcdpRho(priv.Epsilon, priv.Delta) // step 3
	releases := n - T1
	rep.Formula = "σ_t² = 32G²(n − T₁)/(α²t²ρ), ρ + 2√(ρ log(1/δ)) = ε, T₁ = max{⌈16L²/α²⌉, 7} ([H20] Alg 1 steps 2, 3, 12; Δ_t = 8G/(αt), Lemma 4)"
	rep.Accountant = fmt.Sprintf("zCDP composition, ρ + 2√(ρ log 1/δ) = ε ([H20] Alg 1 step 3; Lemmas 1–3): ρ = %.6g split as ρ/(n − T₁) over the n − T₁ = %d releases", rho, releases)
	// Sensitivity of release t (v_t before noise): the tight recursion of
	// gigaSensitivities (Γ of the unregularized pair loss, GIGA's
	// contraction), Lemma 4's 8G/(αt) (the paper's, kept for --calibration
	// paper) and v_t ∈ C (≤ ‖C‖₂, the diameter bound): Δ_t = the least of
	// the three, each a valid bound on the same quantity. The releases
	// compose sequentially (exact GDP); σ_t ∝ Δ_t gives every release the
	// same share, as the paper's split does.
	diam := paramDiameter(obj)
	gamma, gammaWhy := pairGradGap(obj, priv.FeatureRadius)
	tight := gigaSensitivities(n, T1, alpha, L, gamma, diam)
	sens := make([]float64, releases)
	paperSens := make([]float64, releases)
	paper := make([]float64, releases)
	for k := range sens {
		t := float64(T1 + 1 + k)
		paper[k] = math.Sqrt(32 * G * G * float64(releases) / (alpha * alpha * t * t * rho)) // step 12
		paperSens[k] = 8 * G / (alpha * t)                                                   // Lemma 4
		sens[k] = math.Min(paperSens[k], tight[k])
	}
	rep.Releases = releases
	rep.Notes = append(rep.Notes, "the released outputs are Π_C(v_t + n_t); the update of step 11 continues from the noise-free Pairwise GIGA iterate v_t, whose sensitivity Lemma 4 bounds",
		"the model returned is w̄ = (w_1 + … + w_{n−1})/(n−1) of the released outputs ([H20] eq. (6), Thm 4): post-processing")
	if inert {
		rep.Accountant = "no noisy release: T₁ ≥ n, every output is the data-independent point w_0 ([H20] Alg 1 steps 4–7)"
		rep.Calibration = string(priv.Calibration.OrDefault())
		rep.Notes = append(rep.Notes, fmt.Sprintf("T₁ = max{⌈16L²/α²⌉, 7} = %.6g ≥ n = %d (L = %g, α = %g): the paper's algorithm makes no update and outputs the random/initial point w_0 at every step — nothing is released with noise and w̄ = w_0 ([H20] Alg 1 steps 4–7; T₁ unchanged)", t1f, n, rep.L, alpha))
	} else {
		rep.Formula = formulaLine(priv, rep.Formula)
		if priv.Calibration.OrDefault() == pairwise.CalibrationExact {
			rep.Accountant = fmt.Sprintf("exact Gaussian-DP composition of the n − T₁ = %d releases (the paper: zCDP with ρ + 2√(ρ log 1/δ) = ε, ρ = %.6g, Lemmas 1–3)", releases, rho)
		}
		if _, err := pairwise.CalibrateGaussian(a.Name, priv, rep, paper, paperSens, pairwise.GaussOption{
			Plan: dp.GaussianPlan{Sensitivities: sens},
			How:  fmt.Sprintf("Δ_t = min{GIGA recursion with %s (Δ_{T₁+1} = %.4g, Δ_n = %.4g), 8G/(αt) (Lemma 4), ‖C‖₂ = %g}", gammaWhy, sens[0], sens[releases-1], diam)}); err != nil {
			return nil, err
		}
	}

	p := len(w0)
	v := append([]float64(nil), w0...) // noise-free Pairwise GIGA iterate
	out := make([]float64, p)
	g := make([]float64, p)
	sum := make([]float64, p)
	pairwise.Axpy(float64(min(T1, n-1)), w0, sum) // w_1..w_{T₁} = w_0 (steps 4–7)
	var grads int64
	for t := T1 + 1; t <= n; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		grads += gigaStep(obj, v, g, t, alpha) // steps 10–11
		copy(out, v)
		priv.Noise.AddGaussian(out, rep.Sigmas[t-T1-1]) // step 12
		obj.Project(out)                                // step 13
		if t <= n-1 {
			pairwise.Axpy(1, out, sum)
		}
	}
	pairwise.Scale(1/(nf-1), sum)
	return &pairwise.Result{W: sum, Steps: releases, PairGrads: grads, Privacy: rep}, nil
}

// privateGIGAOffline is Alg 3 steps 3–10 (see runPrivateGIGA).
func privateGIGAOffline(ctx context.Context, a *pairwise.Algorithm, obj pairwise.Objective, priv *pairwise.Privacy, rep *pairwise.PrivacyReport, n, T1 int, t1f float64, inert bool, G, L, alpha float64, w0 []float64) (*pairwise.Result, error) {
	nf := float64(n)
	logn := math.Log(nf)
	// Step 9: σ² = 128G² log²n log(1.25/δ)/(α²n²ε²).
	sigma := math.Sqrt(128 * G * G * logn * logn * math.Log(1.25/priv.Delta) / (alpha * alpha * nf * nf * priv.Epsilon * priv.Epsilon))
	paperSens := 8 * G * logn / (alpha * nf) // (1/n)Σ_{t>T₁} 8G/(αt) ≤ 8G ln n/(αn), Lemma 4
	// Tight: w̃ − w̃′ = (1/n)Σ_{t>T₁}(v_t − v′_t) (w_1..w_{T₁} = w_0 on both
	// sides), so by the triangle inequality Δ ≤ (1/n)Σ_{t>T₁} Δ_t with Δ_t
	// the per-iterate bound of gigaSensitivities (the tight recursion) or
	// Lemma 4's 8G/(αt) term by term (without bounding the harmonic sum by
	// ln n) — the smaller of the two sums — and w̃ ∈ C (an average of points
	// of C): Δ ≤ ‖C‖₂. When T₁ ≥ n, w̃ = w_0 does not depend on the data at
	// all (Δ = 0).
	var harm, recur float64
	diam := paramDiameter(obj)
	gamma, gammaWhy := pairGradGap(obj, priv.FeatureRadius)
	if !inert {
		tight := gigaSensitivities(n, T1, alpha, L, gamma, diam)
		for k := len(tight) - 1; k >= 0; k-- {
			harm += 1 / float64(T1+1+k)
			recur += tight[k]
		}
	}
	sens := math.Min(math.Min(8*G/(alpha*nf)*harm, recur/nf)*(1+1e-12), diam)
	rep.Formula = formulaLine(priv, "σ² = 128G² log²n · log(1.25/δ)/(α²n²ε²) ([H20] Alg 3 step 9; Δ = 8G log n/(αn) from Lemma 4)")
	rep.Accountant = "single Gaussian release (Gaussian mechanism, [H20] Def 2; Thm 5), certified by exact Gaussian DP"
	rep.Releases = 1
	rep.Notes = append(rep.Notes, "the output ŵ = Π_C(w̃ + noise) is projected onto C as Alg 3 step 10 prints")
	if inert {
		rep.Notes = append(rep.Notes, fmt.Sprintf("T₁ = max{⌈16L²/α²⌉, 7} = %.6g ≥ n = %d (L = %g, α = %g): the paper's algorithm makes no update, so w̃ = w_0 and the output is the random/initial point plus noise, Π_C(w_0 + noise), independent of the data ([H20] Alg 3 steps 3, 8–10; T₁ unchanged)", t1f, n, rep.L, alpha))
	}
	sig, err := pairwise.CalibrateGaussian(a.Name, priv, rep, []float64{sigma}, []float64{paperSens}, pairwise.GaussOption{
		Plan: dp.GaussianPlan{Sensitivities: []float64{sens}},
		How:  fmt.Sprintf("Δ = min{(1/n)Σ_{t>T₁} Δ_t of the GIGA recursion with %s, (8G/(αn))Σ_{t>T₁} 1/t (Lemma 4 summed), ‖C‖₂ = %g}", gammaWhy, diam)})
	if err != nil {
		return nil, err
	}
	sigma = sig[0]

	p := len(w0)
	v := append([]float64(nil), w0...)
	g := make([]float64, p)
	sum := make([]float64, p)
	pairwise.Axpy(float64(min(T1, n)), w0, sum) // w_1..w_{T₁} = w_0 (step 3)
	var grads int64
	for t := T1 + 1; t <= n; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		grads += gigaStep(obj, v, g, t, alpha) // steps 5–6
		pairwise.Axpy(1, v, sum)
	}
	pairwise.Scale(1/nf, sum) // w̃ (step 8)
	if sigma > 0 {
		priv.Noise.AddGaussian(sum, sigma) // w̄ (step 9)
	}
	obj.Project(sum) // ŵ (step 10)
	return &pairwise.Result{W: sum, Steps: n - T1, PairGrads: grads, Privacy: rep}, nil
}

// gigaStep does one Pairwise GIGA update at stream position t ≥ 3 (1-based;
// record t−1 is z_t) in place:
//
//	η_t = (t−1)/(t−2) · 2/(αt),
//	v ← Π_C[v − η_t(1/(t−1) Σ_{i<t} ∇ℓ(v; z_t, z_i) + λv)],
//
// and returns the t−1 pair gradients it evaluated. It is the loop body of
// runGIGA (algorithms.go), copied because the private algorithms start at
// T₁ + 1 instead of 3 and perturb a copy of the iterate after each step,
// which runGIGA's loop does not expose.
func gigaStep(obj pairwise.Objective, v, g []float64, t int, alpha float64) int64 {
	eta := float64(t-1) / float64(t-2) * 2 / (alpha * float64(t))
	for k := range g {
		g[k] = 0
	}
	for i := 1; i < t; i++ {
		obj.AddGrad(g, v, t-1, i-1, 1/float64(t-1))
	}
	pairwise.Scale(1-eta*obj.Lambda(), v) // ∇ of (λ/2)‖w‖² is λw
	pairwise.Axpy(-eta, g, v)
	obj.Project(v)
	return int64(t - 1)
}

// zcdpRho returns the ρ solving ρ + 2√(ρ log(1/δ)) = ε ([H20] Alg 1 step 3,
// from Lemma 3): with s = √ρ and l = ln(1/δ), s² + 2s√l − ε = 0, so
// ρ = (√(l + ε) − √l)², computed as ε²/(√(l + ε) + √l)² to avoid
// cancellation. (The paper then approximates ρ ≈ ε²/(4 log(1/δ)); we use the
// exact root.)
func zcdpRho(eps, delta float64) float64 {
	l := math.Log(1 / delta)
	s := math.Sqrt(l+eps) + math.Sqrt(l)
	return eps * eps / (s * s)
}

// gigaSensitivities returns, for t = T₁+1..n, a bound Δ_t on ‖v_t − v′_t‖,
// the change of the noise-free Pairwise GIGA iterate when one record of the
// stream is replaced. It is tighter than Lemma 4's 8G/(αt) by a factor of
// about 4G/Γ (2 to 8, and more when G includes a large λB):
//
// Let f_t(w) = 1/(t−1) Σ_{i<t} ℓ(w; z_t, z_i) + (λ/2)‖w‖², α-strongly
// convex and L-smooth (α, L from Objective.Props, for the regularized
// loss), and v_t = Π_C[v_{t−1} − η_t∇f_t(v_{t−1})] with v_{T₁} = w_0 on both
// streams (steps 4–7 read no record). Replace record z_j by z′_j.
//
//   - t < j: the iterates agree (z_j has not been read).
//   - t = j: v_{t−1} = v′_{t−1}, and f_t, f′_t differ in every term, each
//     pair gradient by at most Γ (pairGradGap: for a fixed partner z_i the
//     pair gradient changes by ≤ Γ when the other record is replaced; Γ
//     bounds the unregularized loss — the regularizer's gradient λw does
//     not depend on the data): ‖v_t − v′_t‖ ≤ η_t·Γ (Π_C is nonexpansive).
//   - t > j: v_t − v′_t = Π_C[u] − Π_C[u′] with
//     u − u′ = (v_{t−1} − η_t∇f_t(v_{t−1})) − (v′_{t−1} − η_t∇f_t(v′_{t−1}))
//   - η_t(∇f′_t(v′_{t−1}) − ∇f_t(v′_{t−1})).
//     The gradient map w ↦ w − η∇f(w) of an α-strongly convex, L-smooth f
//     is c-Lipschitz with c = max{|1 − ηα|, |1 − ηL|} (any η > 0), and f_t,
//     f′_t differ in the one term i = j: ‖∇f′_t − ∇f_t‖ ≤ Γ/(t−1). So
//     D_t ≤ c_t·D_{t−1} + η_t·Γ/(t−1).
//   - both iterates lie in C: D_t ≤ ‖C‖₂ = diam.
//
// The bound over all j is therefore B_t = min{diam, max{η_tΓ, c_t·B_{t−1} +
// η_tΓ/(t−1)}}, B_{T₁} = 0 (the recursion is monotone in B_{t−1}, and
// B_{t−1} ≥ D_{t−1} for every j < t). With η_t ≈ 2/(αt) and c_t ≈ 1 − 2/t
// it stays near 2Γ/(αt), against Lemma 4's 8G/(αt). (The [H20] proof of
// Lemma 4 counts the t = j change as 2G·η_t and each later partner change as
// 2G·η_t/(t−1), with G including λB, and sums them without the
// contraction's full benefit; nothing here relies on its steps.)
// Rounding: each B_t carries a relative 1e-12 allowance.
func gigaSensitivities(n, T1 int, alpha, L, gamma, diam float64) []float64 {
	out := make([]float64, 0, max(n-T1, 0))
	prev := 0.0
	for t := T1 + 1; t <= n; t++ {
		tf := float64(t)
		eta := (tf - 1) / (tf - 2) * 2 / (alpha * tf)
		c := math.Max(math.Abs(1-eta*alpha), math.Abs(1-eta*L))
		b := math.Max(eta*gamma, c*prev+eta*gamma/(tf-1)) * (1 + 1e-12)
		b = math.Min(b, diam)
		out = append(out, b)
		prev = b
	}
	return out
}
