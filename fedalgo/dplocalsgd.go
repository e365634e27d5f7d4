package fedalgo

import (
	"context"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-local-sgd: [Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic
// and Online Gradient Descent Algorithms for Pairwise Learning. NeurIPS
// 2021, Alg 3 (Thm 10), run per site.
//
// Every site splits its records into K = ⌈log₂ n_min⌉ disjoint halving
// subsets (dpalgo.LocalSGDPartition: independent of the data). Phase k
// broadcasts a model; every site runs phase k of Alg 3 on its k-th subset
// from it (T_k = ⌈n_k log(4/δ)⌉ sgd-prev steps of size η_k = 4^{−k}η) and
// releases the phase average plus Gaussian noise
// σ_k = 12Gη_k log(4/δ)√(2 log(2.5/δ))/ε (Alg 3 line 6,
// dpalgo.LocalSGDPhase). The coordinator combines the releases weighted
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

func (fedDPLocalSGD) Name() string { return FedDPLocalSGD }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedDPLocalSGD.
func (fedDPLocalSGD) Doc() Doc {
	return Doc{
		Title:       "differentially private localized SGD per site: phases on disjoint halving subsets, noisy phase averages combined",
		Paper:       "[Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic and Online Gradient Descent Algorithms for Pairwise Learning. NeurIPS 2021",
		Ref:         "Alg 3, Thm 10, per site (fedalgo/dplocalsgd.go)",
		Assumptions: "(A1) G-Lipschitz, (A2) L-smooth, convex loss; bounded W; parallel composition over the disjoint subsets: per-site (ε, δ) once",
	}
}

func (fedDPLocalSGD) Private() bool { return true }

// paperCalibration: [Y21a] Alg 3 prints σ_k (checked by every site for all its phases before the first release).
func (fedDPLocalSGD) paperCalibration(*Spec) error { return nil }

// localSGDPhases is the shape FedDPLocalSGD shares with the other disjoint-phase
// algorithm (disjointphases.go), parameterised by [Y21a] Alg 3's functions.
var localSGDPhases = &disjointPhases{
	name:        FedDPLocalSGD,
	fixedLength: "has K = ⌈log₂ n_min⌉ phases of fixed length ([Y21a] Alg 3)",
	requireEta:  false,
	phases:      dpalgo.LocalSGDPhases,
	partition:   dpalgo.LocalSGDPartition,
	defaultEta:  dpalgo.LocalSGDDefaultEta,
	planCheck:   dpalgo.LocalSGDPlanCheck,
	// release runs phase k of [Y21a] Alg 3 on the site's k-th subset and
	// releases it with the site's σ_k.
	release: func(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, i int, eta float64, priv *pairwise.Privacy, rng *rand.Rand) (*phaseRelease, error) {
		res, err := dpalgo.LocalSGDPhase(ctx, obj, start, idx, i, eta, priv, rng)
		if err != nil {
			return nil, err
		}
		return &phaseRelease{W: res.W, Sigma: res.Sigma, CertifiedEpsilon: res.CertifiedEpsilon, CertifiedDelta: res.CertifiedDelta, Secure: res.Secure}, nil
	},
}

func (fedDPLocalSGD) Configure(s *Spec) error { return localSGDPhases.configure(s) }

// Plan: K = ⌈log₂ n_min⌉ phases fit every site; without a given η, the η
// of [Y21a] Thm 10 at the smallest site.
func (fedDPLocalSGD) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	return localSGDPhases.plan(s, sites, params)
}

func (fedDPLocalSGD) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	s, err := localSGDPhases.newSite(job, env)
	if err != nil {
		return nil, err
	}
	return &dpLocalSGDSite{*s}, nil
}

type dpLocalSGDSite struct{ phasedSite }

func (fedDPLocalSGD) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	return newLocalSGDCombiner(job, state) // secure_phases.go
}

func (fedDPLocalSGD) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: phase k releases site s's k-th disjoint partition with Gaussian noise σ_k ([Y21a] Alg 3 line 6); the K releases of a site compose in parallel"
}
