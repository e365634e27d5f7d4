package fedalgo

import (
	"context"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dpegd: [X21] Xue, Yang, Huai, Wang. Differentially Private
// Pairwise Learning Revisited. IJCAI 2021, Alg 3 (DPEGD, Thm 3), run per
// site.
//
// Every site splits its records into k = ⌊log₂ n_min⌋ disjoint subsets
// (dpalgo.DPEGDPartition: n_i = ⌊n/2^i⌋, the last one takes the rest).
// Phase i broadcasts a model; every site runs epoch i of Alg 3 on its
// i-th subset from it (n_i PGD steps of size η_i = 4^{−i}η) and releases
// the epoch average plus Gaussian noise σ_i = 4√(2 ln(1.25/δ))Gη_i/ε
// (Laplace for δ = 0; dpalgo.DPEGDEpoch). The coordinator combines the
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

func (fedDPEGD) Name() string { return FedDPEGD }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedDPEGD.
func (fedDPEGD) Doc() Doc {
	return Doc{
		Title:       "DPEGD per site: epochs on disjoint halving subsets, noisy epoch averages combined",
		Paper:       "[X21] Xue, Yang, Huai, Wang. Differentially Private Pairwise Learning Revisited. IJCAI 2021",
		Ref:         "Alg 3 (DPEGD, Thm 3) per site (fedalgo/dpegd.go)",
		Assumptions: "convex, G-Lipschitz, L-smooth loss over a bounded C; parallel composition over the disjoint subsets: per-site (ε, δ) once",
	}
}

func (fedDPEGD) Private() bool { return true }

// paperCalibration: [X21] Alg 3 prints σ_i (checked by every site for all its epochs before the first release).
func (fedDPEGD) paperCalibration(*Spec) error { return nil }

// dpegdPhases is the shape FedDPEGD shares with the other disjoint-phase
// algorithm (disjointphases.go), parameterised by [X21] Alg 3's functions.
var dpegdPhases = &disjointPhases{
	name:        FedDPEGD,
	fixedLength: "has k = ⌊log₂ n_min⌋ epochs of fixed length ([X21] Alg 3)",
	requireEta:  true,
	phases:      dpalgo.DPEGDPhases,
	partition:   dpalgo.DPEGDPartition,
	defaultEta:  dpalgo.DPEGDDefaultEta,
	planCheck:   dpalgo.DPEGDPlanCheck,
	// release runs epoch i of [X21] Alg 3 on the site's i-th disjoint
	// subset from the broadcast model; the site adds σ_i.
	release: func(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, i int, eta float64, priv *pairwise.Privacy, rng *rand.Rand) (*phaseRelease, error) {
		res, err := dpalgo.DPEGDEpoch(ctx, obj, start, idx, i, eta, priv)
		if err != nil {
			return nil, err
		}
		return &phaseRelease{W: res.W, Sigma: res.Sigma, CertifiedEpsilon: res.CertifiedEpsilon, CertifiedDelta: res.CertifiedDelta, Secure: res.Secure}, nil
	},
}

func (fedDPEGD) Configure(s *Spec) error { return dpegdPhases.configure(s) }

// Plan: k = ⌊log₂ n_min⌋ epochs fit every site; without a given η, the η
// of [X21] Thm 3 at the smallest site.
func (fedDPEGD) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	return dpegdPhases.plan(s, sites, params)
}

func (fedDPEGD) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	s, err := dpegdPhases.newSite(job, env)
	if err != nil {
		return nil, err
	}
	return &dpegdSite{*s}, nil
}

type dpegdSite struct{ phasedSite }

func (fedDPEGD) NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	return newDPEGDCombiner(job, state) // secure_phases.go
}

func (fedDPEGD) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: phase i releases site s's i-th disjoint subset, epoch i of [X21] Alg 3 from the broadcast model, with Gaussian noise σ_i = 4√(2 ln(1.25/δ))Gη_i/ε; the k releases of a site compose in parallel ([X21] Thm 3, C.5)"
}
