package dpalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// pairwise.PairLoopGradient is the O(n²·p) reference; all
// objectives here have λ = 0.

// The O(n·d + n log n) gradients of the square and hinge AUC losses equal
// the pair loop, on dense and sparse data, at random w of several scales.
func TestAUCFastGradientMatchesPairLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, loss := range []pairwise.Loss{pairwise.AUCSquare{}, pairwise.AUCHinge{}} {
		for trial := 0; trial < 10; trial++ {
			ds := toyAUC(20+rng.IntN(40), 1+rng.IntN(6), 1, rng.Uint64())
			if trial%2 == 1 {
				ds = toSparse(ds)
			}
			obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: loss, Constraint: "none"})
			if err != nil {
				t.Fatal(err)
			}
			w := randOnSphere(rng, ds.D, 5*rng.Float64())
			g := make([]float64, ds.D)
			if !pairwise.AUCFastGradient(obj, w, g) {
				t.Fatalf("%s: fast path not taken", loss.Name())
			}
			ref := pairwise.PairLoopGradient(obj, w)
			for k := range g {
				if math.Abs(g[k]-ref[k]) > 1e-12*(1+math.Abs(ref[k])) {
					t.Fatalf("%s trial %d: coordinate %d: fast %v, pair loop %v", loss.Name(), trial, k, g[k], ref[k])
				}
			}
		}
	}
	obj, _ := pairwise.NewObjective(toyAUC(10, 2, 1, 1), pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Constraint: "none"})
	if pairwise.AUCFastGradient(obj, []float64{0, 0}, make([]float64, 2)) {
		t.Error("fast path claimed the logistic loss")
	}
}

// For every loss and task, replacing one record (random, on the sphere,
// antipodal, label flipped) at random w in the parameter ball changes the
// full pairwise loss gradient by at most GDSensitivity; and for the hinge
// loss the bound is approached (≥ 0.9Δ) by a worst case built from the
// proof: all other records of one class at a point v, the replaced record
// moved from v' to the antipode.
func TestGDSensitivityBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type cse struct {
		task pairwise.Task
		loss pairwise.Loss
		B    float64
	}
	cases := []cse{{pairwise.TaskAUC, pairwise.AUCHinge{}, 1}, {pairwise.TaskAUC, pairwise.AUCLogistic{}, 3}, {pairwise.TaskAUC, pairwise.AUCSquare{}, 0.3}, {pairwise.TaskAUC, pairwise.AUCSquare{}, 2},
		{pairwise.TaskMetric, pairwise.MetricHinge{}, 1}, {pairwise.TaskMetric, pairwise.MetricLogistic{}, 2}}
	R := 1.0
	for _, c := range cases {
		var worst float64
		for trial := 0; trial < 30; trial++ {
			d := 1 + rng.IntN(3)
			ds := toyAUC(5+rng.IntN(4), d, 2, rng.Uint64())
			for i := 0; i < ds.N; i++ {
				pairwise.Scale(R*math.Sqrt(rng.Float64())/math.Max(pairwise.Norm2(ds.Row(i)), 1e-12), ds.Row(i))
			}
			obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: c.task, Loss: c.loss, Radius: c.B})
			if err != nil {
				t.Fatal(err)
			}
			sens, _, err := GDSensitivity(obj, R)
			if err != nil {
				t.Fatal(err)
			}
			p := obj.NumParams()
			for wt := 0; wt < 5; wt++ {
				w := randOnSphere(rng, p, c.B*math.Sqrt(rng.Float64()))
				if wt == 0 {
					w = randOnSphere(rng, p, c.B)
				}
				obj.Project(w)
				g0 := pairwise.PairLoopGradient(obj, w)
				for _, x := range sspNeighbours(rng, ds, R, 3) {
					for _, y := range []float64{1, -1} {
						nb := &pairwise.Dataset{N: ds.N, D: d, Y: append([]float64(nil), ds.Y...), X: append([]float64(nil), ds.X...)}
						copy(nb.Row(0), x)
						nb.Y[0] = y
						ob2, _ := pairwise.NewObjective(nb, pairwise.ObjectiveConfig{Task: c.task, Loss: c.loss, Radius: c.B})
						g1 := pairwise.PairLoopGradient(ob2, w)
						pairwise.Axpy(-1, g0, g1)
						ch := pairwise.Norm2(g1)
						if !(ch <= sens*(1+1e-9)) {
							t.Fatalf("%s %s B=%g: change %v > Δ = %v", c.task, c.loss.Name(), c.B, ch, sens)
						}
						worst = math.Max(worst, ch/sens)
					}
				}
			}
		}
		t.Logf("%s %s B=%g: largest change %.4g·Δ", c.task, c.loss.Name(), c.B, worst)
	}
	// The hinge worst case: n−1 negatives at −e, positive x_k = e replaced
	// by −e... every pair stays active at w = 0 and x_k − x_j moves from 2e
	// to 0: change 2/(n(n−1))·(n−1)·2 = 4/n = Δ (c = 2R).
	n, d := 9, 2
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x[i*d] = -1
		y[i] = -1
	}
	x[0], y[0] = 1, 1
	ds := pairwise.NewDense(x, y, d)
	obj, _ := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCHinge{}, Radius: 1})
	sens, _, _ := GDSensitivity(obj, 1)
	w := []float64{0, 0}
	g0 := pairwise.PairLoopGradient(obj, w)
	nb := pairwise.NewDense(append([]float64(nil), x...), append([]float64(nil), y...), d)
	nb.X[0] = -1
	ob2, _ := pairwise.NewObjective(nb, pairwise.ObjectiveConfig{Loss: pairwise.AUCHinge{}, Radius: 1})
	g1 := pairwise.PairLoopGradient(ob2, w)
	pairwise.Axpy(-1, g0, g1)
	if ch := pairwise.Norm2(g1); math.Abs(ch-sens) > 1e-12 {
		t.Errorf("hinge worst case: change %v, Δ = %v (the bound should be attained)", ch, sens)
	}
}

// dp-gd's report is exact: its T releases compose (Gaussian DP) to the
// requested ε, and the model learns on a toy problem.
func TestRunDPGD(t *testing.T) {
	ds := toyAUC(800, 4, 2, 21)
	for _, loss := range []pairwise.Loss{pairwise.AUCHinge{}, pairwise.AUCLogistic{}, pairwise.AUCSquare{}} {
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: loss, Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := pairwise.Lookup("dp-gd")
		res, err := a.Run(context.Background(), obj, pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-4, FeatureRadius: 1, Noise: dp.NewSeededNoise(9)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rels []dp.Release
		for i, s := range res.Privacy.Sigmas {
			rels = append(rels, dp.Release{Mechanism: dp.MechanismGaussian, Sensitivity: res.Privacy.Sensitivity[i], Sigma: s})
		}
		rep, err := dp.Compose(rels, 1e-4)
		if err != nil {
			t.Fatal(err)
		}
		if e := rep.Best.Epsilon; e > 1 || e < 1-1e-6 {
			t.Errorf("%s: %d releases compose to ε = %v, want 1", loss.Name(), len(rels), e)
		}
		exact, _, _ := SolveSSP(SSPStatsOf(ds, SSPClass), 1e-6)
		if auc, ceil := pairwise.LinearAUC(res.W, ds), pairwise.LinearAUC(exact, ds); auc < ceil-0.05 {
			t.Errorf("%s: AUC %v, non-private square-loss optimum %v", loss.Name(), auc, ceil)
		}
	}
	// metric learning runs and reports
	obj, _ := pairwise.NewObjective(toyAUC(60, 3, 2, 5), pairwise.ObjectiveConfig{Task: pairwise.TaskMetric, Loss: pairwise.MetricLogistic{}, Radius: 1})
	a, _ := pairwise.Lookup("dp-gd")
	res, err := a.Run(context.Background(), obj, pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: dp.NewSeededNoise(9)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.W) != 9 || res.Privacy.Releases != res.Steps {
		t.Errorf("metric: %d parameters, %d releases for %d steps", len(res.W), res.Privacy.Releases, res.Steps)
	}
}
