package fedalgo

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dpegd: [X21] Xue, Yang, Huai, Wang. Differentially Private
// Pairwise Learning Revisited. IJCAI 2021, Alg 3 (DPEGD, Thm 3), run per
// site.
//
// Every site splits its records into k = ⌊log₂ n_min⌋ disjoint subsets
// (pairwise.DPEGDPartition: n_i = ⌊n/2^i⌋, the last one takes the rest).
// Phase i broadcasts a model; every site runs epoch i of Alg 3 on its
// i-th subset from it (n_i PGD steps of size η_i = 4^{−i}η) and releases
// the epoch average plus Gaussian noise σ_i = 4√(2 ln(1.25/δ))Gη_i/ε
// (Laplace for δ = 0; pairwise.DPEGDEpoch). The coordinator combines the
// releases weighted by subset size: the next phase's start and, after
// phase k, the output.
//
// Privacy: each release is (ε, δ)-DP with respect to its subset (the
// sensitivity 4Gη_i does not depend on the start model as long as the
// start does not depend on that subset), and epochs on disjoint subsets
// compose in parallel ([X21] Thm 3, C.5): per-site (ε, δ), charged once.

// FedDPEGD is the name of fed-dpegd.
const FedDPEGD = "fed-dpegd"

func init() { Register(fedDPEGD{}) }

type fedDPEGD struct{}

func (fedDPEGD) Name() string  { return FedDPEGD }
func (fedDPEGD) Private() bool { return true }

// paperCalibration: [X21] Alg 3 prints σ_i (checked by every site for all its epochs before the first release).
func (fedDPEGD) paperCalibration(*Spec) error { return nil }

func (fedDPEGD) Configure(s *Spec) error {
	configurePrivate(s)
	if s.Rounds != 0 || s.LocalPasses != 0 {
		return fmt.Errorf("%s has k = ⌊log₂ n_min⌋ epochs of fixed length ([X21] Alg 3): rounds and local passes do not apply", FedDPEGD)
	}
	return checkPrivacy(FedDPEGD, s)
}

// Plan: k = ⌊log₂ n_min⌋ epochs fit every site; without a given η, the η
// of [X21] Thm 3 at the smallest site.
func (fedDPEGD) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	p := &Plan{Phases: pairwise.DPEGDPhases(nMin), Eta: s.Eta}
	if p.Phases < 1 {
		return nil, fmt.Errorf("%s needs at least 2 records at every site (smallest: %d)", FedDPEGD, nMin)
	}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	if p.Eta == 0 {
		loss, err := pairwise.LossByName(pairwise.Task(s.Task), s.Loss)
		if err != nil {
			return nil, err
		}
		p.Eta = pairwise.DPEGDDefaultEta(loss, nMin, params, s.FeatureRadius, s.ParamRadius, p.Epsilon, p.Delta)
	}
	// Every site's epochs certified (under --calibration paper: or refused) before the job
	// is announced (the partition's sizes depend on n alone).
	err := planCertify(s, sites, params, p, func(obj pairwise.Objective, n int, priv *pairwise.Privacy) (float64, float64, error) {
		part, err := pairwise.DPEGDPartition(n, p.Phases, rand.New(rand.NewPCG(0, 0)))
		if err != nil {
			return 0, 0, err
		}
		return pairwise.DPEGDPlanCheck(obj, p.Eta, partSizes(part), priv)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (fedDPEGD) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(FedDPEGD, env); err != nil {
		return nil, err
	}
	if !(job.Eta > 0) {
		return nil, fmt.Errorf("%s needs η > 0", FedDPEGD)
	}
	part, err := pairwise.DPEGDPartition(env.Data.N, job.Phases, env.Rand)
	if err != nil {
		return nil, err
	}
	// Every epoch's noise certified before the first release (e.g.
	// --calibration paper refused for a later epoch).
	if _, _, err := pairwise.DPEGDPlanCheck(env.Obj, job.Eta, partSizes(part), privacyOf(job, env)); err != nil {
		return nil, err
	}
	return &dpegdSite{partitioned{part}, job, env}, nil
}

type dpegdSite struct {
	partitioned
	job *protocol.JobAnnounce
	env SiteEnv
}

// Step runs epoch i of [X21] Alg 3 on the site's i-th disjoint subset from
// the broadcast model; the site adds σ_i.
func (s *dpegdSite) Step(ctx context.Context, i int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	j := s.job
	idx := s.part[i-1]
	res, err := pairwise.DPEGDEpoch(ctx, s.env.Obj, model, idx, i, j.Eta, privacyOf(j, s.env))
	if err != nil {
		return nil, nil, err
	}
	// Charged: this epoch's certificate (disjoint subsets compose in
	// parallel, so the ledger's maximum over phases is the job's).
	eps, delta, err := certifiedCharge(j, res.CertifiedEpsilon, res.CertifiedDelta)
	if err != nil {
		return nil, nil, err
	}
	u := &protocol.SiteUpdate{Model: res.W, Weight: float64(len(idx)), Sigma: res.Sigma, Epsilon: eps, Delta: delta, Secure: res.Secure}
	rel := &Release{Records: len(idx), Mechanism: "gaussian", Sigma: res.Sigma, Epsilon: eps, Delta: delta, Secure: res.Secure}
	return u, rel, nil
}

func (fedDPEGD) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	return newDPEGDCombiner(job, state) // secure_phases.go
}

func (fedDPEGD) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: phase i releases site s's i-th disjoint subset, epoch i of [X21] Alg 3 from the broadcast model, with Gaussian noise σ_i = 4√(2 ln(1.25/δ))Gη_i/ε; the k releases of a site compose in parallel ([X21] Thm 3, C.5)"
}
