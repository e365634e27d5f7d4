package worker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// diskStore is a site's ledger on a disk that can be full: Append and
// Writable fail with ENOSPC while full is set (store.Ledger's contract).
type diskStore struct {
	full      bool
	appendErr bool // Append fails even though Writable succeeds (the disk filled after the accept)
	got       []Release
}

func (d *diskStore) Append(r Release) error {
	if d.full || d.appendErr {
		return syscall.ENOSPC
	}
	d.got = append(d.got, r)
	return nil
}

func (d *diskStore) Writable() error {
	if d.full {
		return syscall.ENOSPC
	}
	return nil
}

// fed is a lockstep federation: a coordinator.Service and worker
// Services, messages delivered in order until none is left.
type fed struct {
	t     *testing.T
	coord *coordinator.Service
	sites map[string]*Service
	order []string
	logs  strings.Builder
}

func newFed(t *testing.T, quorum int, data map[string]*pairwise.Dataset, stores map[string]LedgerStore) *fed {
	t.Helper()
	f := &fed{t: t, sites: map[string]*Service{}}
	logf := func(format string, a ...any) {
		f.logs.WriteString(strings.TrimSpace(sprintf(format, a...)) + "\n")
	}
	c, err := coordinator.NewService(coordinator.ServiceConfig{Federation: "f", MinSites: quorum, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	f.coord = c
	for name, ds := range data {
		cfg := ServiceConfig{Worker: Config{Federation: "f", Site: name, Data: ds, Rand: rand.New(rand.NewPCG(uint64(len(name)), 9)), Noise: dp.NewSeededNoise(5), Logf: logf}}
		if st := stores[name]; st != nil {
			cfg.Worker.Store = st
		}
		s, err := NewService(cfg)
		if err != nil {
			t.Fatal(err)
		}
		f.sites[name] = s
		f.order = append(f.order, name)
	}
	slices.Sort(f.order)
	for _, name := range f.order {
		f.toCoord(f.sites[name].Start())
	}
	return f
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// toCoord delivers site outputs to the coordinator and everything that
// follows; it returns the statuses sent to clients.
func (f *fed) toCoord(outs []Output) []*protocol.JobStatus {
	var sts []*protocol.JobStatus
	var queue []coordinator.Output
	for _, o := range outs {
		queue = append(queue, f.coord.Step(o.Msg)...)
	}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		if st, ok := o.Msg.(*protocol.JobStatus); ok {
			sts = append(sts, st)
			continue
		}
		for _, name := range f.order {
			if o.Subject != protocol.SitesSubject("f") && o.Subject != protocol.SiteSubject("f", name) {
				continue
			}
			for _, so := range f.sites[name].Step(context.Background(), o.Msg) {
				queue = append(queue, f.coord.Step(so.Msg)...)
			}
		}
	}
	return sts
}

func (f *fed) submit(s *protocol.JobSubmit) *protocol.JobStatus {
	f.t.Helper()
	var last *protocol.JobStatus
	for _, st := range f.toCoord([]Output{{Msg: s}}) {
		if st.Job == s.Job {
			last = st
		}
	}
	for range 50 { // ticks: Joins of sites that left a job
		if last != nil && last.Status != protocol.StatusQueued && last.Status != protocol.StatusRunning {
			return last
		}
		var outs []Output
		for _, name := range f.order {
			outs = append(outs, f.sites[name].Tick()...)
		}
		for _, st := range f.toCoord(outs) {
			if st.Job == s.Job {
				last = st
			}
		}
		for _, o := range f.coord.Tick() {
			if st, ok := o.Msg.(*protocol.JobStatus); ok && st.Job == s.Job {
				last = st
			}
		}
	}
	if last == nil {
		f.t.Fatalf("no status for %s\n%s", s.Job, f.logs.String())
	}
	return last
}

func fourSites() map[string]*pairwise.Dataset {
	return map[string]*pairwise.Dataset{"s0": toyData(64, 3), "s1": toyData(64, 3), "s2": toyData(64, 3), "s3": toyData(64, 3)}
}

func localSGD(job string) *protocol.JobSubmit {
	return &protocol.JobSubmit{Job: job, Client: "c", Algo: fedalgo.FedDPLocalSGD, Loss: "logistic", Epsilon: 1, Delta: 1e-3, MinSites: 3}
}

// A full disk at one site of four (quorum 3): the site refuses the job in
// its accept round with the disk error, the other three run it and are
// charged, and once the disk has room the site takes the next job
// (issue 28: before, it accepted, aborted at phase 1 and the job failed
// for everyone, the three others charged).
func TestFullSiteDiskCostsTheSiteNotTheJob(t *testing.T) {
	disk := &diskStore{full: true}
	f := newFed(t, 3, fourSites(), map[string]LedgerStore{"s0": disk})
	st := f.submit(localSGD("j1"))
	if st.Status != protocol.StatusCompleted || !slices.Equal(st.Sites, []string{"s1", "s2", "s3"}) || !slices.Equal(st.Refused, []string{"s0"}) {
		t.Fatalf("j1: %+v\n%s", st, f.logs.String())
	}
	if !strings.Contains(f.logs.String(), "site s0 refused job j1: this site's privacy ledger cannot be written") || !strings.Contains(f.logs.String(), "no space left") {
		t.Errorf("refusal not logged with the disk error:\n%s", f.logs.String())
	}
	if len(disk.got) != 0 || len(f.sites["s0"].Ledger()) != 0 {
		t.Fatalf("s0 released on a full disk: %v", disk.got)
	}
	for _, c := range f.coord.Ledger() {
		if c.Site == "s0" {
			t.Errorf("s0 charged for a job it refused: %+v", c)
		}
	}
	disk.full = false // space freed: no restart
	st = f.submit(localSGD("j2"))
	if st.Status != protocol.StatusCompleted || len(st.Sites) != 4 {
		t.Fatalf("j2 after freeing the disk: %+v\n%s", st, f.logs.String())
	}
	if len(disk.got) == 0 {
		t.Fatal("s0 released nothing in j2")
	}
	// The disk fills between the accept and a release: the site leaves
	// the job (nothing released), which completes with the three others.
	disk.appendErr = true
	n := len(disk.got)
	st = f.submit(localSGD("j3"))
	if st.Status != protocol.StatusCompleted || !slices.Equal(st.Sites, []string{"s1", "s2", "s3"}) || !slices.Contains(st.Dropped, "s0") {
		t.Fatalf("j3 with s0's disk filling mid-job: %+v\n%s", st, f.logs.String())
	}
	if len(disk.got) != n {
		t.Errorf("s0 released on a full disk")
	}
}

// One class at a site: fed-dp-lda takes it (it pools statistics across
// sites), fed-avg and fed-dp-local-sgd are refused by the site itself in
// the accept round, with the generic reason, and go on with the others.
func TestSingleClassSiteRefusesPairAlgorithms(t *testing.T) {
	data := fourSites()
	one := toyData(64, 3)
	for i := range one.Y {
		one.Y[i] = 1
	}
	data["s0"] = one
	f := newFed(t, 3, data, nil)
	for _, job := range []*protocol.JobSubmit{
		localSGD("sgd"),
		{Job: "avg", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 3},
	} {
		st := f.submit(job)
		if st.Status != protocol.StatusCompleted || !slices.Equal(st.Refused, []string{"s0"}) || len(st.Sites) != 3 {
			t.Fatalf("%s: %+v\n%s", job.Algo, st, f.logs.String())
		}
		if !strings.Contains(f.logs.String(), "site s0 refused job "+job.Job+": "+job.Algo+" needs both classes at every site") {
			t.Errorf("%s: refusal reason not logged:\n%s", job.Algo, f.logs.String())
		}
	}
	st := f.submit(&protocol.JobSubmit{Job: "lda", Client: "c", Algo: fedalgo.FedDPLDA, Epsilon: 1, Delta: 1e-3, MinSites: 4})
	if st.Status != protocol.StatusCompleted || len(st.Sites) != 4 {
		t.Fatalf("fed-dp-lda with a one-class site: %+v\n%s", st, f.logs.String())
	}
	// Every algorithm that says it learns from one-class sites is taken by
	// the one-class site (fed-dp-spauc's description said so while its
	// sites refused).
	for _, name := range fedalgo.SingleClassNames() {
		st := f.submit(&protocol.JobSubmit{Job: "one-" + name, Client: "c", Algo: name, Epsilon: 1, Delta: 1e-3, MinSites: 4})
		if st.Status != protocol.StatusCompleted || len(st.Sites) != 4 || len(st.Refused) != 0 {
			t.Fatalf("%s with a one-class site: %+v\n%s", name, st, f.logs.String())
		}
	}
	if !slices.Contains(fedalgo.SingleClassNames(), fedalgo.FedDPSPAUC) {
		t.Errorf("%s learns from one-class sites but is not in SingleClassNames: %v", fedalgo.FedDPSPAUC, fedalgo.SingleClassNames())
	}
}

// The site re-reads its budget before each job: lowered below what it
// spent, the next job is refused; an invalid budget is ignored.
func TestServiceReloadsBudget(t *testing.T) {
	ctx := context.Background()
	var src *Budget
	changed := false
	s, err := NewService(ServiceConfig{
		Worker: Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5)},
		Budget: &Budget{Epsilon: 1, Delta: 1e-2},
		BudgetSource: func() (*Budget, bool, error) {
			c := changed
			changed = false
			return src, c, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := refusal(s.Step(ctx, dpJob("j1", 0.4))); r != nil {
		t.Fatalf("j1 refused: %s", r.Reason)
	}
	s.Step(ctx, &protocol.PhaseStart{Job: "j1", Phase: 1, Model: []float64{0, 0, 0}})
	s.Step(ctx, &protocol.Abort{Job: "j1", From: protocol.CoordinatorName, Reason: "end"})
	src, changed = &Budget{Epsilon: 0.3, Delta: 1e-2}, true
	r := refusal(s.Step(ctx, dpJob("j2", 0.1)))
	if r == nil || !strings.Contains(r.Reason, "budget (0.3") {
		t.Fatalf("j2 after lowering the budget to 0.3: %+v", r)
	}
	src, changed = &Budget{Epsilon: errNaN(), Delta: 1e-2}, true
	if r := refusal(s.Step(ctx, dpJob("j3", 0.1))); r == nil || !strings.Contains(r.Reason, "budget (0.3") {
		t.Fatalf("an invalid budget replaced 0.3: %+v", r)
	}
	src, changed = nil, true // budgets.json without this site: no limit from the file
	if r := refusal(s.Step(ctx, dpJob("j4", 0.1))); r != nil {
		t.Fatalf("j4 refused without a budget: %s", r.Reason)
	}
}

func errNaN() float64 {
	var zero float64
	return zero / zero
}
