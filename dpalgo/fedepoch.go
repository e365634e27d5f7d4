package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Single-epoch entry points of [X21] Alg 3 (DPEGD) for the federated
// fed-dpegd (package worker): a site runs ONE epoch per coordinator round,
// on its own i-th disjoint subset D_i, from the model the coordinator
// broadcast, and releases the epoch's noisy average. The epoch is exactly
// the body of runDPEGD's loop (private_x21.go): n_i = |D_i| PGD steps on
// L(·; D_i) with step η_i = 4^{−i}η, w̄_i their average, w_i = w̄_i + ζ_i with
// σ_i calibrated exactly for the sensitivity min{η_iΓ(n_i+1)/n_i, ‖C‖₂}
// (runDPEGD; the paper prints σ_i = 4√(2 ln(1.25/δ))·G·η_i/ε and
// Lap(4Gη_i√d/ε), used under --calibration paper). The sensitivity does not depend on
// the start model as long as the start does not depend on D_i: in a
// federation it is post-processing of earlier releases of other subsets.

// DPEGDPhases returns k = ⌊log₂ n⌋, the number of epochs of [X21] Alg 3 on
// n ≥ 2 records (0 for n < 2).
func DPEGDPhases(n int) int {
	if n < 2 {
		return 0
	}
	return bits.Len(uint(n)) - 1
}

// DPEGDPartition splits the records 0..n−1 into k disjoint subsets drawn
// uniformly at random with rng (independent of the data, so parallel
// composition applies), with the sizes of runDPEGD: n_i = ⌊n/2^i⌋ for
// i < k and D_k the remaining records. k may be smaller than ⌊log₂ n⌋ (a
// site of a federation runs the k epochs the coordinator fixed from the
// smallest site; D_k is then larger) but not larger.
func DPEGDPartition(n, k int, rng *rand.Rand) ([][]int, error) {
	if k < 1 {
		return nil, fmt.Errorf("dpalgo: [X21] Alg 3 needs k ≥ 1 epochs, got %d", k)
	}
	if k > DPEGDPhases(n) {
		return nil, fmt.Errorf("dpalgo: %d records cannot hold k = %d DPEGD epochs: k ≤ ⌊log₂ n⌋ = %d", n, k, DPEGDPhases(n))
	}
	perm := rng.Perm(n)
	out := make([][]int, k)
	off := 0
	for i := 1; i <= k; i++ {
		ni := n >> i
		if i == k {
			ni = n - off
		}
		out[i-1] = perm[off : off+ni : off+ni]
		off += ni
	}
	return out, nil
}

// DPEGDSigma returns σ_i of [X21] Alg 3 step 5 for epoch i (1-based) and
// base step η: 4√(2 ln(1.25/δ))·G·η_i/ε with η_i = 4^{−i}η.
func DPEGDSigma(G, eta float64, i int, eps, delta float64) float64 {
	return 4 * math.Sqrt(2*math.Log(1.25/delta)) * G * math.Ldexp(eta, -2*i) / eps
}

// DPEGDDefaultEta is the base η of [X21] Thm 3 for a linear model with p
// parameters over an ℓ2 ball of radius B (‖C‖₂ = 2B), records of norm ≤ R
// and the given loss, on n records: (‖C‖₂/G)·min{4/√n, ε/√(p log(1/δ))}
// (δ > 0; ε/p for δ = 0), lowered to 2/L if above it (as runDPEGD does).
// Federated runs pass the smallest site's n.
func DPEGDDefaultEta(loss pairwise.Loss, n, p int, R, B, eps, delta float64) float64 {
	props := loss.Props(R, B)
	G, L := props.Lipschitz, props.Smooth
	var eta float64
	if delta > 0 {
		eta = 2 * B / G * math.Min(4/math.Sqrt(float64(n)), eps/math.Sqrt(float64(p)*math.Log(1/delta)))
	} else {
		eta = 2 * B / G * math.Min(4/math.Sqrt(float64(n)), eps/float64(p))
	}
	if L > 0 && !math.IsInf(L, 1) {
		eta = math.Min(eta, 2/L)
	}
	return eta
}

// EpochResult is the released output of one epoch of [X21] Alg 3.
type EpochResult struct {
	// W is the released w_i = w̄_i + ζ_i, a fresh slice.
	W []float64
	// EtaI is η_i = 4^{−i}η; Sigma is σ_i (Laplace λ_i when δ = 0);
	// Sensitivity is the proven Δ₂ (ℓ1 for Laplace) the noise is
	// calibrated to.
	EtaI, Sigma, Sensitivity float64
	// Steps is T_i = n_i = len(idx).
	Steps int
	// PairGrads counts the pair gradients evaluated.
	PairGrads int64
	// Secure copies priv.Noise.Secure(): only then is the release private.
	Secure bool
	// Notes carries the calibration note (sensitivity argument and
	// certificate).
	Notes []string
	// PaperSigma is the paper's printed σ_i (or λ_i), for comparison;
	// CertifiedEpsilon/Delta are what the exact accountant certifies for
	// the noise added (this epoch's release; epochs on disjoint subsets
	// compose in parallel).
	PaperSigma, CertifiedEpsilon, CertifiedDelta float64
}

// dpegdEpochNoise is the noise of epoch i on n_i records, fixed before any
// data-dependent computation: the same calibration as runDPEGD's epoch i
// (private_x21.go, where the sensitivity min{η_iΓ(n_i+1)/n_i, ‖C‖₂} is
// proved). It returns the scale (σ_i, or b_i for δ = 0) and the
// sensitivity it is calibrated to, and fills rep's certificate.
func dpegdEpochNoise(a *pairwise.Algorithm, obj pairwise.Objective, priv *pairwise.Privacy, rep *pairwise.PrivacyReport, G, eta float64, i, n int) (ns, sens float64, err error) {
	p := obj.NumParams()
	etaI := math.Ldexp(eta, -2*i) // η_i = 4^{−i}η (step 3)
	ni := float64(n)
	gamma, gHow := pairGradGap(obj, priv.FeatureRadius)
	diam := paramDiameter(obj)
	sens = math.Min(etaI*gamma*(ni+1)/ni, diam)
	how := fmt.Sprintf("Δ₂ = min{η_iΓ(n_i+1)/n_i, ‖C‖₂ = %g} with %s, Γ = %g", diam, gHow, gamma)
	paperSens := 4 * G * etaI // C.5: 4Gη_iT_i/n_i with T_i = n_i
	if priv.Delta > 0 {
		sig, err := pairwise.CalibrateGaussian(a.Name, priv, rep, []float64{DPEGDSigma(G, eta, i, priv.Epsilon, priv.Delta)}, []float64{paperSens},
			pairwise.GaussOption{Plan: dp.GaussianPlan{Sensitivities: []float64{sens}}, How: how})
		if err != nil {
			return 0, 0, err
		}
		return sig[0], sens, nil
	}
	sp := math.Sqrt(float64(p))
	sig, err := pairwise.CalibrateLaplace(a.Name, priv, rep, []float64{4 * G * etaI * sp / priv.Epsilon}, []float64{sp * paperSens}, []float64{sp * sens}, false,
		fmt.Sprintf("√d·Δ₂ with d = %d, %s", p, how))
	if err != nil {
		return 0, 0, err
	}
	return sig[0], sens * sp, nil
}

// DPEGDPlanCheck certifies, before any release, the noise of every epoch
// of a site's [X21] Alg 3 run on disjoint subsets of the given sizes (its
// partition, epoch i on sizes[i−1]) at base step size eta under priv's
// calibration — the calibration DPEGDEpoch makes epoch by epoch, all at
// once, without reading a record. An error (e.g. --calibration paper
// refused for one epoch, naming the certified ε) means no epoch may run:
// otherwise a later epoch could be refused after earlier releases. It
// returns the run's certificate: the largest of the epochs' (disjoint
// subsets compose in parallel).
func DPEGDPlanCheck(obj pairwise.Objective, eta float64, sizes []int, priv *pairwise.Privacy) (eps, delta float64, err error) {
	a, err := pairwise.Lookup("dpegd")
	if err != nil {
		return 0, 0, err
	}
	for i, n := range sizes {
		cfg := pairwise.RunConfig{Privacy: priv}
		props, rep, err := pairwise.PrivateSetup(a, obj, &cfg)
		if err != nil {
			return 0, 0, err
		}
		if n < 1 {
			return 0, 0, fmt.Errorf("dpalgo: epoch %d has an empty subset", i+1)
		}
		if _, _, err := dpegdEpochNoise(a, obj, priv, rep, props.Lipschitz, eta, i+1, n); err != nil {
			return 0, 0, fmt.Errorf("epoch %d of %d: %w", i+1, len(sizes), err)
		}
		eps, delta = max(eps, rep.CertifiedEpsilon), max(delta, rep.CertifiedDelta)
	}
	return eps, delta, nil
}

// DPEGDEpoch runs epoch i (1-based) of [X21] Alg 3 on the subset idx of
// obj's records from start (not modified; PGD projects it onto C first, as
// every iterate, noisyPGDSteps), with base step size eta, and
// releases the epoch average with noise from priv.Noise. It repeats
// runDPEGD's checks (PrivateSetup: ε, δ, R, ‖x‖ ≤ R, the loss assumptions;
// η ≤ 2/L, Lemma 7) and its calibration (CalibrateGaussian) before
// any data-dependent computation. The release is (ε, δ)-DP with respect
// to the records in idx; epochs on disjoint subsets compose in parallel.
func DPEGDEpoch(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, i int, eta float64, priv *pairwise.Privacy) (*EpochResult, error) {
	a, err := pairwise.Lookup("dpegd")
	if err != nil {
		return nil, err
	}
	cfg := pairwise.RunConfig{Privacy: priv}
	props, rep, err := pairwise.PrivateSetup(a, obj, &cfg)
	if err != nil {
		return nil, err
	}
	if err := dpegdEpochCheck(obj, props, start, idx, i, eta); err != nil {
		return nil, err
	}
	// The release's noise, fixed before any data-dependent computation.
	etaI := math.Ldexp(eta, -2*i) // η_i = 4^{−i}η (step 3)
	ns, sens, err := dpegdEpochNoise(a, obj, priv, rep, props.Lipschitz, eta, i, len(idx))
	if err != nil {
		return nil, err
	}
	avg, grads, err := dpegdEpochSteps(ctx, obj, start, idx, i, eta)
	if err != nil {
		return nil, err
	}
	addOutputNoise(priv, avg, ns) // w_i = w̄_i + ζ_i (steps 5–6)
	finishMetricOutput(obj, avg, rep)
	return &EpochResult{W: avg, EtaI: etaI, Sigma: ns, Sensitivity: sens, Steps: len(idx), PairGrads: grads,
		Secure: priv.Noise.Secure(), Notes: rep.Notes, PaperSigma: rep.PaperSigmas[0],
		CertifiedEpsilon: rep.CertifiedEpsilon, CertifiedDelta: rep.CertifiedDelta}, nil
}

// dpegdEpochCheck checks the arguments of epoch i of [X21] Alg 3 (the
// shared checks of DPEGDEpoch and DPEGDEpochAverage).
func dpegdEpochCheck(obj pairwise.Objective, props pairwise.Props, start []float64, idx []int, i int, eta float64) error {
	p, n := obj.NumParams(), obj.Data().N
	switch {
	case len(start) != p:
		return fmt.Errorf("dpalgo: epoch %d: start has %d parameters, want %d", i, len(start), p)
	case i < 1:
		return fmt.Errorf("dpalgo: epoch i = %d must be ≥ 1", i)
	case len(idx) == 0:
		return fmt.Errorf("dpalgo: epoch %d has an empty subset", i)
	case !(eta > 0) || math.IsInf(eta, 0):
		return fmt.Errorf("dpalgo: step size η = %v is not finite and > 0", eta)
	case eta > 2/props.Smooth:
		return fmt.Errorf("dpegd needs η ≤ 2/L ([X21] Lemma 7), but η = %g > 2/L = %g", eta, 2/props.Smooth)
	}
	for _, j := range idx {
		if j < 0 || j >= n {
			return fmt.Errorf("dpalgo: epoch %d: index %d outside [0, %d)", i, j, n)
		}
	}
	return nil
}

// dpegdEpochSteps runs the n_i = len(idx) projected gradient steps of
// epoch i from start (not modified) on the subset and returns their
// average w̄_i before noise and the pair gradients computed — the steps
// DPEGDEpoch adds noise to and DPEGDEpochAverage hands to the secure sum.
func dpegdEpochSteps(ctx context.Context, obj pairwise.Objective, start []float64, idx []int, i int, eta float64) ([]float64, int64, error) {
	sub, err := objectiveOver(obj, obj.Data().Subset(idx), obj.Lambda())
	if err != nil {
		return nil, 0, err
	}
	p := obj.NumParams()
	w := append([]float64(nil), start...)
	g := make([]float64, p)
	avg := make([]float64, p)
	grads, err := noisyPGD(ctx, sub, w, g, len(idx), math.Ldexp(eta, -2*i), nil, avg) // T_i = n_i (step 4)
	if err != nil {
		return nil, 0, err
	}
	pairwise.Scale(1/float64(len(idx)), avg) // w̄_i
	return avg, grads, nil
}
