package fedalgo

import (
	"math"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// The metric task's local-steps form. Per-site accounting equals the
// plan: every site's calibration covers all
// its steps over all rounds, the subsampled RDP accountant recomputed from
// the released numbers (q, σ/Δ', R·T_s, δ) certifies ε ≤ the requested ε
// and is tight (the multiplier is the smallest that does); the plan's
// sensitivity is the calibration's Δ' and B follows the written rule.
func TestFedPairSGDPlanAccounting(t *testing.T) {
	sites := []SiteInfo{{"a", 154}, {"b", 153}, {"c", 1000}}
	s := &Spec{Algo: FedDPPairSGD, Task: protocol.TaskMetric, FeatureRadius: 1, Epsilon: 1}
	a, err := Configure(s)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rounds != 10 || s.LocalPasses != 1 || s.Loss != "logistic" || s.ParamRadius != 0 {
		t.Fatalf("defaults %+v", s)
	}
	const p = 9
	plan, err := a.Plan(s, sites, p)
	if err != nil {
		t.Fatal(err)
	}
	_, wantDelta := planPrivacy(s, sites)
	if plan.Phases != 10 || plan.Epsilon != 1 || plan.Delta != wantDelta {
		t.Fatalf("plan %+v", plan)
	}
	loss, _ := pairwise.LossByName(pairwise.TaskMetric, "logistic")
	if want := dpalgo.PrivateParamRadius(int(1307/math.Sqrt(3)), p, 1, plan.Delta, 1, pairwise.TaskMetric, loss); plan.ParamRadius != want || !(want >= 1) {
		t.Errorf("B = %v, want the rule's %v", plan.ParamRadius, want)
	}
	for _, site := range sites {
		sc, err := pairSGDSchedule(pairwise.TaskMetric, site.Records, p, plan.Phases, s.LocalPasses, 1, plan.Epsilon, plan.Delta)
		if err != nil {
			t.Fatal(err)
		}
		q, _, C := dpalgo.PairSGDDefaults(site.Records, pairwise.TaskMetric, 1)
		if sc.cal.Q != q || sc.cal.Clip != C || sc.local != max(1, int(math.Round(1/q))) || sc.cal.Steps != 10*sc.local {
			t.Errorf("site %s: schedule %+v, q %v", site.Name, sc, q)
		}
		if plan.Sensitivity[site.Name] != sc.cal.Sensitivity || !(sc.cal.Sensitivity >= 2*C) {
			t.Errorf("site %s: plan Δ' %v, calibration %v", site.Name, plan.Sensitivity[site.Name], sc.cal.Sensitivity)
		}
		z := sc.cal.Sigma / sc.cal.Sensitivity
		eps, _, err := dp.SubsampledGaussianEpsilon(sc.cal.Q, z, sc.cal.Steps, plan.Delta, dp.ReplaceOne)
		if err != nil {
			t.Fatal(err)
		}
		if !(eps <= 1) || math.Abs(eps-sc.cal.Epsilon) > 1e-9 {
			t.Errorf("site %s: accountant ε = %v, calibration says %v", site.Name, eps, sc.cal.Epsilon)
		}
		// Tight: 2 % less noise would break the budget.
		if e2, _, _ := dp.SubsampledGaussianEpsilon(sc.cal.Q, 0.98*z, sc.cal.Steps, plan.Delta, dp.ReplaceOne); !(e2 > 1) {
			t.Errorf("site %s: z = %v is not the smallest multiplier (0.98z gives ε = %v)", site.Name, z, e2)
		}
	}
	// A given B is kept; a site with one record is refused before any release.
	s2 := &Spec{Algo: FedDPPairSGD, Task: protocol.TaskMetric, FeatureRadius: 1, Epsilon: 1, ParamRadius: 2}
	a.Configure(s2)
	if p2, err := a.Plan(s2, sites, p); err != nil || p2.ParamRadius != 0 {
		t.Errorf("given B: plan %+v, %v", p2, err)
	}
	if _, err := a.Plan(s, []SiteInfo{{"a", 100}, {"tiny", 1}}, p); err == nil {
		t.Error("a site with one record was planned")
	}
}
