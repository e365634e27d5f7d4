package dpalgo_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Utility check (not a privacy test): the private mechanisms learn on the
// bundled diabetes file at ε = 1.
//
// Setup: one stratified 80/20 split (seed 1); features min-max scaled with
// the training split's ranges — fitted on the records, so this measures
// the mechanisms, not an end-to-end private pipeline — and clipped to
// R = 1; δ = 1/n; noise from seeded sources (the same samplers and σ as
// the secure source). Each mechanism is run with 8 noise seeds, and the
// mean test AUC must clear a bound:
//
//   - chance: a model independent of the labels has test AUC with mean 0.5
//     and sd √((n₊+n₋+1)/(12n₊n₋)) ≈ 0.049 on the 154 test records (54/100);
//     the 8-run mean of such models has sd ≈ 0.017, and every bound below
//     is ≥ 0.5 + 8 of those, so a mechanism that learned nothing passes
//     with probability < 1e-10;
//   - false failures: over 100 runs of `pairfed train --scale minmax
//     --runs 100` (secure noise, a new split each run, so the sd also
//     carries the split's variance) the per-run AUC had mean ± sd dp-ssp
//     0.798 ± 0.039, dp-ssp-mean 0.794 ± 0.040, dp-gd (hinge) 0.785 ± 0.047,
//     dp-pair-sgd (logistic) 0.776 ± 0.048. The bounds (0.72, 0.72, 0.72,
//     0.65) sit ≥ 3.9 standard errors of an 8-run mean below those means: a
//     false-failure rate < 1e-4 per mechanism for a change of seeds (the
//     seeds are fixed, so the test itself is deterministic).
func TestPrivateMechanismsLearnDiabetes(t *testing.T) {
	tab, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 0))
	trI, teI, err := data.StratifiedSplit(tab.Y, 0.2, rng)
	if err != nil {
		t.Fatal(err)
	}
	train, test := tab.Subset(trI), tab.Subset(teI)
	sc, err := data.FitScaler("minmax", train)
	if err != nil {
		t.Fatal(err)
	}
	train, _, _ = data.Clip(sc.Apply(train), 1)
	test, _, _ = data.Clip(sc.Apply(test), 1)
	for _, c := range []struct {
		algo, loss string
		bound      float64
	}{{"dp-ssp", "square", 0.72}, {"dp-ssp-mean", "square", 0.72}, {"dp-gd", "hinge", 0.72}, {"dp-pair-sgd", "logistic", 0.65}} {
		a, err := pairwise.Lookup(c.algo)
		if err != nil {
			t.Fatal(err)
		}
		loss, _ := pairwise.LossByName(pairwise.TaskAUC, c.loss)
		delta := 1 / float64(train.N)
		B := 1.0
		if a.ParamRadius != nil {
			B = a.ParamRadius(train.N, train.D, 1, delta, 1, pairwise.TaskAUC, loss)
		}
		obj, err := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: loss, Radius: B})
		if err != nil {
			t.Fatal(err)
		}
		const runs = 8
		var sum float64
		for s := uint64(0); s < runs; s++ {
			cfg := pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: delta, FeatureRadius: 1, Noise: dp.NewSeededNoise(100 + s)}}
			res, err := a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(s, 7)))
			if err != nil {
				t.Fatal(err)
			}
			sum += pairwise.LinearAUC(res.W, test)
		}
		if mean := sum / runs; mean < c.bound {
			t.Errorf("%s (%s loss): mean test AUC %.4f over %d runs at ε = 1, want ≥ %.2f", c.algo, c.loss, mean, runs, c.bound)
		} else {
			t.Logf("%s (%s loss): mean test AUC %.4f over %d runs at ε = 1", c.algo, c.loss, mean, runs)
		}
	}
}
