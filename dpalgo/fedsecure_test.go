package dpalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The noise-free phase outputs of fedsecure.go are the values the noisy
// federated entry points add their noise to (same steps, same sampling),
// and the public sensitivities are the ones those entry points prove and
// calibrate to; the move bounds hold.
func TestFedSecureMatchesNoisyPhases(t *testing.T) {
	const n, d, R, B, delta = 64, 3, 1.0, 1.0, 1e-3
	ds := separableToyData(n, d, 11)
	loss, err := pairwise.LossByName(pairwise.TaskAUC, "logistic")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Constraint: "l2", Radius: B})
	if err != nil {
		t.Fatal(err)
	}
	priv := &pairwise.Privacy{Epsilon: 1, Delta: delta, FeatureRadius: R, Noise: dp.ZeroNoise()}
	start := []float64{0.3, -0.2, 0.1}
	ctx := context.Background()

	// [K22]: n·∇L and sensitivity n·(2Γ/n).
	gr, err := DPGDGradRound(ctx, obj, start, 4, priv)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := DPGDGradSum(ctx, obj, start, 4, priv)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sum {
		if math.Abs(sum[i]-n*gr.Grad[i]) > 1e-12*(1+math.Abs(sum[i])) {
			t.Fatalf("DPGDGradSum %v, n·gradient %v", sum, gr.Grad)
		}
	}
	if s := DPGDGradSiteSensitivity(loss, R, B, 1); math.Abs(s-n*gr.Sensitivity) > 1e-12*s {
		t.Errorf("DPGDGradSiteSensitivity(n = 1) = %v, n·Δ = %v", s, n*gr.Sensitivity)
	}
	// A model outside C (a hostile or buggy coordinator): the site takes
	// its gradient at the model's projection, where Γ and G are proved;
	// the caller's slice is not modified.
	far := []float64{30, -20, 10}
	farGr, err := DPGDGradRound(ctx, obj, far, 4, priv)
	if err != nil {
		t.Fatal(err)
	}
	farSum, err := DPGDGradSum(ctx, obj, far, 4, priv)
	if err != nil {
		t.Fatal(err)
	}
	proj := append([]float64(nil), far...)
	obj.Project(proj)
	want := make([]float64, d)
	pairwise.FullGradient(obj, proj, want)
	for i := range want {
		if farGr.Grad[i] != want[i] || math.Abs(farSum[i]-n*want[i]) > 1e-12*(1+math.Abs(farSum[i])) || far[i] != []float64{30, -20, 10}[i] {
			t.Fatalf("model outside C: round %v, sum %v, want the gradient at the projection %v (model now %v)", farGr.Grad, farSum, want, far)
		}
	}

	// [Y21a] Alg 3 phase k.
	eta := LocalSGDDefaultEta(loss, n, d, R, B, 1, delta)
	part, err := LocalSGDPartition(n, LocalSGDPhases(n), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 3; k++ {
		res, err := LocalSGDPhase(ctx, obj, start, part[k-1], k, eta, priv, rand.New(rand.NewPCG(5, uint64(k))))
		if err != nil {
			t.Fatal(err)
		}
		avg, err := LocalSGDPhaseAverage(ctx, obj, start, part[k-1], k, eta, priv, rand.New(rand.NewPCG(5, uint64(k))))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(avg, res.W) {
			t.Fatalf("phase %d: average %v, noise-free release %v", k, avg, res.W)
		}
		s, err := LocalSGDPhaseSensitivity(loss, R, B, eta, delta, res.FailureDelta, n, k)
		if err != nil || s != res.Sensitivity {
			t.Errorf("phase %d: LocalSGDPhaseSensitivity = %v (%v), LocalSGDPhase's Δ_k = %v", k, s, err, res.Sensitivity)
		}
		if m := LocalSGDPhaseMove(loss, R, B, 0, eta, delta, n, k); dist2(avg, start) > m {
			t.Errorf("phase %d: the average moved %v, bound %v", k, dist2(avg, start), m)
		}
	}

	// [X21] Alg 3 epoch i.
	k := DPEGDPhases(n)
	etaX := DPEGDDefaultEta(loss, n, d, R, B, 1, delta)
	partX, err := DPEGDPartition(n, k, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= k; i++ {
		if got := DPEGDSubsetSize(n, k, i); got != len(partX[i-1]) {
			t.Fatalf("DPEGDSubsetSize(%d, %d, %d) = %d, partition %d", n, k, i, got, len(partX[i-1]))
		}
		res, err := DPEGDEpoch(ctx, obj, start, partX[i-1], i, etaX, priv)
		if err != nil {
			t.Fatal(err)
		}
		avg, err := DPEGDEpochAverage(ctx, obj, start, partX[i-1], i, etaX, priv)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(avg, res.W) {
			t.Fatalf("epoch %d: average %v, noise-free release %v", i, avg, res.W)
		}
		if s := DPEGDEpochSensitivity(loss, R, B, etaX, len(partX[i-1]), i); s != res.Sensitivity {
			t.Errorf("epoch %d: DPEGDEpochSensitivity = %v, DPEGDEpoch's Δ = %v", i, s, res.Sensitivity)
		}
		if m := DPEGDEpochMove(loss, R, B, 0, etaX, len(partX[i-1]), i); dist2(avg, start) > m {
			t.Errorf("epoch %d: the average moved %v, bound %v", i, dist2(avg, start), m)
		}
	}
}

func dist2(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}
