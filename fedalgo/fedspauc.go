package fedalgo

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-spauc: the mission's mechanism — every site computes gradient
// terms on its own records and adds calibrated noise before anything
// leaves it; the coordinator aggregates each phase — for the square-loss
// AUC, whose gradient is POINTWISE given the class statistics (Ying, Wen
// & Lyu 2016; SPAUC, Lei & Ying 2019). dpalgo/fedspauc.go states the
// decomposition, the per-record clipping, the sensitivity proof and the
// coordinator's solver.
//
//  1. Phase 1: every site releases its class sums (x/R) and positive
//     count once — fed-dp-ssp-mean's site release (dpalgo.SSPVector,
//     Δ = 2) — plus Gaussian noise. The coordinator sums them: n̂₊, m̂₊,
//     m̂₋ (post-processing), and broadcasts b̂ = m̂₊ − m̂₋.
//  2. Phases 2 … T+1: for the broadcast query p, every site releases the
//     class blocks of Σ clip_C((uᵀx)x)/C over its records (u = p/‖p‖,
//     C = κR²; dpalgo.SPAUCProductVector) plus Gaussian noise: the
//     per-record gradient terms of the square AUC loss, clipped. Replace-
//     one sensitivity Δ = 2 in the vector's units (2C in gradient units),
//     whatever the site's label mix. The coordinator sums the sites'
//     vectors — the pooled records' terms, whatever the partition: a site
//     holding one class contributes its class's block — forms Âp with the
//     phase-1 means and makes one conjugate-gradient step on
//     (Â + λI)w = b̂ (dpalgo.SPAUCSolver); the next query is CG's
//     direction. The output is the last iterate, rescaled into the
//     B-ball.
//
// Privacy of a site: its T + 1 releases are adaptive Gaussian releases on
// the same records, each of ℓ2 sensitivity Δ = 2 under replacement of one
// record (records in the R-ball for phase 1; any record for the clipped
// product rounds), so they compose SEQUENTIALLY, exactly, in Gaussian DP:
// μ² = Σ_k (Δ'_k/σ_k)² ([DRS19] Cor 3.3), Δ' = 2 + the secure sampler's
// snapping allowance, with the discrete-noise δ term over all (T + 1)·
// (2d + 1) noise coordinates (dp.CalibrateGaussian / CertifyGaussian).
// The σ's (phase 1 ¾ of μ², the rounds the rest equally) are the smallest that certify the job's
// (ε, δ), fixed from (ε, δ, d, T) alone — public — before any release.
// Each record is in one site (parallel composition across sites); the
// queries are functions of earlier releases (adaptivity is covered by the
// composition); the sums, the solver and the output are post-processing.
// Before each release the site charges its ledger the certificate of its
// releases so far (the job's (ε, δ) after the last).
//
// Secure aggregation (SumReleaser): every phase's release is a sum of one
// vector per site of length 2d + 1 and Δ = 2, so each phase can be one
// SecAgg round with the distributed discrete Gaussian, and the noise of
// the sum is one central release's instead of √K sites' noises. The job's
// one DDG scale makes the plain path's split (¾ of μ² to the class
// statistics) by round weights (SumWeights, fedalgo.SumWeighted): phase
// 1's round has weight 1, each of the T product rounds 1/√(3T) (its
// vectors multiplied at the site, the sum divided at the coordinator), so
// the rounds' RDP splits ¾ : ¼ and the job keeps its 1 + T phases,
// composed sequentially at their own sensitivities (secure_phases.go).
// (Until the thirteenth session the split was made by repetition: phase
// 1's release made in 3T rounds and averaged, 4T rounds for the same
// noise.)
//
// Defaults, a written rule from public numbers only: T = min(d, 2)
// product rounds (CG is exact after d rounds without noise, but each
// round costs budget: on diabetes at ε = 1, 30 runs of the pooled job,
// T = 2 gave 0.732 ± 0.010 (s.e.), T = 4 0.704 ± 0.011; on a9a (n =
// 26 049, d = 123, 3 runs) 0.883 and 0.872: later CG iterates fit the
// square loss with less regularization, not the ranking better), κ = ½, i.e. C = R²/2: a record's |uᵀx|·‖x‖ ≤ R² is
// clipped only above half its largest value (the clip is what makes Δ = 2
// hold for any record). Measured at ε = 1, pooled: on a9a (3 runs) κ =
// 1/√d clipped the records — ±1 features mapped into the unit ball, far
// from centred — into biased products, 0.853, against 0.886 at κ = ½ and
// 0.883 at κ = 1 (unbiased, twice the noise); on diabetes (40 runs) the
// three were within the noise of each other (0.742, 0.730, 0.737, s.e.
// 0.009). B = 1 (AUC depends on the direction only).

// FedDPSPAUC is the name of fed-dp-spauc.
const FedDPSPAUC = "fed-dp-spauc"

func init() { Register(fedSPAUC{}) }

type fedSPAUC struct{}

func (fedSPAUC) Name() string { return FedDPSPAUC }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedDPSPAUC.
func (fedSPAUC) Doc() Doc {
	return Doc{
		Title:       "square-AUC gradient made pointwise by the class statistics: noisy class sums once, then rounds of noisy clipped per-record gradient terms summed over sites and solved by conjugate gradients",
		Paper:       "pairfed (SPAUC: Ying, Wen & Lyu 2016; Lei & Ying 2019 — the square-loss AUC gradient given p, m⁺, m⁻ — as noisy site sums)",
		Ref:         "fedalgo/fedspauc.go, dpalgo/fedspauc.go",
		Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer, square loss whatever --loss; any label mix per site, a single class included; 1 + T Gaussian releases per site composed exactly (Gaussian DP)",
	}
}

func (fedSPAUC) Private() bool { return true }

// spaucMaxRounds bounds T (every round costs budget; CG is exact after d).
const spaucMaxRounds = 64

// Not Centring: the linear bounds map (which keeps the records' geometry)
// was tried and lost where the noise is large — diabetes with the schema,
// ε = 1, 60 runs: 4 sites single-class 0.651 ± 0.013 against 0.683 ±
// 0.008 with the records clipped around the box's centre (pooled 0.739
// against 0.736): it shrinks every record by up to √d, and with it the
// signal against the same noise.

// Configure: AUC only; the square loss (the loss the releases are the
// gradient of, whatever the worker's objective says); T product rounds
// (Rounds; 0: the default rule, applied by Plan); no η or local passes;
// B = 1; sums only, so the default aggregation.
// SingleClassSites: a site's vectors are its records' class-block terms,
// whatever its label mix (a site of one class fills its class's block).
func (fedSPAUC) SingleClassSites() bool { return true }

func (fedSPAUC) Configure(s *Spec) error {
	if s.Task == protocol.TaskMetric {
		return fmt.Errorf("%s learns a linear scorer (task auc): the metric task does not apply", FedDPSPAUC)
	}
	if s.Loss == "" {
		s.Loss = "square"
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 1
	}
	if s.LocalPasses != 0 || s.Eta != 0 {
		return fmt.Errorf("%s sums the sites' noisy gradient terms and steps by conjugate gradients: local passes and η do not apply (give the number of gradient rounds with --rounds)", FedDPSPAUC)
	}
	if s.Rounds < 0 || s.Rounds > spaucMaxRounds {
		return fmt.Errorf("%s: %d gradient rounds is outside [1, %d] (0: the default min(d, 2))", FedDPSPAUC, s.Rounds, spaucMaxRounds)
	}
	if agg, err := protocol.ParseAggregation(s.Aggregation); err != nil {
		return err
	} else if agg.Rule != protocol.AggMean {
		return fmt.Errorf("%s sums the sites' releases: aggregation %q does not apply (omit it)", FedDPSPAUC, s.Aggregation)
	}
	return checkPrivacy(FedDPSPAUC, s)
}

// spaucRounds is T for d features: the spec's, or min(d, 2).
func spaucRounds(rounds, d int) int {
	if rounds > 0 {
		return rounds
	}
	return min(d, 2)
}

// spaucShape returns T of an announced job's phases = 1 + T (phase 1
// releases the class statistics, the T others the product rounds); ok is
// false when T is outside [1, spaucMaxRounds].
func spaucShape(phases int) (T int, ok bool) { return leadRounds(phases, spaucMaxRounds) }

// SumWeights (fedalgo.SumWeighted): phase 1's round 1, each of the T =
// phases − 1 product rounds 1/√(3T) — the plain path's split, ¾ of μ² to
// the statistics and μ²/(4T) to each round (spaucPlan).
func (fedSPAUC) SumWeights(phases int) []float64 {
	return leadWeights(phases, spaucMaxRounds, 3)
}

// spaucKappa is the clip rule κ = ½ (file comment), whatever d.
func spaucKappa(int) float64 { return 0.5 }

// spaucPlan is the Gaussian plan of a site's first k releases of a job
// of phases phases on d features: Δ = 2 each, 2d + 1 noise coordinates
// each, and the budget split of the rule: phase 1 (the class means, which
// every later step builds on) gets μ₁² = ¾μ², the T = phases − 1 rounds
// μ²/(4T) each, i.e. σ₁/σ_round = 1/√(3T). (Under secure aggregation the
// rounds' weights make the same split: SumWeights.)
func spaucPlan(k, phases, d int) dp.GaussianPlan {
	sens := make([]float64, k)
	for i := range sens {
		sens[i] = dpalgo.SPAUCSensitivity
	}
	dim := dpalgo.SPAUCDim(d)
	split := make([]float64, k)
	for i := range split {
		split[i] = 1
	}
	split[0] = 1 / math.Sqrt(3*float64(max(phases-1, 1)))
	return dp.GaussianPlan{Sensitivities: sens, Split: split, Dim: dim, Coordinates: int64(k) * int64(dim)}
}

// spaucCalibrate returns the σ's of a site's phases releases for d
// features, the snapped sensitivity its ledger records and the
// certificate of all of them.
func spaucCalibrate(eps, delta float64, phases, d int) (sig []float64, sens float64, cert dp.Certificate, err error) {
	return calibrateSnapped(FedDPSPAUC, spaucPlan(phases, phases, d), dpalgo.SPAUCSensitivity, eps, delta)
}

// spaucCharge is the certified (ε, δ) of a site's releases 1 … phase: the
// exact Gaussian-DP certificate of that prefix of the plan (the whole
// plan's at the last phase) — the ledger's maximum within the job is the
// certificate of everything released.
func spaucCharge(j *protocol.JobAnnounce, sig []float64, phase, d int) (float64, float64, error) {
	if phase < 1 || phase > len(sig) {
		return 0, 0, fmt.Errorf("%s: phase %d outside 1…%d", FedDPSPAUC, phase, len(sig))
	}
	c, err := dp.CertifyGaussian(spaucPlan(phase, j.Phases, d), sig[:phase], j.Epsilon, j.Delta)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: certifying phase %d: %w", FedDPSPAUC, phase, err)
	}
	return certifiedCharge(j, c.Epsilon, c.Delta)
}

// Plan: T + 1 phases; every site's releases have the same σ's (they
// depend on d, T, ε and δ only), calibrated here so that the job is
// refused before any release when they cannot be.
func (fedSPAUC) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	if nMin < 1 {
		return nil, fmt.Errorf("%s needs at least one record at every site (smallest: %d)", FedDPSPAUC, nMin)
	}
	total := 0
	for _, site := range sites {
		total += site.Records
	}
	if total < 2 {
		return nil, fmt.Errorf("%s needs at least 2 records over all sites, got %d", FedDPSPAUC, total)
	}
	if k := dpalgo.SPAUCDim(params); k > protocol.MaxLastParams {
		return nil, fmt.Errorf("%s releases 2d + 1 values per phase: d = %d gives %d, above the protocol's %d", FedDPSPAUC, params, k, protocol.MaxLastParams)
	}
	T := spaucRounds(s.Rounds, params)
	p := &Plan{Phases: 1 + T, Sensitivity: map[string]float64{}, Certified: map[string]Guarantee{}}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	_, sens, cert, err := spaucCalibrate(p.Epsilon, p.Delta, p.Phases, params)
	if err != nil {
		return nil, err
	}
	for _, site := range sites {
		p.Sensitivity[site.Name] = sens
		p.Certified[site.Name] = Guarantee{cert.Epsilon, cert.Delta} // the sites' own calibration of the same numbers
	}
	return p, nil
}

func (fedSPAUC) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(FedDPSPAUC, env); err != nil {
		return nil, err
	}
	if err := refusePaper(FedDPSPAUC, job); err != nil {
		return nil, err
	}
	switch {
	case job.Task != protocol.TaskAUC:
		return nil, fmt.Errorf("%s is AUC only", FedDPSPAUC)
	case !spaucShapeOK(job):
		return nil, fmt.Errorf("%s has 1 + T phases with T in [1, %d], the job has %d", FedDPSPAUC, spaucMaxRounds, job.Phases)
	case job.Params != env.Data.D:
		return nil, fmt.Errorf("%s: the job has %d parameters, this site %d features", FedDPSPAUC, job.Params, env.Data.D)
	case !(job.FeatureRadius > 0) || math.IsInf(job.FeatureRadius, 0):
		return nil, fmt.Errorf("%s needs a finite feature radius R > 0, the job announces %v", FedDPSPAUC, job.FeatureRadius)
	}
	// Phase 1's sensitivity holds for records in the R-ball only (the
	// worker clips; checked again before any release).
	if err := pairwise.CheckRadius(env.Data, job.FeatureRadius); err != nil {
		return nil, err
	}
	site := &spaucSite{job: job, env: env}
	if !SecAggRequested(job.Options) {
		sig, sens, _, err := spaucCalibrate(job.Epsilon, job.Delta, job.Phases, env.Data.D)
		if err != nil {
			return nil, err
		}
		site.sig, site.sens = sig, sens
	}
	return site, nil
}

// spaucShapeOK reports whether the announced phases fit spaucShape.
func spaucShapeOK(job *protocol.JobAnnounce) bool {
	_, ok := spaucShape(job.Phases)
	return ok
}

type spaucSite struct {
	job  *protocol.JobAnnounce
	env  SiteEnv
	sig  []float64
	sens float64
}

// vector is the site's exact (noise-free) vector of phase.
func (s *spaucSite) vector(phase int, model []float64) ([]float64, error) {
	ds, R := s.env.Data, s.job.FeatureRadius
	switch {
	case phase == 1:
		return dpalgo.SPAUCStatsVector(ds, R), nil
	case phase > 1 && phase <= s.job.Phases:
		return dpalgo.SPAUCProductVector(ds, model, dpalgo.SPAUCClip(spaucKappa(ds.D), R))
	}
	return nil, fmt.Errorf("%s: phase %d outside 1…%d", FedDPSPAUC, phase, s.job.Phases)
}

// Step releases phase 1's class statistics or a round's clipped gradient
// terms for the broadcast query, with the phase's Gaussian noise, after
// certifying the charge of the releases so far.
func (s *spaucSite) Step(ctx context.Context, phase int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if s.sig == nil {
		return nil, nil, fmt.Errorf("%s: this job runs under secure aggregation (no plain release)", FedDPSPAUC)
	}
	j, ds := s.job, s.env.Data
	v, err := s.vector(phase, model)
	if err != nil {
		return nil, nil, err
	}
	eps, delta, err := spaucCharge(j, s.sig, phase, ds.D)
	if err != nil {
		return nil, nil, err
	}
	sigma := s.sig[phase-1]
	s.env.Noise.AddGaussian(v, sigma)
	secure := s.env.Noise.Secure()
	u := &protocol.SiteUpdate{Model: v, Weight: float64(ds.N), Sigma: sigma, Epsilon: eps, Delta: delta, Secure: secure}
	rel := &Release{Records: ds.N, Mechanism: "gaussian", Sigma: sigma, Sensitivity: s.sens, Epsilon: eps, Delta: delta, Secure: secure}
	return u, rel, nil
}

func (fedSPAUC) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	if job.Task != protocol.TaskAUC {
		return nil, fmt.Errorf("%s is AUC only", FedDPSPAUC)
	}
	T, ok := spaucShape(job.Phases)
	if !ok {
		return nil, fmt.Errorf("%s has 1 + T phases, T in [1, %d]; the job has %d", FedDPSPAUC, spaucMaxRounds, job.Phases)
	}
	c := &spaucCombiner{d: job.Params, R: job.FeatureRadius, B: job.ParamRadius, rounds: T}
	if len(state) > 0 {
		sol, err := dpalgo.SPAUCSolverFromState(state, c.d)
		if err != nil {
			return nil, fmt.Errorf("%s: checkpoint: %w", FedDPSPAUC, err)
		}
		c.sol = sol
	}
	return c, nil
}

// spaucCombiner sums every phase's vectors: phase 1 starts the solver,
// each later phase makes one CG step.
type spaucCombiner struct {
	d      int
	R, B   float64
	rounds int
	sol    *dpalgo.SPAUCSolver // nil until the statistics are combined
}

func (c *spaucCombiner) UpdateLen() int { return dpalgo.SPAUCDim(c.d) }

// Combine sums the updates (N from their weights, the noise level
// √Σσ_s²) and advances the solver.
func (c *spaucCombiner) Combine(model []float64, ups []*protocol.SiteUpdate, _ protocol.Aggregation) []float64 {
	sum, n, sigma := sumUpdates(ups)
	return c.advance(model, sum, n, sigma)
}

// advance combines one phase's summed vector of n records with noise
// sigma per coordinate and returns the next broadcast: the query, or the
// output after the last phase. Without a sum the model stays.
func (c *spaucCombiner) advance(model, sum []float64, n, sigma float64) []float64 {
	if sum == nil || len(sum) != dpalgo.SPAUCDim(c.d) {
		return model
	}
	if c.sol == nil {
		// Phase 1: the statistics start the solver. The products' noise
		// per round is √(3T) times the statistics' σ on both paths
		// (spaucPlan's rule; under secure aggregation the rounds'
		// weights, SumWeights, and the coordinator's σ is already in the
		// vector's units).
		sol, err := dpalgo.NewSPAUCSolver(slices.Clone(sum), c.d, n, c.R, spaucKappa(c.d), sigma*math.Sqrt(3*float64(c.rounds)), c.rounds)
		if err != nil {
			return model
		}
		c.sol = sol
		return sol.Query()
	}
	if err := c.sol.Step(sum); err != nil {
		return model
	}
	if c.sol.Done >= c.sol.Rounds {
		return c.sol.Output(c.B)
	}
	return c.sol.Query()
}

// Final is the solver's iterate rescaled into the B-ball.
func (c *spaucCombiner) Final(model []float64) []float64 {
	if c.sol == nil {
		return slices.Clone(model)
	}
	return c.sol.Output(c.B)
}

// State is the solver's (5d + 8 values), nil before it starts.
func (c *spaucCombiner) State() []float64 {
	if c.sol == nil {
		return nil
	}
	return c.sol.State()
}

// Account composes a site's Gaussian releases (sensitivity sens each) by
// exact Gaussian DP (dp.Compose).
func (fedSPAUC) Account(sigmas []float64, sens, epsilon, delta float64) (float64, []string) {
	notes := []string{fmt.Sprintf("%s: %d Gaussian releases per site (the class statistics, then the clipped gradient terms of each round) of ℓ2 sensitivity Δ' = %.6g, calibrated together by the exact Gaussian-DP accountant to (ε, δ) = (%g, %.3g)", FedDPSPAUC, len(sigmas), sens, epsilon, delta)}
	return gaussianAccount(sigmas, sens, delta, "release", notes)
}

func (fedSPAUC) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: every site releases its class sums and positive count once (Δ = 2, fed-dp-ssp-mean's release), then in each of T rounds the class blocks of its records' square-AUC gradient terms (vᵀx)x for the broadcast query, each clipped to C and divided by C (Δ = 2, i.e. 2C per record, replace-one; dpalgo/fedspauc.go), each release with Gaussian noise; the T + 1 releases compose sequentially by exact Gaussian DP, calibrated together; each record is in one site (parallel composition); the coordinator's sums and conjugate-gradient steps are post-processing. Any label mix per site, a single class included"
}

// Secure aggregation: every phase releases a sum of site vectors of
// length 2d + 1 and Δ = 2 (dpalgo/fedspauc.go), one record's term of
// norm ≤ √3 (phase 1) or ≤ 1 (the rounds), so clip = n_max·√3 never
// binds: the T + 1 rounds compose sequentially (secure_phases.go).

// SumShape: 2d + 1 values, clip n_max·√3, Δ = 2.
func (fedSPAUC) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	dim, clip, sens := sspSumShape(s.FeatureRadius, dpalgo.SSPMean, sites, params)
	return dim, clip, sens, nil
}

// SiteSumShape: 2d + 1 values, Δ = 2 (from the announced R and d).
func (fedSPAUC) SiteSumShape(job *protocol.JobAnnounce, _ int) (int, float64, error) {
	return sspSiteShape(job, dpalgo.SSPMean)
}

// SumVector: the phase's exact vector (the worker encodes it with its
// share of the distributed discrete Gaussian).
func (s *spaucSite) SumVector(ctx context.Context, phase int, model []float64) ([]float64, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	v, err := s.vector(phase, model)
	return v, s.env.Data.N, err
}

// CombineSum: the decoded sum of the included sites' vectors (their
// public record counts give N), whose noise is sigma per coordinate.
func (c *spaucCombiner) CombineSum(model, sum []float64, included []SiteInfo, sigma float64) []float64 {
	var n float64
	for _, s := range included {
		n += float64(s.Records)
	}
	return c.advance(model, sum, n, sigma)
}
