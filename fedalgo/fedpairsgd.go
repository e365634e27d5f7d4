package fedalgo

import (
	"context"
	"fmt"
	"math"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-pair-sgd: the mission's own mechanism — noise added at the site
// to pairwise SGD over its local records. For the AUC task it is the sum
// form of fedpairsgd_sum.go (per-record clipped pair gradients against a
// public opposite-class partner, summed over sites: pooled-equal whatever
// the partition, secure aggregation available). For the metric task — and
// as it was for both tasks before — it is the local-steps form below:
// noisy steps with subsampling amplification (the single-site dp-pair-sgd
// of dpalgo/private_pairsgd.go, run as local steps between averaging
// rounds; dpalgo/fedpairsgd.go).
//
// Each of R rounds broadcasts a model; every site runs T_s noisy steps of
// dp-pair-sgd from it on its own records — a Poisson(q_s) batch, each
// sampled record paired with the previous sampled one, every pair
// gradient clipped to C, N(0, σ_s²I) added to the sum, a projected step —
// and releases the average of its iterates (Model) and its last iterate
// (Last). The coordinator starts the next round from the record-weighted
// mean of the last iterates and outputs the mean over rounds of the
// weighted means of the averages (fedAvgCombiner), as single-site
// dp-pair-sgd outputs the average of its iterates. The [Y21a] localized
// form (fed-dp-local-sgd: noise once per disjoint subset, 4^{−k} step
// sizes) adds noise that swamps the model at practical n; this variant
// spends the budget through amplification by subsampling instead.
//
// Privacy of a site: each step is a Poisson-subsampled Gaussian release on
// the site's records of add/remove sensitivity Δ = 2C (AUC; 3C metric —
// the coupling argument of private_pairsgd.go, valid from any start), and
// a round starts from post-processing of earlier releases (this site's
// and the other sites', which do not read its records). So the site's
// R·T_s steps compose SEQUENTIALLY as one adaptive sequence: the RDP
// accountant of the subsampled Gaussian (dp.SubsampledGaussianEpsilon,
// replace-one through two add/remove steps) certifies (ε, δ) for all of
// them, and the multiplier z_s is the smallest that does, fixed in Plan
// from public numbers (n_s, p, ε, δ, R, T_s) before any step — each site
// recomputes the same calibration from the announcement and its n_s.
// Every round's release is charged in the site's ledger (σ_s, Δ', q_s,
// T_s) before its update leaves; the job's per-site (ε, δ) covers all
// rounds.
//
// Defaults, a written rule from public numbers only (never the data):
//
//   - q_s, C as single-site dp-pair-sgd: expected batch ⌈4√n_s⌉ (capped at
//     n_s/2), C = R (AUC) or R² (metric);
//   - R = 10 rounds of P = 10/R passes each (10 epochs in all, the
//     single-site default): T_s = max(1, round(P/q_s)) local steps per
//     round (rounded to nearest, so that the total stays near the
//     single-site ⌈10/q_s⌉ rather than growing by up to R steps);
//   - B = PrivateParamRadius (the dp-gd rule single-site dp-pair-sgd uses)
//     at the effective size n_eff = ⌊Σ n_s/√K⌋ of K sites' independent
//     noises (the averaged gradient of K sites carries √K times the noise
//     of one pooled release);
//   - η_s = 2B/(G̃_s√(R·T_s)), G̃_s² = C² + p(σ_s/m̄_s)²/K, m̄_s = max(1,
//     q_s n_s − 1): single-site dp-pair-sgd's rule with the noise of the
//     K-site average. A given η is used by every site as is.
//
// Pairs are formed within a site, so this form needs both kinds of pairs
// at the sites (for AUC a single-class site's steps were noise only: 0.46–
// 0.53 AUC, issue 25 — the reason the AUC task has the sum form).

// FedDPPairSGD is the name of fed-dp-pair-sgd.
const FedDPPairSGD = "fed-dp-pair-sgd"

func init() { Register(fedPairSGD{}) }

type fedPairSGD struct{}

func (fedPairSGD) Name() string { return FedDPPairSGD }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedDPPairSGD.
func (fedPairSGD) Doc() Doc {
	return Doc{
		Title:       "auc: noisy class sums once, then rounds of noisy per-record clipped logistic pair gradients (each record against the public opposite-class partner of the broadcast model) summed over sites, a projected gradient step each round; metric: noisy Poisson-subsampled previous-instance pairwise SGD at every site, averaged each round",
		Paper:       "pairfed (DP-SGD of Abadi et al. 2016 adapted to pairs; auc: per-record clipped sums, exact Gaussian DP; metric: accountant of Mironov, Talwar & Zhang 2019)",
		Ref:         "fedalgo/fedpairsgd.go, fedalgo/fedpairsgd_sum.go, dpalgo/kit_pairsum.go, dpalgo/private_pairsgd.go",
		Assumptions: "auc: records clipped to ‖x‖ ≤ R; linear scorer, logistic pair loss; any label mix per site, a single class included; 1 + T Gaussian releases per site composed exactly (secure aggregation: 1 + T weighted DDG rounds); metric: both kinds of pairs at every site, all rounds composed by the subsampled-Gaussian RDP accountant",
	}
}

func (fedPairSGD) Private() bool { return true }

// Configure: the AUC task's sum form (fedpairsgd_sum.go), or for the
// metric task the logistic loss, 10 rounds of 10/R passes; B and η are
// left for Plan and the sites' rule.
func (a fedPairSGD) Configure(s *Spec) error {
	if s.Task != protocol.TaskMetric {
		return a.configureSum(s)
	}
	if s.Loss == "" {
		s.Loss = "logistic"
	}
	if s.Rounds == 0 {
		s.Rounds = 10
	}
	if s.LocalPasses == 0 {
		s.LocalPasses = 10 / float64(s.Rounds)
	}
	return checkPrivacy(FedDPPairSGD, s)
}

// pairSGDSite are one site's constants of a fed-dp-pair-sgd job.
type pairSGDSite struct {
	cal   dpalgo.PairSGDCalibration
	local int // steps per round
}

// pairSGDSchedule applies the rule of the file comment to a site of n
// records in a job of rounds rounds of passes passes, p parameters.
func pairSGDSchedule(task pairwise.Task, n, p, rounds int, passes, R, eps, delta float64) (pairSGDSite, error) {
	if n < 2 {
		return pairSGDSite{}, fmt.Errorf("%s needs at least 2 records at every site (one has %d)", FedDPPairSGD, n)
	}
	q, _, C := dpalgo.PairSGDDefaults(n, task, R)
	local := max(1, int(math.Round(passes/q)))
	if local < 1 || local > 1<<20 || rounds*local > 1<<24 {
		return pairSGDSite{}, fmt.Errorf("%s: %d rounds of %d local steps (%g passes at q = %.4g) is out of range", FedDPPairSGD, rounds, local, passes, q)
	}
	cal, err := dpalgo.PairSGDCalibrate(task, p, q, rounds*local, C, eps, delta)
	if err != nil {
		return pairSGDSite{}, err
	}
	if !(cal.Epsilon <= eps) {
		return pairSGDSite{}, fmt.Errorf("%s: the accountant certifies ε = %g, above the requested %g", FedDPPairSGD, cal.Epsilon, eps)
	}
	return pairSGDSite{cal: cal, local: local}, nil
}

// pairSGDEta is the site's η by the rule of the file comment.
func pairSGDEta(s pairSGDSite, n, p, sites int, B float64) float64 {
	mbar := dpalgo.PairSGDMeanPairs(s.cal.Q, n)
	ns := s.cal.Sigma / mbar
	gt := math.Sqrt(s.cal.Clip*s.cal.Clip + float64(p)*ns*ns/float64(max(sites, 1)))
	return 2 * B / (gt * math.Sqrt(float64(s.cal.Steps)))
}

// Plan: R rounds; every site's calibration (refused here, before any
// release, if it cannot be met); B by the rule unless given; each site's
// per-step sensitivity Δ' for the ledgers.
func (a fedPairSGD) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	if s.Task != protocol.TaskMetric {
		return a.planSum(s, sites, params)
	}
	p := &Plan{Phases: s.Rounds, Eta: s.Eta, Sensitivity: map[string]float64{}, Certified: map[string]Guarantee{}}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	task := pairwise.Task(s.Task)
	total := 0
	for _, site := range sites {
		sc, err := pairSGDSchedule(task, site.Records, params, s.Rounds, s.LocalPasses, s.FeatureRadius, p.Epsilon, p.Delta)
		if err != nil {
			return nil, fmt.Errorf("site %s: %w", site.Name, err)
		}
		p.Sensitivity[site.Name] = sc.cal.Sensitivity
		p.Certified[site.Name] = Guarantee{sc.cal.Epsilon, sc.cal.Delta} // the site's own calibration of the same numbers
		total += site.Records
	}
	if s.ParamRadius == 0 {
		loss, err := pairwise.LossByName(task, s.Loss)
		if err != nil {
			return nil, err
		}
		nEff := int(float64(total) / math.Sqrt(float64(len(sites))))
		p.ParamRadius = dpalgo.PrivateParamRadius(nEff, params, p.Epsilon, p.Delta, s.FeatureRadius, task, loss)
	}
	return p, nil
}

func (a fedPairSGD) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if job.Task != protocol.TaskMetric {
		return a.newSumSite(job, env)
	}
	if err := needNoise(FedDPPairSGD, env); err != nil {
		return nil, err
	}
	if err := refusePaper(FedDPPairSGD, job); err != nil {
		return nil, err
	}
	if !(job.FeatureRadius > 0) || !(job.ParamRadius > 0) || !(job.LocalPasses > 0) {
		return nil, fmt.Errorf("%s needs R > 0, B > 0 and local passes > 0 (got %g, %g, %g)", FedDPPairSGD, job.FeatureRadius, job.ParamRadius, job.LocalPasses)
	}
	// The clip bounds every pair's contribution whatever the records, but
	// the rule's C is stated for records in the R-ball (checked anyway).
	if err := pairwise.CheckRadius(env.Data, job.FeatureRadius); err != nil {
		return nil, err
	}
	n, p := env.Data.N, env.Obj.NumParams()
	sc, err := pairSGDSchedule(env.Obj.Task(), n, p, job.Phases, job.LocalPasses, job.FeatureRadius, job.Epsilon, job.Delta)
	if err != nil {
		return nil, err
	}
	eta := job.Eta
	if eta == 0 {
		eta = pairSGDEta(sc, n, p, len(job.Sites), job.ParamRadius)
	}
	return &pairSGDSiteRun{job: job, env: env, sc: sc, eta: eta}, nil
}

type pairSGDSiteRun struct {
	job *protocol.JobAnnounce
	env SiteEnv
	sc  pairSGDSite
	eta float64
}

// Step runs this round's T_s noisy steps from the broadcast model and
// releases their average (Model) and last iterate (Last); the ledger entry
// lists σ, Δ', q and T_s.
func (s *pairSGDSiteRun) Step(ctx context.Context, r int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	j, n := s.job, s.env.Data.N
	cal := s.sc.cal
	// The charge, certified from public numbers before any noise is drawn.
	eps, delta, err := pairSGDRoundCharge(j, s.sc, r, s.env.Obj.NumParams())
	if err != nil {
		return nil, nil, err
	}
	avg, last, _, err := dpalgo.PairSGDLocal(ctx, s.env.Obj, model, s.sc.local, s.eta, cal, s.env.Noise, s.env.Rand)
	if err != nil {
		return nil, nil, err
	}
	secure := s.env.Noise.Secure()
	u := &protocol.SiteUpdate{Model: avg, Weight: float64(n), Sigma: cal.Sigma, Epsilon: eps, Delta: delta, Secure: secure}
	if len(last) <= protocol.MaxLastParams {
		u.Last = last
	}
	rel := &Release{Records: n, Mechanism: "subsampled-gaussian", Sigma: cal.Sigma, Sensitivity: cal.Sensitivity,
		SampleRate: cal.Q, Steps: s.sc.local, Epsilon: eps, Delta: delta, Secure: secure}
	return u, rel, nil
}

// pairSGDRoundCharge is the certified (ε, δ) of rounds 1…r of a site's
// steps: the subsampled-Gaussian accountant of the r·T_s steps so far
// (the secure sampler's discrete-noise term over their r·T_s·p
// coordinates included), and at r = R the calibration's own certificate
// of all R·T_s steps. The ledger's maximum within the job is the
// certificate of everything released.
func pairSGDRoundCharge(j *protocol.JobAnnounce, sc pairSGDSite, r, p int) (float64, float64, error) {
	cal := sc.cal
	eps := cal.Epsilon
	switch {
	case r < 1 || r > j.Phases:
		return 0, 0, fmt.Errorf("%s: round %d outside 1…%d", FedDPPairSGD, r, j.Phases)
	case r < j.Phases:
		steps := r * sc.local
		e, _, err := dp.SecureSubsampledGaussianEpsilon(cal.Q, cal.Multiplier, steps, cal.Delta, dp.ReplaceOne, int64(steps)*int64(p))
		if err != nil {
			return 0, 0, fmt.Errorf("%s: certifying round %d: %w", FedDPPairSGD, r, err)
		}
		eps = min(e, cal.Epsilon) // fewer steps: never more than the whole job's
	}
	return certifiedCharge(j, eps, cal.Delta)
}

func (a fedPairSGD) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	if job.Task != protocol.TaskMetric {
		return a.newSumCombiner(job, state)
	}
	return fedAvg{}.NewCombiner(job, state)
}

func (fedPairSGD) PrivacyNote(s *Spec) string {
	if s == nil || s.Task != protocol.TaskMetric {
		return "per-site record-level (ε, δ)-DP: every site releases its class sums and positive count once (Δ = 2, fed-dp-ssp-mean's release), then in each of T rounds the class blocks of its records' logistic pair-loss gradients against the public opposite-class partner of the broadcast model, each clipped (Δ = 2 replace-one; dpalgo/kit_pairsum.go), each release with Gaussian noise; the T + 1 releases compose sequentially by exact Gaussian DP, calibrated together; each record is in one site (parallel composition); the coordinator's sums and gradient steps are post-processing. Any label mix per site, a single class included"
	}
	return "per-site record-level (ε, δ)-DP: in each round every site runs round(P/q_s) steps of dp-pair-sgd on its own records (Poisson(q_s) batches, previous-instance pairs, pair gradients clipped to C, N(0, σ_s²I) per step, add/remove sensitivity 2C); all rounds' steps of a site compose sequentially under the subsampled-Gaussian RDP accountant (replace-one), calibrated up front so that the whole job is (ε, δ) per site; the coordinator only averages (post-processing)"
}
