package fedalgo

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/internal/memo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-ssp and fed-dp-ssp-mean: sufficient-statistics perturbation
// across sites (the single-site dp-ssp and dp-ssp-mean of
// dpalgo/kit_ssp.go, which states the loss, the statistics, the
// tight sensitivity and the solve).
//
// One phase. Every site computes the statistics of the square AUC loss on
// its own records — class sums, class second moments (fed-dp-ssp only)
// and the positive count (dpalgo.SSPStatsOf) — and releases them ONCE
// with its own Gaussian noise (dpalgo.NoisySSP), calibrated to the
// job's (ε, δ) for its own records: the weighted release vector has ℓ2
// sensitivity Δ = 2 under replacement of one record (any label, any
// position on the R-sphere), plus the secure mechanism's rounding
// allowance, and σ is the analytic-Gaussian σ(ε, δ, Δ') (Balle & Wang
// 2018, exact; dpalgo.SSPCalibrate). The update carries the noisy
// statistics (not a model: 1 + 2d [+ d(d+1)] values) and the site's
// record count n_s, which is public metadata of its Join.
//
// The coordinator sums the K releases (the statistics are sums over
// records, so the sum of the sites' exact statistics is the pooled
// statistics, whatever each site's label mix — a site may hold a single
// class) and solves once, as single-site dp-ssp does: λ = SSPLambda at the
// summed noise level √(Σ σ_s²) (σ√K for equal σ), w = (Â₊ + λI)⁻¹ b̂, or
// the class-mean difference b̂ for fed-dp-ssp-mean, rescaled into the
// ball of radius B (AUC depends on the direction only).
//
// Privacy: every record is in exactly one site and takes part in one
// release, so each site's guarantee is that of its single release —
// per-site record-level (ε, δ)-DP under replace-one neighbours — by
// parallel composition across sites; the sum and the solve are
// post-processing. The site's ledger records the release (σ, Δ') before
// the update leaves it. The coordinator's composed ε (Account) is the
// exact Gaussian-DP ε of that one release.

// FedDPSSP and FedDPSSPMean are the names of the two variants.
const (
	FedDPSSP     = "fed-dp-ssp"
	FedDPSSPMean = "fed-dp-ssp-mean"
)

func init() {
	Register(fedSSP{name: FedDPSSP, kind: dpalgo.SSPClass})
	Register(fedSSP{name: FedDPSSPMean, kind: dpalgo.SSPMean})
}

type fedSSP struct {
	name string
	kind dpalgo.SSPKind // the statistics released (dpalgo.SSPKind)
}

func (a fedSSP) Name() string { return a.name }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedDPSSP and
// FedDPSSPMean.
func (a fedSSP) Doc() Doc {
	if a.name == FedDPSSPMean {
		return Doc{
			Title:       "noisy class sums and count released once per site, summed: the class-mean difference",
			Paper:       "pairfed (sufficient-statistics perturbation without second moments)",
			Ref:         "fedalgo/fedssp.go, dpalgo/private_ssp.go, dpalgo/kit_ssp.go",
			Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer whatever --loss; any label mix per site; one release per site",
		}
	}
	return Doc{
		Title:       "noisy sufficient statistics released once per site, summed and solved for the ridge square-AUC optimum",
		Paper:       "pairfed (sufficient-statistics perturbation, cf. Vu & Slavković 2009, Wang 2018)",
		Ref:         "fedalgo/fedssp.go, dpalgo/private_ssp.go, dpalgo/kit_ssp.go",
		Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer, square loss whatever --loss; any label mix per site; one release per site",
	}
}

func (fedSSP) Private() bool { return true }

// Configure: AUC only (a linear scorer); one phase with no step size;
// the square loss (the loss the statistics solve, whatever the objective
// the worker builds says); B = 1 (the output is rescaled into the ball:
// AUC does not depend on B); the statistics are summed, so only the
// default aggregation applies.
func (a fedSSP) Configure(s *Spec) error {
	if s.Task == protocol.TaskMetric {
		return fmt.Errorf("%s learns a linear scorer (task auc): the metric task does not apply", a.name)
	}
	if s.Loss == "" {
		s.Loss = "square"
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 1
	}
	if s.Rounds != 0 || s.LocalPasses != 0 || s.Eta != 0 {
		return fmt.Errorf("%s is one release of noisy statistics per site: rounds, local passes and η do not apply", a.name)
	}
	if agg, err := protocol.ParseAggregation(s.Aggregation); err != nil {
		return err
	} else if agg.Rule != protocol.AggMean {
		return fmt.Errorf("%s sums the sites' statistics: aggregation %q does not apply (omit it)", a.name, s.Aggregation)
	}
	return checkPrivacy(a.name, s)
}

// sspLen is the length of a site's update: n̂₊, the two class sums and
// the kind's packed second-moment triangles.
func sspLen(d int, kind dpalgo.SSPKind) int { return dpalgo.SSPCoords(d, kind) }

// Plan: one phase; every site's release has the same Δ' (it depends on d,
// R, ε and δ only), computed here so that the job is refused before any
// release when it cannot be calibrated or does not fit a message.
func (a fedSSP) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	if nMin < 1 {
		return nil, fmt.Errorf("%s needs at least one record at every site (smallest: %d)", a.name, nMin)
	}
	total := 0
	for _, site := range sites {
		total += site.Records
	}
	if total < 2 {
		return nil, fmt.Errorf("%s needs at least 2 records over all sites, got %d", a.name, total)
	}
	if k := sspLen(params, a.kind); a.kind.Moments() && (params > 1000 || k > protocol.MaxLastParams) {
		return nil, fmt.Errorf("%s releases d(d+1) second-moment entries per site: d = %d gives %d values, above this job's limit of d = 1000; use %s (class sums only) or reduce the features", a.name, params, k, FedDPSSPMean)
	}
	p := &Plan{Phases: 1, Sensitivity: map[string]float64{}}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	rel, err := dpalgo.SSPCalibrate(p.Epsilon, p.Delta, s.FeatureRadius, params, a.kind)
	if err != nil {
		return nil, err
	}
	c, err := sspCertificate(rel, p.Epsilon, p.Delta)
	if err != nil {
		return nil, err
	}
	p.Certified = map[string]Guarantee{}
	for _, site := range sites {
		p.Sensitivity[site.Name] = rel.Sensitivity
		p.Certified[site.Name] = Guarantee{c.Epsilon, c.Delta} // each site's release is the same calibration
	}
	return p, nil
}

func (a fedSSP) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(a.name, env); err != nil {
		return nil, err
	}
	if err := refusePaper(a.name, job); err != nil {
		return nil, err
	}
	switch {
	case job.Task != protocol.TaskAUC:
		return nil, fmt.Errorf("%s is AUC only", a.name)
	case job.Phases != 1:
		return nil, fmt.Errorf("%s has one phase, the job has %d", a.name, job.Phases)
	case job.Params != env.Data.D:
		return nil, fmt.Errorf("%s: the job has %d parameters, this site %d features", a.name, job.Params, env.Data.D)
	case !(job.FeatureRadius > 0):
		return nil, fmt.Errorf("%s needs a feature radius R > 0", a.name)
	}
	// The sensitivity holds for records in the R-ball only (the worker
	// clips and checks; checked again before any release).
	if err := pairwise.CheckRadius(env.Data, job.FeatureRadius); err != nil {
		return nil, err
	}
	rel, err := dpalgo.SSPCalibrate(job.Epsilon, job.Delta, job.FeatureRadius, env.Data.D, a.kind)
	if err != nil {
		return nil, err
	}
	return &sspSite{alg: a, job: job, env: env, rel: rel}, nil
}

type sspSite struct {
	alg fedSSP
	job *protocol.JobAnnounce
	env SiteEnv
	rel dpalgo.SSPRelease
}

// Step releases the site's noisy statistics: one Gaussian release of
// sensitivity Δ' and noise σ (its ledger entry). The broadcast model is
// not used (the release does not depend on it).
func (s *sspSite) Step(ctx context.Context, _ int, _ []float64) (*protocol.SiteUpdate, *Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	j, ds := s.job, s.env.Data
	// The charge, certified before the noise is drawn.
	c, err := sspCertificate(s.rel, j.Epsilon, j.Delta)
	if err != nil {
		return nil, nil, err
	}
	eps, delta, err := certifiedCharge(j, c.Epsilon, c.Delta)
	if err != nil {
		return nil, nil, err
	}
	noisy := dpalgo.NoisySSP(dpalgo.SSPStatsOf(ds, s.alg.kind), j.FeatureRadius, s.rel, s.env.Noise)
	secure := s.env.Noise.Secure()
	u := &protocol.SiteUpdate{Model: packSSP(noisy), Weight: float64(ds.N), Sigma: s.rel.Sigma,
		Epsilon: eps, Delta: delta, Secure: secure}
	rel := &Release{Records: ds.N, Mechanism: "gaussian", Sigma: s.rel.Sigma, Sensitivity: s.rel.Sensitivity,
		Epsilon: eps, Delta: delta, Secure: secure}
	return u, rel, nil
}

// sspCertificate is what the exact accountant certifies for one release
// rel (sensitivity Δ' with the snapping in it, σ, Coords noise
// coordinates from the secure sampler) at the request (eps, delta).
func sspCertificate(rel dpalgo.SSPRelease, eps, delta float64) (dp.Certificate, error) {
	return dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: []float64{rel.Sensitivity}, Coordinates: int64(rel.Coords)}, []float64{rel.Sigma}, eps, delta)
}

// packSSP lays the statistics out for the wire: n̂₊, S₊, S₋, then M₊ and
// M₋ (fed-dp-ssp) or M (fed-dp-lda), packed upper triangles. N travels as
// the weight.
func packSSP(s *dpalgo.SSPStats) []float64 {
	v := make([]float64, 0, sspLen(s.D, s.Kind()))
	v = append(v, s.NPos)
	v = append(v, s.SumPos...)
	v = append(v, s.SumNeg...)
	v = append(v, s.MomPos...)
	v = append(v, s.MomNeg...)
	return append(v, s.Mom...)
}

// unpackSSP inverts packSSP for d features and n records.
func unpackSSP(v []float64, d int, n float64, kind dpalgo.SSPKind) *dpalgo.SSPStats {
	s := &dpalgo.SSPStats{D: d, N: n, NPos: v[0],
		SumPos: slices.Clone(v[1 : 1+d]), SumNeg: slices.Clone(v[1+d : 1+2*d])}
	t := d * (d + 1) / 2
	switch kind {
	case dpalgo.SSPClass:
		s.MomPos = slices.Clone(v[1+2*d : 1+2*d+t])
		s.MomNeg = slices.Clone(v[1+2*d+t : 1+2*d+2*t])
	case dpalgo.SSPPooled:
		s.Mom = slices.Clone(v[1+2*d : 1+2*d+t])
	}
	return s
}

func (a fedSSP) NewCombiner(job *protocol.JobAnnounce, _ []float64) (Combiner, error) {
	if job.Task != protocol.TaskAUC {
		return nil, fmt.Errorf("%s is AUC only", a.name)
	}
	return &sspCombiner{d: job.Params, kind: a.kind, R: job.FeatureRadius, B: job.ParamRadius}, nil
}

// sspCombiner sums the sites' noisy statistics and solves once.
type sspCombiner struct {
	d    int
	kind dpalgo.SSPKind
	R, B float64
	// Info describes the last solve (tests, notes).
	info   dpalgo.SSPSolveInfo
	lambda float64
}

func (c *sspCombiner) UpdateLen() int { return sspLen(c.d, c.kind) }

// Combine sums the released statistics (N = Σ n_s from the weights) and
// returns the solved model. The rule is the mean (Configure refuses the
// others); the sum is what a sum of sufficient statistics needs.
func (c *sspCombiner) Combine(_ []float64, ups []*protocol.SiteUpdate, _ protocol.Aggregation) []float64 {
	sum := sumSSP(ups, c.d, c.kind)
	if sum == nil { // no update: nothing to solve
		return make([]float64, c.d)
	}
	w, info, lambda := solveSSP(sum, c.R, updatesSigma(ups), c.B)
	c.info, c.lambda = info, lambda
	return w
}

// sumSSP returns the sum of the statistics the updates carry (in the
// fed-dp-ssp layout for d features, with or without moments), N being the
// sum of their weights (record counts).
func sumSSP(ups []*protocol.SiteUpdate, d int, kind dpalgo.SSPKind) *dpalgo.SSPStats {
	var sum *dpalgo.SSPStats
	for _, u := range ups {
		s := unpackSSP(u.Model, d, u.Weight, kind)
		if sum == nil {
			sum = s
			continue
		}
		_ = sum.Add(s) // same layout by construction
	}
	return sum
}

// solveSSP solves the summed statistics whose release vector carries noise
// sigma per coordinate, rescaled into the ball of radius B (B ≤ 0: not): the ridge optimum at λ = SSPLambda (fed-dp-ssp),
// the class-mean difference without moments. A failed eigendecomposition
// (not expected for finite input) falls back to the class-mean difference,
// which needs nothing but N ≥ 2 (Plan checked it).
func solveSSP(sum *dpalgo.SSPStats, R, sigma, B float64) ([]float64, dpalgo.SSPSolveInfo, float64) {
	lambda := math.Inf(1)
	if sum.Kind().Moments() {
		lambda = dpalgo.SSPLambda(sum, R, sigma)
	}
	w, info, err := dpalgo.SolveSSP(sum, lambda)
	if err != nil {
		lambda = math.Inf(1)
		w, info, _ = dpalgo.SolveSSP(sum, lambda)
	}
	if w == nil {
		w = make([]float64, sum.D)
	}
	if nrm := pairwise.Norm2(w); B > 0 && nrm > B { // AUC depends on the direction only
		for i := range w {
			w[i] *= B / nrm
		}
	}
	return w, info, lambda
}

func (c *sspCombiner) Final(model []float64) []float64 { return slices.Clone(model) }
func (c *sspCombiner) State() []float64                { return nil }

// Account is the exact Gaussian-DP ε of a site's single release of
// sensitivity sens with noise σ (dp.Compose), next to the calibration's
// claim.
func (a fedSSP) Account(sigmas []float64, sens, epsilon, delta float64) (float64, []string) {
	notes := []string{fmt.Sprintf("%s: one Gaussian release per site of ℓ2 sensitivity Δ' = %.6g calibrated by the analytic Gaussian mechanism (Balle & Wang 2018) to (ε, δ) = (%g, %.3g)", a.name, sens, epsilon, delta)}
	return gaussianAccount(sigmas, sens, delta, "release", notes)
}

// gaussianAccount composes Gaussian releases of sensitivity sens with the
// given σs by exact Gaussian DP (dp.Compose) and returns ε at delta (0 if
// it does not apply) with notes; each release is labelled "<unit> i".
//
// The composition is a function of (σs, sens, delta, unit) alone, and the
// coordinator accounts every site of a job (K sites of the same σs, each
// composed again by dp.Compose's every method): accounts is its memo,
// keyed by those inputs exactly (their float64 bits).
func gaussianAccount(sigmas []float64, sens, delta float64, unit string, notes []string) (float64, []string) {
	if !(sens > 0) || !(delta > 0) || len(sigmas) == 0 {
		return 0, notes
	}
	k := make([]byte, 0, 8*(len(sigmas)+2)+len(unit))
	for _, x := range append([]float64{sens, delta}, sigmas...) {
		k = binary.LittleEndian.AppendUint64(k, math.Float64bits(x))
	}
	a := accounts.Get(string(append(k, unit...)), func() gaussianAcct { return composeGaussian(sigmas, sens, delta, unit) })
	return a.epsilon, append(notes, a.note)
}

// accounts memoizes gaussianAccount (at most 256 entries: the σs come
// from the sites' reports).
var accounts = memo.New[string, gaussianAcct](256)

type gaussianAcct struct {
	epsilon float64
	note    string
}

func composeGaussian(sigmas []float64, sens, delta float64, unit string) gaussianAcct {
	rels := make([]dp.Release, len(sigmas))
	for i, s := range sigmas {
		rels[i] = dp.Release{Mechanism: dp.MechanismGaussian, Sensitivity: sens, Sigma: s, Label: fmt.Sprintf("%s %d", unit, i+1)}
	}
	rep, err := dp.Compose(rels, delta)
	if err != nil {
		return gaussianAcct{note: fmt.Sprintf("dp.Compose: %v", err)}
	}
	e := rep.Method(dp.MethodGDP)
	if !e.OK || math.IsInf(e.Epsilon, 0) || math.IsNaN(e.Epsilon) {
		return gaussianAcct{note: "exact Gaussian-DP composition does not apply: " + e.Description}
	}
	return gaussianAcct{epsilon: e.Epsilon, note: fmt.Sprintf("exact Gaussian-DP composition of the same releases (dp.Compose): ε = %.6g at δ = %.3g", e.Epsilon, delta)}
}

// Secure aggregation (secure.go): the statistics are a sum over sites, so
// fed-dp-ssp and fed-dp-ssp-mean are SumReleasers. With the job option
// secagg = 1 a site does not add Gaussian noise: its exact weighted
// statistics vector v(D_s) = Σ φ(z_i) (dpalgo.SSPVector) is encoded with
// the job's distributed discrete Gaussian share by the worker and masked;
// the coordinator decodes the sum of at least t sites' encodings and
// solves as above at the sum's noise level. Δ = dpalgo.SSPSensitivity
// (tight, replace-one, proof in private_ssp.go) is the DDG's sensitivity;
// the clip c = n_max·‖φ‖max, with ‖φ(z)‖² ≤ a²R² + 2b²R⁴ + c² bounding
// one record's term (the moment block counted twice, an upper bound), so
// clipping never binds and Δ stays the clipped vector's sensitivity.

// SumShape: the statistics vector, its clip bound and its sensitivity.
func (a fedSSP) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	dim, clip, sens := sspSumShape(s.FeatureRadius, a.kind, sites, params)
	return dim, clip, sens, nil
}

// SiteSumShape: the statistics vector's length and Δ = SSPSensitivity
// at the announced R (the site's vector, whatever n).
func (a fedSSP) SiteSumShape(job *protocol.JobAnnounce, _ int) (int, float64, error) {
	return sspSiteShape(job, a.kind)
}

// sspSiteShape is a site's (dim, Δ) of the statistics vector of kind.
func sspSiteShape(job *protocol.JobAnnounce, kind dpalgo.SSPKind) (int, float64, error) {
	R := job.FeatureRadius
	if !(R > 0) || math.IsInf(R, 0) {
		return 0, 0, fmt.Errorf("%s: the statistics' sensitivity needs a finite feature radius R > 0, the job announces %v", job.Algo, R)
	}
	wa, wb, wc := dpalgo.SSPWeights(R, kind)
	return sspLen(job.Params, kind), dpalgo.SSPSensitivity(R, wa, wb, wc), nil
}

// sspSumShape is the secure-aggregation shape of the statistics vector of
// the given kind (fed-dp-ssp[-mean], fed-dp-lda): its length, the clip
// n_max·‖φ‖max with ‖φ(z)‖² ≤ a²R² + 2b²R⁴ + c² (the moment block counted
// twice, an upper bound, so clipping never binds), and its sensitivity.
func sspSumShape(R float64, kind dpalgo.SSPKind, sites []SiteInfo, params int) (dim int, clip, sens float64) {
	wa, wb, wc := dpalgo.SSPWeights(R, kind)
	phiMax := math.Sqrt(wa*wa*R*R + 2*wb*wb*R*R*R*R + wc*wc)
	_, nMax := sizes(sites)
	return sspLen(params, kind), float64(max(nMax, 1)) * phiMax, dpalgo.SSPSensitivity(R, wa, wb, wc)
}

// SumVector: the site's exact statistics vector (no noise: the worker
// encodes it with its DDG share).
func (s *sspSite) SumVector(ctx context.Context, _ int, _ []float64) ([]float64, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	st := dpalgo.SSPStatsOf(s.env.Data, s.alg.kind)
	return dpalgo.SSPVector(st, s.job.FeatureRadius), s.env.Data.N, nil
}

// CombineSum rebuilds the summed statistics of the included sites (their
// public record counts give N) from the decoded vector and solves at the
// sum's noise level sigma.
func (c *sspCombiner) CombineSum(_ []float64, sum []float64, included []SiteInfo, sigma float64) []float64 {
	st := &dpalgo.SSPStats{D: c.d, SumPos: make([]float64, c.d), SumNeg: make([]float64, c.d)}
	switch t := c.d * (c.d + 1) / 2; c.kind {
	case dpalgo.SSPClass:
		st.MomPos, st.MomNeg = make([]float64, t), make([]float64, t)
	case dpalgo.SSPPooled:
		st.Mom = make([]float64, t)
	}
	for _, s := range included {
		st.N += float64(s.Records)
	}
	dpalgo.SSPFromVector(st, sum, c.R)
	w, info, lambda := solveSSP(st, c.R, sigma, c.B)
	c.info, c.lambda = info, lambda
	return w
}

func (a fedSSP) PrivacyNote(*Spec) string {
	what := "class sums, class second moments and positive count"
	switch a.kind {
	case dpalgo.SSPMean:
		what = "class sums and positive count"
	case dpalgo.SSPPooled:
		what = "class sums, label-free second moment and positive count"
	}
	return fmt.Sprintf("per-site record-level (ε, δ)-DP: every site releases the %s of its own records ONCE with Gaussian noise σ = analytic σ(ε, δ, Δ'), Δ' = 2 + rounding allowance (tight, replace-one; dpalgo/kit_ssp.go); each record is in one site (parallel composition); the coordinator sums the statistics and solves (post-processing). Any label mix per site, a single class included", what)
}

// SingleClassSites: the statistics pool over sites whatever their label
// mix.
func (fedSSP) SingleClassSites() bool { return true }
