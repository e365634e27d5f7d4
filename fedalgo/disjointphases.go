package fedalgo

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// disjointPhases is the shared shape of the federated algorithms that run
// a single-site private algorithm phase by phase on disjoint subsets of
// every site's records (fed-dpegd, fed-dp-local-sgd): each site splits its
// records into a data-independent partition of Phases subsets; phase i
// broadcasts a model, every site runs phase i on its i-th subset from it
// and releases the result with its noise, and the coordinator combines the
// releases weighted by subset size. The releases of a site read disjoint
// subsets, so they compose in parallel: every site is charged once (the
// ledger's maximum over phases). The algorithms differ only in the
// functions below, each documented (with its paper) in its own file.
type disjointPhases struct {
	name string
	// fixedLength is Configure's refusal of rounds and local passes (the
	// phase lengths are fixed by the paper's privacy proof).
	fixedLength string
	// requireEta makes a site refuse an announced η ≤ 0 before it
	// partitions its records.
	requireEta bool
	// phases is the number of phases that fit a site of nMin records.
	phases func(nMin int) int
	// partition splits n records into k disjoint subsets (independent of
	// the data).
	partition func(n, k int, rng *rand.Rand) ([][]int, error)
	// defaultEta is η when none is given, at the smallest site.
	defaultEta func(loss pairwise.Loss, n, p int, R, B, eps, delta float64) float64
	// planCheck certifies the noise of every phase for subsets of the
	// given sizes (under --calibration paper: or refuses).
	planCheck func(obj pairwise.Objective, eta float64, sizes []int, priv *pairwise.Privacy) (eps, delta float64, err error)
	// release runs phase i on the subset idx from start and returns the
	// noisy release.
	release func(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, i int, eta float64, priv *pairwise.Privacy, rng *rand.Rand) (*phaseRelease, error)
}

// phaseRelease is what a site releases for one phase.
type phaseRelease struct {
	W                                []float64
	Sigma                            float64
	CertifiedEpsilon, CertifiedDelta float64
	Secure                           bool
}

func (d *disjointPhases) configure(s *Spec) error {
	configurePrivate(s)
	if s.Rounds != 0 || s.LocalPasses != 0 {
		return fmt.Errorf("%s %s: rounds and local passes do not apply", d.name, d.fixedLength)
	}
	return checkPrivacy(d.name, s)
}

// plan: the phases that fit every site; without a given η, the default η
// at the smallest site.
func (d *disjointPhases) plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	p := &Plan{Phases: d.phases(nMin), Eta: s.Eta}
	if p.Phases < 1 {
		return nil, fmt.Errorf("%s needs at least 2 records at every site (smallest: %d)", d.name, nMin)
	}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	if p.Eta == 0 {
		loss, err := pairwise.LossByName(pairwise.Task(s.Task), s.Loss)
		if err != nil {
			return nil, err
		}
		p.Eta = d.defaultEta(loss, nMin, params, s.FeatureRadius, s.ParamRadius, p.Epsilon, p.Delta)
	}
	// Every site's phases certified (under --calibration paper: or refused) before the job
	// is announced (the partition's sizes depend on n alone).
	err := planCertify(s, sites, params, p, func(obj pairwise.Objective, n int, priv *pairwise.Privacy) (float64, float64, error) {
		part, err := d.partition(n, p.Phases, rand.New(rand.NewPCG(0, 0)))
		if err != nil {
			return 0, 0, err
		}
		return d.planCheck(obj, p.Eta, partSizes(part), priv)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// newSite partitions the site's records and certifies every phase's noise
// before the first release (e.g. --calibration paper refused for a later
// phase).
func (d *disjointPhases) newSite(job *protocol.JobAnnounce, env SiteEnv) (*phasedSite, error) {
	if err := needNoise(d.name, env); err != nil {
		return nil, err
	}
	if d.requireEta && !(job.Eta > 0) {
		return nil, fmt.Errorf("%s needs η > 0", d.name)
	}
	part, err := d.partition(env.Data.N, job.Phases, env.Rand)
	if err != nil {
		return nil, err
	}
	if _, _, err := d.planCheck(env.Obj, job.Eta, partSizes(part), privacyOf(job, env)); err != nil {
		return nil, err
	}
	return &phasedSite{partitioned{part}, job, env, d}, nil
}

// phasedSite is a site of a disjointPhases algorithm.
type phasedSite struct {
	partitioned
	job *protocol.JobAnnounce
	env SiteEnv
	alg *disjointPhases
}

// Step runs phase i on the site's i-th subset from the broadcast model
// and releases it with the site's noise.
func (s *phasedSite) Step(ctx context.Context, i int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	j := s.job
	idx := s.part[i-1]
	res, err := s.alg.release(ctx, s.env.Obj, model, idx, i, j.Eta, privacyOf(j, s.env), s.env.Rand)
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
