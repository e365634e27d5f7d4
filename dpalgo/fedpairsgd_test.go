package dpalgo

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The federated entry points are single-site dp-pair-sgd cut at round
// boundaries: its calibration for (q, T) is the single-site run's σ and Δ',
// and T local steps from the same start with the same sources give the
// single-site run's average of iterates, bit for bit.
func TestPairSGDLocalIsSingleSiteDPPairSGD(t *testing.T) {
	ds := toyAUC(400, 4, 2, 5)
	obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 2})
	if err != nil {
		t.Fatal(err)
	}
	const eps, delta, eta = 1.0, 1e-3, 0.3
	a, _ := pairwise.Lookup("dp-pair-sgd")
	single, err := a.Run(context.Background(), obj, pairwise.RunConfig{Eta: eta, Privacy: &pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: 1, Noise: dp.NewSeededNoise(8)}}, rand.New(rand.NewPCG(2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	q, T, C := PairSGDDefaults(ds.N, pairwise.TaskAUC, 1)
	cal, err := PairSGDCalibrate(pairwise.TaskAUC, obj.NumParams(), q, T, C, eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	rep := single.Privacy
	if cal.Sigma != rep.Sigmas[0] || cal.Sensitivity != rep.Sensitivity[0] || cal.Steps != single.Steps || !(cal.Epsilon <= eps) {
		t.Fatalf("calibration %+v, single-site report σ %v Δ' %v T %d", cal, rep.Sigmas, rep.Sensitivity, single.Steps)
	}
	avg, last, pairs, err := PairSGDLocal(context.Background(), obj, make([]float64, obj.NumParams()), T, eta, cal, dp.NewSeededNoise(8), rand.New(rand.NewPCG(2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(avg, single.W) || pairs != single.PairGrads || len(last) != len(avg) {
		t.Errorf("local steps %v (%d pairs), single-site %v (%d pairs)", avg, pairs, single.W, single.PairGrads)
	}
	// Bad calls are refused with an error, not a panic.
	for _, c := range []struct {
		w     []float64
		steps int
		eta   float64
	}{{make([]float64, 3), T, eta}, {make([]float64, 4), 0, eta}, {make([]float64, 4), T, 0}} {
		if _, _, _, err := PairSGDLocal(context.Background(), obj, c.w, c.steps, c.eta, cal, dp.NewSeededNoise(1), rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("accepted %d parameters, %d steps, η = %v", len(c.w), c.steps, c.eta)
		}
	}
	if _, err := PairSGDCalibrate(pairwise.TaskAUC, 4, 0, 10, 1, 1, 1e-3); err == nil {
		t.Error("q = 0 calibrated")
	}
}

// The subsampled calibration leaves room for the secure sampler's
// discrete-noise δ term over all steps·p coordinates: its multiplier is
// above the continuous accountant's for the same request, and its
// certified ε (term included) is above the continuous ε of the same
// multiplier yet within the request.
func TestPairSGDCalibrateDiscreteTerm(t *testing.T) {
	const q, steps, C, delta = 0.1, 300, 1.0, 1e-6
	for _, eps := range []float64{0.5, 8} {
		cal, err := PairSGDCalibrate(pairwise.TaskAUC, 1000, q, steps, C, eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		zc, err := dp.SubsampledGaussianMultiplier(q, steps, eps, delta, dp.ReplaceOne)
		if err != nil {
			t.Fatal(err)
		}
		cont, _, _ := dp.SubsampledGaussianEpsilon(q, cal.Multiplier, steps, delta, dp.ReplaceOne)
		if !(cal.Multiplier > zc) || !(cal.Epsilon > cont) || !(cal.Epsilon <= eps) {
			t.Fatalf("ε = %g: multiplier %v (continuous %v), certified ε %v (continuous %v)", eps, cal.Multiplier, zc, cal.Epsilon, cont)
		}
	}
}
