package fedalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// Without noise, fed-dp-lda's two phases over any split of the records —
// single-class sites included — give exactly the pooled centre and the
// pooled solve of single-site dp-lda's statistics; the combiner expects
// phase 1's and phase 2's update lengths in turn, and a combiner resumed
// from its State continues with the right one.
func TestFedLDAPhasesEqualPooled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := dyadicData(60, 4, rng)
	R := 1.0
	var pos, neg []int
	for i, y := range ds.Y {
		if y > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	perm := rng.Perm(ds.N)
	zero := dp.ZeroNoise()
	for name, parts := range map[string][][]int{
		"iid":          {perm[:20], perm[20:45], perm[45:]},
		"single-class": {pos[:len(pos)/2], pos[len(pos)/2:], neg},
	} {
		job := &protocol.JobAnnounce{Algo: FedDPLDA, Task: protocol.TaskAUC, Phases: 2, Params: ds.D, FeatureRadius: R, ParamRadius: 1, Epsilon: 1, Delta: 1e-4}
		var sites []Site
		for _, idx := range parts {
			s, err := fedLDA{}.NewSite(job, SiteEnv{Data: ds.Subset(idx), Noise: zero})
			if err != nil {
				t.Fatal(err)
			}
			sites = append(sites, s)
		}
		comb, err := fedLDA{}.NewCombiner(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		model := make([]float64, ds.D)
		for phase := 1; phase <= 2; phase++ {
			var ups []*protocol.SiteUpdate
			for _, s := range sites {
				u, rel, err := s.Step(context.Background(), phase, model)
				if err != nil {
					t.Fatal(err)
				}
				if rel == nil || rel.Mechanism != "gaussian" || !(rel.Sensitivity >= 2) || rel.Records != int(u.Weight) {
					t.Fatalf("phase %d: release %+v", phase, rel)
				}
				if got, want := len(u.Model), UpdateLen(comb, ds.D); got != want {
					t.Fatalf("%s phase %d: update of %d values, combiner expects %d", name, phase, got, want)
				}
				ups = append(ups, u)
			}
			model = comb.Combine(model, ups, protocol.Aggregation{Rule: protocol.AggMean})
			if phase == 1 {
				want := dpalgo.LDACentre(dpalgo.LDACentreVector(ds, R), float64(ds.N), R)
				for k := range want {
					if math.Abs(model[k]-want[k]) > 1e-12 {
						t.Fatalf("%s: centre %v, pooled %v", name, model, want)
					}
				}
				// A coordinator resumed here expects phase 2's length.
				again, err := fedLDA{}.NewCombiner(job, comb.State())
				if err != nil || UpdateLen(again, ds.D) != dpalgo.SSPCoords(ds.D, dpalgo.SSPPooled) {
					t.Fatalf("resumed combiner: %v, update length %d", err, UpdateLen(again, ds.D))
				}
			}
		}
		c := dpalgo.LDACentre(dpalgo.LDACentreVector(ds, R), float64(ds.N), R)
		st := dpalgo.LDASignStats(ds, c, R)
		// The coordinator's λ is the rule's at the summed σ of the three
		// releases (noise-free here, but calibrated).
		sig, _, _, err := ldaCalibrate(job.Epsilon, job.Delta, ds.D)
		if err != nil {
			t.Fatal(err)
		}
		ref, _, err := dpalgo.SolveSSP(st, dpalgo.SSPLambda(st, R, sig[1]*math.Sqrt(3)))
		if err != nil {
			t.Fatal(err)
		}
		w := comb.Final(model)
		nw, nr := pairwise.Norm2(w), pairwise.Norm2(ref)
		for k := range ref {
			if math.Abs(w[k]/nw-ref[k]/nr) > 1e-9 {
				t.Fatalf("%s: w = %v, pooled %v", name, w, ref)
			}
		}
	}
	if _, err := (fedLDA{}).NewCombiner(&protocol.JobAnnounce{Task: protocol.TaskAUC, Params: 4}, []float64{7}); err == nil {
		t.Error("a checkpoint state that is not a phase was accepted")
	}
}

// Plan: two phases, every site the same snapped sensitivity; the
// calibration certifies the request; bad specs are refused with the reason.
func TestFedLDAPlanAndConfigure(t *testing.T) {
	sites := []SiteInfo{{"a", 100}, {"b", 50}}
	s := &Spec{Algo: FedDPLDA, Task: protocol.TaskAUC, FeatureRadius: 1, Epsilon: 1}
	a, err := Configure(s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Plan(s, sites, 8)
	if err != nil {
		t.Fatal(err)
	}
	if p.Phases != 2 || p.Epsilon != 1 || p.Delta != dp.DefaultDelta(100) || !(p.Sensitivity["a"] >= 2) || p.Sensitivity["a"] != p.Sensitivity["b"] {
		t.Errorf("plan %+v", p)
	}
	sig, sens, _, err := ldaCalibrate(p.Epsilon, p.Delta, 8)
	if err != nil {
		t.Fatal(err)
	}
	if eps, _ := a.(Accountant).Account(sig, sens, p.Epsilon, p.Delta); !(eps <= 1+1e-9 && eps > 0.95) {
		t.Errorf("composed ε = %v for ε = 1", eps)
	}
	checkSumSpecRefusals(t, FedDPLDA)
	if !CentresPrivately(FedDPLDA) || CentresPrivately(FedDPSSP) {
		t.Error("CentresPrivately")
	}
}
