package fedalgo

import (
	"context"
	"fmt"
	"slices"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-oneshot: one-shot parameter averaging of a single-site private
// algorithm (Spec.LocalAlgo: any registered private pairwise algorithm
// that supports the task and loss, e.g. dpegd [X21] Alg 3, dpgdsc [X21]
// Alg 1, dp-gd-grad [K22] Alg 1, dp-local-sgd [Y21a] Alg 3 — each cites its
// own paper in package pairwise).
//
// One phase: every site runs the local algorithm once on all its records
// from the broadcast (data-independent, zero) model with its own noise and
// releases its output; the coordinator combines the released models
// weighted by record count. Without a given η every site takes the local
// algorithm's default for its own n.
//
// Privacy: one release of the local algorithm per record set, so each
// site's guarantee is the local algorithm's (ε, δ), with every σ it added
// reported; the combination is post-processing. Charged once.

// FedOneShot is the name of fed-oneshot.
const FedOneShot = "fed-oneshot"

func init() { Register(fedOneShot{}) }

type fedOneShot struct{}

func (fedOneShot) Name() string { return FedOneShot }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedOneShot.
func (fedOneShot) Doc() Doc {
	return Doc{
		Title:       "one-shot averaging: every site runs a private single-site algorithm (--local-algo) once, the models are averaged",
		Paper:       "(local): the paper of the local algorithm, --local-algo (pairfed algos LOCAL)",
		Ref:         "fedalgo/oneshot.go",
		Assumptions: "the local algorithm's; one release per site: its (ε, δ)",
	}
}

func (fedOneShot) Private() bool { return true }

// paperCalibration: the local algorithm's printed σ, if it has one (its
// run refuses an uncertified one before drawing noise).
func (fedOneShot) paperCalibration(s *Spec) error {
	a, err := pairwise.Lookup(s.LocalAlgo)
	if err != nil {
		return err
	}
	if !a.PaperCalibration {
		return fmt.Errorf("%s: local algorithm %s is pairfed's own mechanism with no printed σ: --calibration paper does not apply (use exact)", FedOneShot, s.LocalAlgo)
	}
	return nil
}

// CheckLocalAlgo: fed-oneshot names its local algorithm.
func (fedOneShot) CheckLocalAlgo(local string) error {
	if local == "" {
		return fmt.Errorf("%s needs a local algorithm", FedOneShot)
	}
	return nil
}

// Configure: one phase of the local algorithm, which must be a registered
// private pairwise algorithm supporting the task with the loss (and, if
// it needs strong convexity, λ > 0).
func (fedOneShot) Configure(s *Spec) error {
	configurePrivate(s)
	if s.Rounds != 0 || s.LocalPasses != 0 {
		return fmt.Errorf("%s is one phase of the local algorithm: rounds and local passes do not apply", FedOneShot)
	}
	if err := checkPrivacy(FedOneShot, s); err != nil {
		return err
	}
	if s.LocalAlgo == "" {
		return fmt.Errorf("%s needs a local algorithm (a private single-site algorithm, e.g. dpegd)", FedOneShot)
	}
	a, err := pairwise.Lookup(s.LocalAlgo)
	if err != nil {
		return err
	}
	if !a.Private {
		return fmt.Errorf("%s: local algorithm %s is not private", FedOneShot, s.LocalAlgo)
	}
	if a.NeedsStrongConvexity && !(s.Lambda > 0) {
		return fmt.Errorf("%s: local algorithm %s needs a strongly convex objective: give λ > 0", FedOneShot, s.LocalAlgo)
	}
	return a.Supports(pairwise.Task(s.Task), s.Loss)
}

func (fedOneShot) Plan(s *Spec, sites []SiteInfo, _ int) (*Plan, error) {
	p := &Plan{Phases: 1, Eta: s.Eta}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	return p, nil
}

func (fedOneShot) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if err := needNoise(FedOneShot, env); err != nil {
		return nil, err
	}
	if job.Phases != 1 {
		return nil, fmt.Errorf("%s has one phase, the job has %d", FedOneShot, job.Phases)
	}
	a, err := pairwise.Lookup(job.LocalAlgo)
	if err != nil {
		return nil, err
	}
	if !a.Private {
		return nil, fmt.Errorf("%s: local algorithm %s is not private", FedOneShot, job.LocalAlgo)
	}
	if err := a.Supports(pairwise.Task(job.Task), job.Loss); err != nil {
		return nil, err
	}
	return &oneShotSite{job: job, env: env, algo: a}, nil
}

type oneShotSite struct {
	job  *protocol.JobAnnounce
	env  SiteEnv
	algo *pairwise.Algorithm
}

// Step runs the local private algorithm, once, on all this site's
// records, from the broadcast model with the site's own noise: one release
// of the algorithm's (ε, δ), which must be the job's.
func (s *oneShotSite) Step(ctx context.Context, _ int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	j := s.job
	res, err := s.algo.Run(ctx, s.env.Obj, pairwise.RunConfig{Privacy: privacyOf(j, s.env), Eta: j.Eta, Init: model}, s.env.Rand)
	if err != nil {
		return nil, nil, err
	}
	rep := res.Privacy
	switch {
	case rep != nil && (rep.Releases == 0 || !slices.ContainsFunc(rep.Sigmas, func(σ float64) bool { return σ > 0 })):
		// The local run's output does not depend on this site's records
		// (e.g. [H20]'s on/off-pair algorithms when T₁ ≥ n: the start
		// point): there is nothing private to release, and averaging
		// such outputs learns nothing.
		return nil, nil, fmt.Errorf("%s: local algorithm %s makes no noisy release on this site's records (%s): its output would not depend on them; give the sites more records or choose another local algorithm (pairfed algos)", j.Algo, j.LocalAlgo, rep.Accountant)
	case rep == nil || len(rep.Sigmas) == 0:
		return nil, nil, fmt.Errorf("%s: local algorithm %s returned no privacy report", j.Algo, j.LocalAlgo)
	case rep.Epsilon != j.Epsilon || rep.Delta != j.Delta:
		return nil, nil, fmt.Errorf("%s: local algorithm %s reports (ε, δ) = (%g, %g), the job asked (%g, %g)", j.Algo, j.LocalAlgo, rep.Epsilon, rep.Delta, j.Epsilon, j.Delta)
	case len(rep.Sigmas) > protocol.MaxSigmas:
		return nil, nil, fmt.Errorf("%s: local algorithm %s added %d noises, more than the %d an update can report", j.Algo, j.LocalAlgo, len(rep.Sigmas), protocol.MaxSigmas)
	}
	// Charged: the local run's certificate (its report; the run was
	// refused unless it lies within the request).
	eps, delta, err := certifiedCharge(j, rep.CertifiedEpsilon, rep.CertifiedDelta)
	if err != nil {
		return nil, nil, err
	}
	secure := rep.Private && s.env.Noise.Secure()
	sigmas := slices.Clone(rep.Sigmas)
	n := s.env.Data.N
	u := &protocol.SiteUpdate{Model: res.W, Weight: float64(n), Sigma: sigmas[0], Sigmas: sigmas, Epsilon: eps, Delta: delta, Secure: secure}
	rel := &Release{Records: n, Mechanism: rep.Mechanism, Sigma: sigmas[0], Sigmas: slices.Clone(sigmas), Epsilon: eps, Delta: delta, Secure: secure}
	return u, rel, nil
}

func (fedOneShot) NewCombiner(*protocol.JobAnnounce, []float64) (Combiner, error) {
	return meanCombiner{}, nil
}

func (fedOneShot) PrivacyNote(s *Spec) string {
	return fmt.Sprintf("per-site record-level (ε, δ)-DP: every site runs %s once on all its records with its own noise (the σ listed are that run's); one release per record set, the coordinator only averages (post-processing)", s.LocalAlgo)
}
