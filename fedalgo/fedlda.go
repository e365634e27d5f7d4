package fedalgo

import (
	"context"
	"fmt"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-lda: dp-lda (dpalgo/private_lda.go: the mechanism, the
// sensitivity proofs and the written rule) across sites, in two phases.
//
//  1. Every site releases Σ x/R over its records plus N(0, σ_A² I)
//     (Δ = 2). The coordinator sums the K releases, ĉ = R·Σ/N with
//     N = Σ n_s (public), clamped into the R-ball, and broadcasts ĉ as the
//     phase-2 model.
//  2. Every site releases the pooled statistics (class sums, the
//     label-free second moment, the positive count; dpalgo.SSPVector)
//     of its records' signs R(x − ĉ)/‖x − ĉ‖ plus N(0, σ_B² I) (Δ = 2).
//     The coordinator sums them (the statistics are sums over records:
//     the sum of the sites' exact statistics is the pooled one, whatever
//     each site's label mix — a site may hold a single class) and solves
//     the ridge Fisher direction at the summed noise level √(Σ σ_s²)
//     (dpalgo.SSPLambda), rescaled into the B-ball.
//
// Privacy: each site makes the two releases of single-site dp-lda on its
// own records, calibrated by the same plan (dpalgo.LDAPlan: Δ = 2 each,
// μ_A² = μ²/4, exact Gaussian-DP composition, dp.CalibrateGaussian), so
// its guarantee is per-site record-level (ε, δ)-DP for the job; ĉ is a
// function of the phase-1 releases (adaptive composition covers it), and
// each record is in one site (parallel composition across sites). The
// coordinator's sums and solve are post-processing. Without secure
// aggregation the summed noise is σ√K: the same as one pooled release
// at μ/√K.

// FedDPLDA is the name of fed-dp-lda.
const FedDPLDA = "fed-dp-lda"

func init() { Register(fedLDA{}) }

type fedLDA struct{}

func (fedLDA) Name() string { return FedDPLDA }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedDPLDA.
func (fedLDA) Doc() Doc {
	return Doc{
		Title:       "dp-lda across sites: a noisy centre, then noisy pooled statistics of the centred signs, summed and solved (ridge Fisher direction)",
		Paper:       "pairfed (dp-lda, sufficient-statistics perturbation with a pooled second moment)",
		Ref:         "fedalgo/fedlda.go, dpalgo/private_lda.go",
		Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer (whatever --loss); a site may hold a single class; per-site (ε, δ), two releases composed exactly",
	}
}

func (fedLDA) Private() bool { return true }

// CentresPrivately: the sites' records should reach fed-dp-lda by the
// linear bounds map (R/√d), not clipped around the box's centre.
func (fedLDA) CentresPrivately() bool { return true }

// Configure: AUC only; two fixed phases with no step size; the square
// loss (the objective the worker builds; the solve ignores it); B = 1
// (AUC does not depend on B); the statistics are summed, so only the
// default aggregation applies.
func (fedLDA) Configure(s *Spec) error {
	if s.Task == protocol.TaskMetric {
		return fmt.Errorf("%s learns a linear scorer (task auc): the metric task does not apply", FedDPLDA)
	}
	if s.Loss == "" {
		s.Loss = "square"
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 1
	}
	if s.Rounds != 0 || s.LocalPasses != 0 || s.Eta != 0 {
		return fmt.Errorf("%s is two releases of noisy statistics per site (the centre, then the statistics): rounds, local passes and η do not apply", FedDPLDA)
	}
	if agg, err := protocol.ParseAggregation(s.Aggregation); err != nil {
		return err
	} else if agg.Rule != protocol.AggMean {
		return fmt.Errorf("%s sums the sites' statistics: aggregation %q does not apply (omit it)", FedDPLDA, s.Aggregation)
	}
	return checkPrivacy(FedDPLDA, s)
}

// ldaCalibrate returns the σ's of a site's two releases for d features,
// the snapped sensitivity its ledger records (the larger release's) and
// the certificate of both releases.
func ldaCalibrate(eps, delta float64, d int) (sig []float64, sens float64, cert dp.Certificate, err error) {
	return calibrateSnapped(FedDPLDA, dpalgo.LDAPlan(d), 2, eps, delta)
}

// ldaCharge is the certified (ε, δ) of a site's releases up to phase:
// release A alone (its d noise coordinates) after phase 1, the plan's
// certificate of both after phase 2 — the ledger's maximum within the job
// is the certificate of everything released.
func ldaCharge(j *protocol.JobAnnounce, sig []float64, phase, d int) (float64, float64, error) {
	plan := dpalgo.LDAPlan(d)
	var c dp.Certificate
	var err error
	if phase == 1 {
		c, err = dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: plan.Sensitivities[:1], Dim: plan.Dim, Coordinates: int64(d)}, sig[:1], j.Epsilon, j.Delta)
	} else {
		c, err = dp.CertifyGaussian(plan, sig, j.Epsilon, j.Delta)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: certifying phase %d: %w", FedDPLDA, phase, err)
	}
	return certifiedCharge(j, c.Epsilon, c.Delta)
}

// Plan: two phases; every site's releases have the same σ's (they depend
// on d, ε and δ only), computed here so that the job is refused before
// any release when it cannot be calibrated or does not fit a message.
func (fedLDA) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	if nMin < 1 {
		return nil, fmt.Errorf("%s needs at least one record at every site (smallest: %d)", FedDPLDA, nMin)
	}
	total := 0
	for _, site := range sites {
		total += site.Records
	}
	if total < 2 {
		return nil, fmt.Errorf("%s needs at least 2 records over all sites, got %d", FedDPLDA, total)
	}
	if k := dpalgo.SSPCoords(params, dpalgo.SSPPooled); params > 1000 || k > protocol.MaxLastParams {
		return nil, fmt.Errorf("%s releases d(d+1)/2 second-moment entries per site: d = %d gives %d values, above this job's limit of d = 1000; use %s (class sums only) or reduce the features", FedDPLDA, params, k, FedDPSSPMean)
	}
	p := &Plan{Phases: 2, Sensitivity: map[string]float64{}}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	_, sens, cert, err := ldaCalibrate(p.Epsilon, p.Delta, params)
	if err != nil {
		return nil, err
	}
	p.Certified = map[string]Guarantee{}
	for _, site := range sites {
		p.Sensitivity[site.Name] = sens
		p.Certified[site.Name] = Guarantee{cert.Epsilon, cert.Delta} // the sites' own calibration of the same numbers
	}
	return p, nil
}

func (fedLDA) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(FedDPLDA, env); err != nil {
		return nil, err
	}
	if err := refusePaper(FedDPLDA, job); err != nil {
		return nil, err
	}
	switch {
	case job.Task != protocol.TaskAUC:
		return nil, fmt.Errorf("%s is AUC only", FedDPLDA)
	case job.Phases != 2:
		return nil, fmt.Errorf("%s has two phases, the job has %d", FedDPLDA, job.Phases)
	case job.Params != env.Data.D:
		return nil, fmt.Errorf("%s: the job has %d parameters, this site %d features", FedDPLDA, job.Params, env.Data.D)
	case !(job.FeatureRadius > 0):
		return nil, fmt.Errorf("%s needs a feature radius R > 0", FedDPLDA)
	}
	// Release A's sensitivity holds for records in the R-ball only (the
	// worker clips; checked again before any release).
	if err := pairwise.CheckRadius(env.Data, job.FeatureRadius); err != nil {
		return nil, err
	}
	sig, sens, _, err := ldaCalibrate(job.Epsilon, job.Delta, env.Data.D)
	if err != nil {
		return nil, err
	}
	return &ldaSite{job: job, env: env, sig: sig, sens: sens}, nil
}

type ldaSite struct {
	job  *protocol.JobAnnounce
	env  SiteEnv
	sig  []float64
	sens float64
}

// Step releases the centre's sum (phase 1) or the statistics of the signs
// around the broadcast centre (phase 2), each one Gaussian release.
func (s *ldaSite) Step(ctx context.Context, phase int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	j, ds, R := s.job, s.env.Data, s.job.FeatureRadius
	var v []float64
	var sigma float64
	switch phase {
	case 1:
		v, sigma = dpalgo.LDACentreVector(ds, R), s.sig[0]
	case 2:
		v, sigma = dpalgo.SSPVector(dpalgo.LDASignStats(ds, ldaClampCentre(model, R), R), R), s.sig[1]
	default:
		return nil, nil, fmt.Errorf("%s has two phases, asked for phase %d", FedDPLDA, phase)
	}
	// The charge, certified before the noise is drawn.
	eps, delta, err := ldaCharge(j, s.sig, phase, ds.D)
	if err != nil {
		return nil, nil, err
	}
	s.env.Noise.AddGaussian(v, sigma)
	secure := s.env.Noise.Secure()
	u := &protocol.SiteUpdate{Model: v, Weight: float64(ds.N), Sigma: sigma, Epsilon: eps, Delta: delta, Secure: secure}
	rel := &Release{Records: ds.N, Mechanism: "gaussian", Sigma: sigma, Sensitivity: s.sens, Epsilon: eps, Delta: delta, Secure: secure}
	return u, rel, nil
}

func (fedLDA) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	if job.Task != protocol.TaskAUC {
		return nil, fmt.Errorf("%s is AUC only", FedDPLDA)
	}
	c := &ldaCombiner{d: job.Params, R: job.FeatureRadius, B: job.ParamRadius, phase: 1}
	if len(state) == 1 && (state[0] == 1 || state[0] == 2 || state[0] == 3) {
		c.phase = int(state[0])
	} else if len(state) != 0 {
		return nil, fmt.Errorf("%s: checkpoint state %v is not a phase (1, 2 or 3)", FedDPLDA, state)
	}
	return c, nil
}

// ldaCombiner sums phase 1's releases into the centre and phase 2's into
// the statistics it solves.
type ldaCombiner struct {
	d     int
	R, B  float64
	phase int // the phase whose updates come next (3: done)
	// info and lambda describe the last solve (tests, notes).
	info   dpalgo.SSPSolveInfo
	lambda float64
}

// UpdateLen: d values in phase 1 (the centre's sum), the pooled
// statistics vector in phase 2.
func (c *ldaCombiner) UpdateLen() int {
	if c.phase == 1 {
		return c.d
	}
	return dpalgo.SSPCoords(c.d, dpalgo.SSPPooled)
}

// Combine: phase 1 returns the centre ĉ (the next broadcast), phase 2
// the solved model. The rule is the mean (Configure refuses the others);
// the sum is what sums of sufficient statistics need.
func (c *ldaCombiner) Combine(model []float64, ups []*protocol.SiteUpdate, _ protocol.Aggregation) []float64 {
	sum, n, sigma := sumUpdates(ups)
	switch c.phase {
	case 1:
		c.phase = 2
		if sum == nil || n < 1 {
			return make([]float64, c.d) // no update: the schema's centre
		}
		return dpalgo.LDACentre(sum, n, c.R)
	case 2:
		c.phase = 3
		return c.solve(sum, n, sigma)
	}
	return model
}

// solve returns the ridge Fisher direction of summed phase-2 statistics
// of n records whose weighted vector carries noise sigma per coordinate,
// rescaled into the B-ball.
func (c *ldaCombiner) solve(sum []float64, n, sigma float64) []float64 {
	if len(sum) != dpalgo.SSPCoords(c.d, dpalgo.SSPPooled) || n < 2 {
		return make([]float64, c.d)
	}
	st := &dpalgo.SSPStats{D: c.d, N: n, SumPos: make([]float64, c.d), SumNeg: make([]float64, c.d), Mom: make([]float64, c.d*(c.d+1)/2)}
	dpalgo.SSPFromVector(st, sum, c.R)
	w, info, lambda := solveSSP(st, c.R, sigma, c.B)
	c.info, c.lambda = info, lambda
	return w
}

func (c *ldaCombiner) Final(model []float64) []float64 { return slices.Clone(model) }

// State is the phase whose updates come next, so that a coordinator
// resumed from a checkpoint expects the right update length.
func (c *ldaCombiner) State() []float64 { return []float64{float64(c.phase)} }

// Account composes a site's two Gaussian releases (sensitivity sens each)
// by exact Gaussian DP (dp.Compose).
func (fedLDA) Account(sigmas []float64, sens, epsilon, delta float64) (float64, []string) {
	notes := []string{fmt.Sprintf("%s: two Gaussian releases per site (the centre, then the statistics of the signs) of ℓ2 sensitivity Δ' = %.6g, calibrated together by the exact Gaussian-DP accountant to (ε, δ) = (%g, %.3g)", FedDPLDA, sens, epsilon, delta)}
	return gaussianAccount(sigmas, sens, delta, "release", notes)
}

func (fedLDA) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: every site releases the sum of its records once (the coordinator broadcasts the centre ĉ it gives), then the class sums, label-free second moment and positive count of its records' directions R(x − ĉ)/‖x − ĉ‖ once, each with Gaussian noise of sensitivity 2 (dpalgo/private_lda.go); the two releases are calibrated together by exact Gaussian-DP composition; each record is in one site (parallel composition); the coordinator's sums and solve are post-processing. Any label mix per site, a single class included"
}

// Secure aggregation (secure.go, secure_phases.go): both phases release a
// sum over sites of one vector per site, so fed-dp-lda is a SumReleaser
// of two sequential rounds. A site's vector in each round is the exact
// (noise-free) vector of the plain path — Σ x/R in phase 1, zero-padded
// to the length of phase 2's pooled statistics vector
// (dpalgo.SSPVector of the signs) — which the worker encodes with its
// share of the distributed discrete Gaussian. Both have replace-one ℓ2
// sensitivity Δ = 2 (dpalgo/private_lda.go; the padding changes
// nothing), so the DDG's Δ is 2 and the two rounds compose sequentially
// (secure_phases.go). They spend the budget as the plain path does
// (SumWeights): the centre's round weighs its vectors by w₁ = 1/√3, so its
// sensitivity is 2/√3 under the job's one per-site scale, and the rounds'
// RDP (∝ w²) splits 1 : 3 as the plain path's μ² does; with equal weights
// the statistics' round would carry √(3/2) times the noise, the centre's
// √(1/2) (dp-lda's centre share 0.5: −0.006 AUC over 38 real-data cells,
// docs/results/regret-failing.md). One record's term is at most 1 in phase 1 and
// √(a²R² + 2b²R⁴ + c²) = √3 in phase 2 (the moment block counted twice,
// an upper bound), so clip = n_max·√3 never binds.

// SumWeights: dp-lda's split of μ² (dpalgo.LDAPlan's σ factors f_k,
// a quarter on the centre): w_k = min f / f_k, i.e. (1/√3, 1).
func (fedLDA) SumWeights(phases int) []float64 {
	f := dpalgo.LDAPlan(1).Split
	if phases != len(f) {
		return nil
	}
	lo := slices.Min(f)
	w := make([]float64, phases)
	for k, x := range f {
		w[k] = lo / x
	}
	return w
}

// SumShape: the statistics vector's length, clip n_max·√3, Δ = 2.
func (fedLDA) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	dim, clip, sens := sspSumShape(s.FeatureRadius, dpalgo.SSPPooled, sites, params)
	return dim, clip, sens, nil
}

// SiteSumShape: the pooled statistics vector's length, Δ = 2 (as
// SumShape, from the announced R).
func (fedLDA) SiteSumShape(job *protocol.JobAnnounce, _ int) (int, float64, error) {
	return sspSiteShape(job, dpalgo.SSPPooled)
}

// SumVector: phase 1's Σ x/R (padded), phase 2's statistics of the signs
// around the broadcast centre; no noise (the worker encodes them).
func (s *ldaSite) SumVector(ctx context.Context, phase int, model []float64) ([]float64, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	ds, R := s.env.Data, s.job.FeatureRadius
	switch phase {
	case 1:
		v := make([]float64, dpalgo.SSPCoords(ds.D, dpalgo.SSPPooled))
		copy(v, dpalgo.LDACentreVector(ds, R))
		return v, ds.N, nil
	case 2:
		return dpalgo.SSPVector(dpalgo.LDASignStats(ds, ldaClampCentre(model, R), R), R), ds.N, nil
	}
	return nil, 0, fmt.Errorf("%s has two phases, asked for phase %d", FedDPLDA, phase)
}

// ldaClampCentre returns the broadcast centre clamped into the R-ball, as
// the coordinator's was (a no-op for an honest coordinator; the
// sensitivity argument holds for any centre).
func ldaClampCentre(model []float64, R float64) []float64 {
	c := slices.Clone(model)
	if nc := pairwise.Norm2(c); nc > R {
		for i := range c {
			c[i] *= R / nc
		}
	}
	return c
}

// CombineSum: phase 1 turns the decoded sum into the centre over the
// included sites' records; phase 2 solves the summed statistics at the
// sum's noise level sigma (per coordinate of the weighted vector).
func (c *ldaCombiner) CombineSum(model, sum []float64, included []SiteInfo, sigma float64) []float64 {
	var n float64
	for _, s := range included {
		n += float64(s.Records)
	}
	switch c.phase {
	case 1:
		c.phase = 2
		if n < 1 || len(sum) < c.d {
			return make([]float64, c.d)
		}
		return dpalgo.LDACentre(sum[:c.d], n, c.R)
	case 2:
		c.phase = 3
		return c.solve(sum, n, sigma)
	}
	return model
}

// SingleClassSites: the sums and statistics pool over sites whatever
// their label mix.
func (fedLDA) SingleClassSites() bool { return true }
