package dpsgd

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The benchmark's own accountant against pairfed's (dp.SubsampledGaussian-
// Epsilon, add/remove): two implementations of the same RDP bound must
// agree to within the orders they search (pairfed's searches more orders,
// so it may be a little lower, never higher by more than rounding).
func TestEpsilonMatchesPairfedAccountant(t *testing.T) {
	for _, c := range []struct {
		q, z  float64
		steps int
	}{{0.01, 1.1, 2000}, {0.05, 0.8, 400}, {1, 5, 20}, {0.256, 2, 80}} {
		delta := 1e-5
		got, _ := Epsilon(c.q, c.z, c.steps, delta)
		ref, _, err := dp.SubsampledGaussianEpsilon(c.q, c.z, c.steps, delta, dp.AddRemove)
		if err != nil {
			t.Fatal(err)
		}
		if got < ref*(1-1e-6) || got > ref*1.05 {
			t.Errorf("q = %g, z = %g, T = %d: ε = %.5g, pairfed's accountant %.5g", c.q, c.z, c.steps, got, ref)
		}
	}
}

// q = 1 is T Gaussian releases: RDP α/(2z²) per step exactly.
func TestRDPFullBatch(t *testing.T) {
	if got := RDP(1, 2, 5); math.Abs(got-5.0/8) > 1e-12 {
		t.Fatalf("RDP(q=1, z=2, α=5) = %v, want 5/8", got)
	}
	// and the subsampled formula at q → 1 approaches it
	if got := RDP(1-1e-9, 2, 5); math.Abs(got-5.0/8) > 1e-6 {
		t.Fatalf("RDP(q→1) = %v, want → 5/8", got)
	}
}

// The calibrated multiplier meets the target and is tight (1 % less noise
// would not).
func TestNoiseMultiplierTight(t *testing.T) {
	for _, eps := range []float64{0.1, 1, 10} {
		z, err := NoiseMultiplier(0.02, 1000, eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := Epsilon(0.02, z, 1000, 1e-5); e > eps {
			t.Errorf("ε = %g: z = %v gives ε = %v", eps, z, e)
		}
		if e, _ := Epsilon(0.02, 0.99*z, 1000, 1e-5); e <= eps {
			t.Errorf("ε = %g: z = %v is not the smallest (0.99z gives %v)", eps, z, e)
		}
	}
}

// The baseline learns on separable-ish data at a large ε and is at chance
// at a tiny one: the training loop is wired (sign of the step, labels).
func TestTrainLearns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, d := 2000, 5
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range y {
		y[i] = 1
		if i%2 == 0 {
			y[i] = -1
		}
		for j := 0; j < d; j++ {
			x[i*d+j] = 0.2 * rng.NormFloat64()
		}
		x[i*d] += 0.15 * y[i]
	}
	ds := pairwise.NewDense(x, y, d)
	w, _, _, err := Train(ds, Config{Epsilon: 10, Delta: 1e-5}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	// population AUC of the first coordinate: Φ(0.3/(0.2√2)) ≈ 0.86
	if auc := pairwise.LinearAUC(w, ds); auc < 0.8 {
		t.Errorf("ε = 10: training AUC %.3f, want ≥ 0.8 (population ≈ 0.86)", auc)
	}
}
