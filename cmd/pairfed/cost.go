package main

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/pairwise"
)

// Quadratic-cost algorithms are those whose registry entry says so
// (pairwise.Algorithm.PairCost). The rule (from each algorithm's update):
//   - "all previous" algorithms pair draw t with every earlier draw:
//     Σ t ≈ n²/2 pair gradients per pass;
//   - full-batch algorithms evaluate the exact pairwise gradient each step:
//     for the AUC task with the hinge or square loss an O(n·d + n log n)
//     form from sorted scores needs no pairs (pairwise/fullgrad.go); with
//     the logistic loss the n₊·n₋ positive–negative pairs cost one
//     multiply-add-divide each (the product form, ≈ 0.4 ns per pair); in
//     metric learning every pair (n₊ = n/2 in the caller) costs O(d²).
//
// The other algorithms draw O(1) pairs per step: linear in n.

// pairGradsPerSecond is the order of magnitude of pair gradients a core
// evaluates per second at d ≈ 10–100 (BenchmarkAlgorithms' range), and
// logisticFullBatchPairsPerSecond that of the AUC logistic full gradient's
// pair terms (BenchmarkFullGradient: ≈ 1.1 ms for 350 × 8 050 pairs); the
// estimates are orders, not promises.
const (
	pairGradsPerSecond              = 1e8
	logisticFullBatchPairsPerSecond = 2e9
)

// costWarnSeconds is the estimated time above which train warns before it
// starts.
const costWarnSeconds = 10

// costEstimate returns the warning `train` prints before a run whose cost
// is quadratic in n and large, or "" when it is not. n is the number of
// training records (npos of them positive; n/2 for metric learning), d the
// dimension; unit steps are --steps (0: the count is per step or pass);
// selecting reports that η/B are chosen on the training split (spec.Grid²
// cells × folds fits on (k−1)/k of it).
func costEstimate(algo string, task pairwise.Task, loss string, n, npos, d, steps int, passes float64, selecting bool) string {
	var per float64
	var unit string
	rate := float64(pairGradsPerSecond)
	var cost pairwise.PairCost
	if a, err := pairwise.Lookup(algo); err == nil {
		cost = a.PairCost
	}
	switch cost {
	case pairwise.PairsAllPrevious:
		per, unit = float64(n)*float64(n)/2, "pass"
		if passes > 0 {
			per, unit = per*passes, fmt.Sprintf("%g passes", passes)
		}
	case pairwise.PairsFullBatch:
		if task != pairwise.TaskMetric {
			if loss == "hinge" || loss == "square" {
				return "" // sorted-score form: no pairs
			}
			rate = logisticFullBatchPairsPerSecond
		}
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
	if total/rate < costWarnSeconds {
		return ""
	}
	when := timeOrder(total / rate)
	if unit == "step" || unit == "pass" {
		when += " per " + unit
	}
	return fmt.Sprintf("%s costs O(n²): ~%.2g pair gradients per %s on n = %d training records (d = %d)%s; expected time of the order of %s (at ~%.0g pair gradients/s) — use --train-size or a linear-cost algorithm (e.g. sgd-prev) to go faster",
		algo, per, unit, n, d, sel, when, rate)
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
	return costEstimate(spec.Algo, spec.Task, spec.Loss, n, pos, train.D, spec.Steps, spec.Passes, selecting)
}
