package fedalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// The AUC form's plan: the defaults of the rule, 1 + T phases (with or
// without secure aggregation), the same σ's at the coordinator and every site
// (computed from ε, δ, d, T alone), certified within the request and tight
// (2 % less noise breaks it), the split σ₁ = σ_round/√T, and a charge per
// phase that grows to the whole job's certificate. Refusals name the
// problem.
func TestFedPairSumPlan(t *testing.T) {
	// (T, η) of the rule (dpalgo.PairSumDefaults; d = 8, δ = 1/(10 n_max)),
	// plain and secure: fixed numbers, so that a change of the rule or of
	// the calibration it reads shows here. One site has no secure form.
	for _, c := range []struct {
		n                   []int
		eps                 float64
		wantT, wantTSec     int
		wantEta, wantEtaSec float64
	}{
		{[]int{614}, 1, 2, 2, 6.683224, 6.683224},
		{[]int{154, 153, 153, 154}, 1, 2, 2, 3.796949, 7.593899}, // secure: K = 4, t = 3, m = 4 copies, 3 kept: the no-dropout sum is one central release (ς = 1)
		{[]int{49990}, 1, 16, 16, 8, 8},
		{[]int{5000, 5000}, 0.5, 9, 13, 7.814857, 7.651299},
	} {
		var sites []SiteInfo
		for i, n := range c.n {
			sites = append(sites, SiteInfo{Name: string(rune('a' + i)), Records: n})
		}
		const d = 8
		for _, secure := range []bool{false, true} {
			s := &Spec{Algo: FedDPPairSGD, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: c.eps}
			if secure {
				s.Options = protocol.OptionsOf(map[string]float64{OptSecAgg: 1})
			}
			a, err := Configure(s)
			if err != nil {
				t.Fatal(err)
			}
			if s.Loss != "logistic" || s.ParamRadius != 8 || s.Eta != 0 || s.LocalPasses != 0 {
				t.Fatalf("defaults %+v", s)
			}
			p, err := a.Plan(s, sites, d)
			if err != nil {
				t.Fatal(err)
			}
			wantPhases, wantEta := 1+c.wantT, c.wantEta
			if secure {
				wantPhases, wantEta = 1+c.wantTSec, c.wantEtaSec
			}
			if p.Phases != wantPhases || math.Abs(p.Eta-wantEta) > 1e-5 {
				t.Fatalf("n %v secure %v: plan %+v, want %d phases and η = %v", c.n, secure, p, wantPhases, wantEta)
			}
			if secure {
				continue
			}
			sig, sens, cert, err := pairSumCalibrate(p.Epsilon, p.Delta, p.Phases, d)
			if err != nil {
				t.Fatal(err)
			}
			if !(cert.Epsilon <= c.eps) || !(cert.Delta <= p.Delta) || p.Sensitivity["a"] != sens || !(sens >= 2) {
				t.Fatalf("certificate %+v, sensitivity %v (plan %v)", cert, sens, p.Sensitivity["a"])
			}
			if r := sig[0] / sig[1]; math.Abs(r-1/math.Sqrt(float64(c.wantT))) > 1e-9 {
				t.Errorf("σ₁/σ_round = %v, want 1/√T", r)
			}
			tight := append([]float64(nil), sig...)
			for i := range tight {
				tight[i] *= 0.98
			}
			if c2, err := dp.CertifyGaussian(pairSumPlan(p.Phases, p.Phases, d), tight, c.eps, p.Delta); err == nil && c2.Covers(c.eps, p.Delta) {
				t.Errorf("0.98σ still certifies (%v, %v): not the smallest", c2.Epsilon, c2.Delta)
			}
			j := &protocol.JobAnnounce{Algo: FedDPPairSGD, Epsilon: c.eps, Delta: p.Delta, Phases: p.Phases}
			last := 0.0
			for k := 1; k <= p.Phases; k++ {
				e, _, err := pairSumCharge(j, sig, k, d)
				if err != nil {
					t.Fatal(err)
				}
				if !(e > last) || e > c.eps {
					t.Errorf("phase %d: charge %v after %v", k, e, last)
				}
				last = e
			}
			if math.Abs(last-cert.Epsilon) > 1e-12 {
				t.Errorf("last charge %v, certificate %v", last, cert.Epsilon)
			}
		}
	}
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{LocalPasses: 1}, "local passes"},
		{Spec{Loss: "square"}, "loss"},
		{Spec{Aggregation: "median"}, "aggregation"},
		{Spec{Rounds: 300}, "outside"},
		{Spec{Eta: math.Inf(1)}, "finite"},
	} {
		s := c.s
		s.Algo, s.Task, s.FeatureRadius, s.Epsilon = FedDPPairSGD, protocol.TaskAUC, 1, 1
		if _, err := Configure(&s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one with %q", c.s, err, c.want)
		}
	}
}

// The secure shape the coordinator plans and the one every site recomputes
// from the announcement agree (length 2d + 2, Δ = 2), and a record's term
// never exceeds the clip n_max·√3 (statistics) — so clipping never binds.
func TestFedPairSumSecureShape(t *testing.T) {
	var a fedPairSGD
	s := &Spec{Algo: FedDPPairSGD, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1}
	sites := []SiteInfo{{"a", 10}, {"b", 30}}
	dim, clip, sens, err := a.SumShape(s, sites, 5)
	if err != nil || dim != 12 || sens != 2 || math.Abs(clip-30*math.Sqrt(3)) > 1e-12 {
		t.Fatalf("SumShape: %d, %v, %v, %v", dim, clip, sens, err)
	}
	j := &protocol.JobAnnounce{Algo: FedDPPairSGD, Task: protocol.TaskAUC, Params: 5, Phases: 4, FeatureRadius: 1, ParamRadius: 8,
		Options: protocol.OptionsOf(map[string]float64{OptSecAgg: 1})}
	if d2, s2, err := a.SiteSumShape(j, 10); err != nil || d2 != dim || s2 != sens {
		t.Errorf("SiteSumShape: %d, %v, %v", d2, s2, err)
	}
	j.Phases = 1 // no gradient round: not 1 + T
	if _, _, err := a.SiteSumShape(j, 10); err == nil {
		t.Error("a single phase under secure aggregation was accepted")
	}
	j.Phases = 2 + pairSumMaxRounds
	if _, _, err := a.SiteSumShape(j, 10); err == nil {
		t.Error("too many rounds under secure aggregation accepted")
	}
	// The weights split the budget as the plain path does: the
	// statistics' round 1, each of the T gradient rounds 1/√T.
	checkLeadWeights(t, a, []int{2, 5, 17}, 1)
	if _, err := SumRoundWeights(a, 1, 1); err == nil {
		t.Error("weights for a single phase accepted")
	}
	j.Phases, j.Task = 4, protocol.TaskMetric
	if _, _, err := a.SiteSumShape(j, 10); err == nil {
		t.Error("the metric task was given a sum shape")
	}
}

// runPairSumJob runs a plain fed-dp-pair-sgd AUC job over the sites' data
// in process (NewSite, Step, Combine through checkpoints, Final) with
// seeded noise and returns the model.
func runPairSumJob(t *testing.T, parts []*pairwise.Dataset, eps float64, seed uint64) []float64 {
	t.Helper()
	s := &Spec{Algo: FedDPPairSGD, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: eps}
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
	j := &protocol.JobAnnounce{Job: "j", Algo: FedDPPairSGD, Task: protocol.TaskAUC, Loss: s.Loss, Params: d, Phases: p.Phases, Eta: p.Eta,
		FeatureRadius: 1, ParamRadius: s.ParamRadius, Epsilon: p.Epsilon, Delta: p.Delta, Sites: names}
	loss, err := pairwise.LossByName(pairwise.TaskAUC, "logistic")
	if err != nil {
		t.Fatal(err)
	}
	var sites []Site
	for i, ds := range parts {
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Constraint: "l2", Radius: s.ParamRadius})
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
		if k < p.Phases {
			if st := comb.State(); st != nil {
				if comb, err = a.NewCombiner(j, st); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return comb.Final(model)
}

// Learning, in process: the same records pooled, split iid over 4 sites
// and split so that every site holds one class. With little noise (ε =
// 10⁴) and the same seeds, the single-class and iid federations differ
// only by which site adds which noise, so their models nearly coincide
// (the sums are the pooled records' whatever the partition); at ε = 1 both
// rank far above chance (a label-independent model has AUC 0.5 ± 0.03 on
// 2000 test records; 0.8 is > 9 sd away; seeded, so deterministic).
func TestFedPairSumLearnsSingleClass(t *testing.T) {
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
	cosine := func(a, b []float64) float64 {
		return pairwise.Dot(a, b) / (pairwise.Norm2(a) * pairwise.Norm2(b))
	}
	wSingle, wIID := runPairSumJob(t, single, 1e4, 2), runPairSumJob(t, iid, 1e4, 2)
	if c := cosine(wSingle, wIID); !(c > 0.999) {
		t.Errorf("ε = 10⁴: single-class %v, iid %v (cos %v)", wSingle, wIID, c)
	}
	ref := runPairSumJob(t, []*pairwise.Dataset{train}, 1e4, 1)
	if auc := pairwise.LinearAUC(ref, test); !(auc > 0.85) {
		t.Errorf("pooled, ε = 10⁴: test AUC %v", auc)
	}
	for name, parts := range map[string][]*pairwise.Dataset{"single-class": single, "iid": iid} {
		w := runPairSumJob(t, parts, 1, 3)
		if auc := pairwise.LinearAUC(w, test); !(auc > 0.8) {
			t.Errorf("%s at ε = 1: test AUC %v ≤ 0.8", name, auc)
		}
	}
}

// checkLeadWeights checks a's secure weights for each phase count: the
// first round 1, the later rounds' squared weights summing to 1/share of
// it (leadWeights).
func checkLeadWeights(t *testing.T, a Algorithm, counts []int, share float64) {
	t.Helper()
	for _, phases := range counts {
		w, err := SumRoundWeights(a, phases, phases)
		if err != nil || len(w) != phases || w[0] != 1 {
			t.Fatalf("%s, %d phases: weights %v (%v)", a.Name(), phases, w, err)
		}
		var rest float64
		for _, x := range w[1:] {
			rest += x * x
		}
		if math.Abs(rest-1/share) > 1e-12 {
			t.Errorf("%s, %d phases: the later rounds' squared weights sum to %v, want 1/%g of the first round's", a.Name(), phases, rest, share)
		}
	}
}
