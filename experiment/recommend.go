package experiment

import (
	"fmt"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"math"

	"github.com/pairfed/pairfed/pairwise"
)

// TrainRecords is the number of training records each run of spec sees on
// a file of n records (public shape only): --train-size when set, all n
// with a separate test file, n − ⌈n/k⌉ with k folds, else the training side
// of the stratified split (rounded as data.StratifiedSplit does, to within
// one record per class).
func TrainRecords(spec Spec, n int, hasTest bool) int {
	switch {
	case spec.TrainSize > 0:
		return spec.TrainSize
	case hasTest:
		return n
	case spec.Folds > 1:
		return n - (n+spec.Folds-1)/spec.Folds
	}
	tf := spec.TestFraction
	if tf == 0 {
		tf = 0.2
	}
	return n - int(math.Round(tf*float64(n)))
}

// Recommend applies dpalgo.RecommendPrivate to the job's public shape:
// the task, the training records per run (TrainRecords), d features, ε and
// δ (spec's, or the default 1/n_train). loss is the loss asked for ("" =
// let the rule pick).
func Recommend(spec Spec, n, d int, hasTest bool, loss string) (dpalgo.Recommendation, error) {
	if err := dp.CheckEpsilon("--epsilon", spec.Epsilon); err != nil {
		return dpalgo.Recommendation{}, fmt.Errorf("experiment: the default private algorithm: %w", err)
	}
	task := spec.Task
	if task == "" {
		task = pairwise.TaskAUC
	}
	nt := TrainRecords(spec, n, hasTest)
	delta := spec.Delta
	if !spec.DeltaSet {
		delta = dp.DefaultDelta(nt) // the δ the run will ask for
	} else if err := dp.CheckDeltaPositive("--delta", delta); err != nil {
		return dpalgo.Recommendation{}, fmt.Errorf("experiment: the default private algorithm: %w; for δ = 0 name an algorithm with a Laplace variant, e.g. --algo dpegd", err)
	}
	return dpalgo.RecommendPrivate(task, nt, d, spec.Epsilon, delta, loss)
}
