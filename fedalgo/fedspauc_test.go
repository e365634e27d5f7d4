package fedalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// The accountant: for several (ε, δ, d, T) the plan's certified (ε, δ)
// is within the request and is what the exact Gaussian-DP accountant
// certifies for the site's σ's (Δ = 2 each); phase 1 gets ¾ of μ²; the
// charge grows with the phases and reaches the plan's certificate at the
// last one; a phase outside the job is refused.
func TestFedSPAUCAccountant(t *testing.T) {
	for _, c := range []struct {
		eps, delta float64
		d, rounds  int
	}{{1, 1e-4, 8, 0}, {0.3, 1e-6, 3, 5}, {4, 1e-3, 20, 1}, {1, 0, 8, 2}} {
		s := &Spec{Algo: FedDPSPAUC, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: c.eps, Delta: c.delta, Rounds: c.rounds}
		if _, err := Configure(s); err != nil {
			t.Fatal(err)
		}
		sites := []SiteInfo{{"a", 100}, {"b", 300}}
		p, err := fedSPAUC{}.Plan(s, sites, c.d)
		if err != nil {
			t.Fatal(err)
		}
		T := c.rounds
		if T == 0 {
			T = min(c.d, 2)
		}
		if p.Phases != T+1 {
			t.Fatalf("%+v: %d phases, want %d", c, p.Phases, T+1)
		}
		if c.delta == 0 && p.Delta != dp.DefaultDelta(300) {
			t.Errorf("δ = %v, want the rule's %v", p.Delta, dp.DefaultDelta(300))
		}
		sig, sens, cert, err := spaucCalibrate(p.Epsilon, p.Delta, p.Phases, c.d)
		if err != nil {
			t.Fatal(err)
		}
		g := p.Certified["a"]
		if !(g.Epsilon <= c.eps && g.Epsilon > 0.98*c.eps) || !(g.Delta <= p.Delta) || g != (Guarantee{cert.Epsilon, cert.Delta}) {
			t.Errorf("%+v: certified %+v (calibration %+v), request (%v, %v)", c, g, cert, c.eps, p.Delta)
		}
		if !(sens >= 2 && sens < 2*(1+1e-6)) || p.Sensitivity["b"] != sens {
			t.Errorf("sensitivity %v, plan %v", sens, p.Sensitivity)
		}
		// Independent recomputation: μ² = Σ (Δ'/σ)², the GDP curve at ε.
		var mu2 float64
		for _, s := range sig {
			mu2 += (sens / s) * (sens / s)
		}
		if d := dp.GaussianDPDelta(math.Sqrt(mu2), c.eps); !(d <= p.Delta) {
			t.Errorf("%+v: μ = %v gives δ(ε) = %v > %v", c, math.Sqrt(mu2), d, p.Delta)
		}
		if r := (sig[1] / sig[0]) * (sig[1] / sig[0]); math.Abs(r-3*float64(T)) > 1e-6*r {
			t.Errorf("σ_round²/σ₁² = %v, want 3T = %d (phase 1 gets ¾ of μ²)", r, 3*T)
		}
		j := &protocol.JobAnnounce{Algo: FedDPSPAUC, Epsilon: c.eps, Delta: p.Delta, Phases: p.Phases}
		prev := 0.0
		for k := 1; k <= p.Phases; k++ {
			e, _, err := spaucCharge(j, sig, k, c.d)
			if err != nil || !(e >= prev) || e > c.eps {
				t.Fatalf("%+v: phase %d charge %v (previous %v): %v", c, k, e, prev, err)
			}
			prev = e
		}
		if prev != cert.Epsilon {
			t.Errorf("%+v: last charge %v, the calibration certifies %v", c, prev, cert.Epsilon)
		}
		if _, _, err := spaucCharge(j, sig, p.Phases+1, c.d); err == nil {
			t.Error("a phase past the job charged")
		}
	}
	for _, bad := range []*Spec{
		{Algo: FedDPSPAUC, Task: protocol.TaskMetric, FeatureRadius: 1, Epsilon: 1},
		{Algo: FedDPSPAUC, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1, Eta: 0.1},
		{Algo: FedDPSPAUC, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1, Rounds: 65},
		{Algo: FedDPSPAUC, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1, Aggregation: "median"},
		{Algo: FedDPSPAUC, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 0},
	} {
		if _, err := Configure(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// spaucDiabetesLike returns n records of d features in the unit ball whose
// label shifts the mean along a fixed direction (a learnable problem).
func spaucToy(rng *rand.Rand, n, d int) *pairwise.Dataset {
	ds := &pairwise.Dataset{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		y := 1.0
		if rng.Float64() < 0.4 {
			y = -1
		}
		ds.Y[i] = y
		row := ds.X[i*d : (i+1)*d]
		for k := range row {
			row[k] = 0.15 * rng.NormFloat64()
		}
		row[0] += 0.2 * y
		row[1] += 0.1 * y
		if nr := pairwise.Norm2(row); nr > 1 {
			for k := range row {
				row[k] /= nr
			}
		}
	}
	return ds
}

// runSPAUC runs a plain fed-dp-spauc job over the sites' data in process
// (NewSite, Step, Combine, Final) with seeded noise and returns the model.
func runSPAUCJob(t *testing.T, parts []*pairwise.Dataset, eps float64, seed uint64) []float64 {
	t.Helper()
	s := &Spec{Algo: FedDPSPAUC, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: eps}
	a, err := Configure(s)
	if err != nil {
		t.Fatal(err)
	}
	var infos []SiteInfo
	var names []string
	for i, p := range parts {
		infos = append(infos, SiteInfo{Name: string(rune('a' + i)), Records: p.N})
		names = append(names, infos[i].Name)
	}
	d := parts[0].D
	p, err := a.Plan(s, infos, d)
	if err != nil {
		t.Fatal(err)
	}
	j := &protocol.JobAnnounce{Job: "j", Algo: FedDPSPAUC, Task: protocol.TaskAUC, Loss: s.Loss, Params: d, Phases: p.Phases,
		FeatureRadius: 1, ParamRadius: s.ParamRadius, Epsilon: p.Epsilon, Delta: p.Delta, Sites: names}
	loss, err := pairwise.LossByName(pairwise.TaskAUC, "square")
	if err != nil {
		t.Fatal(err)
	}
	var sites []Site
	for i, ds := range parts {
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Constraint: "l2", Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		site, err := a.NewSite(j, SiteEnv{Data: ds, Obj: obj, Noise: dp.NewSeededNoise(seed*100 + uint64(i)), Rand: rand.New(rand.NewPCG(seed, uint64(i)))})
		if err != nil {
			t.Fatal(err)
		}
		sites = append(sites, site)
	}
	comb, err := a.NewCombiner(j, nil)
	if err != nil {
		t.Fatal(err)
	}
	model := make([]float64, d)
	for k := 1; k <= p.Phases; k++ {
		var ups []*protocol.SiteUpdate
		for i, site := range sites {
			u, rel, err := site.Step(context.Background(), k, model)
			if err != nil {
				t.Fatal(err)
			}
			if rel == nil || rel.Records != parts[i].N || !(rel.Epsilon > 0 && rel.Epsilon <= eps) || len(u.Model) != UpdateLen(comb, d) {
				t.Fatalf("phase %d site %d: release %+v, update of %d values", k, i, rel, len(u.Model))
			}
			ups = append(ups, u)
		}
		model = comb.Combine(model, ups, protocol.Aggregation{})
		if k < p.Phases && k > 0 {
			// A resumed coordinator continues from the state alone.
			if st := comb.State(); st != nil {
				if comb, err = a.NewCombiner(j, st); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return comb.Final(model)
}

// Learning, in process: the same records pooled at one site, split iid
// over 4 sites, and split so that every site holds a single class all
// learn the planted direction. With little noise (ε = 10⁴) the three give
// the same model up to the noise — the sums are the pooled
// records' whatever the partition — and at ε = 1 a single-class
// federation ranks far above chance (a model independent of the labels
// has AUC 0.5 ± 0.03 on 2000 test records; the bound 0.8 is > 9 sd away;
// the runs are seeded, so the test is deterministic).
func TestFedSPAUCLearnsSingleClass(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const d = 5
	train, test := spaucToy(rng, 2000, d), spaucToy(rng, 2000, d)
	var pos, neg []int
	for i := 0; i < train.N; i++ {
		if train.Y[i] > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	single := []*pairwise.Dataset{train.Subset(pos[:len(pos)/2]), train.Subset(pos[len(pos)/2:]), train.Subset(neg[:len(neg)/2]), train.Subset(neg[len(neg)/2:])}
	iid := []*pairwise.Dataset{train.Slice(0, 500), train.Slice(500, 1000), train.Slice(1000, 1500), train.Slice(1500, 2000)}
	pooled := []*pairwise.Dataset{train}
	ref := runSPAUCJob(t, pooled, 1e4, 1)
	cosine := func(a, b []float64) float64 {
		c := 0.0
		for k := range a {
			c += a[k] * b[k]
		}
		return c / (pairwise.Norm2(a) * pairwise.Norm2(b))
	}
	wSingle, wIID := runSPAUCJob(t, single, 1e4, 2), runSPAUCJob(t, iid, 1e4, 2)
	// Same seeds: the partitions differ only in which site holds which
	// record, so the sums differ only by the sites' noise.
	if c := cosine(wSingle, wIID); !(c > 0.9999) {
		t.Errorf("ε = 10⁴: single-class %v, iid %v (cos %v)", wSingle, wIID, c)
	}
	// Different seeds: the pooled job differs by its noise (ε = 10⁴ is
	// certified at ε ≈ 50 by the calibration, μ ≈ 7: seeds move the
	// model's direction by cos ≈ 0.99).
	if c := cosine(wSingle, ref); !(c > 0.97) {
		t.Errorf("ε = 10⁴: single-class %v, pooled %v (cos %v)", wSingle, ref, c)
	}
	for name, parts := range map[string][]*pairwise.Dataset{"single-class": single, "iid": iid} {
		w := runSPAUCJob(t, parts, 1, 3)
		if auc := pairwise.LinearAUC(w, test); !(auc > 0.8) {
			t.Errorf("%s at ε = 1: test AUC %v ≤ 0.8", name, auc)
		}
	}
	if auc := pairwise.LinearAUC(ref, test); !(auc > 0.85) {
		t.Errorf("pooled, ε = 10⁴: test AUC %v", auc)
	}
}

// Under secure aggregation fed-dp-spauc keeps its 1 + T phases and makes
// the plain path's split (¾ of μ² to the statistics) by round weights: 1,
// then 1/√(3T) for each product round, whose squared weights sum to ⅓ of
// the statistics'. A job of the old 4T shape with T outside the range, or
// a single phase, is refused.
func TestFedSPAUCSecureWeights(t *testing.T) {
	var a fedSPAUC
	s := &Spec{Algo: FedDPSPAUC, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1,
		Options: protocol.OptionsOf(map[string]float64{OptSecAgg: 1})}
	if _, err := Configure(s); err != nil {
		t.Fatal(err)
	}
	p, err := a.Plan(s, []SiteInfo{{"a", 100}, {"b", 120}}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if p.Phases != 3 {
		t.Fatalf("secure plan: %d phases, want 1 + T = 3", p.Phases)
	}
	checkLeadWeights(t, a, []int{2, 3, 9}, 3)
	for _, phases := range []int{1, 2 + spaucMaxRounds} {
		if _, err := SumRoundWeights(a, phases, phases); err == nil {
			t.Errorf("%d phases: weights accepted", phases)
		}
	}
}
