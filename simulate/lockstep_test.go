package simulate

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"
)

// lockstep drives a coordinator and its workers over a transport.Mem hub
// on the test goroutine only: every delivery happens in hub.Flush, every
// tick is explicit. The same inputs give the same transcript.
type lockstep struct {
	t       *testing.T
	hub     *transport.Mem
	coord   *coordinator.Coordinator
	workers []*worker.Worker
	ends    map[string]transport.Transport
	ticks   int
}

const fedName = "lock"

func newLockstep(t *testing.T, job coordinator.JobConfig, sites []Site, seed uint64, timeout int) *lockstep {
	t.Helper()
	l := &lockstep{t: t, hub: transport.NewMem(), ends: map[string]transport.Transport{}}
	var err error
	l.coord, err = coordinator.New(coordinator.Config{Federation: fedName, Job: job, MinSites: len(sites), PhaseTimeout: timeout, MaxRetries: 3, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ct := l.hub.Connect("coordinator")
	l.ends["coordinator"] = ct
	if _, err := ct.Subscribe(protocol.CoordWildcard(fedName), func(_ string, b []byte) {
		l.send(ct, coordOut(l.coord.Step(l.decode(b))))
	}); err != nil {
		t.Fatal(err)
	}
	for i, s := range sites {
		rng, noise, err := SiteSources(false, seed, i)
		if err != nil {
			t.Fatal(err)
		}
		w, err := worker.New(worker.Config{Federation: fedName, Site: s.Name, Data: s.Data, Rand: rng, Noise: noise, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		l.workers = append(l.workers, w)
		wt := l.hub.Connect(s.Name)
		l.ends[s.Name] = wt
		h := func(_ string, b []byte) { l.send(wt, workerOut(w.Step(context.Background(), l.decode(b)))) }
		for _, subj := range []string{protocol.SitesSubject(fedName), protocol.SiteSubject(fedName, s.Name)} {
			if _, err := wt.Subscribe(subj, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	return l
}

type out struct {
	subject string
	msg     protocol.Message
}

func coordOut(o []coordinator.Output) []out {
	var r []out
	for _, x := range o {
		r = append(r, out{x.Subject, x.Msg})
	}
	return r
}

func workerOut(o []worker.Output) []out {
	var r []out
	for _, x := range o {
		r = append(r, out{x.Subject, x.Msg})
	}
	return r
}

func (l *lockstep) decode(b []byte) protocol.Message {
	m, err := protocol.Decode(b)
	if err != nil {
		l.t.Fatalf("undecodable message: %v", err)
	}
	return m
}

func (l *lockstep) send(t transport.Transport, outs []out) {
	for _, o := range outs {
		b, err := protocol.Encode(o.msg)
		if err != nil {
			l.t.Fatal(err)
		}
		if err := t.Publish(o.subject, b); err != nil {
			l.t.Fatal(err)
		}
	}
}

// run starts the workers and alternates delivery and ticks until the
// coordinator is done or maxTicks pass.
func (l *lockstep) run(maxTicks int) {
	for i, w := range l.workers {
		l.send(l.ends[l.siteName(i)], workerOut(w.Start()))
	}
	for {
		l.hub.Flush(100000)
		if l.coord.Done() || l.ticks >= maxTicks {
			l.hub.Flush(100000) // deliver the result
			return
		}
		l.ticks++
		l.send(l.ends["coordinator"], coordOut(l.coord.Tick()))
		for i, w := range l.workers {
			l.send(l.ends[l.siteName(i)], workerOut(w.Tick()))
		}
	}
}

func (l *lockstep) siteName(i int) string { return "site-" + string(rune('0'+i)) }

var (
	diabetesOnce sync.Once
	diabetes     *data.Table
	diabetesErr  error
)

func loadDiabetes(t *testing.T) *data.Table {
	t.Helper()
	diabetesOnce.Do(func() { diabetes, diabetesErr = data.Load("../datasets/diabetes", data.Options{}) })
	if diabetesErr != nil {
		t.Fatal(diabetesErr)
	}
	return diabetes
}

// prepared splits diabetes (seeded) and prepares n IID sites.
func prepared(t *testing.T, sites int, seed uint64) ([]Site, *pairwise.Dataset, *pairwise.Dataset) {
	t.Helper()
	tab := loadDiabetes(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	trIdx, teIdx, err := data.StratifiedSplit(tab.Y, 0.2, rng)
	if err != nil {
		t.Fatal(err)
	}
	tr, te := tab.Subset(trIdx), tab.Subset(teIdx)
	spec := Spec{Sites: sites, Partition: "iid", Scale: "minmax", Job: coordinator.JobConfig{Algo: fedalgo.FedAvg, FeatureRadius: 1}}
	s, tePrep, err := Prepare(spec, tr, te, rng)
	if err != nil {
		t.Fatal(err)
	}
	return s, tr, tePrep
}

func dpJob() coordinator.JobConfig {
	return coordinator.JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 1}
}

func TestLockstepFedAvgDeterministic(t *testing.T) {
	sites, _, te := prepared(t, 3, 1)
	job := coordinator.JobConfig{Algo: fedalgo.FedAvg, Rounds: 4}
	a := newLockstep(t, job, sites, 9, 5)
	a.run(100)
	b := newLockstep(t, job, sites, 9, 5)
	b.run(100)
	ra, rb := a.coord.Result(), b.coord.Result()
	if ra == nil || rb == nil {
		t.Fatalf("not done: %v / %v", a.coord.Err(), b.coord.Err())
	}
	if !slices.Equal(ra.Model, rb.Model) {
		t.Fatal("two identical lockstep runs differ")
	}
	if ra.Phases != 4 || len(ra.Sites) != 3 {
		t.Errorf("result: %d phases, sites %v", ra.Phases, ra.Sites)
	}
	for _, w := range a.workers {
		if w.Result() == nil || !slices.Equal(w.Result().Model, ra.Model) {
			t.Error("a worker did not receive the result")
		}
		if len(w.Ledger()) != 0 {
			t.Error("fed-avg charged the privacy ledger")
		}
	}
	if auc := pairwise.LinearAUC(ra.Model, te); !(auc > 0.75) {
		t.Errorf("fed-avg AUC %v", auc)
	}
}

func TestLockstepDPLocalSGD(t *testing.T) {
	sites, _, _ := prepared(t, 4, 2)
	l := newLockstep(t, dpJob(), sites, 3, 5)
	l.run(200)
	r := l.coord.Result()
	if r == nil {
		t.Fatalf("not done: %v", l.coord.Err())
	}
	K := dpalgo.LocalSGDPhases(153) // the smallest site of 614 records over 4 sites
	if r.Phases != K {
		t.Errorf("phases %d, want ⌈log₂ 153⌉ = %d", r.Phases, K)
	}
	job := l.coord.Job()
	for _, p := range l.coord.Privacy() {
		if len(p.Sigmas) != K || p.Epsilon != 1 || p.Delta != job.Delta || p.Secure {
			t.Errorf("privacy of %s: %+v (seeded noise must be reported not secure)", p.Site, p)
		}
	}
	for _, w := range l.workers {
		led := w.Ledger()
		if len(led) != K {
			t.Fatalf("ledger has %d releases, want %d", len(led), K)
		}
		for k, rel := range led {
			if rel.Phase != k+1 || rel.Sigma <= 0 {
				t.Errorf("release %d: %+v", k, rel)
			}
		}
	}
}

// TestLockstepDropsAndDelays loses the first Join of one site and the
// first update of another, and delays others: joins are retried, the phase
// times out and is re-broadcast, and the site repeats its released update
// (no second release). The final model is bit-identical to the lossless run.
func TestLockstepDropsAndDelays(t *testing.T) {
	sites, _, _ := prepared(t, 3, 4)
	clean := newLockstep(t, dpJob(), sites, 5, 3)
	clean.run(300)
	if clean.coord.Result() == nil {
		t.Fatal(clean.coord.Err())
	}

	lossy := newLockstep(t, dpJob(), sites, 5, 3)
	var droppedJoin, droppedUpdate bool
	n := 0
	lossy.hub.SetFilter(func(e transport.Envelope) transport.Action {
		n++
		m, _ := protocol.Decode(e.Data)
		switch m := m.(type) {
		case *protocol.Join:
			if m.Site == "site-1" && !droppedJoin {
				droppedJoin = true
				return transport.Action{Drop: true}
			}
		case *protocol.SiteUpdate:
			if m.Site == "site-2" && m.Phase == 2 && !droppedUpdate {
				droppedUpdate = true
				return transport.Action{Drop: true}
			}
			return transport.Action{Delay: n % 3}
		}
		return transport.Action{}
	})
	lossy.run(300)
	r := lossy.coord.Result()
	if r == nil {
		t.Fatal(lossy.coord.Err())
	}
	if !droppedJoin || !droppedUpdate {
		t.Fatal("filter did not fire")
	}
	if !slices.Equal(r.Model, clean.coord.Result().Model) {
		t.Error("lossy run's model differs from the lossless run")
	}
	for _, w := range lossy.workers {
		if len(w.Ledger()) != r.Phases {
			t.Errorf("a site released %d times for %d phases", len(w.Ledger()), r.Phases)
		}
	}
	if _, dropped := lossy.hub.Stats(); dropped != 2 {
		t.Errorf("dropped %d messages, want 2", dropped)
	}
}

// TestLockstepIsolatedSiteAborts drops everything a site sends once the
// job runs: the phase is
// re-broadcast MaxRetries times, then the job is aborted.
func TestLockstepIsolatedSiteAborts(t *testing.T) {
	sites, _, _ := prepared(t, 3, 6)
	l := newLockstep(t, coordinator.JobConfig{Algo: fedalgo.FedAvg, Rounds: 3}, sites, 1, 2)
	l.hub.SetFilter(func(e transport.Envelope) transport.Action {
		// Once the job runs, nothing site-0 sends arrives.
		m, _ := protocol.Decode(e.Data)
		return transport.Action{Drop: e.From == "site-0" && m != nil && m.Kind() != protocol.KindJoin}
	})
	l.run(100)
	if l.coord.Result() != nil || l.coord.Err() == nil || !strings.Contains(l.coord.Err().Error(), "retries") {
		t.Fatalf("want an abort after retries, got result %v err %v", l.coord.Result() != nil, l.coord.Err())
	}
	for _, w := range l.workers[1:] {
		if w.Err() == nil {
			t.Error("a connected site did not learn of the abort")
		}
	}
}
