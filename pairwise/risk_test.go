package pairwise

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAUCRiskMatchesPairLoop checks the score forms of the AUC objective
// against the brute-force loop over all n(n−1) ordered pairs, for every AUC
// loss, with and without a regularizer, on dense and sparse data, at w = 0
// (every hinge active, ties everywhere) and at random w of several sizes
// (hinges inactive for some pairs). Agreement is to 1e-12 relative: the two
// sum the same terms in different orders.
func TestAUCRiskMatchesPairLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, ds := range []*Dataset{toyAUC(60, 5, 1, 1), toSparse(toyAUC(45, 8, 0.5, 2)), rarePositives(toyAUC(80, 3, 1, 3), 0.1, 4)} {
		for _, loss := range []Loss{AUCHinge{}, AUCSquare{}, AUCLogistic{}} {
			for _, lambda := range []float64{0, 0.3} {
				obj, err := NewObjective(ds, ObjectiveConfig{Loss: loss, Lambda: lambda, Constraint: "none"})
				if err != nil {
					t.Fatal(err)
				}
				for _, sz := range []float64{0, 0.5, 3, 20} {
					w := make([]float64, ds.D)
					for k := range w {
						w[k] = sz * rng.NormFloat64()
					}
					want, _ := pairRisk(obj, w, math.MaxInt, nil)
					got, se := EmpiricalRisk(obj, w, 1, rng) // maxPairs 1: the pair loop would sample
					if loss.Name() != "logistic" && se != 0 {
						t.Fatalf("%s: stderr %v, want exact", loss.Name(), se)
					}
					if loss.Name() == "logistic" {
						got, se = EmpiricalRisk(obj, w, math.MaxInt, rng)
					}
					if se != 0 || math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
						t.Fatalf("%s λ=%v |w|~%v: score form %v, pair loop %v", loss.Name(), lambda, sz, got, want)
					}
					if !RiskExact(obj, math.MaxInt) {
						t.Fatalf("%s: RiskExact false", loss.Name())
					}
				}
			}
		}
	}
}

// TestLogisticRiskSampled checks the sampled logistic objective from scores
// against the exact value: |estimate − exact| ≤ 5 standard errors, which
// fails with probability < 1e-6 for a normal estimate (and the mean of
// 20 000 bounded draws is close to normal); the seed is fixed.
func TestLogisticRiskSampled(t *testing.T) {
	ds := toyAUC(400, 4, 1, 9)
	obj, _ := NewObjective(ds, ObjectiveConfig{Loss: AUCLogistic{}, Constraint: "none"})
	w := []float64{1, -0.5, 2, 0.3}
	exact, _ := EmpiricalRisk(obj, w, math.MaxInt, nil)
	est, se := EmpiricalRisk(obj, w, 20000, rand.New(rand.NewPCG(1, 2)))
	if se <= 0 || math.Abs(est-exact) > 5*se {
		t.Fatalf("sampled %v ± %v, exact %v", est, se, exact)
	}
	if RiskExact(obj, 20000) {
		t.Fatal("RiskExact true for a sampled logistic objective")
	}
}
