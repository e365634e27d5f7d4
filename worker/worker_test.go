package worker

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

func toyData(n, d int) *pairwise.Dataset {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(2*(i%2) - 1)
		for k := 0; k < d; k++ {
			x[i*d+k] = (rng.Float64() - 0.5) / float64(d) // ‖x‖ < 1
		}
		x[i*d] += 0.1 * y[i]
	}
	return pairwise.NewDense(x, y, d)
}

func newWorker(t *testing.T) *Worker {
	t.Helper()
	pub, priv := testSecRoster()
	w, err := New(Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5),
		SecAggKey: priv["s1"], SecAggRoster: pub})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func dpAnnounce(sites ...string) *protocol.JobAnnounce {
	return &protocol.JobAnnounce{Job: "j", Algo: fedalgo.FedDPLocalSGD, Task: "auc", Loss: "logistic", Params: 3, Phases: 6,
		Eta: 0.1, ParamRadius: 1, FeatureRadius: 1, Epsilon: 1, Delta: 1e-3, Sites: sites}
}

// A phase is released once: a repeated PhaseStart (coordinator retry) gets
// the same update back, and the ledger holds one entry, charged before the
// update is returned.
func TestWorkerReleasesOnce(t *testing.T) {
	w := newWorker(t)
	ctx := context.Background()
	if outs := w.Start(); len(outs) != 1 || outs[0].Subject != "pairfed.f.coord.s1" {
		t.Fatalf("start %v", outs)
	}
	w.Step(ctx, dpAnnounce("s1", "s2"))
	ps := &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}}
	first := w.Step(ctx, ps)
	if len(first) != 1 || len(w.Ledger()) != 1 {
		t.Fatalf("outputs %v, ledger %v", first, w.Ledger())
	}
	u := first[0].Msg.(*protocol.SiteUpdate)
	if u.Weight != 32 || !(u.Sigma > 0) || u.Secure || !(u.Epsilon > 0 && u.Epsilon <= 1) || u.Last != nil {
		t.Errorf("update %+v: weight |S_1| = 32, σ > 0, seeded noise not secure, no last iterate", u)
	}
	again := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{1, 0, 0}})
	if !reflect.DeepEqual(again, first) || len(w.Ledger()) != 1 {
		t.Fatal("a repeated phase produced a new release")
	}
	w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 2, Model: u.Model})
	if l := w.Ledger(); len(l) != 2 || l[1].Records != 16 {
		t.Fatalf("ledger %+v", l)
	}
	w.Step(ctx, &protocol.Result{Job: "j", Phases: 6, Model: []float64{1, 2, 3}})
	if !w.Done() || w.Result() == nil {
		t.Fatal("result not taken")
	}
}

// A fed-avg round is sgd-prev from the broadcast model with base step
// √N·η/√R (N = 4 sites, R = 2 rounds) over ⌈P·n⌉ steps; the update carries
// the Alg 1 average as Model and the last iterate as Last.
func TestWorkerFedAvgRound(t *testing.T) {
	w := newWorker(t)
	ctx := context.Background()
	w.Start()
	w.Step(ctx, &protocol.JobAnnounce{Job: "j", Algo: fedalgo.FedAvg, Task: "auc", Loss: "hinge", Params: 3, Phases: 2,
		LocalPasses: 1, Eta: 10, ParamRadius: 100, FeatureRadius: 1, Sites: []string{"s1", "s2", "s3", "s4"}})
	start := []float64{0.5, -0.5, 0.25}
	outs := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: start})
	if len(outs) != 1 {
		t.Fatalf("outputs %v", outs)
	}
	u := outs[0].Msg.(*protocol.SiteUpdate)
	obj, err := pairwise.NewObjective(toyData(64, 3), pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: pairwise.AUCHinge{}, Constraint: "l2", Radius: 100})
	if err != nil {
		t.Fatal(err)
	}
	algo, _ := pairwise.Lookup("sgd-prev")
	want, err := algo.Run(ctx, obj, pairwise.RunConfig{Steps: 64, Eta: 2 * 10 / math.Sqrt(2), Init: start}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if u.Weight != 64 || !slices.Equal(u.Model, want.W) || !slices.Equal(u.Last, want.Last) || slices.Equal(u.Last, u.Model) {
		t.Fatalf("update %+v\nwant model %v, last %v", u, want.W, want.Last)
	}
}

func TestWorkerRefusals(t *testing.T) {
	ctx := context.Background()
	w := newWorker(t)
	w.Step(ctx, dpAnnounce("other"))
	if outs := w.Tick(); outs != nil {
		t.Error("an excluded site keeps joining")
	}
	w = newWorker(t)
	bad := dpAnnounce("s1")
	bad.Params = 4
	outs := w.Step(ctx, bad)
	if len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort || w.Err() == nil {
		t.Fatalf("dimension mismatch: %v", outs)
	}
	w = newWorker(t)
	hinge := dpAnnounce("s1")
	hinge.Loss = "hinge" // [Y21a] Thm 10 needs a smooth loss
	// Refused at the announcement: every phase's noise is certified
	// before the first release (LocalSGDPlanCheck checks the loss).
	outs = w.Step(ctx, hinge)
	if len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort || len(w.Ledger()) != 0 {
		t.Fatalf("hinge loss: %v", outs)
	}
	if outs = w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}}); len(outs) != 0 || len(w.Ledger()) != 0 {
		t.Fatalf("hinge loss, phase 1 after the refusal: %v", outs)
	}
	// Before any announcement, ticks retry the join.
	w = newWorker(t)
	if outs := w.Tick(); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindJoin {
		t.Fatalf("join retry %v", outs)
	}
}

// A job of an algorithm that centres privately (fed-dp-lda) reads
// Config.LinearData; the others read Data.
func TestWorkerLinearDataForCentringJobs(t *testing.T) {
	clipped, linear := toyData(64, 3), toyData(64, 3)
	for i := range linear.X {
		linear.X[i] *= 0.5 // a different, still R-bounded, set of records
	}
	for _, c := range []struct {
		algo string
		want *pairwise.Dataset
	}{{fedalgo.FedDPLDA, linear}, {fedalgo.FedDPLocalSGD, clipped}} {
		w, err := New(Config{Federation: "f", Site: "s1", Data: clipped, LinearData: linear, Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		w.Start()
		a := dpAnnounce("s1")
		a.Algo = c.algo
		if c.algo == fedalgo.FedDPLDA {
			a.Loss, a.Phases, a.Eta = "square", 2, 0
		}
		w.Step(ctx, a)
		if w.site == nil {
			t.Fatalf("%s: job not set up: %v", c.algo, w.Err())
		}
		if got := w.obj.Data(); got != c.want {
			t.Errorf("%s: the job reads the %s records", c.algo, map[bool]string{true: "linear", false: "clipped"}[got == linear])
		}
	}
}

// A private site refuses a job whose δ is at least 1/n for its records
// (nothing charged, nothing sent but the refusal); a seeded, not-private
// site only warns.
func TestWorkerRefusesDeltaAboveOneOverN(t *testing.T) {
	for _, secure := range []bool{true, false} {
		cfg := Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(1, 2)), Noise: dp.NewSeededNoise(3), Store: &memStore{}}
		if secure {
			cfg.Noise = dp.NewSecureNoise()
		}
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		job := dpJob("big-delta", 1)
		job.Sites = []string{"s1"}
		job.Delta = 1.0 / 64 // = 1/n for n = 64
		outs := w.Step(context.Background(), job)
		a := abortOf(outs)
		if secure && (a == nil || !strings.Contains(a.Reason, "1/n")) {
			t.Fatalf("secure site: %T %+v, want a refusal naming 1/n", outs[0].Msg, outs[0].Msg)
		}
		if !secure && a != nil {
			t.Fatalf("seeded site refused: %s", a.Reason)
		}
		if len(w.Ledger()) != 0 {
			t.Fatalf("charged %v", w.Ledger())
		}
	}
}
