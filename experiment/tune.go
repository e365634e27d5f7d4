package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Private hyperparameter selection (--tune).
//
// # Mechanism
//
// The training split D (n records) is cut once, by a uniformly random
// permutation of the indices drawn independently of the data, into a
// fitting part F (n − n_v records) and a validation part V (n_v = ⌈n/5⌉).
// One run of Q:
//
//  1. draws a candidate c uniformly from the candidate set (data-independent);
//  2. trains c on F at a per-run budget μ (c's own mechanism, calibrated
//     to (ε_c, δ_c) = (μ, δ_μ(μ)): exactly μ-GDP, δ_μ the Gaussian-DP curve);
//  3. scores the model w on V by the noisy Mann–Whitney count
//     U(w; V) + N(0, σ_s²), U = Σ_{i∈V₊, j∈V₋} (I[wᵀx_i > wᵀx_j] + ½I[=]),
//     σ_s = Δ'_U/μ.
//
// A draws K from the geometric distribution with E[K] = 1/γ — exactly, for
// the float64 γ the accountant uses (a sequence of exact Bernoulli(γ)
// coins, dp.Selection.SampleRuns; inverting a float uniform, as before,
// gave a law on a 2⁻⁵³ grid, not the theorem's) — runs Q K times with
// fresh randomness and returns the model of the best noisy score —
// Papernot & Steinke 2022 Thm 2 with η = 1 (Liu & Talwar 2019's random
// stopping). Only the chosen run's output is covered and released as the
// private result; the scores, the other candidates and K are not: K is
// reported only in the report's diagnostics section, labelled as not
// covered (an evaluator's number; a deployment would not publish it). The
// report's certificate (certified ε, δ) is the selection's
// (dp.SelectionEpsilon at the request's δ), never the chosen candidate's
// own per-run calibration.
//
// # Sensitivity of the score (replace one record of V; n_v public)
//
// Same label: only the replaced record's row (or column) of the pair
// indicator matrix changes, ≤ n_v − 1 pairs, each by ≤ 1. Label flip
// (positive → negative, the other way symmetric): the record's row against
// the n₋ negatives disappears (U drops by a value in [0, n₋]) and a column
// against the n₊ − 1 other positives appears (U gains a value in
// [0, n₊ − 1]); the change is in [−n₋, n₊ − 1], so |ΔU| ≤ n_v − 1 again.
// Δ_U = n_v − 1, and Δ'_U adds the secure mechanism's snapping allowance
// for one coordinate (dp.SnappedL2Sensitivity).
//
// # Q is μ-GDP (parallel composition over the split)
//
// The split is data-independent, so a replaced record is in F or in V. In
// F: the model is the candidate's μ-GDP mechanism and the score is a
// function of it and of the unchanged V (post-processing). In V: the model
// does not read V, and the score is a Gaussian release of sensitivity
// ≤ Δ'_U with σ_s = Δ'_U/μ, μ-GDP given the model. The candidate index is
// drawn independently of the data. Hence every run is (λ, λμ²/2)-RDP at
// every order (μ-GDP implies it; the data-independent choice of candidate
// keeps it, by joint convexity of the Rényi divergence).
//
// # Accounting
//
// dp.SelectionEpsilon: Papernot & Steinke 2022 Thm 2 (η = 1) on that RDP
// curve, converted to (ε, δ) by the better of Canonne–Kamath–Steinke 2020
// Prop 12 and Mironov 2017 Prop 3. The per-run μ is the largest for which
// the whole selection is (ε, δ)-DP at the request (dp.SelectionMu), so the
// printed (ε, δ) is the selection's and is charged as one release.
//
// # Which candidates (a rule, fixed before the data)
//
// The candidates must be μ-GDP mechanisms (Gaussian releases composed
// exactly by Gaussian DP): dp-lda (when d ≤ 2000), dp-ssp-mean and dp-gd
// with the hinge loss by default, dp-ssp and dp-pair-gd (1 + T Gaussian
// releases calibrated together by dp.CalibrateGaussian, as dp-lda's two)
// on request; γ = 1/(2k) for k
// candidates, so every candidate is tried about twice on average.
// dp-pair-sgd (subsampled RDP, not GDP) and the papers' algorithms
// (classical calibrations) are not candidates.
//
// dp-lda is a candidate because it is μ-GDP at the per-run calibration:
// its two releases (the centre, Δ = 2, and the signs' statistics, Δ = 2,
// the second adaptive on the first) get σ_A, σ_B from dp.CalibrateGaussian
// for (ε_c, δ_c) = (μ, δ_μ(μ)), i.e. (2/σ_A)² + (2/σ_B)² ≤ μ², and the
// adaptive composition of a μ_A-GDP and a μ_B-GDP mechanism is exactly
// √(μ_A² + μ_B²)-GDP ([DRS19] Cor 3.3) — so the run is μ-GDP and, as every
// candidate, (λ, λμ²/2)-RDP at every order (TestTuneLDACandidate checks the
// released σ's against μ). It replaced dp-ssp in the default list (still
// three candidates, so the per-run μ is unchanged): dp-lda's pooled second
// moment has noise ∝ 1/n where dp-ssp's class moments have ∝ 1/n±, and
// dp-lda is the single-site default wherever t = μn/√d ≥ 6.2 (pairwise/
// recommend.go), so the selection can only add to the default's options.
//
// # Cost
//
// The per-run μ is ≈ 0.4× what a single run could use at the same (ε, δ)
// (γ = 1/6: μ = 0.136 vs 0.314 at ε = 1, δ = 10⁻⁴), each run sees 80% of
// the records, and the score's noise is ≈ n_v/(μ·n_v₊n_v₋) in AUC units: on
// a few hundred records that noise exceeds the AUC differences between
// candidates, and tuning loses to the default rule. It pays when the
// candidates differ by more than that noise: large n.

// TuneFraction is the share of the training split held out for scoring.
const TuneFraction = 0.2

// DefaultTuneCandidates are the candidates of --tune without a list.
var DefaultTuneCandidates = []string{"dp-lda", "dp-ssp-mean", "dp-gd"}

// tuneLoss returns the loss --tune runs name with, and whether name is a
// candidate at all (Algorithm.TuneLoss: set by the exactly μ-GDP
// mechanisms the selection theorem accounts).
func tuneLoss(name string) (string, bool) {
	a, err := pairwise.Lookup(name)
	if err != nil || !a.GaussianDP || a.TuneLoss == "" {
		return "", false
	}
	return a.TuneLoss, true
}

// tuneNames lists the registered --tune candidates, sorted.
func tuneNames() []string {
	var names []string
	for _, a := range pairwise.Algorithms() {
		if _, ok := tuneLoss(a.Name); ok {
			names = append(names, a.Name)
		}
	}
	slices.Sort(names)
	return names
}

// TuneReport is what the selection did and what it guarantees.
type TuneReport struct {
	Method       string   `json:"method"`
	Candidates   []string `json:"candidates"`
	Gamma        float64  `json:"gamma"`
	ExpectedRuns float64  `json:"expected_runs"`
	// Runs is K, the number of runs drawn. The theorem covers the chosen
	// run's output only, not K: it is left out of the JSON here and
	// reported in Report.Diagnostics (not covered by the guarantee).
	Runs   int    `json:"-"`
	Chosen string `json:"chosen"`
	// PerRunMu is each run's μ (GDP), PerRunEpsilon/Delta the
	// calibration the candidates were run at.
	PerRunMu      float64 `json:"per_run_mu"`
	PerRunEpsilon float64 `json:"per_run_epsilon"`
	PerRunDelta   float64 `json:"per_run_delta"`
	ScoreSigma    float64 `json:"score_sigma"`
	NFit          int     `json:"n_fit"`
	NValidation   int     `json:"n_validation"`
	// Epsilon, Delta are the whole selection's guarantee (the request).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// tuneCandidates validates the candidate list (default DefaultTuneCandidates,
// those whose registry entry limits d — the second-moment mechanisms dp-lda
// and dp-ssp, pairwise.Algorithm.MaxDim — left out above it: they cannot
// run there).
func tuneCandidates(list []string, d int) ([]string, error) {
	if len(list) == 0 {
		for _, c := range DefaultTuneCandidates {
			if a, err := pairwise.Lookup(c); err == nil && a.MaxDim > 0 && d > a.MaxDim {
				continue
			}
			list = append(list, c)
		}
	}
	seen := map[string]bool{}
	for _, c := range list {
		if _, ok := tuneLoss(c); !ok {
			return nil, fmt.Errorf("experiment: --tune candidate %q is not an exactly Gaussian-DP mechanism the selection theorem can account (use %v)", c, tuneNames())
		}
		if seen[c] {
			return nil, fmt.Errorf("experiment: --tune candidate %q listed twice", c)
		}
		seen[c] = true
	}
	return list, nil
}

// tune runs the private selection on the training split tr only (it is
// never given the test split) and returns the chosen model's result, with
// its privacy report replaced by the selection's.
func tune(ctx context.Context, spec Spec, tr *pairwise.Dataset, rng *rand.Rand) (*pairwise.Result, *TuneReport, error) {
	cands, err := tuneCandidates(spec.TuneCandidates, tr.D)
	if err != nil {
		return nil, nil, err
	}
	nv := int(math.Ceil(TuneFraction * float64(tr.N)))
	if nv < 2 || tr.N-nv < 2 {
		return nil, nil, fmt.Errorf("experiment: --tune needs at least 2 records to fit and 2 to score (n = %d)", tr.N)
	}
	delta := requestDelta(spec, tr.N)
	if !(delta > 0) {
		return nil, nil, fmt.Errorf("experiment: --tune needs δ > 0 (its candidates are Gaussian mechanisms)")
	}
	sel := dp.Selection{Gamma: 1 / (2 * float64(len(cands)))}
	mu, err := dp.SelectionMu(sel, spec.Epsilon, delta)
	if err != nil {
		return nil, nil, fmt.Errorf("experiment: %w", err)
	}
	epsC := mu
	deltaC := dp.GaussianDPDelta(mu, epsC)
	// The selection's own randomness (split, K, candidates) is secret in
	// private runs, like the algorithms' sampling.
	var noise pairwise.Noise
	if spec.Seeded {
		noise = dp.NewSeededNoise(spec.NoiseSeed ^ rng.Uint64())
	} else {
		var err error
		if rng, noise, err = dp.SecretSources(); err != nil {
			return nil, nil, fmt.Errorf("experiment: %w", err)
		}
	}
	if spec.NoiseScale != 0 && spec.NoiseScale != 1 {
		noise = dp.ScaleNoise(noise, spec.NoiseScale)
	}
	// The scored part is a uniformly random nv records; both parts are
	// laid out in tr's own storage (no copy of the fitting part) and tr
	// is put back before tune returns.
	held := slices.Clone(rng.Perm(tr.N)[:nv])
	slices.Sort(held)
	var h data.Holdout
	defer h.Restore()
	fitPart, valData := h.Move(tr, held)
	valPart := valData.All()
	sensU := float64(nv - 1)
	s0 := sensU / mu
	sigmaS := dp.SnappedL2Sensitivity(sensU, dp.GaussianGranularity(2*s0), 1) / mu
	// K exactly Geometric(γ) for the float64 γ the accountant used
	// (exact Bernoulli(γ) coins, dp.Selection.SampleRuns), from the
	// selection's secret generator.
	k := sel.SampleRuns(rng)
	rep := &TuneReport{Method: "Papernot & Steinke 2022 Thm 2, η = 1 (geometric repetitions, Liu & Talwar 2019 random stopping); RDP → (ε, δ) by CKS20 Prop 12",
		Candidates: cands, Gamma: sel.Gamma, ExpectedRuns: sel.ExpectedRuns(), Runs: k, PerRunMu: mu, PerRunEpsilon: epsC, PerRunDelta: deltaC,
		ScoreSigma: sigmaS, NFit: fitPart.N, NValidation: nv, Epsilon: spec.Epsilon, Delta: delta}
	var best *pairwise.Result
	bestScore := math.Inf(-1)
	for r := 0; r < k; r++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		name := cands[rng.IntN(len(cands))]
		algo, err := pairwise.Lookup(name)
		if err != nil {
			return nil, nil, err
		}
		sc := spec
		loss, _ := tuneLoss(name)
		sc.Algo, sc.Loss, sc.Epsilon, sc.Delta, sc.DeltaSet = name, loss, epsC, deltaC, true
		sc.Eta, sc.Steps, sc.Passes = 0, 0, 0
		B := privateRadius(sc, algo, fitPart)
		res, _, err := fit(ctx, sc, algo, fitPart, 0, B, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
		if err != nil {
			return nil, nil, fmt.Errorf("experiment: --tune candidate %s: %w", name, err)
		}
		// The score: U = AUC·n₊n₋ on V plus N(0, σ_s²), drawn by the
		// secure mechanism (snapped to its grid).
		np := 0
		for k := range nv {
			if valPart.Label(k) > 0 {
				np++
			}
		}
		u := []float64{pairwise.LinearAUCView(res.W, valPart) * float64(np*(nv-np))}
		if np == 0 || np == nv {
			u[0] = 0 // one class in V: no pairs, U = 0 for every model
		}
		noise.AddGaussian(u, sigmaS)
		if u[0] > bestScore || best == nil {
			best, bestScore, rep.Chosen = res, u[0], name
			best.Privacy = clonePrivacy(res.Privacy)
		}
	}
	// The run's certificate is the selection's, not the chosen
	// candidate's own (μ, δ_μ(μ)) calibration: ε by dp.SelectionEpsilon at
	// the request's δ (≤ the request by the choice of μ).
	selEps, err := dp.SelectionEpsilon(sel, mu, delta)
	if err != nil {
		return nil, nil, fmt.Errorf("experiment: %w", err)
	}
	if selEps > spec.Epsilon {
		return nil, nil, fmt.Errorf("experiment: internal error: the selection certifies ε = %g > the request %g", selEps, spec.Epsilon)
	}
	p := best.Privacy
	p.Epsilon, p.Delta = spec.Epsilon, delta
	p.CertifiedEpsilon, p.CertifiedDelta = selEps, delta
	p.Private = p.Private && noise.Secure()
	p.Accountant = fmt.Sprintf("private selection: %s; K ~ Geometric(γ = %.4g), E[K] = %.3g runs, each μ = %.4g-GDP (candidate on %d fitting records at (ε, δ) = (%.4g, %.3g); score on %d validation records, Δ_U = n_v − 1, σ_s = %.4g)",
		rep.Method, sel.Gamma, sel.ExpectedRuns(), mu, fitPart.N, epsC, deltaC, nv, sigmaS)
	p.Notes = append(p.Notes, fmt.Sprintf("--tune chose %s among %v; the (ε, δ) above and its certificate (%.6g, %.3g) are the whole selection's, by the theorem (σ, formula and the notes above: the chosen run's, part of its covered output); the number of runs K is not covered and is not part of this statement", rep.Chosen, cands, selEps, delta))
	return best, rep, nil
}

func clonePrivacy(p *pairwise.PrivacyReport) *pairwise.PrivacyReport {
	if p == nil {
		return &pairwise.PrivacyReport{}
	}
	c := *p
	c.Notes = slices.Clone(p.Notes)
	return &c
}

// privateRadius is the parameter radius B of a private run: spec's, else
// the algorithm's rule from public quantities, else 1.
func privateRadius(spec Spec, algo *pairwise.Algorithm, tr *pairwise.Dataset) float64 {
	if spec.ParamRadius > 0 {
		return spec.ParamRadius
	}
	if algo.ParamRadius == nil {
		return 1
	}
	loss, _ := pairwise.LossByName(spec.Task, spec.Loss)
	delta := requestDelta(spec, tr.N)
	p := tr.D
	if spec.Task == pairwise.TaskMetric {
		p = tr.D * tr.D
	}
	return algo.ParamRadius(tr.N, p, spec.Epsilon, delta, spec.FeatureRadius, spec.Task, loss)
}
