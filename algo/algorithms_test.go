package algo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// firstLoss picks a loss the algorithm supports for the task.
func firstLoss(t *testing.T, a *pairwise.Algorithm, task pairwise.Task) pairwise.Loss {
	t.Helper()
	for _, name := range []string{"hinge", "logistic", "square"} {
		if a.Supports(task, name) == nil {
			if l, err := pairwise.LossByName(task, name); err == nil {
				return l
			}
		}
	}
	return nil
}

// Every non-private algorithm of the registry must decrease the empirical
// pairwise objective from w = 0 and rank a nearly separable toy set well.
func TestRegistryAlgorithmsLearnToyAUC(t *testing.T) {
	train := toyAUC(200, 5, 3, 21)
	test := toyAUC(400, 5, 3, 22)
	for _, a := range pairwise.Algorithms() {
		if a.Private {
			continue
		}
		a := a
		t.Run(a.Name, func(t *testing.T) {
			loss := firstLoss(t, a, pairwise.TaskAUC)
			if loss == nil {
				t.Skipf("%s has no AUC loss", a.Name)
			}
			lambda := 0.0
			if a.NeedsStrongConvexity {
				lambda = 1e-2
			}
			obj, err := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: loss, Lambda: lambda, Radius: 10})
			if err != nil {
				t.Fatal(err)
			}
			cfg := pairwise.RunConfig{Eta: 1, Steps: 20 * train.N}
			if a.Name == "sgd-all-prev" || a.Name == "pgd" {
				cfg.Steps = 200
			}
			res, err := a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := pairwise.EmpiricalRisk(obj, make([]float64, train.D), math.MaxInt, nil)
			after, _ := pairwise.EmpiricalRisk(obj, res.W, math.MaxInt, nil)
			if !(after < before) {
				t.Fatalf("objective did not decrease: %v → %v", before, after)
			}
			if auc := pairwise.LinearAUC(res.W, test); auc < 0.9 {
				t.Fatalf("test AUC %.3f < 0.9", auc)
			}
			if res.PairGrads <= 0 {
				t.Fatalf("PairGrads = %d", res.PairGrads)
			}
			// Same seed, same model.
			res2, _ := a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(1, 2)))
			for k := range res.W {
				if res.W[k] != res2.W[k] {
					t.Fatal("not deterministic for a fixed seed")
				}
			}
		})
	}
}

// [Y21a] Alg 1 outputs Σ_j η_j w_{j−2} / Σ_j η_j. Check the averager against a
// direct computation over recorded iterates with a decaying schedule.
func TestSGDPrevPaperAveraging(t *testing.T) {
	train := toyAUC(50, 3, 2, 4)
	obj, _ := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: pairwise.AUCHinge{}, Radius: 1})
	T := 37
	cfg := pairwise.RunConfig{Eta: 0.5, Steps: T, Schedule: pairwise.InvSqrt}
	res, err := runSGDPrev(context.Background(), obj, cfg, rand.New(rand.NewPCG(8, 8)))
	if err != nil {
		t.Fatal(err)
	}
	// Replay: same rng stream → same draws.
	rng := rand.New(rand.NewPCG(8, 8))
	src := &pairwise.PrevInstance{N: train.N}
	iters := [][]float64{make([]float64, 3)} // w_0
	w := make([]float64, 3)
	for t := 1; t <= T; t++ {
		i, j, _ := src.Next(rng)
		if obj.Step(w, i, j, pairwise.InvSqrt.Eta(0.5, t, T)) {
			obj.Project(w)
		}
		iters = append(iters, append([]float64(nil), w...))
	}
	at := func(k int) []float64 { // w_k with w_{−1} = w_0
		if k < 0 {
			k = 0
		}
		return iters[k]
	}
	want := make([]float64, 3)
	var den float64
	for j := 1; j <= T; j++ {
		eta := pairwise.InvSqrt.Eta(0.5, j, T)
		pairwise.Axpy(eta, at(j-2), want)
		den += eta
	}
	for k := range want {
		if math.Abs(want[k]/den-res.W[k]) > 1e-12 {
			t.Fatalf("coord %d: got %v want %v", k, res.W[k], want[k]/den)
		}
	}
}

func TestPrevInstancePairsConsecutiveDraws(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	p := &pairwise.PrevInstance{N: 10}
	_, prev, _ := p.Next(rng)
	_ = prev
	i1, _, _ := p.Next(rng)
	_, j2, _ := p.Next(rng)
	if j2 != i1 {
		t.Fatalf("step pairs with %d, want previous draw %d", j2, i1)
	}
}

func TestCheckpointsFireInOrder(t *testing.T) {
	train := toyAUC(50, 3, 2, 4)
	obj, _ := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: pairwise.AUCHinge{}, Radius: 1})
	var got []int
	cfg := pairwise.RunConfig{Eta: 1, Steps: 100, Averaging: pairwise.AvgWindow, Checkpoints: []int{16, 22, 32, 100},
		OnCheckpoint: func(t int, w []float64) { got = append(got, t) }}
	if _, err := runSGDPrev(context.Background(), obj, cfg, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != 16 || got[3] != 100 {
		t.Fatalf("checkpoints fired at %v", got)
	}
}

func TestRunConfigRejectsBadStep(t *testing.T) {
	train := toyAUC(20, 3, 2, 4)
	obj, _ := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: pairwise.AUCHinge{}, Radius: 1})
	for _, eta := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := runSGDPrev(context.Background(), obj, pairwise.RunConfig{Eta: eta}, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Fatalf("η = %v accepted", eta)
		}
	}
}

// Every non-private algorithm that supports metric learning must decrease the
// pairwise metric objective from W = 0 on the toy set.
func TestRegistryAlgorithmsDecreaseMetricObjective(t *testing.T) {
	train := toyAUC(80, 4, 3, 31)
	for _, a := range pairwise.Algorithms() {
		if a.Private || a.Supports(pairwise.TaskMetric, "logistic") != nil {
			continue
		}
		a := a
		t.Run(a.Name, func(t *testing.T) {
			lambda := 0.0
			if a.NeedsStrongConvexity {
				lambda = 1e-2
			}
			obj, err := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: pairwise.MetricLogistic{}, Lambda: lambda, Radius: 10})
			if err != nil {
				t.Fatal(err)
			}
			cfg := pairwise.RunConfig{Eta: 1, Steps: 10 * train.N}
			if a.Name == "sgd-all-prev" || a.Name == "pgd" {
				cfg.Steps = 100
			}
			res, err := a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := pairwise.EmpiricalRisk(obj, make([]float64, obj.NumParams()), math.MaxInt, nil)
			after, _ := pairwise.EmpiricalRisk(obj, res.W, math.MaxInt, nil)
			if !(after < before-0.01) {
				t.Fatalf("metric objective did not decrease: %v → %v", before, after)
			}
		})
	}
}
