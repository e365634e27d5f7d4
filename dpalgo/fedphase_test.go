package dpalgo

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// TestLocalSGDPhaseMatchesAlg3 checks the single-phase entry point against
// the whole-run implementation: K phases of LocalSGDPhase on the subsets of
// LocalSGDPartition, each started from the previous release, reproduce
// dp-local-sgd exactly (same rng draws, same noise calls).
func TestLocalSGDPhaseMatchesAlg3(t *testing.T) {
	for _, n := range []int{64, 100} {
		ds := toyAUC(n, 3, 2, 7)
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: pairwise.AUCLogistic{}, Constraint: "l2", Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		const eps, delta, eta = 1.0, 1e-2, 0.05
		algo, _ := pairwise.Lookup("dp-local-sgd")
		ref, err := algo.Run(context.Background(), obj, pairwise.RunConfig{Eta: eta,
			Privacy: &pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: 1, Noise: newYKNoise(3, true)}}, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		noise := newYKNoise(3, true)
		K := LocalSGDPhases(n)
		parts, err := LocalSGDPartition(n, K, rng)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, 3)
		var sigmas []float64
		for k := 1; k <= K; k++ {
			res, err := LocalSGDPhase(context.Background(), obj, w, parts[k-1], k, eta,
				&pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: 1, Noise: noise}, rng)
			if err != nil {
				t.Fatal(err)
			}
			w = res.W
			sigmas = append(sigmas, res.Sigma)
			if !res.Secure {
				t.Error("Secure not copied from the noise source")
			}
		}
		if !slices.Equal(w, ref.W) {
			t.Errorf("n=%d: phases give %v, dp-local-sgd gives %v", n, w, ref.W)
		}
		if !slices.Equal(sigmas, ref.Privacy.Sigmas) {
			t.Errorf("n=%d: σ %v vs %v", n, sigmas, ref.Privacy.Sigmas)
		}
	}
}

func TestLocalSGDPartition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts, err := LocalSGDPartition(1000, 4, rng) // a site larger than n_min
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for k, p := range parts {
		if len(p) != 1000>>(k+1) {
			t.Errorf("|S_%d| = %d, want %d", k+1, len(p), 1000>>(k+1))
		}
		for _, i := range p {
			if seen[i] {
				t.Fatalf("record %d in two subsets", i)
			}
			seen[i] = true
		}
	}
	if _, err := LocalSGDPartition(5, 4, rng); err == nil || !strings.Contains(err.Error(), "cannot hold") {
		t.Errorf("K too large for n: err = %v", err)
	}
	if LocalSGDPhases(614) != 10 || LocalSGDPhases(2) != 1 || LocalSGDPhases(1024) != 10 {
		t.Error("LocalSGDPhases")
	}
}

func TestLocalSGDPhaseChecks(t *testing.T) {
	ds := toyAUC(32, 2, 2, 1)
	hinge, _ := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: pairwise.AUCHinge{}, Constraint: "l2", Radius: 1})
	priv := &pairwise.Privacy{Epsilon: 1, Delta: 1e-2, FeatureRadius: 1, Noise: newYKNoise(1, true)}
	idx := []int{0, 1, 2, 3}
	if _, err := LocalSGDPhase(context.Background(), hinge, make([]float64, 2), idx, 1, 0.1, priv, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("hinge loss (not smooth) accepted")
	}
	logi, _ := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: pairwise.AUCLogistic{}, Constraint: "l2", Radius: 1})
	if _, err := LocalSGDPhase(context.Background(), logi, make([]float64, 2), idx, 1, 100, priv, rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), "2/L") {
		t.Errorf("η > 2/L: err = %v", err)
	}
}
