package fedalgo

import (
	"context"
	"fmt"
	"math"
	"slices"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-avg: the non-private federated baseline around sgd-prev,
// [Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic and Online Gradient
// Descent Algorithms for Pairwise Learning. NeurIPS 2021, Alg 1.
//
// Each of the R rounds broadcasts a model; every site runs ⌈P·n⌉ steps of
// sgd-prev (Alg 1: i_t uniform, paired with i_{t−1}) from it with the
// constant step √N·η/√(R·T_s) and releases two vectors: its Alg 1 average
// (Model) and its last iterate (Last). The coordinator starts the next
// round from the weighted mean of the last iterates and outputs the mean
// over rounds of the weighted means of the Alg 1 averages, as Alg 1
// averages over the whole run. Weights are record counts. Not private.

// FedAvg is the name of fed-avg.
const FedAvg = "fed-avg"

func init() { Register(fedAvg{}) }

type fedAvg struct{}

func (fedAvg) Name() string { return FedAvg }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedAvg.
func (fedAvg) Doc() Doc {
	return Doc{
		Title:       "federated averaging of sgd-prev: rounds of local passes at every site, last iterates averaged (non-private baseline)",
		Paper:       "[Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic and Online Gradient Descent Algorithms for Pairwise Learning. NeurIPS 2021",
		Ref:         "Alg 1 at every site (fedalgo/fedavg.go)",
		Assumptions: "sgd-prev's; not private (the sites' updates are released as they are)",
	}
}

func (fedAvg) Private() bool { return false }

// Configure: hinge loss, 10 rounds of 1 local pass, η = 10 (the value
// [Y21a]'s selection picks for sgd-prev on diabetes; no federated selection
// yet) and B = 100 by default; ε and δ do not apply.
func (fedAvg) Configure(s *Spec) error {
	if s.Loss == "" {
		s.Loss = "hinge"
	}
	if s.Rounds == 0 {
		s.Rounds = 10
	}
	if s.LocalPasses == 0 {
		s.LocalPasses = 1
	}
	if s.Eta == 0 {
		s.Eta = 10
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 100
	}
	if s.Epsilon != 0 || s.Delta != 0 {
		return fmt.Errorf("%s is not private: ε and δ do not apply", FedAvg)
	}
	return nil
}

func (fedAvg) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	for _, site := range sites {
		if err := CheckPhaseWork(site.Name, math.Ceil(s.LocalPasses*float64(site.Records)), params, site.Records); err != nil {
			return nil, fmt.Errorf("%s: %w", FedAvg, err)
		}
	}
	return &Plan{Phases: s.Rounds, Eta: s.Eta}, nil
}

func (fedAvg) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if !(job.Eta > 0) || !(job.LocalPasses > 0) {
		return nil, fmt.Errorf("%s needs η > 0 and local passes > 0", FedAvg)
	}
	// The site's own bound on its work, whatever the coordinator checked.
	if err := CheckPhaseWork("this site", math.Ceil(job.LocalPasses*float64(env.Data.N)), job.Params, env.Data.N); err != nil {
		return nil, fmt.Errorf("%s: %w", FedAvg, err)
	}
	algo, err := pairwise.Lookup("sgd-prev")
	if err != nil {
		return nil, err
	}
	return &fedAvgSite{job: job, env: env, algo: algo}, nil
}

type fedAvgSite struct {
	job  *protocol.JobAnnounce
	env  SiteEnv
	algo *pairwise.Algorithm
}

// Step runs LocalPasses of sgd-prev ([Y21a] Alg 1) from the broadcast
// model: T = ⌈P·n⌉ steps of constant size √N·η/√(R·T) with N the job's
// sites. With IID sites of n/N records that is N times pooled sgd-prev's
// η/√(R·P·n): a round moves the model as far as the pooled run moves over
// the same number of pair steps.
func (s *fedAvgSite) Step(ctx context.Context, _ int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	j := s.job
	n := s.env.Data.N
	T := int(math.Ceil(j.LocalPasses * float64(n)))
	eta := FedAvgEta(j.Eta, len(j.Sites), j.Phases)
	res, err := s.algo.Run(ctx, s.env.Obj, pairwise.RunConfig{Steps: T, Eta: eta, Init: model}, s.env.Rand)
	if err != nil {
		return nil, nil, err
	}
	// Model is the Alg 1 average (the job's output averages it over
	// rounds); Last the iterate the next round starts from.
	u := &protocol.SiteUpdate{Model: res.W, Weight: float64(n)}
	if len(res.Last) <= protocol.MaxLastParams {
		u.Last = res.Last
	}
	return u, nil, nil
}

// FedAvgEta is the base step size a fed-avg site passes to sgd-prev (which
// divides it by √T for its T local steps): √N·η/√R for N sites and R
// rounds.
func FedAvgEta(eta float64, sites, rounds int) float64 {
	return math.Sqrt(float64(max(sites, 1))) * eta / math.Sqrt(float64(rounds))
}

func (fedAvg) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	c := &fedAvgCombiner{phases: job.Phases, outSum: slices.Clone(state)}
	if len(c.outSum) == 0 {
		c.outSum = make([]float64, job.Params)
	}
	if len(c.outSum) != job.Params {
		return nil, fmt.Errorf("%s: saved output sum has %d parameters, the job %d", FedAvg, len(c.outSum), job.Params)
	}
	return c, nil
}

// fedAvgCombiner keeps Σ over rounds of the aggregated Alg 1 averages.
type fedAvgCombiner struct {
	phases int
	outSum []float64
}

// Combine: the next round starts from the combination of the sites' last
// iterates (of Model for a site that sent none); the combination of the
// Models joins the output sum.
func (c *fedAvgCombiner) Combine(_ []float64, ups []*protocol.SiteUpdate, rule protocol.Aggregation) []float64 {
	models, weights := split(ups)
	lasts := make([][]float64, len(ups))
	for i, u := range ups {
		lasts[i] = u.Last
		if len(lasts[i]) == 0 {
			lasts[i] = u.Model
		}
	}
	next, avg := Aggregate(rule, lasts, weights, false), Aggregate(rule, models, weights, false)
	for i, v := range avg {
		c.outSum[i] += v
	}
	return next
}

// Final is the mean over rounds of the combined Alg 1 averages.
func (c *fedAvgCombiner) Final([]float64) []float64 {
	out := make([]float64, len(c.outSum))
	for i, v := range c.outSum {
		out[i] = v / float64(c.phases)
	}
	return out
}

func (c *fedAvgCombiner) State() []float64 { return slices.Clone(c.outSum) }
