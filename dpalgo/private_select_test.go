package dpalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// selectData returns n records in d dimensions with nPos positives: two
// Gaussian classes around an offset centre, clipped to the unit ball.
func selectData(n, d, nPos int, seed uint64) *pairwise.Dataset {
	r := rand.New(rand.NewPCG(seed, 3))
	ds := &pairwise.Dataset{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		ds.Y[i] = -1
		if i < nPos {
			ds.Y[i] = 1
		}
		row := ds.Row(i)
		for k := range row {
			row[k] = 0.1*r.NormFloat64() + 0.2
		}
		row[0] += 0.08 * ds.Y[i]
		if nr := pairwise.Norm2(row); nr > 1 {
			pairwise.Scale(1/nr, row)
		}
	}
	return ds
}

// The noisy count decides: balanced classes on 20 000 records (s₊ ≈ 100 at
// ε = 1) go to dp-objpert, 1 % positives (s₊ ≈ 2) to dp-lda, each run on
// (ε, δ) less the count's share; the certificate adds the count's δ to the
// branch's and stays within the request, and the count is the report's
// first release (Δ = 1). Near the threshold T (≈ 24 here, SD ≈ 4.5): a
// true s₊ four standard deviations of the count's noise above T goes to
// dp-objpert, four below to dp-lda (each wrong with probability
// Q(4) ≈ 3·10⁻⁵ over the noise; the seed is fixed).
func TestSelectPicksByCount(t *testing.T) {
	const n, d = 20000, 10
	pl, err := NewSelectPlan(d, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Threshold != SelectCrossover+2*pl.SD || !(pl.SD > 1 && pl.SD < 10) {
		t.Fatalf("plan %+v", pl)
	}
	at := func(s float64) int { return int(math.Round(s * (d + 1) / pl.MuB)) } // n₊ with s₊ = s
	for _, c := range []struct {
		nPos int
		want string
	}{{10000, "dp-objpert"}, {200, "dp-lda"}, {at(pl.Threshold + 4*pl.SD), "dp-objpert"}, {at(pl.Threshold - 4*pl.SD), "dp-lda"}} {
		ds := selectData(n, d, c.nPos, 4)
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 1e6})
		if err != nil {
			t.Fatal(err)
		}
		priv := &pairwise.Privacy{Epsilon: 1, Delta: 1e-5, FeatureRadius: 1, Noise: dp.NewSeededNoise(9)}
		res, err := selectAlg.Run(context.Background(), obj, pairwise.RunConfig{Privacy: priv}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Privacy
		if !strings.Contains(rep.Notes[0], "→ "+c.want) || !strings.Contains(rep.Formula, "then "+c.want) {
			t.Errorf("n₊ = %d: want the %s branch; notes %q", c.nPos, c.want, rep.Notes[0])
		}
		if rep.Epsilon != 1 || rep.Delta != 1e-5 || rep.CertifiedEpsilon != 1 || !(rep.CertifiedDelta <= 1e-5) || !(rep.CertifiedDelta > 0.5e-5) {
			t.Errorf("n₊ = %d: report (%v, %v), certified (%v, %v)", c.nPos, rep.Epsilon, rep.Delta, rep.CertifiedEpsilon, rep.CertifiedDelta)
		}
		if rep.Sensitivity[0] != 1 || len(rep.Sigmas) != len(rep.Sensitivity) || rep.Releases < 2 {
			t.Errorf("n₊ = %d: releases %d, sensitivities %v, σ %v", c.nPos, rep.Releases, rep.Sensitivity, rep.Sigmas)
		}
		if auc := pairwise.LinearAUC(res.W, ds); auc < 0.6 {
			t.Errorf("n₊ = %d: training AUC %.3f: the branch did not learn", c.nPos, auc)
		}
	}
}

// SelectScore is μ·min(n₊, n − n₊)/(d + 1) with the noisy count clamped
// into [0, n]; the threshold's margin μ_b·σ_c/(d + 1) is one count's noise
// in it: μ_b·σ_c does not depend on d, hardly on ε (μ_b is nearly linear
// in ε at these δ, σ_c ∝ 1/ε), and T = 15 + 2·SD.
func TestSelectScore(t *testing.T) {
	for _, c := range []struct {
		mu, nPos float64
		n, d     int
		want     float64
	}{{0.5, 100, 1000, 9, 5}, {0.5, 900, 1000, 9, 5}, {1, -40, 100, 1, 0}, {1, 140, 100, 1, 0}, {2, 50, 100, 1, 50}} {
		if got := SelectScore(c.mu, c.nPos, c.n, c.d); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SelectScore(%v, %v, %d, %d) = %v, want %v", c.mu, c.nPos, c.n, c.d, got, c.want)
		}
	}
	ref, err := NewSelectPlan(1, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{1, 22, 123, 1000} {
		for _, eps := range []float64{0.5, 1, 2} {
			pl, err := NewSelectPlan(d, eps, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			k := pl.SD * float64(d+1)
			if math.Abs(k-pl.MuB*pl.SigmaC) > 1e-9*k || math.Abs(k/(2*ref.SD)-1) > 0.05 || pl.Threshold != SelectCrossover+2*pl.SD {
				t.Errorf("d = %d, ε = %g: SD·(d + 1) = %.4g (at d = 1, ε = 1: %.4g), T = %.4g", d, eps, k, 2*ref.SD, pl.Threshold)
			}
			if pl.EpsC+pl.EpsB > eps || pl.EpsC+pl.EpsB < eps*(1-1e-15) || pl.DeltaC+pl.DeltaB > 1e-5 || pl.EpsC != eps/50 {
				t.Errorf("d = %d, ε = %g: shares %+v", d, eps, pl)
			}
		}
	}
	for _, c := range []struct {
		d          int
		eps, delta float64
	}{{0, 1, 1e-5}, {3, 0, 1e-5}, {3, math.Inf(1), 1e-5}, {3, 1, 0}, {3, 1, 1}, {3, math.NaN(), 1e-5}} {
		if _, err := NewSelectPlan(c.d, c.eps, c.delta); err == nil {
			t.Errorf("NewSelectPlan(%d, %v, %v) accepted", c.d, c.eps, c.delta)
		}
	}
}

// --calibration paper is refused (by the registry: dp-select has no
// printed formula), as a d above its branches' limit is.
func TestSelectRefuses(t *testing.T) {
	ds := selectData(40, 3, 20, 1)
	obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	priv := &pairwise.Privacy{Epsilon: 1, Delta: 1e-5, FeatureRadius: 1, Noise: dp.NewSeededNoise(1), Calibration: pairwise.CalibrationPaper}
	if _, err := selectAlg.Run(context.Background(), obj, pairwise.RunConfig{Privacy: priv}, nil); err == nil || !strings.Contains(err.Error(), "--calibration paper") {
		t.Errorf("paper calibration: err = %v", err)
	}
	wide := &pairwise.Dataset{N: 2, D: sspMaxDim + 1, X: make([]float64, 2*(sspMaxDim+1)), Y: []float64{1, -1}}
	obj, err = pairwise.NewObjective(wide, pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	priv.Calibration = ""
	if _, err := selectAlg.Run(context.Background(), obj, pairwise.RunConfig{Privacy: priv}, nil); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("d = %d: err = %v", wide.D, err)
	}
}
