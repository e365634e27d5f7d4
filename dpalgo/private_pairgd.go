package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// dp-pair-gd: the pooled (single-site) form of fed-dp-pair-sgd's AUC
// mechanism — noisy class statistics, then T rounds of noisy SUMS of
// per-record clipped logistic pair gradients against a public
// opposite-class partner — run on one data set.
//
// # Mechanism (the functions of kit_pairsum.go, not a copy)
//
//  1. Release 1: the class sums x/R and the positive count
//     (PairSumStatsVector, fed-dp-ssp-mean's weighted vector with a zero
//     appended) plus N(0, σ₁²I). The noisy statistics start the solver
//     (NewPairSumSolver): w₀ = S·b̂/‖b̂‖ along the class-mean difference,
//     b₀ the threshold between the two class means.
//  2. Releases 2 … T + 1: for the current (w, b), encoded as the broadcast
//     v (PairEncodeBroadcast, decoded by PairSumRoundVector exactly as a
//     site decodes it), the class blocks of Σ clip₁(σ(−y s)(x/R, a)/κ)
//     over the records (PairSumRoundVector) plus N(0, σ_r²I); the solver
//     takes one projected step on the sphere of radius S with the
//     class-balanced gradient (PairSumSolver.Step).
//
// The output is the mean of the iterates' directions at norm S
// (PairSumSolver.Output), projected into the parameter set (a rescaling
// at most). Everything after each release is post-processing of it and
// of the earlier ones.
//
// # Neighbouring relation and sensitivity (replace one record)
//
// n is public. Every release has replace-one ℓ2 sensitivity Δ = 2 =
// PairSumSensitivity, proved in kit_pairsum.go's file comment: release
// 1 for records in the R-ball (SSPVector's weights 1/R and √2; PrivateSetup
// checks ‖x‖ ≤ R before anything is read), the rounds for ANY record and
// ANY broadcast (each record adds one term of norm ≤ 1 to one of two
// class blocks; replacing it moves the vector by ≤ 2 within a block or
// ≤ √2 across). A single data set is the federated job with one site, so
// the same proof and the same vectors apply verbatim.
//
// # Calibration and accounting (exactly the federated site's)
//
// The 1 + T releases are adaptive Gaussian releases on the same records:
// they compose sequentially and exactly in Gaussian DP, μ² = Σ_k
// (Δ'/σ_k)² ([DRS19] Cor 3.3), Δ' = 2 plus the secure sampler's snapping
// allowance, the discrete-noise δ term over all (T + 1)(2d + 2)
// coordinates included. The σ's are the smallest dp.CalibrateGaussian
// certifies for PairSumPlan(1 + T, 1 + T, d) — the plan fed-dp-pair-sgd's
// sites use: half of μ² to the statistics, μ²/(2T) to each round —
// fixed from (ε, δ, d, T) alone before any record is read; the report is
// certified by the exact accountant (CalibrateGaussian, certifiedRun).
//
// # Defaults (a written rule from public numbers)
//
// T and η: PairSumDefaults, the federated rule with one site (noise
// factor ς = 1): E₁ = κ·σ₁·√(8(d + 1))/n with σ₁ the round σ of a T = 1
// job, τ = θ₀/E₁, T = ⌈τ⌉ within [2, 16], η = S·min(1, τ/T)
// (dpalgo/kit_pairsum.go derives it). S = the parameter radius B,
// by default 8 (PairGDScale: the federated default; the sensitivity does
// not depend on it). --steps T and --eta η override them; privacy does
// not depend on η, and on T only through the calibration above.
//
// The loss is the logistic pair loss against the partner (the mechanism's
// only one), whatever --loss (as dp-ssp solves the square loss whatever
// it is given); λ and the initial model are not used (the start is the
// private class-mean direction). [DRS19]: Dong, Roth & Su, Gaussian
// differential privacy, 2019.

// PairGDScale is dp-pair-gd's default parameter radius B = S (the sphere
// of the iterates), fed-dp-pair-sgd's default scale.
const PairGDScale = 8.0

// pairGDMaxRounds bounds T (fed-dp-pair-sgd's bound).
const pairGDMaxRounds = 256

var pairGDAlg = &pairwise.Algorithm{
	Name:       "dp-pair-gd",
	GaussianDP: true,
	TuneLoss:   "logistic",
	Title:      "noisy class statistics, then T noisy sums of per-record clipped logistic pair gradients against a public opposite-class partner (pooled fed-dp-pair-sgd, AUC)",
	Paper:      "pairfed (the single-site form of fed-dp-pair-sgd's AUC mechanism; noisy GD as in Bassily, Smith & Thakurta 2014, per-record clipping as in Abadi et al. 2016)",
	Ref:        "private_pairgd.go",
	Setting:    "full-batch",
	Tasks:      []pairwise.Task{pairwise.TaskAUC},
	Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer on the sphere ‖w‖ = B; minimizes the class-balanced logistic " +
		"pair loss of each record against a public partner at the threshold −b, whatever --loss (λ and the initial model are not used)",
	Private: true,
	PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours (n public). 1 + T Gaussian releases of 2d + 2 values, each " +
		"of ℓ2 sensitivity 2: the weighted class sums and positive count, then T sums of per-record clipped (norm ≤ 1) " +
		"pair gradients; sequential composition by exact Gaussian DP (Dong, Roth & Su 2019), half of μ² to the statistics; " +
		"the steps and the output are post-processing.",
}

func init() {
	pairGDAlg.Run = runPairGD
	pairGDAlg.ParamRadius = func(int, int, float64, float64, float64, pairwise.Task, pairwise.Loss) float64 { return PairGDScale }
	pairwise.Register(pairGDAlg)
}

// pairGDRounds returns (T, η): the default rule PairSumDefaults with one
// site (ς = 1) from the round σ₁ of a T = 1 job (the exact calibration of
// PairSumPlan(2, 2, d), as fed-dp-pair-sgd's coordinator computes it), or
// the given steps.
func pairGDRounds(n, d int, eps, delta, S float64, steps int) (int, float64, error) {
	s1, _, err := dp.CalibrateGaussian(PairSumPlan(2, 2, d), eps, delta)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", pairGDAlg.Name, err)
	}
	T, eta := PairSumDefaults(n, d, s1[1], 1, S, PairSumTheta, steps)
	return T, eta, nil
}

func runPairGD(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	a := pairGDAlg
	_, rep, err := pairwise.PrivateSetup(a, obj, &cfg)
	if err != nil {
		return nil, err
	}
	ds := obj.Data()
	n, d := ds.N, ds.D
	switch {
	case n < 2:
		return nil, fmt.Errorf("%s needs at least 2 records, got %d", a.Name, n)
	case cfg.Steps < 0 || cfg.Steps > pairGDMaxRounds:
		return nil, fmt.Errorf("%s: %d gradient rounds is outside [1, %d] (0: the default rule)", a.Name, cfg.Steps, pairGDMaxRounds)
	case cfg.Eta < 0 || math.IsNaN(cfg.Eta) || math.IsInf(cfg.Eta, 0):
		return nil, fmt.Errorf("%s: step size η = %v must be finite and ≥ 0 (0: the default rule)", a.Name, cfg.Eta)
	case cfg.Passes != 0:
		return nil, fmt.Errorf("%s is full-batch: give the number of gradient rounds T (--steps), not passes", a.Name)
	case cfg.Averaging != "" && cfg.Averaging != pairwise.AvgPaper && cfg.Averaging != pairwise.AvgUniform:
		return nil, fmt.Errorf("%s outputs the mean of its iterates' directions; averaging %q does not apply", a.Name, cfg.Averaging)
	case len(cfg.Checkpoints) > 0 && cfg.OnCheckpoint == nil:
		return nil, fmt.Errorf("%s: checkpoints %v given without OnCheckpoint", a.Name, cfg.Checkpoints)
	}
	p := cfg.Privacy
	R := p.FeatureRadius
	S := obj.Constraint().Radius()
	if !(S > 0) || math.IsInf(S, 0) {
		S = PairGDScale // no radius: the default sphere (AUC depends on w's direction only)
	}
	var notes []string
	T, eta, err := pairGDRounds(n, d, p.Epsilon, p.Delta, S, cfg.Steps)
	if err != nil {
		return nil, err
	}
	if cfg.Steps > 0 {
		notes = append(notes, fmt.Sprintf("T = %d gradient rounds given", T))
	} else {
		notes = append(notes, fmt.Sprintf("T = ⌈τ⌉ within [2, 16] = %d gradient rounds (τ = θ₀/E₁, θ₀ = %g, E₁ = κσ₁√(8(d + 1))/n; PairSumDefaults)", T, PairSumTheta))
	}
	if cfg.Eta > 0 {
		eta = cfg.Eta
		notes = append(notes, fmt.Sprintf("η = %g given", eta))
	} else {
		notes = append(notes, fmt.Sprintf("η = S·min(1, τ/T) = %.6g (S = %g; PairSumDefaults)", eta, S))
	}
	rep.SetNoiseDim(PairSumDim(d))
	sig, err := pairwise.CalibrateGaussian(a.Name, p, rep, nil, nil, pairwise.GaussOption{
		Plan: PairSumPlan(1+T, 1+T, d),
		How:  "2 for every release (the class sums and count with weights 1/R, √2; each round's per-record terms clipped to norm ≤ 1; dpalgo/kit_pairsum.go)",
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Release 1: the class statistics.
	v := PairSumStatsVector(ds, R)
	p.Noise.AddGaussian(v, sig[0])
	sol, err := NewPairSumSolver(v, d, float64(n), R, S, eta, T)
	if err != nil {
		return nil, err
	}
	cp := 0
	for t := 1; t <= T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Release t + 1: the clipped pair gradients at the current (w, b).
		u, err := PairSumRoundVector(ds, sol.Query(), S, R)
		if err != nil {
			return nil, err
		}
		p.Noise.AddGaussian(u, sig[t])
		if err := sol.Step(u); err != nil {
			return nil, err
		}
		for cp < len(cfg.Checkpoints) && cfg.Checkpoints[cp] <= t {
			if cfg.Checkpoints[cp] == t {
				cfg.OnCheckpoint(t, sol.Output(S))
			}
			cp++
		}
	}
	w := sol.Output(S)
	obj.Project(w)                    // a rescaling at most: AUC is unchanged
	rep.G, rep.L, rep.Alpha = 0, 0, 0 // no loss bound is used: the terms are clipped
	rep.Releases = 1 + T
	rep.Formula = fmt.Sprintf("σ's = the smallest the exact Gaussian-DP accountant certifies for 1 + T = %d releases of Δ = 2 on 2d + 2 = %d coordinates, half of μ² to the statistics (PairSumPlan, dp.CalibrateGaussian): σ₁ = %.4g, σ_round = %.4g", 1+T, PairSumDim(d), sig[0], sig[1])
	rep.Accountant = "1 + T adaptive Gaussian releases composed by exact Gaussian DP (μ² = Σ (Δ'/σ_k)²); the steps and the output are post-processing"
	notes = append(notes,
		fmt.Sprintf("start: the noisy class-mean direction; noisy counts n̂₊ = %.1f, n̂₋ = %.1f (clamped to [1, n−1]; n = %d public)", sol.NPos, sol.N-sol.NPos, n),
		fmt.Sprintf("each round: the class blocks of Σ clip₁(σ(−y s)(x/R, a)/κ), κ = %g, a = %g, one step on the sphere ‖w‖ = S = %g, b clamped to [−S, S]", PairSumKappa, PairSumA, S),
		fmt.Sprintf("the logistic pair loss of each record against the public partner, whatever --loss (%s); output: the mean of the iterates' directions at norm S", obj.Loss().Name()))
	if cfg.Init != nil {
		notes = append(notes, "the initial model is ignored: the start is the private class-mean direction")
	}
	if obj.Lambda() != 0 {
		notes = append(notes, fmt.Sprintf("λ = %g is not used", obj.Lambda()))
	}
	rep.Notes = append(rep.Notes, notes...)
	return &pairwise.Result{W: w, Steps: T, PairGrads: int64(n) * int64(T), Privacy: rep}, nil
}
