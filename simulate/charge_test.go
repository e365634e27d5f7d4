package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// Every federated private algorithm charges the site ledger (and reports
// in its updates, which the coordinator's ledger charges) the certified
// (ε, δ) of what the site released — recomputed here from the pairwise
// calibration of the same public numbers — never the request; the
// certificate is within the request. At ε ∈ {0.5, 8}, under the exact
// calibration and, where the algorithm has a printed σ, the paper's
// (whose certificate is well below the request, so a ledger that charged
// the request would fail).
func TestLedgerChargesCertified(t *testing.T) {
	sites, _, _ := prepared(t, 2, 5)
	type tc struct {
		job   coordinator.JobConfig
		paper bool
	}
	var cases []tc
	for _, eps := range []float64{0.5, 8} {
		for _, j := range []coordinator.JobConfig{
			{Algo: fedalgo.FedDPLocalSGD},
			{Algo: fedalgo.FedDPEGD},
			{Algo: fedalgo.FedDPGDGrad, Rounds: 3},
			{Algo: fedalgo.FedOneShot, LocalAlgo: "dpegd"},
			{Algo: fedalgo.FedDPPairSGD, Rounds: 2},
			{Algo: fedalgo.FedDPSSP},
			{Algo: fedalgo.FedDPSSPMean},
			{Algo: fedalgo.FedDPLDA},
		} {
			j.Epsilon = eps
			cases = append(cases, tc{job: j})
			if j.Algo != fedalgo.FedDPPairSGD && j.Algo != fedalgo.FedDPSSP && j.Algo != fedalgo.FedDPSSPMean && j.Algo != fedalgo.FedDPLDA {
				j.Calibration = protocol.CalibrationPaper
				cases = append(cases, tc{job: j, paper: true})
			}
		}
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%s/eps=%g/%s", c.job.Algo, c.job.LocalAlgo, c.job.Epsilon, c.job.Calibration)
		t.Run(name, func(t *testing.T) {
			l := newLockstep(t, c.job, sites, 7, 5)
			l.run(400)
			if l.coord.Result() == nil {
				t.Fatalf("not done: %v", l.coord.Err())
			}
			ann := l.coord.Job()
			rels := l.coord.TakeReleases()
			// The plan's certificate (the coordinator's reservation) where
			// it states one: never below what a site charges.
			spec := c.job
			spec.FeatureRadius, spec.Task = 1, protocol.TaskAUC
			a, err := fedalgo.Configure(&spec)
			if err != nil {
				t.Fatal(err)
			}
			infos := make([]fedalgo.SiteInfo, len(sites))
			for i, s := range sites {
				infos[i] = fedalgo.SiteInfo{Name: s.Name, Records: s.Data.N}
			}
			plan, err := a.Plan(&spec, infos, ann.Params)
			if err != nil {
				t.Fatal(err)
			}
			below := false
			for i, w := range l.workers {
				led := w.Ledger()
				if len(led) != ann.Phases {
					t.Fatalf("site %d: %d ledger entries for %d phases", i, len(led), ann.Phases)
				}
				want := expectedCharges(t, ann, sites[i], led)
				for k, r := range led {
					if r.Epsilon != want[k].Epsilon || r.Delta != want[k].Delta {
						t.Fatalf("site %d phase %d: charged (%v, %v), certified (%v, %v)", i, k+1, r.Epsilon, r.Delta, want[k].Epsilon, want[k].Delta)
					}
					if !(r.Epsilon > 0 && r.Epsilon <= ann.Epsilon) || !(r.Delta >= 0 && r.Delta <= ann.Delta) {
						t.Fatalf("site %d phase %d: charged (%v, %v), above the request (%v, %v)", i, k+1, r.Epsilon, r.Delta, ann.Epsilon, ann.Delta)
					}
					below = below || r.Epsilon < 0.99*ann.Epsilon
				}
				// The coordinator saw (and charges) the same values.
				for _, p := range rels {
					if p.Site == sites[i].Name && (p.Epsilon != led[p.Phase-1].Epsilon || p.Delta != led[p.Phase-1].Delta) {
						t.Fatalf("site %d phase %d: coordinator got (%v, %v), ledger (%v, %v)", i, p.Phase, p.Epsilon, p.Delta, led[p.Phase-1].Epsilon, led[p.Phase-1].Delta)
					}
				}
				// The job costs the largest certificate: of the last round
				// (sequential), of the worst phase (disjoint).
				var me, md float64
				for _, g := range want {
					me, md = max(me, g.Epsilon), max(md, g.Delta)
				}
				if e, d := worker.Spent(led); e != me || d != md || e > ann.Epsilon || d > ann.Delta {
					t.Fatalf("site %d: spent (%v, %v), want (%v, %v)", i, e, d, me, md)
				}
				// The plan's reservation covers what the site charges, by
				// at most its rounding allowance (relative 1e-9).
				if g, ok := plan.Certified[sites[i].Name]; ok && (g.Epsilon < me || g.Delta < md || g.Epsilon > me*(1+2e-9) || g.Delta > md*(1+2e-9)) {
					t.Fatalf("site %d: the plan reserves (%v, %v), the site charges (%v, %v)", i, g.Epsilon, g.Delta, me, md)
				}
			}
			if c.paper && !below {
				t.Fatalf("paper calibration at ε = %g: every charge within 1%% of the request (the test cannot tell a certificate from the request)", c.job.Epsilon)
			}
		})
	}
}

// expectedCharges recomputes, from the pairwise calibration of the same
// public numbers (sizes, η, T, the job's (ε, δ) and calibration), the
// certificate each ledger entry of a site must carry.
func expectedCharges(t *testing.T, ann *protocol.JobAnnounce, s Site, led []worker.Release) []fedalgo.Guarantee {
	t.Helper()
	ctx := context.Background()
	obj := siteObjective(t, ann, s.Data)
	_, noise, _ := SiteSources(false, 1, 0)
	priv := &pairwise.Privacy{Epsilon: ann.Epsilon, Delta: ann.Delta, FeatureRadius: ann.FeatureRadius, Noise: noise, Calibration: pairwise.Calibration(ann.Calibration)}
	out := make([]fedalgo.Guarantee, len(led))
	p := obj.NumParams()
	zero := make([]float64, p)
	first := func(k int) []int {
		idx := make([]int, k)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	switch ann.Algo {
	case fedalgo.FedDPEGD:
		for k, r := range led {
			res, err := dpalgo.DPEGDEpoch(ctx, obj, zero, first(r.Records), k+1, ann.Eta, priv)
			if err != nil {
				t.Fatal(err)
			}
			out[k] = fedalgo.Guarantee{Epsilon: res.CertifiedEpsilon, Delta: res.CertifiedDelta}
		}
	case fedalgo.FedDPLocalSGD:
		for k, r := range led {
			res, err := dpalgo.LocalSGDPhase(ctx, obj, zero, first(r.Records), k+1, ann.Eta, priv, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			out[k] = fedalgo.Guarantee{Epsilon: res.CertifiedEpsilon, Delta: res.CertifiedDelta}
		}
	case fedalgo.FedDPGDGrad:
		res, err := dpalgo.DPGDGradRound(ctx, obj, zero, ann.Phases, priv)
		if err != nil {
			t.Fatal(err)
		}
		for k := range led {
			sens, sig := make([]float64, k+1), make([]float64, k+1)
			for i := range sens {
				sens[i], sig[i] = res.Sensitivity, res.Sigma
			}
			c, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: sens, Dim: p}, sig, ann.Epsilon, ann.Delta)
			if err != nil {
				t.Fatal(err)
			}
			out[k] = fedalgo.Guarantee{Epsilon: c.Epsilon, Delta: c.Delta}
		}
		if last := out[len(out)-1]; last.Epsilon != res.CertifiedEpsilon || last.Delta != res.CertifiedDelta {
			t.Fatalf("T rounds certified (%v, %v), DPGDGradRound states (%v, %v)", last.Epsilon, last.Delta, res.CertifiedEpsilon, res.CertifiedDelta)
		}
	case fedalgo.FedOneShot:
		res, err := mustLookup(t, ann.LocalAlgo).Run(ctx, obj, pairwise.RunConfig{Eta: ann.Eta, Init: zero, Privacy: priv}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		out[0] = fedalgo.Guarantee{Epsilon: res.Privacy.CertifiedEpsilon, Delta: res.Privacy.CertifiedDelta}
	case fedalgo.FedDPPairSGD:
		// Task auc: 1 + T Gaussian releases of Δ = 2 and 2d + 2 values each,
		// the statistics with σ₁ = σ_round/√T, calibrated together; phase
		// k charges the exact certificate of releases 1 … k.
		T, dim := ann.Phases-1, dpalgo.PairSumDim(s.Data.D)
		sens, split := make([]float64, ann.Phases), make([]float64, ann.Phases)
		for i := range sens {
			sens[i], split[i] = dpalgo.PairSumSensitivity, 1
		}
		split[0] = 1 / math.Sqrt(float64(T))
		sig, _, err := dp.CalibrateGaussian(dp.GaussianPlan{Sensitivities: sens, Split: split, Dim: dim, Coordinates: int64(ann.Phases) * int64(dim)}, ann.Epsilon, ann.Delta)
		if err != nil {
			t.Fatal(err)
		}
		for k := range out {
			c, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: sens[:k+1], Dim: dim, Coordinates: int64(k+1) * int64(dim)}, sig[:k+1], ann.Epsilon, ann.Delta)
			if err != nil {
				t.Fatal(err)
			}
			out[k] = fedalgo.Guarantee{Epsilon: c.Epsilon, Delta: c.Delta}
		}
	case fedalgo.FedDPSSP, fedalgo.FedDPSSPMean:
		kind := dpalgo.SSPMean
		if ann.Algo == fedalgo.FedDPSSP {
			kind = dpalgo.SSPClass
		}
		rel, err := dpalgo.SSPCalibrate(ann.Epsilon, ann.Delta, ann.FeatureRadius, s.Data.D, kind)
		if err != nil {
			t.Fatal(err)
		}
		c, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: []float64{rel.Sensitivity}, Coordinates: int64(rel.Coords)}, []float64{rel.Sigma}, ann.Epsilon, ann.Delta)
		if err != nil {
			t.Fatal(err)
		}
		out[0] = fedalgo.Guarantee{Epsilon: c.Epsilon, Delta: c.Delta}
	case fedalgo.FedDPLDA:
		// Release A after phase 1 (its d coordinates), both after phase 2:
		// the single-site plan's calibration and certificate.
		plan := dpalgo.LDAPlan(s.Data.D)
		sig, cert, err := dp.CalibrateGaussian(plan, ann.Epsilon, ann.Delta)
		if err != nil {
			t.Fatal(err)
		}
		a, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: plan.Sensitivities[:1], Dim: plan.Dim, Coordinates: int64(s.Data.D)}, sig[:1], ann.Epsilon, ann.Delta)
		if err != nil {
			t.Fatal(err)
		}
		out[0] = fedalgo.Guarantee{Epsilon: a.Epsilon, Delta: a.Delta}
		out[1] = fedalgo.Guarantee{Epsilon: cert.Epsilon, Delta: cert.Delta}
		if !(a.Epsilon < cert.Epsilon) {
			t.Fatalf("release A alone certifies ε = %v, both %v", a.Epsilon, cert.Epsilon)
		}
	default:
		t.Fatalf("no expected charges for %s", ann.Algo)
	}
	return out
}

// --calibration paper in a simulation: carried to every site, which adds
// the paper's printed σ (fed-dpegd: [X21]'s σ_i, above the exact one) and
// charges its certificate; where the printed σ does not certify the
// request (ε = 100 at δ = 0.01) the job is refused before it is announced
// — no site ledger holds an entry — with the certified ε in the reason,
// and a site refuses it too at the announcement; and
// an algorithm without a printed σ, or an unknown calibration, is refused
// at submission.
func TestSimulatePaperCalibration(t *testing.T) {
	sites, _, _ := prepared(t, 2, 5)
	exact := newLockstep(t, coordinator.JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 1}, sites, 7, 5)
	exact.run(400)
	paper := newLockstep(t, coordinator.JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 1, Calibration: protocol.CalibrationPaper}, sites, 7, 5)
	paper.run(400)
	if exact.coord.Result() == nil || paper.coord.Result() == nil {
		t.Fatalf("not done: %v / %v", exact.coord.Err(), paper.coord.Err())
	}
	ann := paper.coord.Job()
	if ann.Calibration != protocol.CalibrationPaper {
		t.Fatalf("announced calibration %q", ann.Calibration)
	}
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, ann.Loss)
	G := loss.Props(1, 1).Lipschitz
	for i, w := range paper.workers {
		for k, r := range w.Ledger() {
			printed := dpalgo.DPEGDSigma(G, ann.Eta, k+1, ann.Epsilon, ann.Delta)
			ex := exact.workers[i].Ledger()[k]
			if r.Sigma != printed || !(ex.Sigma < r.Sigma) || !(r.Epsilon < ex.Epsilon) {
				t.Fatalf("site %d epoch %d: paper σ %v (printed %v, exact %v), charged ε %v (exact %v)", i, k+1, r.Sigma, printed, ex.Sigma, r.Epsilon, ex.Epsilon)
			}
		}
	}

	// Not certified: refused by the coordinator's plan, before the job is
	// announced (nothing released), with the certified ε in the reason.
	badJob := coordinator.JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 100, Delta: 0.01, Calibration: protocol.CalibrationPaper}
	bad := newLockstep(t, badJob, sites, 7, 5)
	bad.run(400)
	if bad.coord.Result() != nil || bad.coord.Job() != nil {
		t.Fatal("an uncertified paper calibration was announced")
	}
	if err := bad.coord.Err(); err == nil || !strings.Contains(err.Error(), "paper refused") || !strings.Contains(err.Error(), "certifies only ε") {
		t.Fatalf("coordinator: %v", err)
	}
	for i, w := range bad.workers {
		if len(w.Ledger()) != 0 {
			t.Fatalf("site %d released %d values", i, len(w.Ledger()))
		}
	}
	// A site checks for itself too, at the announcement: every epoch of
	// its partition certified before the first release.
	spec := badJob
	spec.FeatureRadius, spec.Task, spec.Calibration = 1, protocol.TaskAUC, ""
	alg, err := fedalgo.Configure(&spec)
	if err != nil {
		t.Fatal(err)
	}
	infos := []fedalgo.SiteInfo{{Name: sites[0].Name, Records: sites[0].Data.N}}
	plan, err := alg.Plan(&spec, infos, sites[0].Data.D)
	if err != nil {
		t.Fatal(err)
	}
	job := &protocol.JobAnnounce{Job: "j", Algo: fedalgo.FedDPEGD, Task: protocol.TaskAUC, Loss: spec.Loss, Params: sites[0].Data.D, Phases: plan.Phases,
		Eta: plan.Eta, ParamRadius: spec.ParamRadius, FeatureRadius: 1, Epsilon: 100, Delta: 0.01, Sites: []string{sites[0].Name}, Calibration: protocol.CalibrationPaper}
	rng, noise, _ := SiteSources(false, 1, 0)
	_, err = alg.NewSite(job, fedalgo.SiteEnv{Data: sites[0].Data, Obj: siteObjective(t, job, sites[0].Data), Noise: noise, Rand: rng})
	if err == nil || !strings.Contains(err.Error(), "paper refused") || !strings.Contains(err.Error(), "certifies only ε") {
		t.Fatalf("site: %v", err)
	}

	// Refused at submission (the coordinator's validation).
	for _, j := range []coordinator.JobConfig{
		{Algo: fedalgo.FedDPPairSGD, Epsilon: 1, Calibration: protocol.CalibrationPaper},
		{Algo: fedalgo.FedDPSSP, Epsilon: 1, Calibration: protocol.CalibrationPaper},
		{Algo: fedalgo.FedOneShot, LocalAlgo: "dp-pair-sgd", Epsilon: 1, Calibration: protocol.CalibrationPaper},
		{Algo: fedalgo.FedAvg, Calibration: protocol.CalibrationPaper},
		{Algo: fedalgo.FedDPEGD, Epsilon: 1, Calibration: "papr"},
	} {
		_, err := coordinator.New(coordinator.Config{Federation: fedName, Job: j, MinSites: 1})
		if err == nil || !strings.Contains(err.Error(), "calibration") {
			t.Fatalf("%s %q: %v", j.Algo, j.Calibration, err)
		}
	}
	// A wire message with an unknown calibration does not decode.
	a := &protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedDPEGD, MinSites: 1, Epsilon: 1, Calibration: "papr"}
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), `unknown calibration "papr"`) {
		t.Fatalf("submit with calibration papr: %v", err)
	}
}
