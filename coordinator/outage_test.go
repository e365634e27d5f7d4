package coordinator

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// flakyTransport is a transport whose connection to its hub the test
// takes down and brings back (transport.Health); it counts the run loop's
// looks at it, so the test waits for ticks, not for wall-clock time.
type flakyTransport struct {
	transport.Transport
	up         atomic.Bool
	reconnects atomic.Uint64
	polls      atomic.Int64
}

func (f *flakyTransport) Connected() bool    { f.polls.Add(1); return f.up.Load() }
func (f *flakyTransport) Reconnects() uint64 { return f.reconnects.Load() }

// waitPolls waits until the loop looked at f n more times (each look is
// one tick of the loop), or Serve ended.
func (f *flakyTransport) waitPolls(t *testing.T, n int64, done <-chan error) {
	t.Helper()
	target := f.polls.Load() + n
	give := time.After(30 * time.Second)
	for f.polls.Load() < target {
		select {
		case err := <-done:
			t.Fatalf("Serve ended: %v", err)
		case <-give:
			t.Fatalf("the run loop looked at its transport %d times, want %d", f.polls.Load(), target)
		case <-time.After(time.Millisecond):
		}
	}
}

// Issue 28, finding 14: a coordinator cut from its NATS hub heard no
// site, counted its own disconnection as site silence, dropped every site
// of the running job and aborted it. While its transport is down the
// Serve loop does not tick: after ≥ 40 ticks of outage (SiteTimeout is 3)
// every site is still live and the job still runs; once the connection
// is back the clocks resume (sites that then stay silent are dropped as
// before, which shows the pause is the transport's, not a lost clock).
func TestServeFreezesLivenessWhileDisconnected(t *testing.T) {
	var logMu sync.Mutex
	var logs strings.Builder
	logf := func(f string, a ...any) { logMu.Lock(); logs.WriteString(sprintf(f, a...) + "\n"); logMu.Unlock() }
	s := newService(t, ServiceConfig{SiteTimeout: 3, PhaseTimeout: 2, MaxRetries: 1, Logf: logf})
	for _, site := range []string{"a", "b", "c"} {
		s.Step(&protocol.Join{Site: site, Records: 40, Dim: 3, Instance: "i-" + site})
	}
	s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: "fed-avg", MinSites: 3, Seed: 7})
	acceptAll(s)
	if s.Running() != "j" || !s.inner.Accepted() {
		t.Fatalf("job not running: %+v", s.Status("j"))
	}

	hub := transport.NewMem()
	ft := &flakyTransport{Transport: hub.Connect("coordinator")} // down from the start
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, s, ft, time.Millisecond, ServeOptions{}) }()
	ft.waitPolls(t, 40, done)
	cancel()
	<-done
	if s.now != 0 || len(s.members) != 3 || s.Running() != "j" || len(s.inner.Active()) != 3 {
		t.Fatalf("after 40 ticks cut from the hub: now %d, members %d, running %q, status %+v\n%s", s.now, len(s.members), s.Running(), s.Status("j"), logs.String())
	}
	if !strings.Contains(logs.String(), "lost the connection to the message hub") {
		t.Errorf("the outage was not logged:\n%s", logs.String())
	}

	// The connection is back: time runs again.
	ft.up.Store(true)
	ft.reconnects.Add(1)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done = make(chan error, 1)
	go func() { done <- Serve(ctx, s, ft, time.Millisecond, ServeOptions{}) }()
	ft.waitPolls(t, 40, done)
	cancel()
	<-done
	if s.now < 10 || len(s.members) != 0 || s.Running() != "" {
		t.Fatalf("connected, 40 ticks of real silence: now %d, members %d, running %q\n%s", s.now, len(s.members), s.Running(), logs.String())
	}
}
