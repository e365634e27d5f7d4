package fedalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// The single-site dp-pair-gd (dpalgo/private_pairgd.go) is fed-dp-pair-sgd's
// AUC form with one site: with the same seeded noise source, the same (ε, δ)
// and the default rule, the two draw the same noise on the same vectors
// with the same σ's, so the models agree to rounding (the single-site run
// projects the output into its ball, a rescaling by 1 ± ulps). The check
// fails if either side's vectors, plan, split, defaults, start, step or
// output changes without the other (e.g. a copy drifting from the
// functions they share).
func TestDPPairGDIsPooledFedPairSGD(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	const d = 5
	for _, c := range []struct {
		n    int
		eps  float64
		seed uint64
	}{{600, 1, 1}, {3000, 0.5, 2}} {
		ds := spaucToy(rng, c.n, d)
		fed := runPairSumJob(t, []*pairwise.Dataset{ds}, c.eps, c.seed)
		s := &Spec{Algo: FedDPPairSGD, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: c.eps}
		a, err := Configure(s)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Plan(s, []SiteInfo{{Name: "a", Records: c.n}}, d)
		if err != nil {
			t.Fatal(err)
		}
		alg, err := pairwise.Lookup("dp-pair-gd")
		if err != nil {
			t.Fatal(err)
		}
		loss, _ := pairwise.LossByName(pairwise.TaskAUC, "logistic")
		B := alg.ParamRadius(c.n, d, c.eps, p.Delta, 1, pairwise.TaskAUC, loss)
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Constraint: "l2", Radius: B})
		if err != nil {
			t.Fatal(err)
		}
		res, err := alg.Run(context.Background(), obj, pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: c.eps, Delta: p.Delta, FeatureRadius: 1,
			Noise: dp.NewSeededNoise(c.seed * 100)}}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if B != s.ParamRadius || res.Privacy.Releases != p.Phases {
			t.Fatalf("n = %d: B = %v (fed %v), %d releases (fed %d phases)", c.n, B, s.ParamRadius, res.Privacy.Releases, p.Phases)
		}
		for k := range fed {
			if math.Abs(res.W[k]-fed[k]) > 1e-12*B {
				t.Fatalf("n = %d: dp-pair-gd %v, pooled fed-dp-pair-sgd %v", c.n, res.W, fed)
			}
		}
		if !(res.Privacy.CertifiedEpsilon <= c.eps) {
			t.Errorf("certified ε = %v > %v", res.Privacy.CertifiedEpsilon, c.eps)
		}
	}
}
