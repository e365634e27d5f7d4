package monitor

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/simulate"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func get(t *testing.T, h http.Handler, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, string(b), rec.Result().Header
}

// scrape parses /metrics with Prometheus' text-format parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	code, body, hdr := get(t, h, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/metrics content type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text format: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the sample of family name whose labels are
// exactly labels (name=value pairs); ok is false if there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label)*2 != len(labels) {
			continue
		}
		want := map[string]string{}
		for i := 0; i < len(labels); i += 2 {
			want[labels[i]] = labels[i+1]
		}
		match := true
		for _, l := range m.Label {
			v, ok := want[l.GetName()]
			match = match && ok && v == l.GetValue()
		}
		if !match {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.Counter.GetValue(), true
		case dto.MetricType_GAUGE:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func mustValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := value(fams, name, labels...)
	if !ok {
		t.Fatalf("no sample %s%v", name, labels)
	}
	return v
}

// A private simulated federation over the in-memory transport publishes
// its coordinator's views to a Server: /metrics (parsed by Prometheus'
// parser) then says how many phases were aggregated, how many sites are
// online, what each site spent, the job's status and the coordinator's
// traffic; a view taken mid-job gives the running job's phase; /api/state
// carries the job's test AUC.
func TestMetricsOfASimulatedFederation(t *testing.T) {
	tab, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Options{})
	var mu sync.Mutex
	var mid *coordinator.View
	views := 0
	watch := func(v coordinator.View) {
		mu.Lock()
		views++
		if mid == nil && v.Running != nil && v.Running.PhasesDone >= 2 {
			c := v.Clone()
			mid = &c
		}
		mu.Unlock()
		srv.Publish(v)
	}
	spec := simulate.Spec{Sites: 3, Transport: "mem", Seed: 3, NoiseSeed: 4, Seeded: true, Tick: 5 * time.Millisecond,
		Job: coordinator.JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 1, Delta: 1e-3}, Watch: watch}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := simulate.Run(ctx, spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if views < rep.Phases || mid == nil {
		t.Fatalf("%d views published, mid-job view %v", views, mid)
	}
	K := float64(rep.Phases) // ⌈log₂ n_min⌉ phases of [Y21a] Alg 3
	fams := scrape(t, srv)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pairfed_coordinator_up", nil, 1},
		{"pairfed_phases_completed_total", nil, K},
		{"pairfed_sites_online", nil, 3},
		{"pairfed_jobs", []string{"status", "completed"}, 1},
		{"pairfed_jobs", []string{"status", "running"}, 0},
		{"pairfed_jobs", []string{"status", "failed"}, 0},
		{"pairfed_federation_info", []string{"federation", "sim0", "kind", "coordinator"}, 1},
		{"pairfed_privacy_epsilon_spent", []string{"site", "site-0"}, 1},
		{"pairfed_privacy_epsilon_spent", []string{"site", "site-2"}, 1},
		{"pairfed_privacy_delta_spent", []string{"site", "site-1"}, 1e-3},
		{"pairfed_site_records", []string{"site", "site-0"}, float64(rep.SiteRecords[0])},
	} {
		if got := mustValue(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if _, ok := value(fams, "pairfed_running_job_phase", "job", "run-0", "algorithm", fedalgo.FedDPLocalSGD); ok {
		t.Error("a finished job is reported running")
	}
	if _, ok := value(fams, "pairfed_privacy_epsilon_budget", "site", "site-0"); ok {
		t.Error("a budget is reported though none is known")
	}
	// The coordinator sent at least the announcement and phase start of
	// each phase and the result, and received the 3 joins and 3K updates.
	pub := mustValue(t, fams, "pairfed_transport_published_messages_total")
	recv := mustValue(t, fams, "pairfed_transport_received_messages_total")
	if pub < 2*K+1 || recv < 3+3*K || mustValue(t, fams, "pairfed_transport_published_bytes_total") < pub ||
		mustValue(t, fams, "pairfed_transport_received_bytes_total") < recv {
		t.Errorf("traffic: published %v, received %v messages", pub, recv)
	}
	if f := fams["pairfed_phases_completed_total"]; f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("phases completed is a %v", f.GetType())
	}

	// The mid-job view, published alone, gives the running job's phase.
	m := New(Options{})
	m.Publish(*mid)
	fams = scrape(t, m)
	lab := []string{"job", "run-0", "algorithm", fedalgo.FedDPLocalSGD}
	if got := mustValue(t, fams, "pairfed_running_job_phase", lab...); got != float64(mid.Running.Phase) || got < 3 {
		t.Errorf("running phase %v, view %+v", got, mid.Running)
	}
	if got := mustValue(t, fams, "pairfed_running_job_phases", lab...); got != K {
		t.Errorf("running phases %v, want %v", got, K)
	}
	if got := mustValue(t, fams, "pairfed_jobs", "status", "running"); got != 1 {
		t.Errorf("running jobs %v", got)
	}
	if got := mustValue(t, fams, "pairfed_phases_completed_total"); got != float64(mid.Running.PhasesDone) {
		t.Errorf("phases completed mid-job %v, view %+v", got, mid.Running)
	}

	// /api/state: the view as JSON, with the AUC simulate measured.
	code, body, _ := get(t, srv, "/api/state")
	var st struct {
		Federation string                 `json:"federation"`
		Health     string                 `json:"health"`
		Sites      []coordinator.SiteView `json:"sites"`
		Finished   []coordinator.JobView  `json:"finished"`
		Privacy    []coordinator.SiteSpend
		Traffic    *struct {
			PublishedBytes uint64 `json:"published_bytes"`
		} `json:"traffic"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != http.StatusOK {
		t.Fatalf("/api/state %d: %v\n%s", code, err, body)
	}
	if st.Federation != "sim0" || st.Health != "ok" || len(st.Sites) != 3 || len(st.Finished) != 1 || len(st.Privacy) != 3 || st.Traffic == nil || st.Traffic.PublishedBytes == 0 {
		t.Fatalf("/api/state %s", body)
	}
	f := st.Finished[0]
	if f.Job != "run-0" || f.Status != protocol.StatusCompleted || f.PhasesDone != rep.Phases || math.Abs(f.AUC-rep.AUC.Mean) > 1e-12 || f.TestRecords != rep.NTest {
		t.Fatalf("finished job %+v, report AUC %v", f, rep.AUC.Mean)
	}
}

// /healthz is 503 until the loop publishes, 200 while it publishes
// within StaleAfter, 503 once it went silent, and 200 "finished" after
// Finish; pairfed_coordinator_up follows it.
func TestHealthz(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := New(Options{StaleAfter: 2 * time.Second, Now: func() time.Time { return now }})
	health := func(wantCode int, wantStatus string) Health {
		t.Helper()
		code, body, hdr := get(t, srv, "/healthz")
		var h Health
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			t.Fatalf("/healthz body %q: %v", body, err)
		}
		if code != wantCode || h.Status != wantStatus || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("/healthz %d %+v, want %d %s", code, h, wantCode, wantStatus)
		}
		return h
	}
	up := func() float64 { return mustValue(t, scrape(t, srv), "pairfed_coordinator_up") }
	health(http.StatusServiceUnavailable, "starting")
	srv.Publish(coordinator.View{Federation: "f", Kind: "service", Sites: []coordinator.SiteView{{Site: "a"}, {Site: "b"}},
		Running: &coordinator.JobView{Job: "j", Algo: fedalgo.FedAvg, Status: protocol.StatusRunning, Phase: 1, Phases: 4}})
	now = now.Add(time.Second)
	if h := health(http.StatusOK, "ok"); h.Federation != "f" || h.Running != "j" || h.Sites != 2 || h.AgeSeconds != 1 {
		t.Fatalf("health %+v", h)
	}
	if up() != 1 {
		t.Fatal("not up while healthy")
	}
	now = now.Add(2 * time.Second)
	health(http.StatusServiceUnavailable, "stale")
	if up() != 0 {
		t.Fatal("up while stale")
	}
	srv.Finish()
	health(http.StatusOK, "finished")
}

// A ledger hook's budgets reach /api/state and /metrics; the page is
// served, self-contained (no external scripts, styles or fonts) and polls
// /api/state.
func TestLedgerAndPage(t *testing.T) {
	ledger := func() []coordinator.SiteSpend {
		return []coordinator.SiteSpend{coordinator.SiteSpend{Site: "a", Epsilon: 1.5, Delta: 1e-4, Jobs: 2}.WithBudget(4, 1e-3)}
	}
	srv := New(Options{Ledger: ledger})
	srv.Publish(coordinator.View{Federation: "f", Kind: "service", Privacy: []coordinator.SiteSpend{{Site: "a", Epsilon: 1, Jobs: 1}, {Site: "b", Epsilon: 0.5, Jobs: 1}},
		Queued: []coordinator.JobView{{Job: "q", Status: protocol.StatusQueued}},
		Finished: []coordinator.JobView{{Job: "x", Status: protocol.StatusCompleted}, {Job: "y", Status: protocol.StatusFailed},
			{Job: "z", Status: protocol.StatusCompleted, Phases: 3, PhasesDone: 3}}})
	fams := scrape(t, srv)
	for _, c := range []struct {
		name, site string
		want       float64
	}{
		{"pairfed_privacy_epsilon_spent", "a", 1.5}, {"pairfed_privacy_epsilon_budget", "a", 4}, {"pairfed_privacy_epsilon_remaining", "a", 2.5},
		{"pairfed_privacy_delta_budget", "a", 1e-3}, {"pairfed_privacy_delta_remaining", "a", 9e-4}, {"pairfed_privacy_epsilon_spent", "b", 0.5},
	} {
		if got := mustValue(t, fams, c.name, "site", c.site); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s{site=%s} = %v, want %v", c.name, c.site, got, c.want)
		}
	}
	if _, ok := value(fams, "pairfed_privacy_epsilon_budget", "site", "b"); ok {
		t.Error("budget of b reported, none known")
	}
	for status, want := range map[string]float64{"queued": 1, "running": 0, "completed": 2, "failed": 1, "refused": 0} {
		if got := mustValue(t, fams, "pairfed_jobs", "status", status); got != want {
			t.Errorf("jobs{status=%s} = %v, want %v", status, got, want)
		}
	}
	if got := mustValue(t, fams, "pairfed_phases_completed_total"); got != 3 {
		t.Errorf("phases completed %v, want 3", got)
	}
	_, body, _ := get(t, srv, "/api/state")
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if a := st.Privacy[0]; a.Site != "a" || a.Epsilon != 1.5 || a.RemainingEpsilon == nil || *a.RemainingEpsilon != 2.5 {
		t.Fatalf("ledger not applied: %s", body)
	}

	code, page, hdr := get(t, srv, "/")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("/: %d %s", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{`fetch("api/state"`, `id="sites"`, `id="running"`, `id="ledger"`, `role: "progressbar"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "://") || strings.Contains(page, "<link") || strings.Contains(page, "src=") {
		t.Error("page refers to external resources")
	}
	if code, _, _ := get(t, srv, "/nothing"); code != http.StatusNotFound {
		t.Errorf("/nothing: %d", code)
	}
}
