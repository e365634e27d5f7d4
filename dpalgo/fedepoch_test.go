package dpalgo

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// Running the k epochs of DPEGDEpoch one after the other on the subsets
// of DPEGDPartition (same rng, same noise stream) reproduces runDPEGD bit
// for bit: the federated epoch is exactly the body of [X21] Alg 3's loop.
func TestDPEGDEpochsMatchRunDPEGD(t *testing.T) {
	for _, n := range []int{32, 45} {
		ds := scaledToyAUC(n, 3, 0.3, 7)
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		const eps, delta, eta = 1.0, 1e-3, 0.2
		noise := func() *recNoise { return &recNoise{rng: rand.New(rand.NewPCG(5, 6))} }
		a, _ := pairwise.Lookup("dpegd")
		whole, err := a.Run(context.Background(), obj, pairwise.RunConfig{Eta: eta, Privacy: &pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: 1, Noise: noise()}}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		k := DPEGDPhases(n)
		part, err := DPEGDPartition(n, k, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		priv := &pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: 1, Noise: noise()}
		w := make([]float64, 3)
		var sigmas []float64
		for i := 1; i <= k; i++ {
			res, err := DPEGDEpoch(context.Background(), obj, w, part[i-1], i, eta, priv)
			if err != nil {
				t.Fatal(err)
			}
			if res.PaperSigma != DPEGDSigma(obj.Props(1).Lipschitz, eta, i, eps, delta) || !(res.Sigma <= res.PaperSigma) || res.Steps != len(part[i-1]) {
				t.Errorf("epoch %d: %+v", i, res)
			}
			sigmas = append(sigmas, res.Sigma)
			w = res.W
		}
		if !slices.Equal(w, whole.W) || !slices.Equal(sigmas, whole.Privacy.Sigmas) {
			t.Errorf("n = %d: epochs give %v σ %v, runDPEGD %v σ %v", n, w, sigmas, whole.W, whole.Privacy.Sigmas)
		}
	}
	if _, err := DPEGDPartition(45, 6, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("k > ⌊log₂ n⌋ accepted")
	}
}
