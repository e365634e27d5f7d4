package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/pairwise"
)

// Quadratic-cost algorithms and the unit their pair-gradient count is
// given in. The rule (from each algorithm's update):
//   - "all previous" algorithms pair draw t with every earlier draw:
//     Σ t ≈ n²/2 pair gradients per pass;
//   - full-batch algorithms evaluate the exact pairwise gradient each step:
//     the n₊·n₋ positive–negative pairs (the linear objective skips
//     same-label pairs, whose AUC-loss gradient is 0) — except dp-gd with
//     the hinge or square loss, whose O(n·d + n log n) form needs no pairs.
//
// The other algorithms draw O(1) pairs per step: linear in n.
var (
	allPreviousAlgos = []string{"sgd-all-prev", "giga", "off-pair-c", "off-pair-strc", "on-pair-c", "on-pair-strc", "dp-sgd-output"}
	fullBatchAlgos   = []string{"pgd", "dp-gd", "dp-gd-grad", "dpgdc", "dpgdc2", "dpgdsc", "dpegd"}
)

// pairGradsPerSecond is the order of magnitude of pair gradients a core
// evaluates per second at d ≈ 10–100 (BenchmarkAlgorithms' range); the
// estimate is an order, not a promise.
const pairGradsPerSecond = 1e8

// costWarnAbove is the estimated pair-gradient count above which train
// warns before it starts (≈ 10 s at pairGradsPerSecond).
const costWarnAbove = 1e9

// costEstimate returns the warning `train` prints before a run whose cost
// is quadratic in n and large, or "" when it is not. n is the number of
// training records (npos of them positive), d the dimension; unit steps
// are --steps (0: the count is per step or pass); selecting reports that
// η/B are chosen on the training split (spec.Grid² cells × folds fits on
// (k−1)/k of it).
func costEstimate(algo, loss string, n, npos, d, steps int, passes float64, selecting bool) string {
	var per float64
	var unit string
	switch {
	case slices.Contains(allPreviousAlgos, algo):
		per, unit = float64(n)*float64(n)/2, "pass"
		if passes > 0 {
			per, unit = per*passes, fmt.Sprintf("%g passes", passes)
		}
	case slices.Contains(fullBatchAlgos, algo) && !(algo == "dp-gd" && (loss == "hinge" || loss == "square")):
		per, unit = float64(npos)*float64(n-npos), "step"
		if steps > 0 {
			per, unit = per*float64(steps), fmt.Sprintf("%d steps", steps)
		}
	default:
		return ""
	}
	total := per
	sel := ""
	if selecting {
		cells, k := len(experiment.DefaultGrid)*len(experiment.DefaultGrid), 3.0
		f := float64(cells) * k * ((k - 1) / k) * ((k - 1) / k)
		total *= 1 + f
		sel = fmt.Sprintf(", and ~%.0f× that for the η/B selection (fix --eta and --param-radius to skip it)", f)
	}
	if total < costWarnAbove {
		return ""
	}
	when := timeOrder(total / pairGradsPerSecond)
	if unit == "step" || unit == "pass" {
		when += " per " + unit
	}
	return fmt.Sprintf("%s costs O(n²): ~%.2g pair gradients per %s on n = %d training records (d = %d)%s; expected time of the order of %s (at ~10⁸ pair gradients/s) — use --train-size or a linear-cost algorithm (e.g. sgd-prev) to go faster",
		algo, per, unit, n, d, sel, when)
}

// timeOrder names the order of magnitude of secs.
func timeOrder(secs float64) string {
	switch {
	case secs < 60:
		return fmt.Sprintf("%.0f seconds", math.Max(secs, 1))
	case secs < 3600:
		return fmt.Sprintf("%.0f minute(s)", secs/60)
	case secs < 86400:
		return fmt.Sprintf("%.1f hours", secs/3600)
	}
	return fmt.Sprintf("%.1f days", secs/86400)
}

// trainCostWarning is costEstimate for a validated train spec on its data:
// the training split's expected size and positives.
func trainCostWarning(spec experiment.Spec, private bool, train, test *data.Table) string {
	frac := 1.0
	switch {
	case test != nil:
	case spec.Folds > 1:
		frac = float64(spec.Folds-1) / float64(spec.Folds)
	default:
		frac = 1 - spec.TestFraction
	}
	npos := 0
	for _, y := range train.Y {
		if y > 0 {
			npos++
		}
	}
	n, pos := int(frac*float64(train.N)), int(frac*float64(npos))
	if spec.TrainSize > 0 && spec.TrainSize < n {
		pos = int(float64(pos) * float64(spec.TrainSize) / float64(n))
		n = spec.TrainSize
	}
	if spec.Task == pairwise.TaskMetric { // every ordered pair has a gradient
		pos = n / 2
	}
	selecting := !private && (spec.Eta == 0 || spec.ParamRadius == 0)
	return costEstimate(spec.Algo, spec.Loss, n, pos, train.D, spec.Steps, spec.Passes, selecting)
}
