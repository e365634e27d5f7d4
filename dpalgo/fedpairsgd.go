package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Per-round entry points of dp-pair-sgd (private_pairsgd.go) for the
// federated fed-dp-pair-sgd: the mission's own mechanism — noise added at
// the site to previous-instance pairwise SGD over its local records — in
// the variant that learns (noisy steps with subsampling amplification).
//
// Round r of an R-round job: the coordinator broadcasts w; every site runs
// T_loc steps of dp-pair-sgd on its own records from w (PairSGDLocal: the
// step of runPairSGDPrivate — Poisson(q) batch, previous-instance pairs
// inside the batch, pair gradients clipped to C, N(0, σ²I) on their sum,
// a projected step) and releases its iterates' average and last iterate.
//
// Privacy of one site (PairSGDCalibrate). Every step is the subsampled
// Gaussian mechanism on the site's records with add/remove sensitivity
// Δ = 2C (AUC) or 3C (metric) — the argument of private_pairsgd.go, which
// does not depend on where the step starts. The start of every round is
// post-processing of earlier releases (this site's own and the other
// sites', which do not read this site's records), so the site's R·T_loc
// steps are one adaptive sequence of subsampled Gaussian steps on the
// same records: their RDP adds (Mironov 2017 Prop 1), and
// dp.SubsampledGaussianEpsilon certifies replace-one (ε, δ) for the whole
// job. The multiplier z is the smallest for which the total is (ε, δ)-DP,
// fixed from public numbers (n_s, q, the total number of steps) before
// the first step.

// PairSGDCalibration fixes the noise of a site's whole sequence of
// dp-pair-sgd steps.
type PairSGDCalibration struct {
	// Q is the Poisson sampling rate, Steps the total number of noisy
	// steps the records take part in (all rounds), Clip the clip norm C.
	Q     float64
	Steps int
	Clip  float64
	// Sensitivity is Δ' = Δ + g√p (the add/remove Δ of one step plus the
	// secure mechanism's rounding allowance), Multiplier z and Sigma = zΔ'.
	Sensitivity, Multiplier, Sigma float64
	// Epsilon is what the accountant certifies at Delta for the Steps
	// steps (≤ the requested ε), at RDP order Order, the secure sampler's
	// discrete-noise δ term over Steps·p coordinates included
	// (dp.SecureSubsampledGaussianEpsilon).
	Epsilon, Delta float64
	Order          int
}

// PairSGDCalibrate returns the calibration that makes steps dp-pair-sgd
// steps at sampling rate q with clip C on p parameters (ε, δ)-DP under
// replace-one neighbours, and the ε the accountant certifies for it.
func PairSGDCalibrate(task pairwise.Task, p int, q float64, steps int, C, eps, delta float64) (PairSGDCalibration, error) {
	switch {
	case !(q > 0 && q <= 1):
		return PairSGDCalibration{}, fmt.Errorf("dp-pair-sgd sampling rate q = %v must be in (0, 1]", q)
	case steps < 1:
		return PairSGDCalibration{}, fmt.Errorf("dp-pair-sgd needs at least one step, got %d", steps)
	case !(C > 0) || math.IsInf(C, 0):
		return PairSGDCalibration{}, fmt.Errorf("dp-pair-sgd clip norm C = %v must be finite and > 0", C)
	case p < 1:
		return PairSGDCalibration{}, fmt.Errorf("dp-pair-sgd needs at least one parameter, got %d", p)
	}
	const rel = dp.ReplaceOne
	coords := int64(steps) * int64(p) // secure noise coordinates of all the steps
	z, err := pairSGDMultiplier(q, steps, eps, delta, rel, coords)
	if err != nil {
		return PairSGDCalibration{}, fmt.Errorf("dp-pair-sgd: %w", err)
	}
	sens := 2 * C // AUC: ≤ 2 active pairs change (private_pairsgd.go)
	if task == pairwise.TaskMetric {
		sens = 3 * C
	}
	if z*sens > dp.MaxScale/4 {
		return PairSGDCalibration{}, fmt.Errorf("dp-pair-sgd: noise multiplier %g is too large for the mechanism", z)
	}
	snap := dp.SnappedL2Sensitivity(sens, dp.GaussianGranularity(2*z*sens), p)
	got, order, err := dp.SecureSubsampledGaussianEpsilon(q, z, steps, delta, rel, coords)
	if err != nil {
		return PairSGDCalibration{}, fmt.Errorf("dp-pair-sgd: %w", err)
	}
	return PairSGDCalibration{Q: q, Steps: steps, Clip: C, Sensitivity: snap, Multiplier: z, Sigma: z * snap,
		Epsilon: got, Delta: delta, Order: order}, nil
}

// PairSGDMeanPairs is m̄ = max(1, qn − 1), the expected number of pairs of
// a Poisson(q) batch of n records (public): the divisor of a step's sum.
func PairSGDMeanPairs(q float64, n int) float64 { return math.Max(1, q*float64(n)-1) }

// PairSGDLocal runs steps noisy dp-pair-sgd steps (the step of
// runPairSGDPrivate, private_pairsgd.go) on all of obj's records from w
// (not modified) with step size eta and the calibration cal, drawing the
// batches from rng and the noise from noise. It returns the average of
// the projected iterates and the last iterate (fresh slices, post-
// processed as the single-site output) and the pairs visited. The caller
// must have charged the steps.
func PairSGDLocal(ctx context.Context, obj pairwise.Objective, w []float64, steps int, eta float64, cal PairSGDCalibration, noise pairwise.Noise, rng *rand.Rand) (avg, last []float64, pairs int64, err error) {
	n, p := obj.Data().N, obj.NumParams()
	switch {
	case len(w) != p:
		return nil, nil, 0, fmt.Errorf("dp-pair-sgd: start model has %d parameters, want %d", len(w), p)
	case n < 2:
		return nil, nil, 0, fmt.Errorf("dp-pair-sgd needs at least 2 records, got %d", n)
	case steps < 1 || !(eta > 0) || math.IsInf(eta, 0):
		return nil, nil, 0, fmt.Errorf("dp-pair-sgd: %d steps of size η = %v (want ≥ 1 and finite η > 0)", steps, eta)
	case noise == nil || rng == nil:
		return nil, nil, 0, fmt.Errorf("dp-pair-sgd needs a noise source and a random source")
	}
	mbar := PairSGDMeanPairs(cal.Q, n)
	cur := append([]float64(nil), w...)
	obj.Project(cur)
	avg = make([]float64, p)
	g, tmp := make([]float64, p), make([]float64, p)
	var batch []int
	for t := 1; t <= steps; t++ {
		if t%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, 0, err
			}
		}
		batch = poissonSample(batch[:0], n, cal.Q, rng)
		rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		pairs += int64(pairSGDBatchSum(obj, cur, g, tmp, batch, cal.Clip))
		noise.AddGaussian(g, cal.Sigma) // the release of this step
		pairwise.Scale(1/mbar, g)
		if l := obj.Lambda(); l != 0 {
			pairwise.Axpy(l, cur, g)
		}
		pairwise.Axpy(-eta, g, cur)
		obj.Project(cur)
		pairwise.Axpy(1, cur, avg)
	}
	pairwise.Scale(1/float64(steps), avg)
	postProcessReleased(obj, avg)
	postProcessReleased(obj, cur)
	return avg, cur, pairs, nil
}
