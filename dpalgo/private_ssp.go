package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
)

var (
	sspAlg = &pairwise.Algorithm{
		Name:       "dp-ssp",
		MaxDim:     sspMaxDim,
		GaussianDP: true,
		TuneLoss:   "square",
		Title:      "one-shot sufficient-statistics perturbation: noisy class sums, second moments and count, solved for the ridge square-AUC optimum",
		Paper:      "pairfed (sufficient-statistics perturbation, cf. Vu & Slavković 2009, Wang 2018 'Revisiting differentially private linear regression'; square AUC loss of Gao et al. 2013)",
		Ref:        "private_ssp.go",
		Setting:    "full-batch",
		Tasks:      []pairwise.Task{pairwise.TaskAUC},
		Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer; solves the square AUC loss (whatever --loss) " +
			"with a ridge λ from the noise level",
		Private: true,
		PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours (n public). One Gaussian release of the weighted class sums, " +
			"class second moments and positive count, ℓ2 sensitivity 2 (weights 1/R, 1/(√2R²), 1), σ by the analytic Gaussian " +
			"mechanism (Balle & Wang 2018); the model is post-processing.",
	}
	sspMeanAlg = &pairwise.Algorithm{
		Name:        "dp-ssp-mean",
		GaussianDP:  true,
		TuneLoss:    "square",
		Title:       "class-mean-difference ranker from one noisy release of the class sums and count (dp-ssp with λ = ∞)",
		Paper:       "pairfed (the strongest-regularized case of dp-ssp)",
		Ref:         "private_ssp.go",
		Setting:     "full-batch",
		Tasks:       []pairwise.Task{pairwise.TaskAUC},
		Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer w = μ₊ − μ₋ (the λ → ∞ limit of the ridge square-AUC optimum)",
		Private:     true,
		PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours (n public). One Gaussian release of the class sums (weight 1/R) " +
			"and the positive count (weight √2), ℓ2 sensitivity 2, σ by the analytic Gaussian mechanism (Balle & Wang 2018).",
	}
)

func init() {
	sspAlg.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
		return runSSP(ctx, sspAlg, SSPClass, obj, cfg)
	}
	sspMeanAlg.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
		return runSSP(ctx, sspMeanAlg, SSPMean, obj, cfg)
	}
	pairwise.Register(sspAlg)
	pairwise.Register(sspMeanAlg)
}

func runSSP(ctx context.Context, a *pairwise.Algorithm, kind SSPKind, obj pairwise.Objective, cfg pairwise.RunConfig) (*pairwise.Result, error) {
	moments := kind.Moments()
	rep, err := statsReleaseSetup(ctx, a, moments, obj, &cfg)
	if err != nil {
		return nil, err
	}
	ds := obj.Data()
	p := cfg.Privacy
	R := p.FeatureRadius
	rel, err := SSPCalibrate(p.Epsilon, p.Delta, R, ds.D, kind)
	if err != nil {
		return nil, err
	}
	noisy := NoisySSP(SSPStatsOf(ds, kind), R, rel, p.Noise)
	lambda := math.Inf(1)
	if moments {
		lambda = SSPLambda(noisy, R, rel.Sigma)
	}
	w, info, err := SolveSSP(noisy, lambda)
	if err != nil {
		return nil, err
	}
	obj.Project(w) // a rescaling at most: AUC is unchanged
	a0, b0, c0 := SSPWeights(R, kind)
	rep.G, rep.L, rep.Alpha = 0, 0, 0 // no gradient bound is used
	rep.Sensitivity = []float64{rel.Sensitivity}
	rep.Sigmas = []float64{rel.Sigma}
	rep.Releases = 1
	rep.SetNoiseDim(rel.Coords) // the release's noise coordinates (certifyReport's discrete-noise term)
	rep.Formula = fmt.Sprintf("σ = analytic Gaussian σ(ε, δ, Δ') (Balle & Wang 2018 Thm 8), Δ' = Δ + g√k, Δ = %.6g (weights a = %.4g, b = %.4g, c = %.4g), k = %d coordinates",
		SSPSensitivity(R, a0, b0, c0), a0, b0, c0, rel.Coords)
	rep.Accountant = "one Gaussian release (exact: Gaussian DP / analytic Gaussian mechanism); the model is post-processing"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("noise per coordinate: class sums %.4g, counts %.4g", rel.Sigma/a0, rel.Sigma/c0),
		fmt.Sprintf("noisy counts n̂₊ = %.1f, n̂₋ = %.1f (clamped to [1, n−1]; n = %d public)", info.NPos, info.NNeg, ds.N),
	)
	if cfg.Init != nil {
		rep.Notes = append(rep.Notes, "the initial model is ignored: the model is computed in closed form")
	}
	switch kind {
	case SSPPooled:
		rep.Notes = append(rep.Notes,
			fmt.Sprintf("solved the ridge Fisher discriminant w = (Σ̂₊ + λI)⁻¹(μ̂₊ − μ̂₋), Σ̂ = M̂/n − m̂m̂ᵀ the total covariance, whatever --loss (%s); λ = %.4g = 2R²σ√d/n + 10⁻⁶R² (noise level of M̂/n, a rule fixed before the data); %d of %d eigenvalues clipped to 0 (smallest %.3g)",
				obj.Loss().Name(), lambda, info.Clipped, ds.D, info.MinEig))
	case SSPClass:
		rep.Notes = append(rep.Notes,
			fmt.Sprintf("solved the square-AUC ridge optimum w = (Â₊ + λI)⁻¹(μ̂₊ − μ̂₋) whatever --loss (%s); λ = %.4g = 2R²σ√d·√(1/n̂₊² + 1/n̂₋²) + 10⁻⁶R² (noise level of Ĉ₊ + Ĉ₋, a rule fixed before the data); %d of %d eigenvalues clipped to 0 (smallest %.3g)",
				obj.Loss().Name(), lambda, info.Clipped, ds.D, info.MinEig))
	default:
		rep.Notes = append(rep.Notes, "model w = μ̂₊ − μ̂₋ (class-mean difference), whatever --loss")
	}
	return &pairwise.Result{W: w, Steps: 1, PairGrads: int64(ds.N), Privacy: rep}, nil
}
