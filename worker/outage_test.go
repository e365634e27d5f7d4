package worker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// flakyTransport is a transport whose connection to its hub the test
// takes down and brings back (transport.Health); it counts the run loop's
// looks at it (one a tick), so the test waits for ticks, not wall time.
type flakyTransport struct {
	transport.Transport
	up         atomic.Bool
	reconnects atomic.Uint64
	polls      atomic.Int64
}

func (f *flakyTransport) Connected() bool    { f.polls.Add(1); return f.up.Load() }
func (f *flakyTransport) Reconnects() uint64 { return f.reconnects.Load() }

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

// Issue 28, finding 14: a site cut from its hub heard nothing about its
// job and gave it up after its job timeout, though the silence was its
// own connection's. While the transport is down the Serve loop does not
// tick: over 600 ticks of outage (the job timeout is 500) the site sends
// nothing — giving the job up would have sent a Join. When the
// connection is back the site joins again at its first tick (the
// coordinator then repeats the job and phase it missed), long before its
// job timeout could have sent one.
func TestServeKeepsJobWhileDisconnected(t *testing.T) {
	ctx := context.Background()
	s := newService(t, &memStore{}, nil, nil)
	s.cfg.JobTimeout = 500
	s.Step(ctx, dpJob("j1", 1))
	if s.Running() != "j1" {
		t.Fatal("job not taken")
	}
	hub := transport.NewMem()
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	go hub.Serve(hctx)
	ft := &flakyTransport{Transport: hub.Connect("s1")} // down from the start
	joinPolls := make(chan int64, 16)                   // the loop's poll count when each Join arrived
	coordEnd := hub.Connect("coordinator")
	coordEnd.Subscribe(protocol.SiteToCoordSubject("f", "s1"), func(_ string, b []byte) {
		if m, err := protocol.Decode(b); err == nil && m.Kind() == protocol.KindJoin {
			joinPolls <- ft.polls.Load()
		}
	})
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(sctx, s, ft, time.Millisecond, ServeOptions{}) }()
	<-joinPolls // the Join Serve sends when it starts
	ft.waitPolls(t, 600, done)
	select {
	case <-joinPolls:
		t.Fatal("the site gave its job up while its own connection was down")
	default:
	}
	ft.up.Store(true)
	ft.reconnects.Add(1)
	back := ft.polls.Load()
	select {
	case at := <-joinPolls:
		if at-back >= 400 {
			t.Fatalf("the Join came %d ticks after the connection was back: not the reconnection's", at-back)
		}
	case err := <-done:
		t.Fatalf("Serve ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no Join after the connection came back")
	}
	cancel()
	<-done
}
