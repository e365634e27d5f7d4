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
	if !(s.Epsilon > 0) || math.IsInf(s.Epsilon, 0) {
		return fmt.Errorf("%s needs ε > 0, got %v", name, s.Epsilon)
	}
	if !(s.Delta >= 0 && s.Delta < 1) {
		return fmt.Errorf("δ = %v must be in [0, 1) (0: 1/(10·n_max))", s.Delta)
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
	return &pairwise.Privacy{Epsilon: job.Epsilon, Delta: job.Delta, FeatureRadius: job.FeatureRadius, Noise: env.Noise}
}

// partitioned is the durable partition of a Site whose phases read
// disjoint subsets (embedded by such sites).
type partitioned struct{ part [][]int }

func (p *partitioned) Partition() [][]int        { return p.part }
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
