package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/monitor"
	"github.com/pairfed/pairfed/transport"
)

// ServeHTTP listens on addr and serves h until stop is called; it returns
// the address it listens on (logged: "serving the dashboard on …").
func ServeHTTP(addr string, h http.Handler) (bound string, stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--http %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("http: "+err.Error(), "component", "http")
		}
	}()
	bound = l.Addr().String()
	slog.Info("serving the dashboard on http://"+bound+"/", "component", "http", "url", "http://"+bound+"/")
	return bound, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

// StaleAfter is how long /healthz waits for the next view of a loop that
// ticks every tick.
func StaleAfter(tick time.Duration) time.Duration { return max(10*time.Second, 20*tick) }

// coordinatorHTTP starts the monitor of a coordinator on addr, if given,
// and publishes svc's current view; observe (nil without addr) is the
// ServeOptions.Observe hook that publishes every later one.
func coordinatorHTTP(addr string, svc *coordinator.Service, t *transport.NATS, tick time.Duration) (observe func(*coordinator.Service), stop func(), err error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	mon := monitor.New(monitor.Options{StaleAfter: StaleAfter(tick)})
	observe = func(s *coordinator.Service) {
		v := s.View()
		v.TickSeconds = tick.Seconds()
		// The connection's counters: frames on the wire, all subjects.
		st := t.Conn().Stats()
		v.Traffic = &transport.Traffic{PublishedMessages: st.OutMsgs, PublishedBytes: st.OutBytes, ReceivedMessages: st.InMsgs, ReceivedBytes: st.InBytes}
		mon.Publish(v)
	}
	observe(svc) // Serve has not started: this goroutine still owns svc
	if _, stop, err = ServeHTTP(addr, mon); err != nil {
		return nil, nil, err
	}
	return observe, stop, nil
}
