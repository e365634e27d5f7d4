package fedalgo

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-local-sgd: [Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic
// and Online Gradient Descent Algorithms for Pairwise Learning. NeurIPS
// 2021, Alg 3 (Thm 10), run per site.
//
// Every site splits its records into K = ⌈log₂ n_min⌉ disjoint halving
// subsets (pairwise.Y21aPartition: independent of the data). Phase k
// broadcasts a model; every site runs phase k of Alg 3 on its k-th subset
// from it (T_k = ⌈n_k log(4/δ)⌉ sgd-prev steps of size η_k = 4^{−k}η) and
// releases the phase average plus Gaussian noise
// σ_k = 12Gη_k log(4/δ)√(2 log(2.5/δ))/ε (Alg 3 line 6,
// pairwise.LocalSGDPhase). The coordinator combines the releases weighted
// by subset size; that is the next phase's start and, after phase K, the
// output.
//
// Privacy: each release is (ε, δ)-DP with respect to its subset whatever
// the start model (post-processing of earlier releases of other subsets),
// and the K subsets are disjoint: parallel composition makes the job
// (ε, δ)-DP with respect to each site's records. Every site is charged
// (ε, δ) once.

// FedDPLocalSGD is the name of fed-dp-local-sgd.
const FedDPLocalSGD = "fed-dp-local-sgd"

func init() { Register(fedDPLocalSGD{}) }

type fedDPLocalSGD struct{}

func (fedDPLocalSGD) Name() string  { return FedDPLocalSGD }
func (fedDPLocalSGD) Private() bool { return true }

// paperCalibration: [Y21a] Alg 3 prints σ_k (checked by every site for all its phases before the first release).
func (fedDPLocalSGD) paperCalibration(*Spec) error { return nil }

func (fedDPLocalSGD) Configure(s *Spec) error {
	configurePrivate(s)
	if s.Rounds != 0 || s.LocalPasses != 0 {
		return fmt.Errorf("%s has K = ⌈log₂ n_min⌉ phases of fixed length ([Y21a] Alg 3): rounds and local passes do not apply", FedDPLocalSGD)
	}
	return checkPrivacy(FedDPLocalSGD, s)
}

// Plan: K = ⌈log₂ n_min⌉ phases fit every site; without a given η, the η
// of [Y21a] Thm 10 at the smallest site.
func (fedDPLocalSGD) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	p := &Plan{Phases: pairwise.Y21aPhases(nMin), Eta: s.Eta}
	if p.Phases < 1 {
		return nil, fmt.Errorf("%s needs at least 2 records at every site (smallest: %d)", FedDPLocalSGD, nMin)
	}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	if p.Eta == 0 {
		loss, err := pairwise.LossByName(pairwise.Task(s.Task), s.Loss)
		if err != nil {
			return nil, err
		}
		p.Eta = pairwise.Y21aDefaultEta(loss, nMin, params, s.FeatureRadius, s.ParamRadius, p.Epsilon, p.Delta)
	}
	// Every site's phases certified (under --calibration paper: or refused) before the job
	// is announced (the partition's sizes depend on n alone).
	err := planCertify(s, sites, params, p, func(obj pairwise.Objective, n int, priv *pairwise.Privacy) (float64, float64, error) {
		part, err := pairwise.Y21aPartition(n, p.Phases, rand.New(rand.NewPCG(0, 0)))
		if err != nil {
			return 0, 0, err
		}
		return pairwise.LocalSGDPlanCheck(obj, p.Eta, partSizes(part), priv)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (fedDPLocalSGD) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(FedDPLocalSGD, env); err != nil {
		return nil, err
	}
	part, err := pairwise.Y21aPartition(env.Data.N, job.Phases, env.Rand)
	if err != nil {
		return nil, err
	}
	// Every phase's noise certified before the first release (e.g.
	// --calibration paper refused for a later phase).
	if _, _, err := pairwise.LocalSGDPlanCheck(env.Obj, job.Eta, partSizes(part), privacyOf(job, env)); err != nil {
		return nil, err
	}
	return &dpLocalSGDSite{partitioned{part}, job, env}, nil
}

type dpLocalSGDSite struct {
	partitioned
	job *protocol.JobAnnounce
	env SiteEnv
}

// Step runs phase k of [Y21a] Alg 3 on the site's k-th subset and releases
// it with the site's σ_k.
func (s *dpLocalSGDSite) Step(ctx context.Context, k int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	j := s.job
	idx := s.part[k-1]
	res, err := pairwise.LocalSGDPhase(ctx, s.env.Obj, model, idx, k, j.Eta, privacyOf(j, s.env), s.env.Rand)
	if err != nil {
		return nil, nil, err
	}
	// Charged: this phase's certificate (disjoint subsets compose in
	// parallel, so the ledger's maximum over phases is the job's).
	eps, delta, err := certifiedCharge(j, res.CertifiedEpsilon, res.CertifiedDelta)
	if err != nil {
		return nil, nil, err
	}
	u := &protocol.SiteUpdate{Model: res.W, Weight: float64(len(idx)), Sigma: res.Sigma, Epsilon: eps, Delta: delta, Secure: res.Secure}
	rel := &Release{Records: len(idx), Mechanism: "gaussian", Sigma: res.Sigma, Epsilon: eps, Delta: delta, Secure: res.Secure}
	return u, rel, nil
}

func (fedDPLocalSGD) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	return newLocalSGDCombiner(job, state) // secure_phases.go
}

func (fedDPLocalSGD) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: phase k releases site s's k-th disjoint partition with Gaussian noise σ_k ([Y21a] Alg 3 line 6); the K releases of a site compose in parallel"
}
