package dp

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustCompose(t *testing.T, rs []Release, delta float64) Report {
	t.Helper()
	rep, err := Compose(rs, delta)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Advanced composition by hand (Dwork & Roth Thm 3.20), k = 100,
// ε = 0.1, δ' = 1e-6:
//
//	√(2·100·ln 10⁶)·0.1 = √(2763.1021115928548)·0.1 = 5.2565217697569320
//	100·0.1·(e^0.1 − 1)  = 10·0.10517091807564762  = 1.0517091807564762
//	ε' = 6.3082309505134082 (mpmath: 6.308230950513408226…), δ_total = 1e-6.
//
// Basic composition gives 10. Compose reports both, and its best is no
// larger (zCDP, ρ = 100·0.1²/2 = 0.5, does better here:
// 0.5 + 2√(0.5·ln 10⁶) = 5.7565217697569320).
func TestAdvancedCompositionByHand(t *testing.T) {
	const want = 6.3082309505134082
	e, d, err := AdvancedComposition(100, 0.1, 0, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if e < want || relErr(e, want) > 1e-14 || d < 1e-6 || relErr(d, 1e-6) > 1e-14 {
		t.Fatalf("advanced = (%.17g, %v), want (%.17g, 1e-6)", e, d, want)
	}
	rep := mustCompose(t, []Release{{Mechanism: MechanismPure, Epsilon: 0.1, Count: 100}}, 1e-6)
	adv, basic := rep.Method(MethodAdvanced), rep.Method(MethodBasic)
	if relErr(adv.Epsilon, want) > 1e-14 || adv.Delta != 1e-6 {
		t.Errorf("advanced row %+v", adv)
	}
	if relErr(basic.Epsilon, 10) > 1e-14 || basic.Delta != 0 {
		t.Errorf("basic row %+v, want (10, 0)", basic)
	}
	if z := rep.Method(MethodZCDP).Epsilon; relErr(z, 5.7565217697569320) > 1e-13 {
		t.Errorf("zcdp ε = %.17g, want 5.7565217697569320", z)
	}
	if rep.Best.Epsilon > math.Min(adv.Epsilon, basic.Epsilon) {
		t.Errorf("best %v above min(basic, advanced)", rep.Best.Epsilon)
	}
	// With k·δ: 10 releases of (0.5, 1e-7) at δ = 1e-5 leave δ' = 9e-6.
	e, d, _ = AdvancedComposition(10, 0.5, 1e-7, 9e-6)
	wantE := math.Sqrt(20*math.Log(1/9e-6))*0.5 + 10*0.5*(math.Exp(0.5)-1)
	if e < wantE || relErr(e, wantE) > 1e-13 || relErr(d, 1e-5) > 1e-14 {
		t.Errorf("advanced(10, 0.5, 1e-7, 9e-6) = (%v, %v), want (%v, 1e-5)", e, d, wantE)
	}
}

// Basic composition sums ε and δ (Dwork & Roth Thm 3.16); Laplace costs
// Δ₁/b; pure-only releases give δ = 0 and work at δ = 0.
func TestBasicCompositionSums(t *testing.T) {
	rs := []Release{
		{Mechanism: MechanismPure, Epsilon: 0.25, Count: 4},               // 1
		{Mechanism: MechanismLaplace, Sensitivity: 2, Scale: 4},           // 0.5
		{Mechanism: MechanismApprox, Epsilon: 0.5, Delta: 1e-7, Count: 2}, // 1, 2e-7
		{Mechanism: MechanismApprox, Epsilon: 0.125},                      // 0.125
	}
	b := mustCompose(t, rs, 1e-5).Method(MethodBasic)
	if relErr(b.Epsilon, 2.625) > 1e-14 || relErr(b.Delta, 2e-7) > 1e-14 {
		t.Fatalf("basic = (%v, %v), want (2.625, 2e-7)", b.Epsilon, b.Delta)
	}
	pure := mustCompose(t, rs[:2], 0)
	if relErr(pure.Best.Epsilon, 1.5) > 1e-14 || pure.Best.Delta != 0 || pure.Best.Method != MethodBasic {
		t.Fatalf("pure at δ = 0: best %+v, want basic (1.5, 0)", pure.Best)
	}
	// The (ε, δ > 0) releases are added by basic composition in the other
	// accountants too (an approx release with δ = 0 is pure and has an RDP
	// curve): the RDP ε of the rest at δ − 2e-7, plus 1 in ε.
	rep := mustCompose(t, rs, 1e-5)
	rest := []Release{rs[0], rs[1], rs[3]}
	for _, m := range []Method{MethodRDP, MethodZCDP, MethodZCDPViaRDP} {
		want := mustCompose(t, rest, 1e-5-2e-7).Method(m).Epsilon + 1
		if got := rep.Method(m).Epsilon; got < want*(1-1e-15) || relErr(got, want) > 1e-12 {
			t.Errorf("%s with (ε, δ) releases = %v, want %v", m, got, want)
		}
	}
}

// Parallel composition: releases on disjoint partitions cost the maximum
// over partitions of (untagged + partition) — here basic composition gives
// 0.5 + 2·2 = 4.5 for partition B, against 0.5 + 1 + 4 = 5.5 if the same
// releases all read the whole dataset.
func TestParallelCompositionIsMax(t *testing.T) {
	rs := []Release{
		{Mechanism: MechanismPure, Epsilon: 0.5},
		{Mechanism: MechanismPure, Epsilon: 1, Partition: "A"},
		{Mechanism: MechanismPure, Epsilon: 2, Count: 2, Partition: "B"},
	}
	rep := mustCompose(t, rs, 0)
	if b := rep.Method(MethodBasic); relErr(b.Epsilon, 4.5) > 1e-14 || b.Partition != "B" {
		t.Fatalf("basic = %+v, want 4.5 in partition B", b)
	}
	if relErr(rep.Best.Epsilon, 4.5) > 1e-14 || rep.Best.Partition != "B" {
		t.Fatalf("best = %+v", rep.Best)
	}
	if len(rep.Partitions) != 2 {
		t.Fatalf("partitions = %+v, want A, B", rep.Partitions)
	}
	for i, want := range []float64{1.5, 4.5} {
		if relErr(rep.Partitions[i].Best.Epsilon, want) > 1e-14 {
			t.Errorf("partition %q: %v, want %v", rep.Partitions[i].Partition, rep.Partitions[i].Best.Epsilon, want)
		}
	}
	untagged := make([]Release, len(rs))
	for i, r := range rs {
		r.Partition = ""
		untagged[i] = r
	}
	if e := mustCompose(t, untagged, 0).Best.Epsilon; relErr(e, 5.5) > 1e-14 {
		t.Fatalf("sequential = %v, want 5.5", e)
	}
	// Every accountant takes the max: Gaussian partitions with μ = 1 and
	// μ = 2 give the μ = 2 partition's ε for gdp, rdp and zcdp.
	g := []Release{
		{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 1, Partition: "s1"},
		{Mechanism: MechanismGaussian, Sensitivity: 2, Sigma: 1, Partition: "s2"},
	}
	par := mustCompose(t, g, 1e-6)
	two := mustCompose(t, g[1:2], 1e-6)
	for _, m := range []Method{MethodGDP, MethodRDP, MethodZCDP, MethodZCDPViaRDP} {
		if par.Method(m).Epsilon != two.Method(m).Epsilon || par.Method(m).Partition != "s2" {
			t.Errorf("%s: parallel %+v, partition s2 alone %v", m, par.Method(m), two.Method(m).Epsilon)
		}
	}
}

// Best takes, per partition, the smallest valid ε over accountants, then
// the max: a Gaussian partition (gdp best) and a pure one (basic best, gdp
// inapplicable because of a zcdp release elsewhere is not the case here).
func TestBestMixesAccountantsAcrossPartitions(t *testing.T) {
	rs := []Release{
		{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 2, Count: 4, Partition: "gauss"},
		{Mechanism: MechanismZCDP, Rho: 0.5, Partition: "rho"},
	}
	rep := mustCompose(t, rs, 1e-5)
	if rep.Method(MethodGDP).OK {
		t.Fatalf("gdp should not apply to a zcdp release: %+v", rep.Method(MethodGDP))
	}
	// partition "gauss" is μ = 1 (gdp 4.3772), "rho" is ρ = 0.5 (zcdp-rdp);
	// the total is the larger of the two partitions' bests.
	g := mustCompose(t, rs[:1], 1e-5).Best.Epsilon
	z := mustCompose(t, rs[1:], 1e-5).Best.Epsilon
	if rep.Best.Epsilon != math.Max(g, z) {
		t.Fatalf("best %v, want max(%v, %v)", rep.Best.Epsilon, g, z)
	}
}

// More releases never lower ε, for any accountant: add random releases one
// at a time (seeded) and check every applicable method's ε does not
// decrease, and that a method never becomes applicable again once lost (a
// method becomes applicable with the first release of its kind, e.g. gdp
// with the first Gaussian one).
func TestMonotoneInReleases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		var rs []Release
		prev := map[Method]float64{}
		for step := 0; step < 25; step++ {
			var r Release
			switch rng.IntN(6) {
			case 0, 1:
				r = Release{Mechanism: MechanismGaussian, Sensitivity: 0.1 + rng.Float64(), Sigma: 0.5 + 5*rng.Float64()}
			case 2:
				r = Release{Mechanism: MechanismLaplace, Sensitivity: 0.1 + rng.Float64(), Scale: 1 + 10*rng.Float64()}
			case 3:
				r = Release{Mechanism: MechanismPure, Epsilon: 0.01 + 0.3*rng.Float64()}
			case 4:
				r = Release{Mechanism: MechanismApprox, Epsilon: 0.01 + 0.3*rng.Float64(), Delta: 1e-9 * rng.Float64()}
			case 5:
				r = Release{Mechanism: MechanismZCDP, Rho: 0.001 + 0.05*rng.Float64()}
			}
			if trial%2 == 1 { // keep some trials free of Gaussian/zcdp for basic and advanced
				if r.Mechanism == MechanismGaussian || r.Mechanism == MechanismZCDP {
					r = Release{Mechanism: MechanismPure, Epsilon: 0.05}
				}
			}
			r.Count = 1 + rng.IntN(3)
			rs = append(rs, r)
			rep, err := Compose(rs, 1e-6)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range append(rep.Methods, Estimate{Method: "best", OK: rep.Best.OK, Epsilon: rep.Best.Epsilon}) {
				p, seen := prev[e.Method]
				if !e.OK {
					if seen {
						prev[e.Method] = math.Inf(1) // lost
					}
					continue
				}
				if seen && !(e.Epsilon >= p) {
					t.Fatalf("trial %d step %d: %s ε went from %v to %v after adding %+v", trial, step, e.Method, p, e.Epsilon, r)
				}
				prev[e.Method] = e.Epsilon
			}
		}
	}
}

// Every reported ε is an upper bound on its formula evaluated in plain
// float64: for a Gaussian-only run δ(ε) ≤ δ at the gdp ε (and by the
// independent integral), and the rdp ε is at least the CKS formula at the
// reported order with the plainly summed curve.
func TestReportedEpsilonsRoundUp(t *testing.T) {
	rs := []Release{
		{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 3, Count: 7},
		{Mechanism: MechanismGaussian, Sensitivity: 0.5, Sigma: 1},
	}
	rep := mustCompose(t, rs, 1e-7)
	mu := math.Sqrt(7.0/9 + 0.25)
	g := rep.Method(MethodGDP)
	if d := gdpDeltaPlain(mu, g.Epsilon); d > 1e-7 {
		t.Errorf("δ(gdp ε) = %v > 1e-7", d)
	}
	if d := gdpDeltaByIntegral(mu, g.Epsilon); d > 1e-7*(1+1e-9) {
		t.Errorf("integral δ(gdp ε) = %v > 1e-7", d)
	}
	r := rep.Method(MethodRDP)
	a := r.Order
	tau := a * (7.0/9 + 0.25) / 2
	if plain := tau + math.Log((a-1)/a) - (math.Log(1e-7)+math.Log(a))/(a-1); r.Epsilon < plain {
		t.Errorf("rdp ε %v below its formula %v at α = %v", r.Epsilon, plain, a)
	}
}

func TestNoReleasesCostsNothing(t *testing.T) {
	rep := mustCompose(t, nil, 1e-5)
	if !rep.Best.OK || rep.Best.Epsilon != 0 || rep.Best.Delta != 0 {
		t.Fatalf("best = %+v, want (0, 0)", rep.Best)
	}
}

// Inputs are validated and the errors name the value.
func TestComposeValidation(t *testing.T) {
	g := Release{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 1}
	for _, c := range []struct {
		name  string
		rs    []Release
		delta float64
		want  string
	}{
		{"δ NaN", []Release{g}, math.NaN(), "NaN"},
		{"δ = 1", []Release{g}, 1, "δ = 1"},
		{"δ < 0", []Release{g}, -0.1, "-0.1"},
		{"σ NaN", []Release{{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: math.NaN()}}, 1e-5, "σ = NaN"},
		{"σ = 0", []Release{{Mechanism: MechanismGaussian, Sensitivity: 1}}, 1e-5, "σ = 0"},
		{"Δ < 0", []Release{{Mechanism: MechanismGaussian, Sensitivity: -2, Sigma: 1}}, 1e-5, "-2"},
		{"b = +Inf", []Release{{Mechanism: MechanismLaplace, Sensitivity: 1, Scale: math.Inf(1)}}, 1e-5, "+Inf"},
		{"ε = 0 pure", []Release{{Mechanism: MechanismPure}}, 1e-5, "ε = 0"},
		{"approx δ = 1", []Release{{Mechanism: MechanismApprox, Epsilon: 1, Delta: 1}}, 1e-5, "δ = 1"},
		{"ρ < 0", []Release{{Mechanism: MechanismZCDP, Rho: -1}}, 1e-5, "ρ = -1"},
		{"count < 0", []Release{{Mechanism: MechanismPure, Epsilon: 1, Count: -3}}, 1e-5, "count = -3"},
		{"unknown", []Release{{Mechanism: "subsampled-gaussian"}}, 1e-5, "subsampled-gaussian"},
		{"stray field", []Release{{Mechanism: MechanismLaplace, Sensitivity: 1, Scale: 1, Sigma: 2}}, 1e-5, "sigma = 2"},
		{"names release", []Release{g, {Mechanism: MechanismPure, Epsilon: math.NaN(), Label: "step 7", Partition: "site-b"}}, 1e-5, `release 1 ("step 7", partition "site-b")`},
	} {
		_, err := Compose(c.rs, c.delta)
		if err == nil || !errors.Is(err, ErrInvalidAccounting) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalidAccounting naming %q", c.name, err, c.want)
		}
	}
	for _, f := range []func() error{
		func() error { _, err := GaussianDPEpsilon(math.NaN(), 1e-5); return err },
		func() error { _, err := GaussianDPEpsilon(1, 0); return err },
		func() error { _, err := AnalyticGaussianSigma(0, 1e-5, 1); return err },
		func() error { _, err := AnalyticGaussianSigma(1, 1e-5, math.Inf(1)); return err },
		func() error { _, err := GaussianSigma(0.5, 1, 1); return err },
		func() error { _, err := RhoForEpsilonDelta(-1, 1e-5); return err },
		func() error { _, err := RhoForEpsilonDelta(1, math.NaN()); return err },
		func() error { _, err := EpsilonForRho(math.NaN(), 1e-5); return err },
		func() error { _, err := RDPToDP(1, 0.1, 1e-5); return err },
		func() error { _, _, err := AdvancedComposition(0, 0.1, 0, 1e-6); return err },
		func() error { _, _, err := AdvancedComposition(10, 0.1, 0, 0); return err },
	} {
		if err := f(); err == nil || !errors.Is(err, ErrInvalidAccounting) {
			t.Errorf("err = %v, want ErrInvalidAccounting", err)
		}
	}
}

// No accountant bounds Gaussian releases at δ = 0, nor (ε, δ) releases
// whose δ's exceed the target: the report comes back with ErrNoAccountant.
func TestComposeNoAccountant(t *testing.T) {
	_, err := Compose([]Release{{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 1}}, 0)
	if !errors.Is(err, ErrNoAccountant) {
		t.Errorf("Gaussian at δ = 0: err = %v", err)
	}
	rep, err := Compose([]Release{{Mechanism: MechanismApprox, Epsilon: 1, Delta: 1e-3}}, 1e-5)
	if !errors.Is(err, ErrNoAccountant) || rep.Best.OK {
		t.Errorf("Σδ > δ: err = %v, best %+v", err, rep.Best)
	}
}

// A report with inapplicable methods encodes to JSON (ε = null).
func TestReportJSON(t *testing.T) {
	rep := mustCompose(t, []Release{{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 1}}, 1e-5)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var generic struct{ Methods []map[string]any }
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	for _, m := range generic.Methods {
		if m["method"] == "basic" && (m["ok"] != false || m["epsilon"] != nil) {
			t.Errorf("basic in JSON: %v, want ok false and epsilon null", m)
		}
	}
	var back struct{ Best Estimate }
	if err := json.Unmarshal(b, &back); err != nil || back.Best.Epsilon != rep.Best.Epsilon {
		t.Errorf("round trip: %v, %+v", err, back.Best)
	}
	r := Release{Mechanism: MechanismLaplace, Sensitivity: 1, Scale: 2, Count: 3, Partition: "a"}
	b, _ = json.Marshal(r)
	if string(b) != `{"mechanism":"laplace","sensitivity":1,"scale":2,"count":3,"partition":"a"}` {
		t.Errorf("release JSON: %s", b)
	}
}
