package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/monitor"
	"github.com/pairfed/pairfed/node"
	"github.com/pairfed/pairfed/simulate"
	"github.com/urfave/cli/v2"
)

// --http of `pairfed coordinator` and `pairfed simulate`: the run loop's
// Observe hook publishes a coordinator.View to a monitor.Server, which
// serves /healthz, /metrics, /api/state and the live dashboard at /.

func httpFlag() cli.Flag {
	return &cli.StringFlag{Name: "http", Usage: "HOST:PORT on which to serve /healthz, /metrics (Prometheus), /api/state (JSON) and a live dashboard at / (port 0: any free port; the address is logged)"}
}

func holdFlag() cli.Flag {
	return &cli.DurationFlag{Name: "hold", Usage: "with --http: keep serving the finished federation's dashboard this long after the report is printed (an interrupt ends it sooner)"}
}

// serveHTTP listens on addr and serves h until stop is called (node.ServeHTTP).
func serveHTTP(addr string, h http.Handler) (bound string, stop func(), err error) {
	return node.ServeHTTP(addr, h)
}

// staleAfter is how long /healthz waits for the next view of a loop that
// ticks every tick (node.StaleAfter).
func staleAfter(tick time.Duration) time.Duration { return node.StaleAfter(tick) }

// simulateWeb is --http of `pairfed simulate`.
type simulateWeb struct {
	mon  *monitor.Server
	stop func()
	hold time.Duration

	mu   sync.Mutex
	last coordinator.View
	past []coordinator.JobView // finished jobs of the earlier runs
}

// simulateHTTP starts --http, if given, and sets spec.Watch to publish
// every run's coordinator view; the dashboard lists the jobs of earlier
// runs (one federation each) with the current run's. The returned value's
// methods are no-ops without --http.
func simulateHTTP(c *cli.Context, spec *simulate.Spec) (*simulateWeb, error) {
	addr := c.String("http")
	if addr == "" {
		if c.IsSet("hold") {
			return nil, usageError{errors.New("simulate: --hold needs --http")}
		}
		return nil, nil
	}
	w := &simulateWeb{mon: monitor.New(monitor.Options{StaleAfter: staleAfter(spec.Tick)}), hold: c.Duration("hold")}
	var err error
	if _, w.stop, err = serveHTTP(addr, w.mon); err != nil {
		return nil, err
	}
	spec.Watch = w.publish
	return w, nil
}

func (w *simulateWeb) publish(v coordinator.View) {
	w.mu.Lock()
	if w.last.Federation != "" && v.Federation != w.last.Federation {
		w.past = append(w.past, w.last.Finished...)
	}
	w.last = v.Clone()
	out := v.Clone()
	out.Finished = append(append([]coordinator.JobView{}, w.past...), out.Finished...)
	w.mu.Unlock()
	w.mon.Publish(out)
}

// finish marks the simulation ended and keeps serving for --hold (or
// until ctx ends).
func (w *simulateWeb) finish(ctx context.Context) {
	if w == nil {
		return
	}
	w.mon.Finish()
	if w.hold <= 0 {
		return
	}
	slog.Info(fmt.Sprintf("simulation done: serving the dashboard for %v more", w.hold), "component", "http")
	select {
	case <-ctx.Done():
	case <-time.After(w.hold):
	}
}

// close stops the HTTP server.
func (w *simulateWeb) close() {
	if w != nil {
		w.stop()
	}
}
