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
// first release (Δ = 1).
func TestSelectPicksByCount(t *testing.T) {
	for _, c := range []struct {
		nPos int
		want string
	}{{10000, "dp-objpert"}, {200, "dp-lda"}} {
		ds := selectData(20000, 10, c.nPos, 4)
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
// into [0, n].
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
