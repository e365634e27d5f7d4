package fedalgo

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-ssp-secagg: one-shot private sufficient statistics of the square
// AUC loss (pairwise dp-ssp, private_ssp.go) summed over the sites by
// secure aggregation with the distributed discrete Gaussian (secure.go).
//
// One phase: every site computes its weighted statistics vector
// v(D_k) = Σ_{i∈D_k} φ(z_i) (pairwise.SSPVector, with second moments),
// the worker encodes it with the job's DDG (its own secure integer noise
// N_ℤ(0, s²) in units of γ), charges its ledger and masks it; the
// coordinator unmasks only Σ_k enc(v(D_k)) over the round's survivors,
// decodes the sum, rebuilds the summed statistics (pairwise.SSPFromVector,
// the public record counts of the included sites) and solves the ridge
// problem with λ from the sum's noise (pairwise.SSPLambda): the output is
// post-processing of the one release.
//
// Privacy: Δ = pairwise.SSPSensitivity(R, SSPWeights(R, true)) is the
// tight ℓ2 sensitivity of one site's vector under replacement of one of
// its records (proof in private_ssp.go); the clip c = n_max·‖φ‖max (from
// the public record counts, ‖φ(z)‖² ≤ a²R² + 2b²R⁴ + c² bounds one
// record's term, the moment block counted twice to stay an upper bound),
// so clipping never binds and Δ is the sensitivity of the clipped vector.
// dp.CalibrateDDG fixes s so that a sum holding at least t sites' noise
// (t the threshold; fewer survivors abort the round before unmasking) is
// (ε, δ)-DP; each record is in one site (parallel composition), so every
// site's guarantee is that one release's. Secure aggregation is required:
// without it there is no sum to take (the job is refused).

// FedDPSSPSecAgg is the name of fed-dp-ssp-secagg.
const FedDPSSPSecAgg = "fed-dp-ssp-secagg"

func init() { Register(fedDPSSPSecAgg{}) }

type fedDPSSPSecAgg struct{}

func (fedDPSSPSecAgg) Name() string  { return FedDPSSPSecAgg }
func (fedDPSSPSecAgg) Private() bool { return true }

// CheckOptions: the algorithm takes none of its own (secure aggregation's
// are checked generically before).
func (fedDPSSPSecAgg) CheckOptions(o protocol.Options) error {
	if len(o) > 0 {
		return fmt.Errorf("%s takes no options of its own (got %v)", FedDPSSPSecAgg, o)
	}
	return nil
}

func (fedDPSSPSecAgg) Configure(s *Spec) error {
	if s.Loss == "" {
		s.Loss = "square"
	}
	switch {
	case s.Task != protocol.TaskAUC:
		return fmt.Errorf("%s fits a linear AUC scorer: task %q is not supported (use auc)", FedDPSSPSecAgg, s.Task)
	case s.Loss != "square":
		return fmt.Errorf("%s releases the sufficient statistics of the square loss: loss %q is not supported (use square)", FedDPSSPSecAgg, s.Loss)
	case s.Rounds != 0 || s.LocalPasses != 0 || s.Eta != 0:
		return fmt.Errorf("%s is one release of statistics: rounds, local passes and η do not apply", FedDPSSPSecAgg)
	case !SecAggRequested(s.Options):
		return fmt.Errorf("%s sums the sites' statistics by secure aggregation: give the option %s=1 (--secure-aggregation)", FedDPSSPSecAgg, OptSecAgg)
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 1
	}
	return checkPrivacy(FedDPSSPSecAgg, s)
}

func (fedDPSSPSecAgg) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	if _, err := sspDim(params); err != nil {
		return nil, err
	}
	p := &Plan{Phases: 1}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	return p, nil
}

// sspDim is the length of the statistics vector on d features.
func sspDim(d int) (int, error) {
	if d < 1 || d > 2000 {
		return 0, fmt.Errorf("%s releases d×d second moments: d = %d must be in [1, 2000]", FedDPSSPSecAgg, d)
	}
	return 2*d + d*(d+1) + 1, nil
}

// SumShape: the statistics vector, its clip bound n_max·‖φ‖max and its
// sensitivity (see the file comment).
func (fedDPSSPSecAgg) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	dim, err := sspDim(params)
	if err != nil {
		return 0, 0, 0, err
	}
	R := s.FeatureRadius
	a, b, c := pairwise.SSPWeights(R, true)
	phiMax := math.Sqrt(a*a*R*R + 2*b*b*R*R*R*R + c*c)
	_, nMax := sizes(sites)
	return dim, float64(max(nMax, 1)) * phiMax, pairwise.SSPSensitivity(R, a, b, c), nil
}

func (fedDPSSPSecAgg) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(FedDPSSPSecAgg, env); err != nil {
		return nil, err
	}
	if job.Phases != 1 || job.Task != protocol.TaskAUC || job.Loss != "square" {
		return nil, fmt.Errorf("%s is one phase of the square AUC loss, the job has %d phases of %s/%s", FedDPSSPSecAgg, job.Phases, job.Task, job.Loss)
	}
	if !SecAggRequested(job.Options) {
		return nil, fmt.Errorf("%s needs secure aggregation (option %s=1)", FedDPSSPSecAgg, OptSecAgg)
	}
	return &sspSecAggSite{job: job, env: env}, nil
}

type sspSecAggSite struct {
	job *protocol.JobAnnounce
	env SiteEnv
}

// Step: this algorithm releases only through secure aggregation.
func (s *sspSecAggSite) Step(context.Context, int, []float64) (*protocol.SiteUpdate, *Release, error) {
	return nil, nil, fmt.Errorf("%s releases only through secure aggregation", FedDPSSPSecAgg)
}

// SumVector: the site's exact statistics vector (records clipped to
// ‖x‖ ≤ R by the worker).
func (s *sspSecAggSite) SumVector(_ context.Context, _ int, _ []float64) ([]float64, int, error) {
	st := pairwise.SSPStatsOf(s.env.Data, true)
	return pairwise.SSPVector(st, s.job.FeatureRadius), s.env.Data.N, nil
}

func (fedDPSSPSecAgg) NewCombiner(job *protocol.JobAnnounce, _ []float64) (Combiner, error) {
	return &sspSecAggCombiner{job: job}, nil
}

type sspSecAggCombiner struct{ job *protocol.JobAnnounce }

// Combine: never called for a secure aggregation job (the coordinator
// takes the sum path); the model is returned unchanged.
func (c *sspSecAggCombiner) Combine(model []float64, _ []*protocol.SiteUpdate, _ protocol.Aggregation) []float64 {
	return model
}

// CombineSum rebuilds the summed statistics and solves the ridge problem
// (post-processing of the release).
func (c *sspSecAggCombiner) CombineSum(model, sum []float64, included []SiteInfo, sigma float64) []float64 {
	d := c.job.Params
	stats := &pairwise.SSPStats{D: d, SumPos: make([]float64, d), SumNeg: make([]float64, d),
		MomPos: make([]float64, d*(d+1)/2), MomNeg: make([]float64, d*(d+1)/2)}
	for _, s := range included {
		stats.N += float64(s.Records)
	}
	R := c.job.FeatureRadius
	pairwise.SSPFromVector(stats, sum, R)
	w, _, err := pairwise.SolveSSP(stats, pairwise.SSPLambda(stats, R, sigma))
	if err != nil {
		panic(fmt.Sprintf("%s: solving the summed statistics: %v", FedDPSSPSecAgg, err)) // recovered by the coordinator's guard: the job aborts with the reason
	}
	return w
}

func (c *sspSecAggCombiner) Final(model []float64) []float64 { return slices.Clone(model) }
func (c *sspSecAggCombiner) State() []float64                { return nil }

func (fedDPSSPSecAgg) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: every site adds its share of a distributed discrete Gaussian to its square-loss statistics; secure aggregation reveals only the sum of at least t sites' encodings (t the threshold), calibrated so that t shares certify (ε, δ); one release per record set"
}
