// Package monitor serves what an operator of a pairfed coordinator looks
// at over HTTP: /healthz, /metrics (Prometheus text format), /api/state
// (the coordinator.View as JSON) and, at /, a live dashboard page that
// polls /api/state (sites online, running jobs with their progress, the
// privacy ledger with spent and remaining budgets).
//
// The coordinator's state machines are single-goroutine: their run loop
// builds a coordinator.View in its Observe hook and hands it to Publish,
// which stores it behind an atomic pointer; the HTTP handlers only read
// published views. The page is embedded (no external scripts or fonts).
package monitor

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed dashboard.html
var assets embed.FS

// Options configure a Server.
type Options struct {
	// StaleAfter is how long after the last Publish /healthz still
	// reports the run loop healthy (default 10 s; the loops publish after
	// every tick).
	StaleAfter time.Duration
	// Ledger, when set, returns the privacy ledger's figures per site
	// (spent, and budgets when known); they replace the view's own (see
	// coordinator.View.ApplyLedger) in /api/state, /metrics and the page.
	// It is called from HTTP handlers: it must be safe for concurrent use.
	Ledger func() []coordinator.SiteSpend
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
}

// Server holds the latest published view and serves it. Its methods are
// safe for concurrent use.
type Server struct {
	opt      Options
	cur      atomic.Pointer[snapshot]
	finished atomic.Bool
	mux      *http.ServeMux

	mu         sync.Mutex
	phasesDone map[string]int // job → phases aggregated, the most seen
	phases     atomic.Int64   // Σ phasesDone
}

type snapshot struct {
	view coordinator.View
	at   time.Time
}

// New returns a Server with nothing published yet (/healthz answers 503
// until the first Publish).
func New(opt Options) *Server {
	if opt.StaleAfter <= 0 {
		opt.StaleAfter = 10 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &Server{opt: opt, phasesDone: map[string]int{}, mux: http.NewServeMux()}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&collector{s: s})
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	s.mux.HandleFunc("GET /api/state", s.state)
	s.mux.HandleFunc("GET /{$}", s.page)
	return s
}

// Publish makes v the current view. v must not be modified afterwards
// (coordinator.Coordinator.View and Service.View return fresh copies).
// It also advances pairfed_phases_completed_total, which counts, over
// every job ever published (by id: job ids are unique), the most phases
// seen aggregated.
func (s *Server) Publish(v coordinator.View) {
	s.mu.Lock()
	jobs := append(append([]coordinator.JobView{}, v.Finished...), v.Queued...)
	if v.Running != nil {
		jobs = append(jobs, *v.Running)
	}
	for _, j := range jobs {
		if d := j.PhasesDone; d > s.phasesDone[j.Job] {
			s.phases.Add(int64(d - s.phasesDone[j.Job]))
			s.phasesDone[j.Job] = d
		}
	}
	s.mu.Unlock()
	s.cur.Store(&snapshot{view: v, at: s.opt.Now()})
}

// Finish records that the run loop ended for good (e.g. `pairfed
// simulate` after its last run): /healthz then reports "finished" with
// 200 however old the last view is.
func (s *Server) Finish() { s.finished.Store(true) }

// ServeHTTP serves /healthz, /metrics, /api/state and /.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// current returns the latest view with the ledger applied, and when it
// was published; ok is false before the first Publish.
func (s *Server) current() (v coordinator.View, at time.Time, ok bool) {
	snap := s.cur.Load()
	if snap == nil {
		return coordinator.View{}, time.Time{}, false
	}
	v = snap.view.Clone()
	if s.opt.Ledger != nil {
		v.ApplyLedger(s.opt.Ledger())
	}
	return v, snap.at, true
}

// Health is the /healthz object.
type Health struct {
	// Status is "ok" (the loop published within StaleAfter), "finished"
	// (Finish was called), "stale" or "starting" (nothing published).
	Status     string    `json:"status"`
	Federation string    `json:"federation,omitempty"`
	Kind       string    `json:"kind,omitempty"`
	Observed   time.Time `json:"observed,omitzero"`
	AgeSeconds float64   `json:"age_seconds"`
	Running    string    `json:"running,omitempty"`
	Sites      int       `json:"sites"`
}

func (s *Server) health() (Health, int) {
	snap := s.cur.Load()
	if snap == nil {
		return Health{Status: "starting"}, http.StatusServiceUnavailable
	}
	h := Health{Federation: snap.view.Federation, Kind: snap.view.Kind, Observed: snap.at,
		AgeSeconds: s.opt.Now().Sub(snap.at).Seconds(), Sites: len(snap.view.Sites)}
	if snap.view.Running != nil {
		h.Running = snap.view.Running.Job
	}
	switch {
	case s.finished.Load():
		h.Status = "finished"
	case s.opt.Now().Sub(snap.at) <= s.opt.StaleAfter:
		h.Status = "ok"
	default:
		h.Status = "stale"
		return h, http.StatusServiceUnavailable
	}
	return h, http.StatusOK
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	h, code := s.health()
	writeJSON(w, code, h)
}

// State is the /api/state object: the view (its fields inline), when it
// was published, and the health status.
type State struct {
	coordinator.View
	Observed time.Time `json:"observed,omitzero"`
	Health   string    `json:"health"`
}

func (s *Server) state(w http.ResponseWriter, _ *http.Request) {
	v, at, ok := s.current()
	h, _ := s.health()
	if !ok {
		v = coordinator.View{Sites: []coordinator.SiteView{}, Queued: []coordinator.JobView{}, Finished: []coordinator.JobView{}, Privacy: []coordinator.SiteSpend{}}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, State{View: v, Observed: at, Health: h.Status})
}

func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	b, err := assets.ReadFile("dashboard.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, fmt.Sprintf("monitor: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
