package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
)

// Single-phase entry points of [Y21a] Alg 3 for the federated
// fed-dp-local-sgd (package worker): a site runs ONE phase per coordinator
// round, on its own k-th disjoint subset, from the model the coordinator
// broadcast, and releases its noisy phase output. The phase itself is
// exactly the body of runDPLocalSGD's loop (private_y21.go): ⌈n_k·log(4/δ)⌉
// steps of [Y21a] Alg 1 restricted to the subset with constant
// η_k = 4^{−k}·η and Alg 1's weighted-average output, then
// w_k = Π_W(w̄_k + N(0, σ_k² I)), σ_k calibrated by calibrateLocalSGDPhases (exact
// by default; LocalSGDPaperSigma under --calibration paper).

// LocalSGDPhases returns K = ⌈log₂ n⌉, the number of phases of [Y21a] Alg 3 on
// n ≥ 2 records (0 for n < 2).
func LocalSGDPhases(n int) int {
	if n < 2 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// LocalSGDPartition splits the records 0..n−1 into K disjoint subsets drawn
// uniformly at random with rng (independent of the data, so parallel
// composition applies): |S_k| = max(⌊n/2^k⌋, 1), the sizes of [Y21a] Alg 3
// line 2 (see runDPLocalSGD). K may be smaller than ⌈log₂ n⌉ — a site of a
// federation runs the K phases the coordinator fixed from the smallest
// site — but not larger.
func LocalSGDPartition(n, K int, rng *rand.Rand) ([][]int, error) {
	if K < 1 {
		return nil, fmt.Errorf("dpalgo: [Y21a] Alg 3 needs K ≥ 1 phases, got %d", K)
	}
	if K > LocalSGDPhases(n) {
		return nil, fmt.Errorf("dpalgo: %d records cannot hold K = %d halving subsets: K ≤ ⌈log₂ n⌉ = %d", n, K, LocalSGDPhases(n))
	}
	// K ≤ ⌈log₂ n⌉ keeps Σ_k max(⌊n/2^k⌋, 1) ≤ n − 1 (as halvingPhaseSizes).
	sizes := make([]int, K)
	for k := 1; k <= K; k++ {
		sizes[k-1] = max(n>>k, 1)
	}
	perm := rng.Perm(n)
	out := make([][]int, K)
	off := 0
	for k, nk := range sizes {
		out[k] = perm[off : off+nk : off+nk]
		off += nk
	}
	return out, nil
}

// PhaseResult is the released output of one phase of [Y21a] Alg 3.
type PhaseResult struct {
	// W is the released model Π_W(w̄_k + u_k), a fresh slice.
	W []float64
	// EtaK is η_k = 4^{−k}·η; Sigma is σ_k (calibrated, calibrateLocalSGDPhases);
	// Sensitivity is the proven Δ_k it is calibrated to.
	EtaK, Sigma, Sensitivity float64
	// PaperSigma is [Y21a]'s printed σ_k, for comparison; FailureDelta is
	// the part of δ spent on the sampling event behind Sensitivity;
	// CertifiedEpsilon/Delta are what the exact accountant certifies for
	// this release (phases on disjoint subsets compose in parallel).
	PaperSigma, FailureDelta, CertifiedEpsilon, CertifiedDelta float64
	// Steps is T_k = ⌈n_k·log(4/δ)⌉.
	Steps int
	// Secure copies priv.Noise.Secure(): only then is the release private.
	Secure bool
}

// LocalSGDPhase runs phase k (1-based) of [Y21a] Alg 3 on the subset idx of
// obj's records, from start (projected onto W; start is not modified), with
// base step size eta, and releases the phase output with Gaussian noise
// σ_k from priv.Noise (Alg 3 line 6; σ_k by calibrateLocalSGDPhases).
// rng draws the sampled indices: it must be secret for the guarantee to
// hold (see secretSamplingNote).
//
// The checks of runDPLocalSGD are repeated here: ε, δ > 0, R, ‖x_i‖ ≤ R
// for every record, the loss assumptions of Thm 10 (convex, G-Lipschitz,
// L-smooth, bounded W) and η ≤ 2/L. The release is (ε, δ)-DP with respect to
// the records in idx; disjoint subsets compose in parallel, so a site that
// runs its K phases on the K subsets of LocalSGDPartition is (ε, δ)-DP with
// respect to its own records, whatever the start models (they are
// post-processing of earlier releases, and the partition is data-independent).
func LocalSGDPhase(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, k int, eta float64, priv *pairwise.Privacy, rng *rand.Rand) (*PhaseResult, error) {
	cfg := pairwise.RunConfig{Privacy: priv}
	props, rep, err := pairwise.PrivateSetup(localSGDAlg, obj, &cfg)
	if err != nil {
		return nil, err
	}
	if err := localSGDPhaseCheck(obj, props, start, idx, k, eta); err != nil {
		return nil, err
	}
	G := props.Lipschitz
	// σ_k, fixed before any data-dependent computation: the same
	// calibration as runDPLocalSGD's phase k (calibrateLocalSGDPhases), for
	// n_k = len(idx).
	sig, err := calibrateLocalSGDPhases(obj, priv, rep, G, eta, []int{k}, []int{len(idx)})
	if err != nil {
		return nil, err
	}
	sigma := sig[0]
	out, etaK, Tk, err := localSGDPhaseSteps(ctx, obj, start, idx, k, eta, priv.Delta, rng)
	if err != nil {
		return nil, err
	}
	priv.Noise.AddGaussian(out, sigma) // w_k = w̄_k + u_k (Alg 3 line 6)
	postProcessReleased(obj, out)      // Π_W: post-processing
	return &PhaseResult{W: out, EtaK: etaK, Sigma: sigma, Sensitivity: rep.Sensitivity[0], Steps: Tk, Secure: priv.Noise.Secure(),
		PaperSigma: rep.PaperSigmas[0], FailureDelta: rep.FailureDelta, CertifiedEpsilon: rep.CertifiedEpsilon, CertifiedDelta: rep.CertifiedDelta}, nil
}

// localSGDPhaseCheck checks the arguments of phase k of [Y21a] Alg 3 (the
// shared checks of LocalSGDPhase and LocalSGDPhaseAverage).
func localSGDPhaseCheck(obj pairwise.Objective, props pairwise.Props, start []float64, idx []int, k int, eta float64) error {
	p := obj.NumParams()
	switch {
	case len(start) != p:
		return fmt.Errorf("dpalgo: phase %d: start has %d parameters, want %d", k, len(start), p)
	case k < 1:
		return fmt.Errorf("dpalgo: phase k = %d must be ≥ 1", k)
	case len(idx) == 0:
		return fmt.Errorf("dpalgo: phase %d has an empty subset", k)
	case !(eta > 0) || math.IsInf(eta, 0):
		return fmt.Errorf("dpalgo: step size η = %v is not finite and > 0", eta)
	case eta > 2/props.Smooth:
		return fmt.Errorf("%s needs η ≤ 2/L ([Y21a] Thm 10), but η = %g > 2/L = %g", localSGDAlg.Name, eta, 2/props.Smooth)
	}
	for _, i := range idx {
		if i < 0 || i >= obj.Data().N {
			return fmt.Errorf("dpalgo: phase %d: index %d outside [0, %d)", k, i, obj.Data().N)
		}
	}
	return nil
}

// localSGDPhaseSteps runs the T_k = ⌈n_k·log(4/δ)⌉ steps of phase k from
// start (projected; start is not modified) on the subset idx and returns
// the phase average w̄_k (a fresh slice, before noise), η_k and T_k — the
// steps LocalSGDPhase adds noise to and LocalSGDPhaseAverage hands to the
// secure sum, one code for both.
func localSGDPhaseSteps(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, k int, eta, delta float64, rng *rand.Rand) ([]float64, float64, int, error) {
	w := append([]float64(nil), start...)
	obj.Project(w) // Alg 1: w_0 ∈ W
	etaK := math.Ldexp(eta, -2*k)
	Tk := int(math.Ceil(float64(len(idx)) * math.Log(4/delta)))
	phase := pairwise.RunConfig{Eta: etaK, Schedule: pairwise.Constant, Averaging: pairwise.AvgPaper, Init: w}
	res, err := pairwise.RunPairSGD(ctx, obj, phase, rng, &subsetPrevSampler{Idx: idx}, Tk, pairwise.Constant)
	if err != nil {
		return nil, 0, 0, err
	}
	return res.W, etaK, Tk, nil
}

// LocalSGDPlanCheck certifies, before any release, the noise of every
// phase of a site's [Y21a] Alg 3 run on disjoint subsets of the given
// sizes (its partition, phase k on sizes[k−1]) at base step size eta under
// priv's calibration — the calibration LocalSGDPhase makes phase by phase
// (calibrateLocalSGDPhases; its failure probability is chosen from n alone), all at
// once, without reading a record. An error (e.g. --calibration paper
// refused for one phase, naming the certified ε) means no phase may run.
// It returns the run's certificate (parallel composition over the
// disjoint phases: the worst phase's).
func LocalSGDPlanCheck(obj pairwise.Objective, eta float64, sizes []int, priv *pairwise.Privacy) (eps, delta float64, err error) {
	cfg := pairwise.RunConfig{Privacy: priv}
	props, rep, err := pairwise.PrivateSetup(localSGDAlg, obj, &cfg)
	if err != nil {
		return 0, 0, err
	}
	ks := make([]int, len(sizes))
	for k, n := range sizes {
		if n < 1 {
			return 0, 0, fmt.Errorf("dpalgo: phase %d has an empty subset", k+1)
		}
		ks[k] = k + 1
	}
	if _, err = calibrateLocalSGDPhases(obj, priv, rep, props.Lipschitz, eta, ks, sizes); err != nil {
		return 0, 0, err
	}
	return rep.CertifiedEpsilon, rep.CertifiedDelta, nil
}

// LocalSGDDefaultEta is the base η of [Y21a] Thm 10 (LocalSGDBaseEta) for a linear or
// metric model with p parameters over an ℓ2 (or Frobenius) ball of radius
// B, records of norm ≤ R and the given loss, on n records: D = 2B, G from
// the loss's Props. Federated runs pass the smallest site's n.
func LocalSGDDefaultEta(loss pairwise.Loss, n, p int, R, B, eps, delta float64) float64 {
	G := loss.Props(R, B).Lipschitz
	return LocalSGDBaseEta(n, p, 2*B, G, eps, delta)
}
