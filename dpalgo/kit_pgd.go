package dpalgo

import (
	"context"
	"fmt"
	"math"

	"github.com/pairfed/pairfed/pairwise"
)

// noisyPGD runs T steps of w ← Π_C(w − η(∇F_S(w) + ζ)) in place, where
// perturb (nil for none) adds ζ to the exact full gradient, and adds every
// new iterate w_1..w_T to sum (nil to skip). It returns the pair gradients
// of the T steps (noisyPGDSteps).
func noisyPGD(ctx context.Context, obj pairwise.Objective, w, g []float64, T int, eta float64, perturb func([]float64), sum []float64) (int64, error) {
	grads, _, _, err := noisyPGDSteps(ctx, obj, w, g, T, eta, perturb, sum)
	return grads, err
}

// noisyPGDSteps is noisyPGD, and reports the step from which the iterates
// repeat (0: none) and the period of the repetition.
//
// Without perturbation the step w ↦ Π_C(w − η∇F_S(w)) is a function of w
// alone (FullGradient overwrites g and its bits do not depend on the core
// count; the projections are deterministic), so once w_t equals w_{t−k}
// bit for bit, w_{s} = w_{s−k} for every later s: the iterates cycle
// through the last k values (k = 1: a fixed point). The remaining steps
// then only add those values to sum, one step at a time in the loop's
// order (the same bits), without a gradient. Strongly convex runs get
// there well before T (dpgdsc on a letter-shaped set: w_7019 = w_7018 of
// T = 36 153). The pair-gradient count is that of all T steps (a repeated
// step's gradient is the same). TestPGDFixedPointBitIdentical compares
// with the loop that never skips.
func noisyPGDSteps(ctx context.Context, obj pairwise.Objective, w, g []float64, T int, eta float64, perturb func([]float64), sum []float64) (grads int64, from, period int, err error) {
	n := int64(obj.Data().N)
	// Every gradient is taken at a point of C: the start too (a noisy
	// epoch average in dpegd, a site's model from the coordinator, an
	// initial point). The pair-gradient gap Γ and G that the sensitivities
	// use are proved over C (the AUC square loss's |h| ≤ 2RB, the metric
	// logistic loss's 0 ≤ h ≤ 4R²B on a PSD set); outside C they need not
	// hold. Π_C leaves a point of C unchanged (the ℓ2 ball bit for bit).
	obj.Project(w)
	var hist [][]float64 // at step t: hist[j] = w_{t−2−j}, newest first
	for t := 1; t <= T; t++ {
		if err := ctx.Err(); err != nil {
			return grads, 0, 0, err
		}
		if perturb == nil {
			for k := 1; k <= len(hist); k++ {
				if !sameFloatBits(w, hist[k-1]) { // w_{t−1} = w_{t−1−k}?
					continue
				}
				// The cycle w_{t−k}, …, w_{t−1}; w_s = cyc[(s − t + k) mod k].
				cyc := make([][]float64, k)
				for j := 0; j < k-1; j++ {
					cyc[j] = hist[k-2-j]
				}
				cyc[k-1] = append([]float64(nil), w...)
				if sum != nil {
					for s := t; s <= T; s++ {
						pairwise.Axpy(1, cyc[(s-t+k)%k], sum)
					}
				}
				copy(w, cyc[(T-t+k)%k])
				grads += int64(T-t+1) * n * (n - 1)
				return grads, t - 1, k, nil
			}
			var buf []float64
			if len(hist) == pgdMaxPeriod {
				buf = hist[len(hist)-1]
				copy(hist[1:], hist[:len(hist)-1])
			} else {
				buf = make([]float64, len(w))
				hist = append(hist, nil)
				copy(hist[1:], hist[:len(hist)-1])
			}
			copy(buf, w)
			hist[0] = buf
		}
		pairwise.FullGradient(obj, w, g)
		grads += n * (n - 1)
		if perturb != nil {
			perturb(g)
		}
		pairwise.Axpy(-eta, g, w)
		obj.Project(w)
		if sum != nil {
			pairwise.Axpy(1, w, sum)
		}
	}
	return grads, 0, 0, nil
}

// sameFloatBits reports whether a and b hold the same float64 bit patterns.
func sameFloatBits(a, b []float64) bool {
	for k, v := range a {
		if math.Float64bits(v) != math.Float64bits(b[k]) {
			return false
		}
	}
	return true
}

// addOutputNoise adds the output noise to w: N(0, b²) per coordinate for δ > 0,
// Lap(b) per coordinate for δ = 0.
func addOutputNoise(priv *pairwise.Privacy, w []float64, b float64) {
	if priv.Delta > 0 {
		priv.Noise.AddGaussian(w, b)
	} else {
		priv.Noise.AddLaplace(w, b)
	}
}

// finishMetricOutput projects a metric-learning output onto C (post-processing, so
// that W is a metric) and says so; AUC outputs stay as printed.
func finishMetricOutput(obj pairwise.Objective, w []float64, rep *pairwise.PrivacyReport) {
	if obj.Task() == pairwise.TaskMetric {
		obj.Project(w)
		rep.Notes = append(rep.Notes, fmt.Sprintf("the noisy W is projected onto C = %s so that it is a metric (post-processing, no privacy cost)", obj.Constraint().Name()))
	}
}

// objectiveOver returns obj's objective (task, loss, constraint) over data with
// regularization λ.
func objectiveOver(obj pairwise.Objective, data *pairwise.Dataset, lambda float64) (pairwise.Objective, error) {
	c := obj.Constraint()
	return pairwise.NewObjective(data, pairwise.ObjectiveConfig{Task: obj.Task(), Loss: obj.Loss(), Lambda: lambda, Constraint: c.Name(), Radius: c.Radius()})
}

// pgdMaxPeriod is the longest cycle of iterates noisyPGDSteps looks for.
const pgdMaxPeriod = 4
