package fedalgo

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/internal/memo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-pair-sgd for the AUC task: the mission's mechanism — every site
// computes pairwise gradients on its own records and adds calibrated
// noise before anything leaves it; the coordinator aggregates each round
// — in the form whose every release is a SUM OVER RECORDS of per-record
// clipped pair gradients (dpalgo/kit_pairsum.go states the pair
// loss, the partner, the clipping and the sensitivity proof):
//
//  1. Phase 1: every site releases its class sums (x/R) and positive
//     count (fed-dp-ssp-mean's release, Δ = 2) with noise. The
//     coordinator's sum gives n̂₊ and the class means, hence the start
//     (w₀, b₀): the class-mean direction and the threshold between the
//     means.
//  2. Rounds 2 … T + 1: for the broadcast (w, b), every site releases the
//     class blocks of Σ clip₁(σ(−y s)(x/R, a)/κ) over its records — each
//     record's logistic pair-loss gradient against the public opposite-
//     class partner at score −b, clipped — with noise (Δ = 2). The
//     coordinator sums them, steps (w, b) ← (w, b) − η·ĝ with the class-
//     balanced gradient ĝ, and projects w onto the sphere of radius S.
//     The output is the mean of the iterates' directions, at norm B = S.
//
// Why it learns under any partition. Each release is a sum over records
// of terms that read only the record and the broadcast model, so the sum
// over sites equals the pooled records' sum whatever the partition: a
// site holding one class contributes its class's block, as the pooled
// job's records of that class do. The federated job is the pooled job
// with other noise: K independent site noises (variance K·σ², plain), or
// one distributed discrete Gaussian release of the sum (secure
// aggregation: the noise of one central release, up to the DDG's
// rounding — and, when a site drops, the K/(t − κ) shares a
// dropout-tolerant threshold t adds; when none drops the sites' removable
// noise copies are subtracted and the sum holds K·keep/((t − κ)·m) ≈ 1
// central release's: dp/ddg_removable.go).
//
// Privacy of a site: its T + 1 releases are adaptive Gaussian releases on
// the same records, each of replace-one ℓ2 sensitivity Δ = 2 (records in
// the R-ball for phase 1, checked; any record for the clipped rounds), so
// they compose SEQUENTIALLY, exactly, in Gaussian DP: μ² = Σ_k (Δ'/σ_k)²
// ([DRS19] Cor 3.3), Δ' = 2 plus the secure sampler's snapping allowance,
// the discrete-noise δ term over all (T + 1)(2d + 2) noise coordinates
// included (dp.CalibrateGaussian, CertifyGaussian). The split: phase 1
// gets half of μ², each round μ²/(2T) (σ₁ = σ_round/√T; pairSumPlan); the
// σ's are the smallest that certify the job's (ε, δ), fixed from (ε, δ,
// d, T) alone before any release; each site recomputes them from the
// announcement. Each record is in one site (parallel
// composition across sites); the broadcast models are functions of
// earlier releases (covered by adaptive composition); the sums, the
// steps and the output are post-processing. Before each release the site
// charges its ledger the certificate of its releases so far.
//
// Secure aggregation (SumReleaser): each phase is one SecAgg round with
// the distributed discrete Gaussian (secure_phases.go); a site's vector
// has length 2d + 2, norm ≤ n_s·√3 (statistics) or ≤ n_s (rounds), Δ = 2.
// The job's one DDG scale s makes the plain path's split by weights
// (SumWeights, fedalgo.SumWeighted): the statistics' round has weight 1,
// each gradient round 1/√T (its vectors multiplied by 1/√T at the site,
// the sum divided at the coordinator), so the rounds' RDP splits half and
// half as the plain path's μ² does: the same 1 + T phases, composed
// sequentially at their own sensitivities (dp.DDG.EpsilonWeighted). (Until
// the thirteenth session the split was made by repetition: the statistics
// released in T rounds and averaged, 2T rounds — the same noise in twice
// the rounds.)
//
// Defaults: a rule from public numbers only (pairSumDefaults,
// dpalgo.PairSumDefaults) — n records in all, d, the calibrated noise
// of the job's (ε, δ), K and the secure threshold t — derived as follows,
// and validated on synthetic shapes no default was chosen on
// (scripts/fedpairrule, docs/results/fedpair-rule.md).
//
//   - The noise of a step. The rounds share μ²/2, so a round's release has
//     σ_r = σ₁·√T, σ₁ the round σ of a job with T = 1 (calibrated). The
//     coordinator's gradient ĝ = κ(U₋/n̂₋ − U₊/n̂₊) carries per coordinate
//     κ·ς·σ_r·√(1/n₊² + 1/n₋²), ς = 1 pooled, √K plain (K site noises),
//     √(K·keep/((t − κ)·m)) secure (K sites' kept copies when nobody
//     drops, of m copies calibrated for (t − κ)·m: fedalgo.SecAgg.Floors;
//     ≤ 1.03 for every K ≤ 1000, 1 when m = K − κ). The class counts
//     are not public before phase 1; with the balanced n± = n/2 the noise
//     norm over the d + 1 coordinates is E₁√T, E₁ = κ·ς·σ₁·√(8(d+1))/n.
//   - Learning time. A step turns w on the sphere of radius S by the
//     angle η‖ĝ_⊥‖/S. Over T rounds the gradient's drift adds up to
//     τ‖g_⊥‖, τ = ηT/S, and the independent noises to a random walk of
//     η·E₁√T·√T/S = τ·E₁: signal and noise both grow with τ, and T at
//     fixed τ only sets how finely the path is cut (the noisy-GD
//     observation of [BST14]: under composition the noise term does not
//     depend on the number of steps). So the rule fixes τ from the
//     noise: run until the accumulated noise could turn the model by θ₀,
//     τ = θ₀/E₁.
//   - Rounds and step. A round's step turns w by at most η/S radians per
//     unit gradient (‖g‖ ≤ 2κ = 1); keeping that ≤ 1 (η ≤ S: the step
//     never overshoots the sphere) asks for T = ⌈τ⌉ rounds; within [2,
//     16] (at least one refinement after the first; 16 bounds the
//     protocol rounds), and η = S·min(1,
//     τ/T) (τ below 2: smaller steps; τ above 16: the time is cut at 16
//     full steps).
//   - S = B = 8: the sensitivity does not depend on S, which only sets
//     the logistic loss's temperature: scores of records at ‖x̃‖ ≥ ¼
//     from the threshold reach |s| ≥ 2, where the loss is near its
//     hinge-like asymptote. Not validated here (the grid holds S fixed).
//   - θ₀ = PairSumTheta = 0.1 rad, the one constant. First guessed (it
//     puts τ near 2 for diabetes' size, where the old defaults were), then
//     measured on the synthetic grid, where it does not matter: θ₀ = 0.05,
//     0.1, 0.2, 0.4, 0.8 give mean regrets −0.021 to −0.023 over 132
//     cells, and the same τ cut into 16 rounds is no better (−0.021 to
//     −0.026). The AUC is flat in τ over that range; the rule's value is
//     that it is written in public numbers.
//
// The previous defaults (T = ⌊√(nε)/10⌋ in [2, 16], η = 8) were chosen
// on the bundled diabetes and ijcnn1; on the synthetic cells the rule
// matches them (rule − previous +0.001 ± 0.003 mean AUC over 132 cells;
// docs/results/fedpair-rule.md). [BST14]: Bassily, Smith, Thakurta,
// Private empirical risk minimization, FOCS 2014.

// pairSumMaxRounds bounds T.
const pairSumMaxRounds = 256

// pairSumDefaults returns (T, η): the spec's where given, else the rule
// (dpalgo.PairSumDefaults, derived in the file comment) from public
// numbers: n records in all, d, the job's (ε, δ) through the calibrated
// noise of a round at T = 1, and the noise factor ς of the sites'
// summed release (√K plain; under secure aggregation the no-dropout sum's,
// √(K·keep/((t − κ)·m)) by fedalgo.SecAgg.Floors; 1 for one site).
func pairSumDefaults(s *Spec, sites []SiteInfo, n, d int, eps, delta float64) (int, float64, error) {
	if s.Rounds > 0 && s.Eta > 0 {
		return s.Rounds, s.Eta, nil
	}
	sig, _, _, err := pairSumCalibrate(eps, delta, 2, d)
	if err != nil {
		return 0, 0, err
	}
	T, eta := dpalgo.PairSumDefaults(n, d, sig[1], SumNoiseFactor(s.Options, len(sites)), pairSumScale(s.ParamRadius), dpalgo.PairSumTheta, s.Rounds)
	if s.Eta > 0 {
		eta = s.Eta
	}
	return T, eta, nil
}

// pairSumScale is S (= B): the spec's, or 8 (file comment).
func pairSumScale(B float64) float64 {
	if B > 0 {
		return B
	}
	return 8
}

// configureSum: AUC; the logistic pair loss; T rounds; S; η; no local
// passes; mean aggregation (sums).
func (fedPairSGD) configureSum(s *Spec) error {
	if s.Loss == "" {
		s.Loss = "logistic"
	}
	if s.Loss != "logistic" {
		return fmt.Errorf("%s sums the sites' clipped logistic pair-loss gradients: loss %q does not apply (omit --loss)", FedDPPairSGD, s.Loss)
	}
	if s.LocalPasses != 0 {
		return fmt.Errorf("%s (task auc) sums one noisy gradient per site per round, so that every release is the pooled records' sum whatever the partition: local passes do not apply (omit them; --rounds sets the number of gradient rounds)", FedDPPairSGD)
	}
	if s.Rounds < 0 || s.Rounds > pairSumMaxRounds {
		return fmt.Errorf("%s: %d gradient rounds is outside [1, %d] (0: the default rule, T = ⌈θ₀/E₁⌉ within [2, 16])", FedDPPairSGD, s.Rounds, pairSumMaxRounds)
	}
	if !(s.Eta >= 0) || math.IsInf(s.Eta, 0) || !(s.ParamRadius >= 0) || math.IsInf(s.ParamRadius, 0) {
		return fmt.Errorf("%s: η = %v and B = %v must be finite and ≥ 0 (0: the default)", FedDPPairSGD, s.Eta, s.ParamRadius)
	}
	s.ParamRadius = pairSumScale(s.ParamRadius) // η and T: planSum (they read n and the sites)
	if agg, err := protocol.ParseAggregation(s.Aggregation); err != nil {
		return err
	} else if agg.Rule != protocol.AggMean {
		return fmt.Errorf("%s sums the sites' releases: aggregation %q does not apply (omit it)", FedDPPairSGD, s.Aggregation)
	}
	return checkPrivacy(FedDPPairSGD, s)
}

// pairSumShape returns T of an announced job's phases = 1 + T (phase 1
// releases the class statistics, the T others the gradient rounds); ok is
// false when T is outside [1, pairSumMaxRounds].
func pairSumShape(phases int) (T int, ok bool) { return leadRounds(phases, pairSumMaxRounds) }

// SumWeights (fedalgo.SumWeighted): the statistics' round 1, each of the
// T = phases − 1 gradient rounds 1/√T — the plain path's split of μ²,
// half to the statistics and μ²/(2T) to each round (pairSumPlan).
func (fedPairSGD) SumWeights(phases int) []float64 {
	return leadWeights(phases, pairSumMaxRounds, 1)
}

// pairSumPlan is the Gaussian plan of a site's first k releases of a job
// of phases phases (plain path: 1 + T) on d features: Δ = 2 each, 2d + 2
// noise coordinates each, and the budget split of the rule: phase 1 (the
// class statistics, the start every step builds on) gets μ₁² = μ²/2, the
// T rounds μ²/(2T) each, i.e. σ₁/σ_round = 1/√T. (Under secure
// aggregation the rounds' weights make the same split: SumWeights.) It is
// dpalgo.PairSumPlan, which the single-site dp-pair-gd shares.
func pairSumPlan(k, phases, d int) dp.GaussianPlan {
	return dpalgo.PairSumPlan(k, phases, d)
}

// pairSumCalibrate returns the σ's of a site's phases releases on d
// features, the snapped sensitivity its ledger records and the
// certificate of all of them.
//
// It is a function of (ε, δ, phases, d) alone, which every site of a job
// checks: pairSumCalibrations memoizes it by those four exactly (the
// plan it builds and dp's memo key cost more than the look-up, K times).
// Callers get their own σ's.
func pairSumCalibrate(eps, delta float64, phases, d int) ([]float64, float64, dp.Certificate, error) {
	c := pairSumCalibrations.Get(pairSumKey{eps, delta, phases, d}, func() (c pairSumCal) {
		c.sig, c.sens, c.cert, c.err = calibrateSnapped(FedDPPairSGD, pairSumPlan(phases, phases, d), dpalgo.PairSumSensitivity, eps, delta)
		return c
	})
	return slices.Clone(c.sig), c.sens, c.cert, c.err
}

type pairSumKey struct {
	eps, delta float64
	phases, d  int
}

type pairSumCal struct {
	sig  []float64
	sens float64
	cert dp.Certificate
	err  error
}

// pairSumCalibrations memoizes pairSumCalibrate (at most 256 entries:
// the inputs come from announcements).
var pairSumCalibrations = memo.New[pairSumKey, pairSumCal](256)

// pairSumCharge is the certified (ε, δ) of a site's releases 1 … phase:
// the exact Gaussian-DP certificate of that prefix of the plan.
func pairSumCharge(j *protocol.JobAnnounce, sig []float64, phase, d int) (float64, float64, error) {
	if phase < 1 || phase > len(sig) {
		return 0, 0, fmt.Errorf("%s: phase %d outside 1…%d", FedDPPairSGD, phase, len(sig))
	}
	c, err := dp.CertifyGaussian(pairSumPlan(phase, j.Phases, d), sig[:phase], j.Epsilon, j.Delta)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: certifying phase %d: %w", FedDPPairSGD, phase, err)
	}
	return certifiedCharge(j, c.Epsilon, c.Delta)
}

// planSum: 1 + T phases; every site's σ's (they depend on d, T, ε, δ
// only), calibrated here so that the job is refused before any release
// when they cannot be.
func (fedPairSGD) planSum(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	if nMin < 1 {
		return nil, fmt.Errorf("%s needs at least one record at every site (smallest: %d)", FedDPPairSGD, nMin)
	}
	total := 0
	for _, site := range sites {
		total += site.Records
	}
	if total < 2 {
		return nil, fmt.Errorf("%s needs at least 2 records over all sites, got %d", FedDPPairSGD, total)
	}
	if k := dpalgo.PairSumDim(params); k > protocol.MaxLastParams {
		return nil, fmt.Errorf("%s releases 2d + 2 values per phase: d = %d gives %d, above the protocol's %d", FedDPPairSGD, params, k, protocol.MaxLastParams)
	}
	eps, delta := planPrivacy(s, sites)
	T, eta, err := pairSumDefaults(s, sites, total, params, eps, delta)
	if err != nil {
		return nil, err
	}
	p := &Plan{Phases: 1 + T, Eta: eta, Sensitivity: map[string]float64{}, Certified: map[string]Guarantee{}}
	p.Epsilon, p.Delta = eps, delta
	_, sens, cert, err := pairSumCalibrate(p.Epsilon, p.Delta, 1+T, params)
	if err != nil {
		return nil, err
	}
	for _, site := range sites {
		p.Sensitivity[site.Name] = sens
		p.Certified[site.Name] = Guarantee{cert.Epsilon, cert.Delta} // the sites' own calibration of the same numbers
	}
	return p, nil
}

// pairSumJobOK checks the announced numbers a site's vectors and the
// combiner depend on.
func pairSumJobOK(job *protocol.JobAnnounce) error {
	switch {
	case !pairSumShapeOK(job):
		return fmt.Errorf("%s (task auc) has 1 + T phases with T in [1, %d], the job has %d", FedDPPairSGD, pairSumMaxRounds, job.Phases)
	case !(job.FeatureRadius > 0) || math.IsInf(job.FeatureRadius, 0):
		return fmt.Errorf("%s needs a finite feature radius R > 0, the job announces %v", FedDPPairSGD, job.FeatureRadius)
	case !(job.ParamRadius > 0) || math.IsInf(job.ParamRadius, 0):
		return fmt.Errorf("%s needs a finite scale B > 0, the job announces %v", FedDPPairSGD, job.ParamRadius)
	}
	return nil
}

// pairSumShapeOK reports whether the announced phases fit pairSumShape.
func pairSumShapeOK(job *protocol.JobAnnounce) bool {
	_, ok := pairSumShape(job.Phases)
	return ok
}

func (fedPairSGD) newSumSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(FedDPPairSGD, env); err != nil {
		return nil, err
	}
	if err := refusePaper(FedDPPairSGD, job); err != nil {
		return nil, err
	}
	if err := pairSumJobOK(job); err != nil {
		return nil, err
	}
	if job.Params != env.Data.D {
		return nil, fmt.Errorf("%s: the job has %d parameters, this site %d features", FedDPPairSGD, job.Params, env.Data.D)
	}
	// Phase 1's sensitivity holds for records in the R-ball only (the
	// worker clips; checked again before any release).
	if err := pairwise.CheckRadius(env.Data, job.FeatureRadius); err != nil {
		return nil, err
	}
	site := &pairSumSite{job: job, env: env}
	if !SecAggRequested(job.Options) {
		sig, sens, _, err := pairSumCalibrate(job.Epsilon, job.Delta, job.Phases, env.Data.D)
		if err != nil {
			return nil, err
		}
		site.sig, site.sens = sig, sens
	}
	return site, nil
}

type pairSumSite struct {
	job  *protocol.JobAnnounce
	env  SiteEnv
	sig  []float64
	sens float64
}

// vector is the site's exact (noise-free) vector of phase.
func (s *pairSumSite) vector(phase int, model []float64) ([]float64, error) {
	ds, R := s.env.Data, s.job.FeatureRadius
	switch {
	case phase == 1:
		return dpalgo.PairSumStatsVector(ds, R), nil
	case phase > 1 && phase <= s.job.Phases:
		return dpalgo.PairSumRoundVector(ds, model, s.job.ParamRadius, R)
	}
	return nil, fmt.Errorf("%s: phase %d outside 1…%d", FedDPPairSGD, phase, s.job.Phases)
}

// Step releases phase 1's class statistics or a round's clipped pair
// gradients for the broadcast model, with the phase's Gaussian noise,
// after certifying the charge of the releases so far.
func (s *pairSumSite) Step(ctx context.Context, phase int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if s.sig == nil {
		return nil, nil, fmt.Errorf("%s: this job runs under secure aggregation (no plain release)", FedDPPairSGD)
	}
	j, ds := s.job, s.env.Data
	v, err := s.vector(phase, model)
	if err != nil {
		return nil, nil, err
	}
	eps, delta, err := pairSumCharge(j, s.sig, phase, ds.D)
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

// SumVector: the phase's exact vector (the worker encodes it with its
// share of the distributed discrete Gaussian).
func (s *pairSumSite) SumVector(ctx context.Context, phase int, model []float64) ([]float64, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	v, err := s.vector(phase, model)
	return v, s.env.Data.N, err
}

func (fedPairSGD) newSumCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	if err := pairSumJobOK(job); err != nil {
		return nil, err
	}
	if !(job.Eta > 0) || math.IsInf(job.Eta, 0) {
		return nil, fmt.Errorf("%s needs a finite step η > 0, the job announces %v", FedDPPairSGD, job.Eta)
	}
	T, _ := pairSumShape(job.Phases)
	c := &pairSumCombiner{d: job.Params, R: job.FeatureRadius, S: job.ParamRadius, eta: job.Eta, rounds: T}
	if len(state) > 0 {
		sol, err := dpalgo.PairSumSolverFromState(state, c.d)
		if err != nil {
			return nil, fmt.Errorf("%s: checkpoint: %w", FedDPPairSGD, err)
		}
		c.sol = sol
	}
	return c, nil
}

// pairSumCombiner sums every phase's vectors: phase 1 starts the solver,
// each later phase makes one gradient step.
type pairSumCombiner struct {
	d         int
	R, S, eta float64
	rounds    int
	sol       *dpalgo.PairSumSolver // nil until phase 1's statistics are combined
}

func (c *pairSumCombiner) UpdateLen() int { return dpalgo.PairSumDim(c.d) }

// Combine sums the updates (N from their weights) and advances.
func (c *pairSumCombiner) Combine(model []float64, ups []*protocol.SiteUpdate, _ protocol.Aggregation) []float64 {
	sum, n, _ := sumUpdates(ups)
	return c.advance(model, sum, n)
}

// CombineSum: the decoded sum of the included sites' vectors (their
// public record counts give N).
func (c *pairSumCombiner) CombineSum(model, sum []float64, included []SiteInfo, _ float64) []float64 {
	var n float64
	for _, s := range included {
		n += float64(s.Records)
	}
	return c.advance(model, sum, n)
}

// advance combines one phase's summed vector of n records and returns the
// next broadcast: the encoded (w, b), or the output after the last
// phase. Without a sum the model stays.
func (c *pairSumCombiner) advance(model, sum []float64, n float64) []float64 {
	if sum == nil || len(sum) != dpalgo.PairSumDim(c.d) {
		return model
	}
	if c.sol == nil {
		// Phase 1: the statistics start the solver.
		sol, err := dpalgo.NewPairSumSolver(slices.Clone(sum), c.d, n, c.R, c.S, c.eta, c.rounds)
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
		return c.sol.Output(c.S)
	}
	return c.sol.Query()
}

// Final is the mean of the iterates' directions at norm B.
func (c *pairSumCombiner) Final(model []float64) []float64 {
	if c.sol == nil {
		return slices.Clone(model)
	}
	return c.sol.Output(c.S)
}

// State is the solver's (2d + 8 values), nil before it starts.
func (c *pairSumCombiner) State() []float64 {
	if c.sol == nil {
		return nil
	}
	return c.sol.State()
}

// SumTask: the AUC form only (SumTasker).
func (fedPairSGD) SumTask(task string) error {
	if task == protocol.TaskMetric {
		return fmt.Errorf("%s releases a sum of site vectors for the AUC task only (the metric task runs local steps, whose noise is added inside every step): secure aggregation does not apply to --task metric; drop --secure-aggregation", FedDPPairSGD)
	}
	return nil
}

// SumShape: 2d + 2 values, clip n_max·√3 (never binds), Δ = 2.
func (a fedPairSGD) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	if s.Task == protocol.TaskMetric {
		return 0, 0, 0, fmt.Errorf("%s releases a sum of site vectors for the AUC task only (the metric task runs local steps)", FedDPPairSGD)
	}
	_, nMax := sizes(sites)
	return dpalgo.PairSumDim(params), float64(max(nMax, 1)) * math.Sqrt(3), dpalgo.PairSumSensitivity, nil
}

// SiteSumShape: 2d + 2 values, Δ = 2 (from the announced task and d; the
// proof holds for every broadcast and, with the R-ball checked, every
// record).
func (fedPairSGD) SiteSumShape(job *protocol.JobAnnounce, _ int) (int, float64, error) {
	if job.Task == protocol.TaskMetric {
		return 0, 0, fmt.Errorf("%s releases a sum of site vectors for the AUC task only", FedDPPairSGD)
	}
	if err := pairSumJobOK(job); err != nil {
		return 0, 0, err
	}
	return dpalgo.PairSumDim(job.Params), dpalgo.PairSumSensitivity, nil
}

// SingleClassSites: a site's vector is its records' terms, whatever its
// label mix (AUC; the metric task's local steps pair within a site).
func (fedPairSGD) SingleClassSites() bool { return true }
