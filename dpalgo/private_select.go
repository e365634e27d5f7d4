package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// dp-select: a noisy count of the positives picks dp-objpert or dp-lda;
// the one picked runs on the rest of the budget.
//
// # Why
//
// dp-objpert (private_objpert.go) fits the logistic model at the noise of
// one Gaussian vector; dp-lda fits the Fisher discriminant from d²-sized
// statistics. Where the logistic model describes the data better (ijcnn1:
// 0.919 against 0.891 at ε = 1) dp-objpert wins, but its noise in θ is
// set by the curvature the minority class provides — about
// σ·(d + 1)/min(n₊, n₋) per coordinate — so with few positives it loses
// badly (−0.02 to −0.13 AUC on the synthetic grid). The quantity that
// separates the two regimes on the grid is
//
//	s₊ = μ·min(n₊, n₋)/(d + 1),
//
// the minority count per parameter in units of the noise (μ the
// Gaussian-DP parameter of the branch's budget): from s₊ ≈ 15
// (SelectCrossover) dp-objpert is within 0.01 of dp-lda or ahead in every
// cell of the synthetic grid and a held-out block, from ≈ 24 within
// 0.003; below 15 it trails by up to 0.24 (scripts/regret;
// docs/results/regret-objpert.md). The class counts are private, so s₊ is
// estimated from a noisy count.
//
// # Mechanism and privacy (replace-one neighbours, n public)
//
//  1. n̂₊ = n₊ + N(0, σ_c²): Δ = 1 (a replaced record moves n₊ by at most
//     one), calibrated to (ε_c, δ_c) = (ε/50, δ/100) (calibrateSnapped).
//  2. ŝ₊ = μ_b·min(n̂₊, n − n̂₊)/(d + 1), μ_b the Gaussian-DP parameter of
//     the branch's budget (ε_b, δ_b) = (ε − ε_c, δ − δ_c): post-processing.
//  3. ŝ₊ ≥ T (below) → dp-objpert at (ε_b, δ_b), else dp-lda at
//     (ε_b, δ_b); each is proved (ε_b, δ_b)-DP for every choice, so the
//     run is (ε, δ)-DP by adaptive basic composition, and the certificate
//     is the count's δ at ε_c plus the branch's own.
//
// The threshold is the grid's crossover plus two standard deviations of
// the count's noise in ŝ₊, all public numbers:
//
//	T = s* + 2·μ_b·σ_c/(d + 1),   s* = SelectCrossover = 15,
//
// so a job whose true s₊ is at the crossover is sent to dp-objpert with
// probability ≤ Q(2) ≈ 2.3 % (the clamp and min(·) are 1-Lipschitz, so
// ŝ₊ moves by at most μ_b·|n̂₊ − n₊|/(d + 1)), and one well above it is
// not kept on dp-lda by the count's noise. μ_b·σ_c hardly depends on ε
// (μ_b nearly ∝ ε, σ_c ∝ 1/ε) and is ≈ 50 at δ = 1/(10n) for n from 10³
// to 10⁵: T ≈ 19 at d = 22, 16 at d = 123, 48 at d = 2 (where one count's
// noise is a large part of s₊).
var selectAlg = &pairwise.Algorithm{
	Name:    "dp-select",
	MaxDim:  sspMaxDim,
	Title:   "a noisy positive count picks dp-objpert (s₊ = μ·min(n̂₊, n − n̂₊)/(d + 1) ≥ 15 plus twice the count's noise in it) or dp-lda; the pick runs on the rest of the budget",
	Paper:   "pairfed (private selection between dp-objpert and dp-lda by the minority count per parameter)",
	Ref:     "private_select.go",
	Setting: "full-batch",
	Tasks:   []pairwise.Task{pairwise.TaskAUC},
	Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer; the branch's assumptions (dp-objpert: the ridge-logistic model; dp-lda: " +
		"the ridge Fisher discriminant), whatever --loss",
	Private:          true,
	NoiseInObjective: true,
	CentresPrivately: true,
	PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours (n public). A Gaussian count of the positives (Δ = 1) at (ε/50, δ/100), " +
		"then dp-objpert or dp-lda at the rest; basic composition, certified δ at ε = the count's plus the branch's.",
}

// SelectCrossover is s*: from s₊ = s* up, every cell of the synthetic
// grid and of the held-out block has dp-objpert within 0.01 AUC of dp-lda
// or ahead (docs/results/regret-objpert.md: the cells at 15.3–25 are
// within 0.0092; at 14.3 and 14.8 it trails by 0.019 and 0.013).
const SelectCrossover = 15.0

// SelectPlan is dp-select's public calibration for d features at (ε, δ).
type SelectPlan struct {
	EpsC, DeltaC float64 // the count's share
	SigmaC       float64 // its noise (Δ = 1)
	EpsB, DeltaB float64 // the branch's share
	MuB          float64 // the Gaussian-DP parameter of the branch's share
	SD           float64 // the count's noise in ŝ₊: μ_b·σ_c/(d + 1)
	Threshold    float64 // T = s* + 2·SD
}

// NewSelectPlan returns the plan (the file comment's rule).
func NewSelectPlan(d int, eps, delta float64) (SelectPlan, error) {
	if d < 1 || !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) {
		return SelectPlan{}, fmt.Errorf("dp-select needs d ≥ 1, ε > 0 finite and δ in (0, 1), got d = %d, ε = %v, δ = %v", d, eps, delta)
	}
	var pl SelectPlan
	pl.EpsC, pl.DeltaC = eps*selectCountEps, delta*selectCountDelta
	// the rest, so that the count's share plus the branch's is (ε, δ) in
	// exact arithmetic (basic composition, and the certificate printed at ε)
	pl.EpsB, pl.DeltaB = dp.BudgetRest(eps, pl.EpsC), dp.BudgetRest(delta, pl.DeltaC)
	var err error
	if pl.SigmaC, err = calibrateSnapped(pl.EpsC, pl.DeltaC*0.999, 1, 1); err != nil {
		return SelectPlan{}, fmt.Errorf("dp-select: the count: %w", err)
	}
	if pl.MuB, err = gaussianMu(pl.EpsB, pl.DeltaB); err != nil {
		return SelectPlan{}, fmt.Errorf("dp-select: %w", err)
	}
	pl.SD = pl.MuB * pl.SigmaC / float64(d+1)
	pl.Threshold = SelectCrossover + 2*pl.SD
	return pl, nil
}

// The count's share of the budget.
const (
	selectCountEps   = 1.0 / 50
	selectCountDelta = 1.0 / 100
)

func init() {
	selectAlg.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
		return runSelect(ctx, obj, cfg, rng)
	}
	pairwise.Register(selectAlg)
}

// SelectScore returns s₊ = μ·min(n₊, n − n₊)/(d + 1) for a (noisy) count
// n₊ of n records with d features at the branch's μ.
func SelectScore(mu, nPos float64, n, d int) float64 {
	nPos = math.Max(0, math.Min(float64(n), nPos))
	return mu * math.Min(nPos, float64(n)-nPos) / float64(d+1)
}

func runSelect(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	a := selectAlg
	rep, err := statsReleaseSetup(ctx, a, false, obj, &cfg)
	if err != nil {
		return nil, err
	}
	ds := obj.Data()
	if ds.D > sspMaxDim {
		return nil, fmt.Errorf("%s: d = %d is above its branches' limit %d", a.Name, ds.D, sspMaxDim)
	}
	pr := cfg.Privacy // --calibration paper: refused by the registry (no PaperCalibration)
	pl, err := NewSelectPlan(ds.D, pr.Epsilon, pr.Delta)
	if err != nil {
		return nil, err
	}
	count := []float64{float64(ds.NumPositive())}
	pr.Noise.AddGaussian(count, pl.SigmaC)
	score := SelectScore(pl.MuB, count[0], ds.N, ds.D)
	name := "dp-lda"
	if score >= pl.Threshold {
		name = "dp-objpert"
	}
	// By the registry (the branches are algorithms of their own files).
	branch, err := pairwise.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Name, err)
	}
	sub := cfg
	bp := *pr
	bp.Epsilon, bp.Delta = pl.EpsB, pl.DeltaB
	sub.Privacy = &bp
	res, err := branch.Run(ctx, obj, sub, rng)
	if err != nil {
		return nil, err
	}
	br := res.Privacy
	if br == nil || !(br.CertifiedEpsilon <= pl.EpsB) || !(br.CertifiedDelta <= pl.DeltaB) {
		return nil, fmt.Errorf("%s: the branch %s did not certify its share (%v, %v)", a.Name, branch.Name, pl.EpsB, pl.DeltaB)
	}
	gC := dp.GaussianGranularity(pl.SigmaC)
	certC := dp.GaussianDPDelta(dp.SnappedL2Sensitivity(1, gC, 1)/pl.SigmaC, pl.EpsC) + dp.DiscreteGaussianDelta(pl.EpsC, 1)
	out := *br
	out.Model, out.Epsilon, out.Delta = rep.Model, pr.Epsilon, pr.Delta
	out.Noise, out.Private, out.Assumptions = rep.Noise, rep.Private, rep.Assumptions
	out.Sigmas = append([]float64{pl.SigmaC}, br.Sigmas...)
	out.Sensitivity = append([]float64{1}, br.Sensitivity...)
	out.Releases = br.Releases + 1
	out.SetNoiseDim(br.NoiseDim())
	out.SetCertificate(pr.Epsilon, certC+br.CertifiedDelta)
	out.Formula = fmt.Sprintf("σ_c = %.4g for the positive count (Δ = 1) at (ε_c, δ_c) = (%.3g, %.3g); then %s at (%.4g, %.3g): %s", pl.SigmaC, pl.EpsC, pl.DeltaC, branch.Name, pl.EpsB, pl.DeltaB, br.Formula)
	out.Accountant = "basic composition of the count and the branch (" + br.Accountant + ")"
	out.Notes = append([]string{fmt.Sprintf("noisy positive count n̂₊ = %.1f of n = %d; ŝ₊ = μ_b·min(n̂₊, n − n̂₊)/(d + 1) = %.4g (μ_b = %.4g) %s T = %g + 2·%.3g = %.4g (the crossover plus two standard deviations of the count's noise in ŝ₊) → %s",
		count[0], ds.N, score, pl.MuB, map[bool]string{true: "≥", false: "<"}[score >= pl.Threshold], SelectCrossover, pl.SD, pl.Threshold, branch.Name)}, br.Notes...)
	res.Privacy = &out
	return res, nil
}
