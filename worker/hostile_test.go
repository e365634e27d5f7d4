package worker

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// A test algorithm whose site half misbehaves as a job spec that slipped
// past every check could make a real one: it panics (as dp.AddGaussian
// did for ε = 1e308), returns a NaN update (a diverging step), or
// computes until its context is cancelled (1e12 local passes).
type hostileAlgo struct{ name, mode string }

func init() {
	for _, mode := range []string{"panic", "nan", "block", "setup-panic", "slow-setup"} {
		fedalgo.Register(hostileAlgo{name: "test-hostile-" + mode, mode: mode})
	}
}

func (a hostileAlgo) Name() string                      { return a.name }
func (hostileAlgo) Private() bool                       { return false }
func (hostileAlgo) Configure(*fedalgo.Spec) error       { return nil }
func (hostileAlgo) CheckLocalAlgo(string) error         { return nil }
func (hostileAlgo) CheckOptions(protocol.Options) error { return nil }
func (hostileAlgo) Plan(s *fedalgo.Spec, _ []fedalgo.SiteInfo, _ int) (*fedalgo.Plan, error) {
	return &fedalgo.Plan{Phases: 1, Eta: 1}, nil
}
func (a hostileAlgo) NewSite(*protocol.JobAnnounce, fedalgo.SiteEnv) (fedalgo.Site, error) {
	switch a.mode {
	case "setup-panic":
		panic("setup exploded")
	case "slow-setup":
		<-slowSetup // as long as the test wants (a calibration search)
	}
	return hostileSite(a), nil
}
func (hostileAlgo) NewCombiner(*protocol.JobAnnounce, []float64) (fedalgo.Combiner, error) {
	return nil, nil
}

type hostileSite hostileAlgo

// slowSetup holds test-hostile-slow-setup's NewSite until closed.
var slowSetup = make(chan struct{})

func (s hostileSite) Step(ctx context.Context, _ int, model []float64) (*protocol.SiteUpdate, *fedalgo.Release, error) {
	switch s.mode {
	case "panic":
		var m []float64
		_ = m[len(model)] // index out of range
	case "nan":
		return &protocol.SiteUpdate{Model: []float64{math.NaN(), 0, 0}, Weight: 1}, nil, nil
	case "block":
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}
	return &protocol.SiteUpdate{Model: model, Weight: 1}, nil, nil
}

func hostileJob(id, mode string) *protocol.JobAnnounce {
	return &protocol.JobAnnounce{Job: id, Algo: "test-hostile-" + mode, Task: "auc", Loss: "hinge", Params: 3, Phases: 1,
		Eta: 1, ParamRadius: 1, FeatureRadius: 1, Sites: []string{"s1"}}
}

func abortOf(outs []Output) *protocol.Abort {
	for _, o := range outs {
		if a, ok := o.Msg.(*protocol.Abort); ok {
			return a
		}
	}
	return nil
}

// A panic or a non-finite update in the algorithm's code ends that job
// with an Abort naming the problem — nothing released, nothing charged —
// and the same site serves the next job.
func TestServiceSurvivesHostileJobs(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ mode, want string }{
		{"panic", "internal error"},
		{"setup-panic", "internal error"},
		{"nan", "not finite"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			st := &memStore{}
			s := newService(t, st, nil, nil)
			outs := s.Step(ctx, hostileJob("bad", c.mode))
			if c.mode != "setup-panic" {
				outs = s.Step(ctx, &protocol.PhaseStart{Job: "bad", Phase: 1, Model: []float64{0, 0, 0}})
			}
			a := abortOf(outs)
			if a == nil || a.Job != "bad" || !strings.Contains(a.Reason, c.want) {
				t.Fatalf("outputs %v: want an abort of job bad saying %q", outs, c.want)
			}
			for _, o := range outs {
				if o.Msg.Kind() == protocol.KindSiteUpdate {
					t.Errorf("released %v", o.Msg)
				}
				if _, err := protocol.Encode(o.Msg); err != nil {
					t.Errorf("output does not encode: %v", err)
				}
			}
			if len(st.got) != 0 || len(s.Ledger()) != 0 {
				t.Errorf("ledger %v after a job that released nothing", st.got)
			}
			if s.Running() != "" {
				t.Errorf("job %s still running after its abort", s.Running())
			}
			// The next job is served, phase and all.
			s.Step(ctx, dpJob("next", 1))
			outs = s.Step(ctx, &protocol.PhaseStart{Job: "next", Phase: 1, Model: []float64{0, 0, 0}})
			if len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindSiteUpdate || len(st.got) != 1 {
				t.Fatalf("next job: outputs %v, ledger %v", outs, st.got)
			}
		})
	}
}

// A phase whose context is cancelled (the run loop does that when the
// coordinator aborts the job or announces another) returns nothing and
// records nothing; the abort that follows ends the job.
func TestServiceAbandonsCancelledPhase(t *testing.T) {
	st := &memStore{}
	s := newService(t, st, nil, nil)
	s.Step(context.Background(), hostileJob("slow", "block"))
	pctx, cancel := context.WithCancel(context.Background())
	cancel()
	if outs := s.Step(pctx, &protocol.PhaseStart{Job: "slow", Phase: 1, Model: []float64{0, 0, 0}}); len(outs) != 0 {
		t.Fatalf("abandoned phase sent %v", outs)
	}
	s.Step(context.Background(), &protocol.Abort{Job: "slow", From: protocol.CoordinatorName, Reason: "phase 1: 0 of 1 updates after 3 retries"})
	if s.Running() != "" || len(st.got) != 0 {
		t.Fatalf("running %q, ledger %v", s.Running(), st.got)
	}
	for _, c := range []struct {
		m    protocol.Message
		want bool
	}{
		{&protocol.Abort{Job: "slow", From: "coordinator"}, true},
		{&protocol.Abort{Job: "other", From: "coordinator"}, false},
		{&protocol.Result{Job: "slow", Phases: 1, Model: []float64{0}}, true},
		{hostileJob("slow", "block"), false},
		{hostileJob("other", "block"), true},
		{&protocol.JobAnnounce{Job: "other", Sites: []string{"s2"}}, false},
		{&protocol.PhaseStart{Job: "slow", Phase: 2}, false},
	} {
		if got := abandons(c.m, "slow", "s1"); got != c.want {
			t.Errorf("abandons(%v %+v) = %v, want %v", c.m.Kind(), c.m, got, c.want)
		}
	}
}

// A second process under this site's name takes no part in a job the
// coordinator announced to the admitted instance: it sends nothing and
// computes nothing; the admitted instance accepts.
func TestServiceIgnoresJobOfAnotherInstance(t *testing.T) {
	for _, c := range []struct {
		instance string
		take     bool
	}{{"i-1", true}, {"i-2", false}, {"", true}} {
		st := &memStore{}
		s, err := NewService(ServiceConfig{Worker: Config{Federation: "f", Site: "s1", Instance: c.instance, Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5), Store: st}})
		if err != nil {
			t.Fatal(err)
		}
		a := dpJob("j", 1)
		a.Instances = []string{"i-1", ""}
		outs := s.Step(context.Background(), a)
		took := len(outs) == 1 && outs[0].Msg.Kind() == protocol.KindAccept
		if took != c.take || (s.Running() != "") != c.take {
			t.Errorf("instance %q: outputs %v, running %q; want taken %v", c.instance, outs, s.Running(), c.take)
		}
		if c.take && outs[0].Msg.(*protocol.Accept).Instance != c.instance {
			t.Errorf("accept carries instance %q", outs[0].Msg.(*protocol.Accept).Instance)
		}
	}
}

// fakeBus is a Transport whose test delivers messages to the
// subscriptions by hand and sees every publish.
type fakeBus struct {
	mu       sync.Mutex
	handlers map[string]func(string, []byte)
	sent     []protocol.Message
}

func (f *fakeBus) Publish(subject string, data []byte) error {
	m, err := protocol.Decode(data)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return nil
}

func (f *fakeBus) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[subject] = h
	return func() {}, nil
}

func (f *fakeBus) Close() error { return nil }

func (f *fakeBus) deliver(t *testing.T, subject string, m protocol.Message) {
	t.Helper()
	b, err := protocol.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	h := f.handlers[subject]
	f.mu.Unlock()
	h(subject, b)
}

func (f *fakeBus) count(k protocol.Kind) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.sent {
		if m.Kind() == k {
			n++
		}
	}
	return n
}

// Serve end to end: a phase that would compute for ever keeps the site
// live (heartbeats beside it), is abandoned the moment the coordinator
// aborts the job, and the site then serves the next job.
func TestServeAbandonsPhaseAndHeartbeats(t *testing.T) {
	st := &memStore{}
	bus, wait, cancel, served := serveOnFakeBus(t, st, 2)
	defer cancel()
	wait("the join", func() bool { return bus.count(protocol.KindJoin) > 0 })
	sites := protocol.SitesSubject("f")
	a := hostileJob("slow", "block")
	a.Sites = []string{"s1"}
	bus.deliver(t, sites, a)
	bus.deliver(t, sites, &protocol.PhaseStart{Job: "slow", Phase: 1, Model: []float64{0, 0, 0}})
	wait("heartbeats during the phase", func() bool { return bus.count(protocol.KindHeartbeat) >= 3 })
	bus.deliver(t, sites, &protocol.Abort{Job: "slow", From: protocol.CoordinatorName, Reason: "phase 1 timed out"})
	next := dpJob("next", 1)
	next.Sites = []string{"s1"}
	bus.deliver(t, sites, next)
	wait("the next job's acceptance", func() bool { return bus.count(protocol.KindAccept) >= 2 })
	bus.deliver(t, sites, &protocol.PhaseStart{Job: "next", Phase: 1, Model: []float64{0, 0, 0}})
	wait("the next job's update", func() bool { return bus.count(protocol.KindSiteUpdate) == 1 })
	if len(st.got) != 1 || st.got[0].Job != "next" {
		t.Fatalf("ledger %+v: want the next job's release only", st.got)
	}
	cancel()
	if err := <-served; err != context.Canceled {
		t.Fatalf("serve: %v", err)
	}
}

// A site whose accept computes for longer than the coordinator's silence
// limit keeps its membership: it heartbeats beside the computation
// (issue 28: fed-dp-pair-sgd's calibration on the announcement took 4.4 s
// and sites were dropped as silent). The accept waits until the test has
// seen heartbeats sent while it was blocked, so the test fails if none
// are sent (it does not measure time).
func TestServeHeartbeatsWhileAccepting(t *testing.T) {
	bus, wait, cancel, served := serveOnFakeBus(t, &memStore{}, 1000)
	defer cancel()
	wait("the join", func() bool { return bus.count(protocol.KindJoin) > 0 })
	before := bus.count(protocol.KindHeartbeat)
	a := hostileJob("slow-accept", "slow-setup")
	bus.deliver(t, protocol.SitesSubject("f"), a)
	wait("heartbeats during the accept", func() bool { return bus.count(protocol.KindHeartbeat) >= before+3 })
	if n := bus.count(protocol.KindAccept); n != 0 {
		t.Fatalf("%d accepts before the setup ended", n)
	}
	close(slowSetup)
	wait("the accept", func() bool { return bus.count(protocol.KindAccept) == 1 })
	cancel()
	if err := <-served; err != context.Canceled {
		t.Fatalf("serve: %v", err)
	}
}

// serveOnFakeBus runs Serve for site s1 (heartbeats every 2 ticks of 5 ms,
// joins every joinEvery ticks) over a fake bus, and returns the bus, a
// wait that fails the test after 20 s without cond, the cancel of the
// service's context and the channel of Serve's result.
func serveOnFakeBus(t *testing.T, st LedgerStore, joinEvery int) (*fakeBus, func(string, func() bool), context.CancelFunc, chan error) {
	t.Helper()
	bus := &fakeBus{handlers: map[string]func(string, []byte){}}
	s, err := NewService(ServiceConfig{Worker: Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)),
		Noise: dp.NewSeededNoise(5), Store: st, HeartbeatEvery: 2, JoinEvery: joinEvery}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, s, bus, 5*time.Millisecond, ServeOptions{}) }()
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return bus, wait, cancel, served
}
