package dpalgo

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// hiddenObjective hides the concrete objective, so that dp-pair-sgd takes
// the general batch sum (the reference).
type hiddenObjective struct{ pairwise.Objective }

// TestPairSGDBatchSumSparseBitIdentical checks the O(nnz) batch sum on CSR
// data against the general one (dense scratch through the Objective
// interface), bit for bit: random sparse data whose rows share columns,
// the three AUC losses, clip norms that clip most, some or no pairs,
// batches with repeats, of one record and empty.
func TestPairSGDBatchSumSparseBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ds := range []*pairwise.Dataset{sparseAUC(300, 40, 12, 0.4, 5), sparseAUC(500, 2000, 12, 0.3, 6), toSparse(toyAUC(200, 7, 1, 7))} {
		for _, loss := range []pairwise.Loss{pairwise.AUCHinge{}, pairwise.AUCSquare{}, pairwise.AUCLogistic{}} {
			obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: loss, Radius: 1})
			if err != nil {
				t.Fatal(err)
			}
			p := obj.NumParams()
			for trial := range 20 {
				w := randOnSphere(rng, p, 2*rng.Float64())
				C := []float64{0.01, 0.3, 10}[trial%3]
				batch := make([]int, rng.IntN(60))
				for k := range batch {
					batch[k] = rng.IntN(ds.N)
				}
				if trial == 5 && len(batch) > 3 {
					batch[2] = batch[1] // a record paired with itself
				}
				g0, g1 := make([]float64, p), make([]float64, p)
				tmp0, tmp1 := make([]float64, p), make([]float64, p)
				for k := range g1 {
					g1[k] = 7 // overwritten
				}
				m0 := pairSGDBatchSumGeneral(hiddenObjective{obj}, w, g0, tmp0, batch, C)
				m1 := pairSGDBatchSum(obj, w, g1, tmp1, batch, C)
				if m0 != m1 || !sameBits(g0, g1) {
					t.Fatalf("d=%d %s C=%v batch %d: sparse sum differs (pairs %d/%d)", ds.D, loss.Name(), C, len(batch), m1, m0)
				}
				if len(batch) > 10 && pairwise.Dot(g0, g0) == 0 && trial%3 != 0 {
					t.Fatalf("d=%d %s: the sum is zero; the comparison is vacuous", ds.D, loss.Name())
				}
			}
		}
	}
}

// dp-pair-sgd end to end on CSR data: the same model, bit for bit, through
// the sparse batch sum and through the general one (seeded noise: the
// same draws).
func TestRunPairSGDPrivateSparseSameModel(t *testing.T) {
	ds := sparseAUC(2000, 3000, 12, 0.3, 8)
	for _, loss := range []pairwise.Loss{pairwise.AUCHinge{}, pairwise.AUCLogistic{}} {
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: loss, Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		run := func(o pairwise.Objective) *pairwise.Result {
			cfg := pairwise.RunConfig{Steps: 40, Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-4, FeatureRadius: 1, Noise: dp.NewSeededNoise(4)}}
			res, err := runPairSGDPrivate(context.Background(), o, cfg, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		a, b := run(obj), run(hiddenObjective{obj})
		if !sameBits(a.W, b.W) || a.PairGrads != b.PairGrads {
			t.Fatalf("%s: sparse and general runs differ", loss.Name())
		}
		if pairwise.Dot(a.W, a.W) == 0 {
			t.Fatalf("%s: the model is zero; the comparison is vacuous", loss.Name())
		}
	}
}
