package fedalgo

import (
	"math"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

// Secure aggregation's options are checked generically: refused for an
// algorithm that releases no sum, for DDG parameters a client sets, and
// for out-of-range thresholds and colluders; planned options certify the
// job's ε at t − κ shares.
func TestSecAggOptions(t *testing.T) {
	opt := func(kv ...float64) protocol.Options {
		names := []string{OptSecAgg, OptSecAggThreshold, OptSecAggColluders, "secagg-scale"}
		m := map[string]float64{}
		for i, v := range kv {
			if v >= 0 {
				m[names[i]] = v
			}
		}
		return protocol.OptionsOf(m)
	}
	sites := []SiteInfo{{Name: "a", Records: 50}, {Name: "b", Records: 60}, {Name: "c", Records: 70}, {Name: "d", Records: 80}}
	for _, c := range []struct {
		name, algo, agg string
		options         protocol.Options
		want            string // "" plans
	}{
		{"ok", FedDPSSP, "", opt(1, 3, 1), ""},
		{"default threshold", FedDPSSP, "", opt(1), ""},
		{"no sum", FedAvg, "", opt(1), "does not release a sum"},
		{"secagg 2", FedDPSSP, "", opt(2), "give 1"},
		{"client scale", FedDPSSP, "", opt(1, -1, -1, 5), "set by the coordinator"},
		{"threshold over K", FedDPSSP, "", opt(1, 5), "must be in [2, 4]"},
		{"threshold K/2", FedDPSSP, "", opt(1, 2), "must exceed half the 4 participants"},
		{"colluders ≥ t", FedDPSSP, "", opt(1, 3, 3), "fewer than the threshold"},
		{"2t ≤ K + κ", FedDPSSP, "", opt(1, 3, 2), "2t > K + κ; raise secagg-threshold to at least 4"},
		{"median", FedDPSSP, "median", opt(1), "aggregation"},
		{"threshold without secagg", FedDPSSP, "", opt(-1, 3), "without secagg"},
	} {
		spec := Spec{Algo: c.algo, Task: "auc", FeatureRadius: 1, Epsilon: 1, Aggregation: c.agg, Options: c.options}
		a, err := Configure(&spec)
		var opts protocol.Options
		var plan *Plan
		if err == nil {
			if plan, err = a.Plan(&spec, sites, 3); err == nil {
				opts, err = PlanSecAgg(a, &spec, sites, 3, plan)
			}
		}
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		job := &protocol.JobAnnounce{Job: "j", Algo: c.algo, Task: "auc", Loss: "square", Params: 3, Phases: 1, FeatureRadius: 1,
			Epsilon: 1, Delta: plan.Delta, Sites: []string{"a", "b", "c", "d"}, Options: opts}
		if err := job.Validate(); err != nil {
			t.Fatalf("%s: planned announcement invalid: %v", c.name, err)
		}
		sec, err := SecAggOf(job)
		if err != nil || sec == nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The statistics' length as the algorithm states it (not hard-coded).
		dim, _, _, err := a.(SumReleaser).SumShape(&spec, sites, 3)
		if err != nil {
			t.Fatal(err)
		}
		fl, err := sec.Floors(4)
		if err != nil {
			t.Fatal(err)
		}
		g, err := sec.DDG(dim, 4, fl.Copies)
		if err != nil {
			t.Fatal(err)
		}
		e, err := g.Epsilon(1, fl.Collusion, job.Delta)
		if err != nil || e > 1 || e < 0.99 {
			t.Errorf("%s: t = %d, κ = %d: ε = %v (%v), want ≤ 1 and tight", c.name, sec.Threshold, sec.Colluders, e, err)
		}
		// Every site recomputes the planned Δ, δ_f and rotation exactly
		// (the honest plan passes SiteSecAgg unchanged).
		own, odim, err := SiteSecAgg(job, 50)
		if err != nil || odim != dim || own.Sens != sec.Sens || own.Fail != sec.Fail || own.Rotation != sec.Rotation {
			t.Errorf("%s: the site's check of the honest plan: %+v, dim %d (%v); planned %+v, dim %d", c.name, own, odim, err, sec, dim)
		}
	}
}

// For every algorithm of the registry that releases a sum, a site
// recomputes exactly what the plan announced — the sensitivity Δ, δ_f,
// the rotation seed and the vector's length — at every participant, of
// unequal sizes: an honest job's encoding and charge are the plan's, bit
// for bit, and only a coordinator that announces otherwise is refused.
func TestSiteSecAggMatchesPlan(t *testing.T) {
	sites := []SiteInfo{{Name: "a", Records: 50}, {Name: "b", Records: 64}, {Name: "c", Records: 90}}
	names := []string{"a", "b", "c"}
	n := 0
	for _, algo := range Names() {
		spec := Spec{ID: "j", Algo: algo, Task: "auc", FeatureRadius: 1, Epsilon: 1, Seed: 11, Options: protocol.OptionsOf(map[string]float64{OptSecAgg: 1})}
		if algo == FedDPGDGrad {
			spec.Rounds = 2
		}
		a, err := Configure(&spec)
		if err != nil {
			continue // not a SumReleaser (or needs other options)
		}
		n++
		plan, err := a.Plan(&spec, sites, 3)
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		opts, err := PlanSecAgg(a, &spec, sites, 3, plan)
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		B := spec.ParamRadius
		if plan.ParamRadius > 0 {
			B = plan.ParamRadius
		}
		job := &protocol.JobAnnounce{Job: "j", Algo: algo, Task: "auc", Loss: spec.Loss, Params: 3, Phases: plan.Phases, Eta: plan.Eta,
			ParamRadius: B, FeatureRadius: 1, Lambda: spec.Lambda, Epsilon: plan.Epsilon, Delta: plan.Delta, Seed: spec.Seed, Sites: names, Options: opts}
		sec, err := SecAggOf(job)
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		dim, _, _, err := a.(SumReleaser).SumShape(&spec, sites, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sites {
			own, odim, err := SiteSecAgg(job, s.Records)
			if err != nil {
				t.Fatalf("%s at %s: the honest plan refused: %v", algo, s.Name, err)
			}
			if odim != dim || own.Sens != sec.Sens || own.Fail != sec.Fail || own.Rotation != sec.Rotation || *own != *sec {
				t.Errorf("%s at %s: the site computes %+v (dim %d), the plan announced %+v (dim %d)", algo, s.Name, own, odim, sec, dim)
			}
		}
	}
	if n < 6 {
		t.Errorf("%d algorithms with secure aggregation, want at least the 6 SumReleasers", n)
	}
}

// Removable noise copies are the complete graph's default: Floors splits
// each site's noise by dp.RemovableSplit and counts copies; secagg-keep-all
// (and the sparse variant) keep one copy per site and count sites. The
// option takes 0 or 1 only, and a planned job carries it to the sites.
func TestSecAggFloorsCopies(t *testing.T) {
	s := &SecAgg{Threshold: 3}
	fl, err := s.Floors(4)
	if err != nil || fl.Copies != 4 || fl.Keep != 3 || fl.Floor != 12 || fl.Collusion != 12 || fl.Removable() != 1 {
		t.Fatalf("K = 4, t = 3: %+v, %v; want 4 copies, 3 kept, floors 12 and 12", fl, err)
	}
	s = &SecAgg{Threshold: 8, Colluders: 2}
	if fl, err = s.Floors(10); err != nil || fl.Copies != 4 || fl.Keep != 3 || fl.Floor != min(10*3, 8*4) || fl.Collusion != 6*4 {
		t.Fatalf("K = 10, t = 8, κ = 2: %+v, %v", fl, err)
	}
	s = &SecAgg{Threshold: 3, KeepAll: true}
	if fl, err = s.Floors(4); err != nil || fl.Copies != 1 || fl.Keep != 1 || fl.Floor != 3 || fl.Collusion != 3 {
		t.Fatalf("keep-all: %+v, %v", fl, err)
	}
	for _, v := range []float64{0.5, 2, -1} {
		if _, err := parseSecAgg(protocol.OptionsOf(map[string]float64{OptSecAgg: 1, OptSecAggKeepAll: v})); err == nil {
			t.Errorf("%s = %v accepted", OptSecAggKeepAll, v)
		}
	}
	sites := []SiteInfo{{Name: "a", Records: 50}, {Name: "b", Records: 60}, {Name: "c", Records: 70}, {Name: "d", Records: 80}}
	var sigma [2]float64
	for i, keepAll := range []bool{false, true} {
		m := map[string]float64{OptSecAgg: 1}
		if keepAll {
			m[OptSecAggKeepAll] = 1
		}
		spec := Spec{Algo: FedDPSSP, Task: "auc", FeatureRadius: 1, Epsilon: 1, Options: protocol.OptionsOf(m)}
		a, err := Configure(&spec)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := a.Plan(&spec, sites, 3)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := PlanSecAgg(a, &spec, sites, 3, plan)
		if err != nil {
			t.Fatal(err)
		}
		sec, err := parseSecAgg(opts)
		if err != nil || sec.KeepAll != keepAll {
			t.Fatalf("keep-all %v: planned %+v, %v", keepAll, sec, err)
		}
		// The calibrated per-copy scale: m copies of it carry the
		// variance one site's share had with keep-all (the same total,
		// within the calibration's 10⁻⁶).
		fl, err := sec.Floors(4)
		if err != nil {
			t.Fatal(err)
		}
		sigma[i] = sec.SiteSigma(fl.Copies)
		t.Logf("keep-all %v: %d copies of s = %.6g (site σ %.6g)", keepAll, fl.Copies, sec.Scale, sigma[i])
	}
	if math.Abs(sigma[0]/sigma[1]-1) > 1e-5 {
		t.Errorf("a site's whole noise σ %v with removable copies, %v without: the same guarantee needs the same total", sigma[0], sigma[1])
	}
}

// fed-dp-pair-sgd releases a sum for the AUC task only: Configure refuses
// secure aggregation for its metric form before a job exists (the plan
// used to abort it at the coordinator).
func TestSecAggRefusedForMetricPairSGD(t *testing.T) {
	for _, task := range []string{"metric", "auc"} {
		spec := Spec{Algo: FedDPPairSGD, Task: task, FeatureRadius: 1, Epsilon: 1, Options: protocol.OptionsOf(map[string]float64{OptSecAgg: 1})}
		_, err := Configure(&spec)
		if refused := err != nil && strings.Contains(err.Error(), "AUC task only"); refused != (task == "metric") {
			t.Errorf("task %s: %v", task, err)
		}
	}
}
