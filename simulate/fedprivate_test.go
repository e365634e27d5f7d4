package simulate

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// siteObjective is the objective a site builds for the job (worker.setup).
func siteObjective(t *testing.T, job *protocol.JobAnnounce, d *pairwise.Dataset) pairwise.Objective {
	t.Helper()
	loss, err := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := pairwise.NewObjective(d, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Lambda: job.Lambda, Constraint: "l2", Radius: job.ParamRadius})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// fed-dpegd runs to completion deterministically; each site reports k =
// ⌊log₂ n_min⌋ releases with σ_i = 4√(2 ln(1.25/δ))Gη_i/ε — the σ that
// single-site dpegd adds at the job's η — and its ledger holds one release
// per disjoint subset, the subsets covering its records.
func TestLockstepFedDPEGD(t *testing.T) {
	sites, _, te := prepared(t, 4, 2)
	job := coordinator.JobConfig{Algo: protocol.AlgoFedDPEGD, Epsilon: 1}
	a := newLockstep(t, job, sites, 3, 5)
	a.run(200)
	b := newLockstep(t, job, sites, 3, 5)
	b.run(200)
	ra, rb := a.coord.Result(), b.coord.Result()
	if ra == nil || rb == nil {
		t.Fatalf("not done: %v / %v", a.coord.Err(), b.coord.Err())
	}
	if !slices.Equal(ra.Model, rb.Model) {
		t.Fatal("two identical lockstep runs differ")
	}
	nMin := 153 // the smallest site of 614 records over 4 sites
	k := pairwise.DPEGDPhases(nMin)
	if ra.Phases != k || k != 7 {
		t.Errorf("phases %d, want ⌊log₂ %d⌋ = %d", ra.Phases, nMin, k)
	}
	ann := a.coord.Job()
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, ann.Loss)
	if want := pairwise.DPEGDDefaultEta(loss, nMin, ann.Params, 1, 1, 1, ann.Delta); ann.Eta != want || !(ann.Eta > 0) {
		t.Errorf("η = %g, want [X21] Thm 3's %g at n_min", ann.Eta, want)
	}
	if ann.Delta != 1/154.0 {
		t.Errorf("δ = %g, want 1/n_max", ann.Delta)
	}
	G := loss.Props(1, 1).Lipschitz
	for i, p := range a.coord.Privacy() {
		// The single-site algorithm's σ list at the job's η, on this site.
		obj := siteObjective(t, ann, sites[i].Data)
		rng, noise, _ := SiteSources(false, 1, 0)
		single, err := mustLookup(t, "dpegd").Run(context.Background(), obj,
			pairwise.RunConfig{Eta: ann.Eta, Privacy: &pairwise.Privacy{Epsilon: 1, Delta: ann.Delta, FeatureRadius: 1, Noise: noise}}, rng)
		if err != nil {
			t.Fatal(err)
		}
		if p.Epsilon != 1 || p.Delta != ann.Delta || p.Secure || len(p.Sigmas) != k {
			t.Fatalf("privacy of %s: %+v (seeded noise must be reported not secure)", p.Site, p)
		}
		for j, s := range p.Sigmas {
			want := 4 * math.Sqrt(2*math.Log(1.25/ann.Delta)) * G * math.Ldexp(ann.Eta, -2*(j+1)) / 1
			if math.Abs(s-want) > 1e-12*want {
				t.Errorf("%s σ_%d = %g, want %g", p.Site, j+1, s, want)
			}
		}
		if n := sites[i].Data.N; pairwise.DPEGDPhases(n) == k && !slices.Equal(p.Sigmas, single.Privacy.Sigmas) {
			t.Errorf("%s σ %v, single-site dpegd %v", p.Site, p.Sigmas, single.Privacy.Sigmas)
		}
	}
	for i, w := range a.workers {
		led := w.Ledger()
		if len(led) != k {
			t.Fatalf("ledger has %d releases, want %d", len(led), k)
		}
		total := 0
		for j, rel := range led {
			total += rel.Records
			if rel.Phase != j+1 || rel.Sigma != a.coord.Privacy()[i].Sigmas[j] || rel.Epsilon != 1 {
				t.Errorf("release %d: %+v", j, rel)
			}
			if j < k-1 && rel.Records != sites[i].Data.N>>(j+1) {
				t.Errorf("release %d depends on %d records, want ⌊n/2^%d⌋", j, rel.Records, j+1)
			}
		}
		if total != sites[i].Data.N {
			t.Errorf("the %d epochs of %s cover %d of its %d records", k, sites[i].Name, total, sites[i].Data.N)
		}
		if w.Result() == nil || !slices.Equal(w.Result().Model, ra.Model) {
			t.Error("a worker did not receive the result")
		}
	}
	t.Logf("fed-dpegd AUC %.4f (seeded noise, ε = 1)", pairwise.LinearAUC(ra.Model, te))
}

// fed-oneshot runs the local algorithm once per site: one phase; every
// site's update is exactly the single-site algorithm on its records with
// its sources, its σ list is that run's (the algorithm's formula for the
// site's own n), and the result is the record-weighted mean.
func TestLockstepFedOneShot(t *testing.T) {
	sites, _, te := prepared(t, 4, 2)
	for _, local := range []string{"dpegd", "dp-gd-grad", "dp-local-sgd"} {
		t.Run(local, func(t *testing.T) {
			job := coordinator.JobConfig{Algo: protocol.AlgoFedOneShot, LocalAlgo: local, Epsilon: 1}
			const seed = 3
			l := newLockstep(t, job, sites, seed, 5)
			l.run(200)
			r := l.coord.Result()
			if r == nil {
				t.Fatalf("not done: %v", l.coord.Err())
			}
			ann := l.coord.Job()
			if r.Phases != 1 || ann.LocalAlgo != local {
				t.Fatalf("phases %d, local %q", r.Phases, ann.LocalAlgo)
			}
			loss, _ := pairwise.LossByName(pairwise.TaskAUC, ann.Loss)
			G := loss.Props(1, 1).Lipschitz
			want := make([]float64, ann.Params)
			var total float64
			priv := l.coord.Privacy()
			for i, s := range sites {
				obj := siteObjective(t, ann, s.Data)
				rng, noise, _ := SiteSources(false, seed, i)
				single, err := mustLookup(t, local).Run(context.Background(), obj,
					pairwise.RunConfig{Init: make([]float64, ann.Params), Privacy: &pairwise.Privacy{Epsilon: 1, Delta: ann.Delta, FeatureRadius: 1, Noise: noise}}, rng)
				if err != nil {
					t.Fatal(err)
				}
				p := priv[i]
				if p.Site != s.Name || p.Records != s.Data.N || p.Epsilon != 1 || p.Delta != ann.Delta || p.Secure {
					t.Errorf("privacy %+v", p)
				}
				if !slices.Equal(p.Sigmas, single.Privacy.Sigmas) || len(p.Sigmas) == 0 {
					t.Errorf("%s σ %v, single-site %s %v", s.Name, p.Sigmas, local, single.Privacy.Sigmas)
				}
				n := s.Data.N
				switch local {
				case "dp-gd-grad":
					T := pairwise.K22Steps(n, ann.Params, 1)
					if w := pairwise.K22Sigma(T, n, G, 1, ann.Delta); len(p.Sigmas) != T || p.Sigmas[0] != w {
						t.Errorf("%s: σ %v, want %d × [K22] σ = %g at n = %d", s.Name, p.Sigmas, T, w, n)
					}
				case "dpegd":
					eta := pairwise.DPEGDDefaultEta(loss, n, ann.Params, 1, 1, 1, ann.Delta)
					if len(p.Sigmas) != pairwise.DPEGDPhases(n) {
						t.Errorf("%s: %d σ, want ⌊log₂ %d⌋", s.Name, len(p.Sigmas), n)
					}
					for j, sg := range p.Sigmas {
						if w := pairwise.DPEGDSigma(G, eta, j+1, 1, ann.Delta); math.Abs(sg-w) > 1e-12*w {
							t.Errorf("%s σ_%d = %g, want %g (η at n = %d)", s.Name, j+1, sg, w, n)
						}
					}
				}
				led := l.workers[i].Ledger()
				if len(led) != 1 || led[0].Records != n || !slices.Equal(led[0].Sigmas, p.Sigmas) || led[0].Sigma != p.Sigmas[0] {
					t.Errorf("%s ledger %+v", s.Name, led)
				}
				for j, v := range single.W {
					want[j] += float64(n) * v
				}
				total += float64(n)
			}
			for j := range want {
				want[j] /= total
			}
			if !slices.Equal(r.Model, want) {
				t.Errorf("result %v, want the record-weighted mean of the single-site runs %v", r.Model, want)
			}
			t.Logf("fed-oneshot/%s AUC %.4f (seeded noise, ε = 1)", local, pairwise.LinearAUC(r.Model, te))
		})
	}
}

func mustLookup(t *testing.T, name string) *pairwise.Algorithm {
	t.Helper()
	a, err := pairwise.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
