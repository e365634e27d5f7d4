package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
)

// Noise-free phase outputs of the federated multi-phase algorithms, for
// secure aggregation (package fedalgo, secure_phases.go): the site does not
// add its own Gaussian; the caller encodes the vector with its share of
// the distributed discrete Gaussian (dp.DDG) and masks it, so that only the
// sum of at least t sites' encodings is ever unmasked. Each function runs
// the same checks as its noisy counterpart before reading the data and
// returns exactly the value that counterpart adds noise to.

// DPGDGradSum returns n·∇L(θ; D) (+ n·λθ when λ > 0): the full pairwise
// gradient of DPGDGradRound at w, before noise, times this site's n. Its
// ℓ2 sensitivity under replace-one neighbours is 2Γ (n times
// DPGDGradRound's proven 2Γ/n; DPGDGradSiteSensitivity with n = 1), the same at
// every site, so that a sum over sites has one sensitivity.
func DPGDGradSum(ctx context.Context, obj pairwise.Objective, w []float64, T int, priv *pairwise.Privacy) ([]float64, error) {
	if _, _, err := dpgdGradCheck(ctx, obj, w, T, priv); err != nil {
		return nil, err
	}
	n, p := obj.Data().N, obj.NumParams()
	g := make([]float64, p)
	pairwise.FullGradient(obj, projected(obj, w), g)
	for i := range g {
		g[i] *= float64(n)
	}
	return g, nil
}

// LocalSGDPhaseSensitivity is Δ_k of phase k of [Y21a] Alg 3 at a site of n
// records (subset n_k = max(⌊n/2^k⌋, 1), T_k = ⌈n_k·log(4/δ)⌉ steps of
// η_k = 4^{−k}·η) for the loss at feature radius R over a parameter set of
// radius B: Δ_k = min{2B, 2c_k·η_k·Γ}, c_k the exact Binomial(T_k+1, 1/n_k)
// quantile at failure probability fail — calibrateLocalSGDPhases's bound (the
// stability of the phase average outside an event of probability fail,
// capped by the diameter 2B ≥ the set's diameter). Public numbers only:
// the coordinator computes every site's Δ_k from its record count.
func LocalSGDPhaseSensitivity(loss pairwise.Loss, R, B, eta, delta, fail float64, n, k int) (float64, error) {
	switch {
	case n < 2 || k < 1 || k > LocalSGDPhases(n):
		return 0, fmt.Errorf("dpalgo: phase %d of [Y21a] Alg 3 at a site of %d records does not exist", k, n)
	case !(eta > 0) || math.IsInf(eta, 0):
		return 0, fmt.Errorf("dpalgo: step size η = %v is not finite and > 0", eta)
	case !(delta > 0 && delta < 1) || !(fail > 0 && fail < delta):
		return 0, fmt.Errorf("dpalgo: [Y21a] phase sensitivity needs 0 < fail = %v < δ = %v < 1", fail, delta)
	case !(B > 0) || math.IsInf(B, 0):
		return 0, fmt.Errorf("dpalgo: [Y21a] phase sensitivity needs a finite parameter radius B > 0, got %v", B)
	}
	gamma, _ := lossPairGradGap(loss, R, B, false)
	nk := max(n>>k, 1)
	etaK := math.Ldexp(eta, -2*k)
	Tk := int(math.Ceil(float64(nk) * math.Log(4/delta)))
	c := binomialQuantile(Tk+1, 1/float64(nk), fail)
	return math.Min(2*B, 2*float64(c)*etaK*gamma*(1+1e-12)), nil
}

// LocalSGDPhaseAverage runs phase k of [Y21a] Alg 3 exactly as
// LocalSGDPhase (same checks, steps and sampling) and returns the phase
// average w̄_k before noise and projection: the value whose sensitivity
// LocalSGDPhaseSensitivity bounds. start is not modified.
func LocalSGDPhaseAverage(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, k int, eta float64, priv *pairwise.Privacy, rng *rand.Rand) ([]float64, error) {
	cfg := pairwise.RunConfig{Privacy: priv}
	props, _, err := pairwise.PrivateSetup(localSGDAlg, obj, &cfg)
	if err != nil {
		return nil, err
	}
	if !(priv.Delta > 0) {
		return nil, fmt.Errorf("%s needs δ > 0", localSGDAlg.Name)
	}
	if err := localSGDPhaseCheck(obj, props, start, idx, k, eta); err != nil {
		return nil, err
	}
	avg, _, _, err := localSGDPhaseSteps(ctx, obj, start, idx, k, eta, priv.Delta, rng)
	return avg, err
}

// LocalSGDPhaseMove bounds ‖w̄_k − w₀‖, how far phase k's average moves from
// its (projected) start: each of the T_k steps moves the iterate by at
// most η_k·G' (a projected step of a gradient of norm ≤ G', the
// objective's Lipschitz constant with (λ/2)‖w‖²; projection onto a convex
// set containing the iterate does not lengthen it), so every iterate and
// their average lie within T_k·η_k·G' of w₀, and within the diameter 2B.
// Public numbers only, as LocalSGDPhaseSensitivity.
func LocalSGDPhaseMove(loss pairwise.Loss, R, B, lambda, eta, delta float64, n, k int) float64 {
	G := pairwise.RegularizedProps(loss.Props(R, B), lambda, B).Lipschitz
	nk := max(n>>k, 1)
	Tk := math.Ceil(float64(nk) * math.Log(4/delta))
	return math.Min(2*B, Tk*math.Ldexp(eta, -2*k)*G)
}

// DPEGDSubsetSize is n_i, the size of the i-th of the k subsets
// DPEGDPartition draws for n records: ⌊n/2^i⌋ for i < k, the rest for
// i = k.
func DPEGDSubsetSize(n, k, i int) int {
	if i < k {
		return n >> i
	}
	off := 0
	for j := 1; j < k; j++ {
		off += n >> j
	}
	return n - off
}

// DPEGDEpochSensitivity is Δ_i of epoch i of [X21] Alg 3 on a subset of
// n_i records: min{η_i·Γ·(n_i+1)/n_i, 2B} (DPEGDEpoch's proven bound, with
// the diameter bounded by 2B ≥ the set's diameter), η_i = 4^{−i}η. It
// holds with probability 1. Public numbers only.
func DPEGDEpochSensitivity(loss pairwise.Loss, R, B, eta float64, ni, i int) float64 {
	gamma, _ := lossPairGradGap(loss, R, B, false)
	etaI := math.Ldexp(eta, -2*i)
	return math.Min(etaI*gamma*float64(ni+1)/float64(ni), 2*B)
}

// DPEGDEpochMove bounds ‖w̄_i − w₀‖ for epoch i: n_i projected gradient
// steps of length ≤ η_i·G' from w₀ ∈ W (G' the objective's Lipschitz
// constant with λ), within the diameter 2B.
func DPEGDEpochMove(loss pairwise.Loss, R, B, lambda, eta float64, ni, i int) float64 {
	G := pairwise.RegularizedProps(loss.Props(R, B), lambda, B).Lipschitz
	return math.Min(2*B, float64(ni)*math.Ldexp(eta, -2*i)*G)
}

// DPEGDEpochAverage runs epoch i of [X21] Alg 3 exactly as DPEGDEpoch
// (same checks, n_i projected gradient steps on the subset) and returns
// the epoch average w̄_i before noise: the value whose sensitivity
// DPEGDEpochSensitivity bounds. start is not modified.
func DPEGDEpochAverage(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, i int, eta float64, priv *pairwise.Privacy) ([]float64, error) {
	a, err := pairwise.Lookup("dpegd")
	if err != nil {
		return nil, err
	}
	cfg := pairwise.RunConfig{Privacy: priv}
	props, _, err := pairwise.PrivateSetup(a, obj, &cfg)
	if err != nil {
		return nil, err
	}
	if err := dpegdEpochCheck(obj, props, start, idx, i, eta); err != nil {
		return nil, err
	}
	avg, _, err := dpegdEpochSteps(ctx, obj, start, idx, i, eta)
	return avg, err
}
