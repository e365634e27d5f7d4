package fedalgo

import (
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// Helpers shared by the algorithm files.

// sizes returns the smallest and largest record count of the sites.
func sizes(sites []SiteInfo) (nMin, nMax int) {
	nMin = math.MaxInt
	for _, s := range sites {
		nMin, nMax = min(nMin, s.Records), max(nMax, s.Records)
	}
	return nMin, nMax
}

// planPrivacy returns the (ε, δ) every site of a private job is charged:
// the spec's, with δ = 0 meaning dp.DefaultDelta(n_max) = 1/(10·n_max) over
// the participants: ≤ 1/(10·n) for every site, each with its own n.
func planPrivacy(spec *Spec, sites []SiteInfo) (eps, delta float64) {
	eps, delta = spec.Epsilon, spec.Delta
	if delta == 0 {
		_, nMax := sizes(sites)
		delta = dp.DefaultDelta(nMax)
	}
	return eps, delta
}

// configurePrivate fills the defaults every private algorithm shares (the
// logistic loss — [Y21a] Thm 10, [X21] and [K22] need an L-smooth loss —
// and B = 1, as `pairfed train` uses for private algorithms).
func configurePrivate(s *Spec) {
	if s.Loss == "" {
		s.Loss = "logistic"
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 1
	}
}

// checkPrivacy checks the (ε, δ) of a private spec.
func checkPrivacy(name string, s *Spec) error {
	if err := dp.CheckEpsilon("ε", s.Epsilon); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := dp.CheckDelta("δ", s.Delta); err != nil {
		return fmt.Errorf("%s: %w; a job's δ = 0 means 1/(10·n_max)", name, err)
	}
	return nil
}

// certifiedCharge returns the (ε, δ) a site charges its ledger for a
// release (and reports in its update): the certificate of what the
// release actually adds — the exact accountant's ε at the job's δ and δ at
// its ε, for the noise drawn and the proven sensitivity, composed over
// every release of the job's records so far — never the request, which is
// only an upper bound. A certificate outside the request (or without a
// positive ε) is an error: nothing is released.
func certifiedCharge(job *protocol.JobAnnounce, eps, delta float64) (float64, float64, error) {
	if !(eps > 0 && eps <= job.Epsilon) || !(delta >= 0 && delta <= job.Delta) {
		return 0, 0, fmt.Errorf("%s: the noise certifies (ε, δ) = (%g, %g), not within the job's (%g, %g): refusing to release", job.Algo, eps, delta, job.Epsilon, job.Delta)
	}
	return eps, delta, nil
}

// paperCalibrated is implemented by the private algorithms whose sites can
// add a paper's printed σ (Spec.Calibration "paper"); the check says
// whether this spec can (e.g. fed-oneshot: whether its local algorithm
// has a printed σ).
type paperCalibrated interface {
	paperCalibration(spec *Spec) error
}

// checkCalibration checks a configured spec's calibration: exact or
// paper; paper only for a private algorithm with a printed σ and without
// secure aggregation (whose DDG noise has its own calibration).
func checkCalibration(a Algorithm, spec *Spec) error {
	switch spec.Calibration {
	case "", protocol.CalibrationExact:
		return nil
	case protocol.CalibrationPaper:
	default:
		return fmt.Errorf("unknown calibration %q: give --calibration exact (the smallest σ the exact accountant certifies) or paper (the paper's printed σ, refused unless certified)", spec.Calibration)
	}
	if !a.Private() {
		return fmt.Errorf("--calibration paper applies to private algorithms only; %s adds no noise", a.Name())
	}
	if SecAggRequested(spec.Options) {
		return fmt.Errorf("--calibration paper does not apply under secure aggregation (its distributed discrete Gaussian is calibrated exactly); use --calibration exact")
	}
	p, ok := a.(paperCalibrated)
	if !ok {
		return fmt.Errorf("%s is pairfed's own mechanism with no printed σ: --calibration paper does not apply (use exact)", a.Name())
	}
	return p.paperCalibration(spec)
}

// shapeObjective is the job's objective (the worker's: task, loss, λ and
// the parameter set of radius B) on a data-free stand-in for a site of n
// records in the job's dimension: n all-zero records (norm 0 ≤ R), which
// a calibration never reads — it uses n, d, the loss's constants and the
// parameter set only. The coordinator checks the sites' paper calibration
// with it before announcing a job.
func shapeObjective(s *Spec, n, params int) (pairwise.Objective, error) {
	task := pairwise.Task(s.Task)
	d, constraint := params, "l2"
	if task == pairwise.TaskMetric {
		d, constraint = int(math.Round(math.Sqrt(float64(params)))), "frobenius-psd"
	}
	loss, err := pairwise.LossByName(task, s.Loss)
	if err != nil {
		return nil, err
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(1 - 2*(i%2))
	}
	data := &pairwise.Dataset{N: n, D: d, Y: y, Ptr: make([]int, n+1)} // sparse, no non-zero
	return pairwise.NewObjective(data, pairwise.ObjectiveConfig{Task: task, Loss: loss, Lambda: s.Lambda, Constraint: constraint, Radius: s.ParamRadius})
}

// planCertify runs check (a site's all-phase calibration check, which
// returns the certificate of all its releases) for every site of the plan
// on its data-free stand-in, at the job's calibration, and records each
// certificate in p.Certified (the coordinator's reservation, and so what
// the ledger charges before the site's first update). Under --calibration
// paper an uncertified job is thereby refused at the coordinator, before
// it is announced (the sites check again at the announcement); under the
// exact calibration the certificate is the request less rounding, and
// under paper it can be far below the request (the printed σ's overspend
// noise), which the reservation then no longer over-counts.
func planCertify(s *Spec, sites []SiteInfo, params int, p *Plan, check func(obj pairwise.Objective, n int, priv *pairwise.Privacy) (float64, float64, error)) error {
	cal := pairwise.CalibrationExact
	if s.Calibration == protocol.CalibrationPaper {
		cal = pairwise.CalibrationPaper
	}
	R := s.FeatureRadius
	priv := &pairwise.Privacy{Epsilon: p.Epsilon, Delta: p.Delta, FeatureRadius: R, Noise: dp.NewSeededNoise(0), Calibration: cal}
	for _, site := range sites {
		obj, err := shapeObjective(s, site.Records, params)
		if err != nil {
			return err
		}
		eps, delta, err := check(obj, site.Records, priv)
		if err != nil {
			return fmt.Errorf("site %s (n = %d): %w", site.Name, site.Records, err)
		}
		if p.Certified == nil {
			p.Certified = map[string]Guarantee{}
		}
		// The site certifies the same numbers on its own path, which can
		// differ in the last bits (e.g. δ 3.2573289902279893e-4 here,
		// 3.257328990228012e-4 at the site): the reservation carries a
		// relative 1e-9 allowance upwards, capped at the request, so that it
		// never under-counts what the site will charge.
		eps, delta = math.Min(p.Epsilon, eps*(1+1e-9)), math.Min(p.Delta, delta*(1+1e-9))
		p.Certified[site.Name] = Guarantee{eps, delta}
	}
	return nil
}

// refusePaper refuses, at a site, an announced paper calibration for an
// algorithm without a printed σ (the coordinator's Configure refuses it
// too; a site does not rely on that).
func refusePaper(name string, job *protocol.JobAnnounce) error {
	if job.Calibration == protocol.CalibrationPaper {
		return fmt.Errorf("%s is pairfed's own mechanism with no printed σ: --calibration paper does not apply", name)
	}
	return nil
}

// needNoise refuses a private job at a site without a noise source.
func needNoise(name string, env SiteEnv) error {
	if env.Noise == nil {
		return fmt.Errorf("%s is private and this site has no noise source", name)
	}
	return nil
}

// privacyOf is the pairwise.Privacy of a site of job.
func privacyOf(job *protocol.JobAnnounce, env SiteEnv) *pairwise.Privacy {
	return &pairwise.Privacy{Epsilon: job.Epsilon, Delta: job.Delta, FeatureRadius: job.FeatureRadius, Noise: env.Noise, Calibration: pairwise.Calibration(job.Calibration)}
}

// partitioned is the durable partition of a Site whose phases read
// disjoint subsets (embedded by such sites).
type partitioned struct{ part [][]int }

func (p *partitioned) Partition() [][]int { return p.part }

// partSizes returns the sizes of a partition's subsets.
func partSizes(part [][]int) []int {
	out := make([]int, len(part))
	for i, s := range part {
		out[i] = len(s)
	}
	return out
}

func (p *partitioned) SetPartition(part [][]int) { p.part = part }

// meanCombiner is the coordinator's half of the algorithms whose next
// broadcast and output are the (job-rule) combination of the released
// models, weighted by the updates' weights.
type meanCombiner struct{}

func (meanCombiner) Combine(_ []float64, ups []*protocol.SiteUpdate, rule protocol.Aggregation) []float64 {
	models, weights := split(ups)
	return Aggregate(rule, models, weights, false)
}

func (meanCombiner) Final(model []float64) []float64 { return slices.Clone(model) }
func (meanCombiner) State() []float64                { return nil }

// split returns the updates' models and weights.
func split(ups []*protocol.SiteUpdate) (models [][]float64, weights []float64) {
	models, weights = make([][]float64, len(ups)), make([]float64, len(ups))
	for i, u := range ups {
		models[i], weights[i] = u.Model, u.Weight
	}
	return models, weights
}

// MaxPhaseWork bounds the work of one phase at one site, in pair-steps
// times model parameters (each step of the pairwise SGD touches O(params)
// values): 2³⁶ ≈ 6.9·10¹⁰. The rule: at the slowest rate `pairfed bench`
// measured (≈ 1.3 ns per parameter per step, dense d = 256) this is about
// 90 s, inside a worker's default --job-timeout of 2 minutes, so that a
// job spec cannot keep a site computing long after its coordinator gave
// up. An algorithm whose per-phase work depends on a job parameter checks
// it with CheckPhaseWork in its Plan (coordinator) and NewSite (site).
const MaxPhaseWork = 1 << 36

// CheckPhaseWork checks that steps pair-steps on a model of params
// parameters at site stay within MaxPhaseWork; the error names the cap
// and the largest local passes over n records that fit it.
func CheckPhaseWork(site string, steps float64, params, n int) error {
	if w := steps * float64(max(params, 1)); !(w <= MaxPhaseWork) {
		most := float64(MaxPhaseWork) / float64(max(params, 1)) / float64(max(n, 1))
		return fmt.Errorf("a phase at site %s would take %.3g pair-steps on %d parameters (%.3g, over the cap of 2^36 = %.3g per phase): give --local-passes ≤ %.3g",
			site, steps, params, w, float64(MaxPhaseWork), most)
	}
	return nil
}

// calibrateSnapped calibrates a site's Gaussian releases to (ε, δ) by the
// exact accountant (dp.CalibrateGaussian over plan) and returns their σ's,
// the largest ℓ2 sensitivity the secure sampler's snapping to each σ's
// grid gives a release of sensitivity base (dp.SnappedL2Sensitivity: the
// Δ' its charge and notes state) and the certificate, which must cover
// the request (else nothing is planned).
func calibrateSnapped(name string, plan dp.GaussianPlan, base, eps, delta float64) (sig []float64, sens float64, cert dp.Certificate, err error) {
	sig, cert, err = dp.CalibrateGaussian(plan, eps, delta)
	if err != nil {
		return nil, 0, dp.Certificate{}, fmt.Errorf("%s: %w", name, err)
	}
	if !cert.Covers(eps, delta) {
		return nil, 0, dp.Certificate{}, fmt.Errorf("%s: the calibration certifies (%g, %g), not the requested (%g, %g)", name, cert.Epsilon, cert.Delta, eps, delta)
	}
	for _, s := range sig {
		sens = math.Max(sens, dp.SnappedL2Sensitivity(base, dp.GaussianGranularity(s), plan.Dim))
	}
	return sig, sens, cert, nil
}
