package fedalgo

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// dyadicData returns n records of dimension d whose coordinates are
// multiples of 1/8 in [−1/2, 1/2] (so every sum of them and of their
// products is exact in float64) and random labels.
func dyadicData(n, d int, rng *rand.Rand) *pairwise.Dataset {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = float64(rng.IntN(9)-4) / 8
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = 1
		if rng.IntN(3) == 0 {
			y[i] = -1
		}
	}
	return &pairwise.Dataset{N: n, D: d, X: x, Y: y}
}

// The sum of the sites' statistics, packed for the wire and summed by the
// coordinator, is exactly the pooled statistics — before noise, for any
// split of the records, single-class sites included.
func TestSSPSitesSumToPooledExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := dyadicData(60, 5, rng)
	var pos, neg []int
	for i, y := range ds.Y {
		if y > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	perm := rng.Perm(ds.N)
	splits := map[string][][]int{
		"iid":          {perm[:20], perm[20:45], perm[45:]},
		"single-class": {pos[:len(pos)/2], pos[len(pos)/2:], neg},
	}
	for name, parts := range splits {
		for _, moments := range []dpalgo.SSPKind{dpalgo.SSPClass, dpalgo.SSPMean, dpalgo.SSPPooled} {
			var ups []*protocol.SiteUpdate
			for _, idx := range parts {
				site := ds.Subset(idx)
				ups = append(ups, &protocol.SiteUpdate{Model: packSSP(dpalgo.SSPStatsOf(site, moments)), Weight: float64(site.N)})
			}
			if got := len(ups[0].Model); got != sspLen(ds.D, moments) {
				t.Fatalf("update of %d values, want %d", got, sspLen(ds.D, moments))
			}
			sum := sumSSP(ups, ds.D, moments)
			want := dpalgo.SSPStatsOf(ds, moments)
			if sum.N != want.N || sum.NPos != want.NPos || !slices.Equal(sum.SumPos, want.SumPos) || !slices.Equal(sum.SumNeg, want.SumNeg) ||
				!slices.Equal(sum.MomPos, want.MomPos) || !slices.Equal(sum.MomNeg, want.MomNeg) || !slices.Equal(sum.Mom, want.Mom) {
				t.Errorf("%s (moments %v): summed %+v, pooled %+v", name, moments, sum, want)
			}
			// And the combiner's model from exact statistics is the pooled
			// solve at the same λ (σ = 0: λ = 10⁻⁶R²).
			c := &sspCombiner{d: ds.D, kind: moments, R: 1}
			w := c.Combine(make([]float64, ds.D), ups, protocol.Aggregation{Rule: protocol.AggMean})
			lambda := math.Inf(1)
			if moments.Moments() {
				lambda = dpalgo.SSPLambda(want, 1, 0)
			}
			ref, _, err := dpalgo.SolveSSP(want, lambda)
			if err != nil {
				t.Fatal(err)
			}
			for k := range w {
				if math.Abs(w[k]-ref[k]) > 1e-9*(1+math.Abs(ref[k])) {
					t.Fatalf("%s: w = %v, pooled solve %v", name, w, ref)
				}
			}
		}
	}
}

// Plan: one phase, the per-site sensitivity of the calibration, δ by the
// shared rule; the jobs that cannot run are refused with the reason.
func TestFedSSPPlanAndConfigure(t *testing.T) {
	sites := []SiteInfo{{"a", 100}, {"b", 50}, {"c", 1}}
	for _, name := range []string{FedDPSSP, FedDPSSPMean} {
		s := &Spec{Algo: name, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1}
		a, err := Configure(s)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Plan(s, sites, 8)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := dpalgo.SSPCalibrate(p.Epsilon, p.Delta, 1, 8, a.(fedSSP).kind)
		if err != nil {
			t.Fatal(err)
		}
		_, wantDelta := planPrivacy(s, sites)
		if p.Phases != 1 || p.Epsilon != 1 || p.Delta != wantDelta || len(p.Sensitivity) != 3 || p.Sensitivity["c"] != rel.Sensitivity || !(rel.Sensitivity >= 2) {
			t.Errorf("%s plan %+v (Δ' %v)", name, p, rel.Sensitivity)
		}
		// The exact accountant's ε of the one release is the requested ε
		// (up to the calibration's bisection), never above it.
		eps, _ := a.(Accountant).Account([]float64{rel.Sigma}, rel.Sensitivity, p.Epsilon, p.Delta)
		if !(eps <= 1+1e-9 && eps > 0.99) {
			t.Errorf("%s: composed ε = %v for ε = 1", name, eps)
		}
	}
	checkSumSpecRefusals(t, FedDPSSP)
	checkSumSpecRefusals(t, FedDPSSPMean)
	s := &Spec{Algo: FedDPSSP, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1}
	a, _ := Configure(s)
	if _, err := a.Plan(s, sites, 1001); err == nil || !strings.Contains(err.Error(), FedDPSSPMean) {
		t.Errorf("d = 1001 with moments: %v", err)
	}
}

// checkSumSpecRefusals checks that Configure refuses, for a one-release
// algorithm of sums (fed-dp-ssp, fed-dp-ssp-mean, fed-dp-lda), metric
// learning, rounds, a non-sum aggregation and a missing ε, naming each.
func checkSumSpecRefusals(t *testing.T, algo string) {
	t.Helper()
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Algo: algo, Task: protocol.TaskMetric, Epsilon: 1}, "metric"},
		{Spec{Algo: algo, Task: protocol.TaskAUC, Epsilon: 1, Rounds: 3}, "rounds"},
		{Spec{Algo: algo, Task: protocol.TaskAUC, Epsilon: 1, Aggregation: "median"}, "sums"},
		{Spec{Algo: algo, Task: protocol.TaskAUC}, "accepted range"},
	} {
		s := c.spec
		if _, err := Configure(&s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.spec, err, c.want)
		}
	}
}
