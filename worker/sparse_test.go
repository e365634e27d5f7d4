package worker

import (
	"fmt"
	"math"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
)

// sparseAnnounce plans fed-dp-lda with secure aggregation over 40 sites
// (s1 … s40, 64 records each) as the coordinator does, with the given
// job options added (secagg = 1 always).
func sparseAnnounce(t *testing.T, opts map[string]float64) *protocol.JobAnnounce {
	t.Helper()
	o := map[string]float64{fedalgo.OptSecAgg: 1}
	for k, v := range opts {
		o[k] = v
	}
	spec := fedalgo.Spec{ID: "j", Algo: fedalgo.FedDPLDA, Task: "auc", FeatureRadius: 1, Epsilon: 1, Delta: 1e-3, Seed: 7, Options: protocol.OptionsOf(o)}
	a, err := fedalgo.Configure(&spec)
	if err != nil {
		t.Fatal(err)
	}
	sites := make([]fedalgo.SiteInfo, 40)
	names := make([]string, len(sites))
	for i := range sites {
		sites[i] = fedalgo.SiteInfo{Name: fmt.Sprintf("s%d", i+1), Records: 64}
		names[i] = sites[i].Name
	}
	const params = 3
	plan, err := a.Plan(&spec, sites, params)
	if err != nil {
		t.Fatal(err)
	}
	m := &protocol.JobAnnounce{Job: "j", Algo: spec.Algo, Task: spec.Task, Loss: spec.Loss, Params: params,
		LocalPasses: spec.LocalPasses, Eta: spec.Eta, ParamRadius: spec.ParamRadius, FeatureRadius: spec.FeatureRadius,
		Lambda: spec.Lambda, Seed: spec.Seed, Sites: names, Calibration: spec.Calibration}
	m.Phases, m.Eta, m.Epsilon, m.Delta = plan.Phases, plan.Eta, plan.Epsilon, plan.Delta
	if plan.ParamRadius > 0 {
		m.ParamRadius = plan.ParamRadius
	}
	if m.Options, err = fedalgo.PlanSecAgg(a, &spec, sites, params, plan); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// SecAgg+ at a site (fedalgo's secagg-degree): the honest plan is
// accepted, its round runs the sparse graph, and the ledger records the
// degree and the floors the charge counted — the sparse floor, below
// t − κ — with ε within the job's. A coordinator that calibrates the
// noise for the complete graph's t − κ shares but announces the sparse
// variant (its noise too small for the sparse floor) is refused before
// anything leaves, and so are absurd degrees: nothing charged, nothing
// sent.
func TestSparseSecAggSite(t *testing.T) {
	const degree = 34
	honest := sparseAnnounce(t, map[string]float64{fedalgo.OptSecAggDegree: degree})
	o := runJob(t, honest)
	if o.aborted || len(o.leaked) != 1 {
		t.Fatalf("honest sparse job not accepted: %v, err %v", kinds(o.outs), o.w.Err())
	}
	driveToMasked(t, o.w, 1, o.outs[len(o.outs)-1].Msg)
	led := o.w.Ledger()
	if len(led) != 1 || led[0].SecAgg == nil {
		t.Fatalf("ledger %v", led)
	}
	k, th := 40, secagg.DefaultThreshold(40)
	r, err := secagg.SparseRule(k, 0, degree, th)
	if err != nil {
		t.Fatal(err)
	}
	local, floor := r.Local, r.Floor
	c := led[0].SecAgg
	if c.Degree != degree || c.Floor != floor || c.CollusionFloor != floor || floor >= th {
		t.Fatalf("charge %+v: want degree %d, floors %d (ℓ = %d) below t = %d", c, degree, floor, local, th)
	}
	if !(c.Collusion <= honest.Epsilon*(1+1e-9)) {
		t.Fatalf("charged ε %g above the job's %g", c.Collusion, honest.Epsilon)
	}

	complete := sparseAnnounce(t, nil)
	scale := func(m *protocol.JobAnnounce) float64 {
		for _, o := range m.Options {
			if o.Name == "secagg-scale" {
				return o.Value
			}
		}
		return 0
	}
	if !(scale(complete) < scale(honest)) {
		t.Fatalf("the sparse plan's per-site scale %g is not above the complete graph's %g", scale(honest), scale(complete))
	}
	lied := cloneAnnounce(complete)
	optionField(fedalgo.OptSecAggDegree).set(lied, degree)
	cases := map[string]*protocol.JobAnnounce{"complete graph's calibration": lied}
	for _, v := range []float64{-1, 1.5, math.NaN(), math.Inf(1), float64(k - 1), 2} {
		m := cloneAnnounce(honest)
		optionField(fedalgo.OptSecAggDegree).set(m, v)
		cases[fmt.Sprintf("degree %v", v)] = m
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			refusedNaming(t, runJob(t, m), "secagg-degree", "ε =")
		})
	}
}
