package simulate

import (
	"context"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"math"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/fedalgo"
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
	job := coordinator.JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 1}
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
	k := dpalgo.DPEGDPhases(nMin)
	if ra.Phases != k || k != 7 {
		t.Errorf("phases %d, want ⌊log₂ %d⌋ = %d", ra.Phases, nMin, k)
	}
	ann := a.coord.Job()
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, ann.Loss)
	if want := dpalgo.DPEGDDefaultEta(loss, nMin, ann.Params, 1, 1, 1, ann.Delta); ann.Eta != want || !(ann.Eta > 0) {
		t.Errorf("η = %g, want [X21] Thm 3's %g at n_min", ann.Eta, want)
	}
	if ann.Delta != 1/1540.0 {
		t.Errorf("δ = %g, want 1/(10·n_max)", ann.Delta)
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
			// exact calibration: at most the paper's printed σ_i.
			paper := 4 * math.Sqrt(2*math.Log(1.25/ann.Delta)) * G * math.Ldexp(ann.Eta, -2*(j+1)) / 1
			if !(s > 0 && s <= paper) {
				t.Errorf("%s σ_%d = %g, want in (0, paper's %g]", p.Site, j+1, s, paper)
			}
		}
		if n := sites[i].Data.N; dpalgo.DPEGDPhases(n) == k && !slices.Equal(p.Sigmas, single.Privacy.Sigmas) {
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
			// Charged the epoch's certificate: just below the request
			// under the exact calibration (TestLedgerChargesCertified
			// checks the value).
			if rel.Phase != j+1 || rel.Sigma != a.coord.Privacy()[i].Sigmas[j] || !(rel.Epsilon > 0.999 && rel.Epsilon <= 1) {
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
			job := coordinator.JobConfig{Algo: fedalgo.FedOneShot, LocalAlgo: local, Epsilon: 1}
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
					T := dpalgo.DPGDGradDefaultSteps(n, ann.Params, 1)
					// exact calibration: below the paper's [K22] σ, which the
					// report keeps beside it.
					if w := dpalgo.DPGDGradPaperSigma(T, n, G, 1, ann.Delta); len(p.Sigmas) != T || !(p.Sigmas[0] < w) || single.Privacy.PaperSigmas[0] != w {
						t.Errorf("%s: σ %v (paper %v), want %d σ's below [K22] σ = %g at n = %d", s.Name, p.Sigmas, single.Privacy.PaperSigmas, T, w, n)
					}
				case "dpegd":
					eta := dpalgo.DPEGDDefaultEta(loss, n, ann.Params, 1, 1, 1, ann.Delta)
					if len(p.Sigmas) != dpalgo.DPEGDPhases(n) {
						t.Errorf("%s: %d σ, want ⌊log₂ %d⌋", s.Name, len(p.Sigmas), n)
					}
					for j, sg := range p.Sigmas {
						if w := dpalgo.DPEGDSigma(G, eta, j+1, 1, ann.Delta); math.Abs(single.Privacy.PaperSigmas[j]-w) > 1e-12*w || !(sg <= w) {
							t.Errorf("%s σ_%d = %g (paper %g), want ≤ the paper's %g (η at n = %d)", s.Name, j+1, sg, single.Privacy.PaperSigmas[j], w, n)
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

// fed-dp-gd-grad runs to completion deterministically: T = ⌈ln(n_min ε/√p)⌉
// rounds, every site's T σ equal [K22] Thm 1's 8G√(T log(1/δ))/(n_s ε) for
// its own n_s (hand-computed here), one ledger entry per round on all its
// records with sensitivity 4G/n_s, and both the paper's (ε, δ) and the
// dp.Compose ε reported.
func TestLockstepFedDPGDGrad(t *testing.T) {
	sites, _, te := prepared(t, 4, 2)
	job := coordinator.JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1}
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
	ann := a.coord.Job()
	const nMin, nMax, p = 153, 154, 8
	T := int(math.Ceil(math.Log(nMin * 1 / math.Sqrt(p)))) // ⌈ln 54.09⌉ = 4
	if ra.Phases != T || T != 4 || ann.Delta != 1.0/(10*nMax) {
		t.Fatalf("phases %d, δ %g: want T = ⌈ln(n_min ε/√p)⌉ = %d, δ = 1/(10·%d)", ra.Phases, ann.Delta, T, nMax)
	}
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, ann.Loss)
	props := loss.Props(1, 1)
	if ann.Eta != 1/props.Smooth {
		t.Errorf("η = %g, want 1/L = %g", ann.Eta, 1/props.Smooth)
	}
	G := props.Lipschitz
	for i, sp := range a.coord.Privacy() {
		n := sites[i].Data.N
		// Exact calibration: T releases of Δ = 2Γ/n = 2G/n (logistic AUC)
		// compose to μ = √T·Δ/σ = 1/AnalyticGaussianSigma(1, δ, 1).
		one, _ := dp.AnalyticGaussianSigma(1, ann.Delta, 1)
		want := math.Sqrt(float64(T)) * 2 * G / float64(n) * one
		if sp.Site != sites[i].Name || sp.Records != n || sp.Epsilon != 1 || sp.Secure || len(sp.Sigmas) != T {
			t.Fatalf("privacy %+v", sp)
		}
		for _, s := range sp.Sigmas {
			if math.Abs(s-want) > 1e-9*want {
				t.Errorf("%s (n = %d): σ = %g, want %g", sp.Site, n, s, want)
			}
		}
		// The coordinator's exact GDP composition of the same releases
		// certifies the request (the σ's are the smallest that do).
		if !(sp.ComposedEpsilon > 0.99 && sp.ComposedEpsilon <= 1) {
			t.Errorf("%s: composed ε = %g, want in (0.99, 1]", sp.Site, sp.ComposedEpsilon)
		}
		led := a.workers[i].Ledger()
		if len(led) != T {
			t.Fatalf("%s ledger has %d releases, want %d", sp.Site, len(led), T)
		}
		for j, rel := range led {
			// Charged the certificate of rounds 1…j+1: increasing, within
			// the request (TestLedgerChargesCertified checks the values).
			if rel.Phase != j+1 || rel.Records != n || rel.Sigma != sp.Sigmas[j] || rel.Sensitivity != 2*G/float64(n) || !(rel.Epsilon > 0 && rel.Epsilon <= 1) ||
				(j > 0 && !(rel.Epsilon > led[j-1].Epsilon)) {
				t.Errorf("%s release %d: %+v", sp.Site, j, rel)
			}
		}
		if w := a.workers[i].Result(); w == nil || !slices.Equal(w.Model, ra.Model) {
			t.Error("a worker did not receive the result")
		}
	}
	if nrm := math.Sqrt(dotf(ra.Model, ra.Model)); nrm > 1+1e-12 {
		t.Errorf("‖w_T‖ = %g outside the ball B = 1", nrm)
	}
	t.Logf("fed-dp-gd-grad AUC %.4f (seeded noise, ε = 1, T = %d); composed ε %.4f at δ = %.3g", pairwise.LinearAUC(ra.Model, te), T, a.coord.Privacy()[0].ComposedEpsilon, ann.Delta)
}

// With one site fed-dp-gd-grad is single-site dp-gd-grad: same T, η, σ and,
// with the same seeded noise source, bit for bit the same θ_T. With a huge
// ε (the largest accepted, 10⁴: μ ≈ √(2ε)) it follows noise-free projected GD on the
// site's pairwise empirical risk, up to the noise.
func TestLockstepFedDPGDGradOneSite(t *testing.T) {
	sites, _, _ := prepared(t, 4, 2)
	one := sites[:1]
	const seed = 7
	l := newLockstep(t, coordinator.JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1}, one, seed, 5)
	l.run(200)
	r := l.coord.Result()
	if r == nil {
		t.Fatalf("not done: %v", l.coord.Err())
	}
	ann := l.coord.Job()
	obj := siteObjective(t, ann, one[0].Data)
	rng, noise, _ := SiteSources(false, seed, 0)
	single, err := mustLookup(t, "dp-gd-grad").Run(context.Background(), obj,
		pairwise.RunConfig{Init: make([]float64, ann.Params), Privacy: &pairwise.Privacy{Epsilon: 1, Delta: ann.Delta, FeatureRadius: 1, Noise: noise}}, rng)
	if err != nil {
		t.Fatal(err)
	}
	if single.Steps != r.Phases || !slices.Equal(l.coord.Privacy()[0].Sigmas, single.Privacy.Sigmas) {
		t.Fatalf("T %d vs %d, σ %v vs %v", r.Phases, single.Steps, l.coord.Privacy()[0].Sigmas, single.Privacy.Sigmas)
	}
	if !slices.Equal(r.Model, single.W) {
		t.Fatalf("federated θ_T %v, single-site dp-gd-grad %v", r.Model, single.W)
	}

	// Tiny noise: the trajectory of projected GD, w ← Π(w − ∇F_S(w)/L).
	const rounds = 12
	l = newLockstep(t, coordinator.JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: dp.MaxEpsilon, Rounds: rounds}, one, seed, 5)
	l.run(400)
	r = l.coord.Result()
	if r == nil || r.Phases != rounds {
		t.Fatalf("not done: %v", l.coord.Err())
	}
	w := make([]float64, ann.Params)
	g := make([]float64, ann.Params)
	eta := l.coord.Job().Eta
	for k := 0; k < rounds; k++ {
		pairwise.FullGradient(obj, w, g)
		for i := range w {
			w[i] -= eta * g[i]
		}
		obj.Project(w)
	}
	var diff float64
	for i := range w {
		diff = math.Max(diff, math.Abs(w[i]-r.Model[i]))
	}
	// GD with η = 1/L on a convex L-smooth risk is nonexpansive, so the
	// noise b_t moves θ_T by ≤ Σ_t η‖b_t‖; ‖b_t‖ ≤ σ(√p + 6) except with
	// probability < 1e-7 per round (χ_p concentration).
	sigma := l.coord.Privacy()[0].Sigmas[0]
	if tol := rounds * eta * sigma * (math.Sqrt(float64(ann.Params)) + 6); diff > tol || dotf(w, w) == 0 {
		t.Errorf("federated %v, projected GD %v: max diff %g", r.Model, w, diff)
	}
	t.Logf("one site, ε = 1e9, %d rounds: max |fed − projected GD| = %.3g", rounds, diff)
}

func dotf(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
