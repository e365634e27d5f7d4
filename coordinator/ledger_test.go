package coordinator

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

func privSubmit(job string, eps float64, minSites int) *protocol.JobSubmit {
	return &protocol.JobSubmit{Job: job, Client: "c", Algo: fedalgo.FedDPLocalSGD, Epsilon: eps, Delta: 1e-3, MinSites: minSites, Loss: "logistic"}
}

// A private job charges every participant for its whole (ε, δ) in the
// step that starts its phase 1 — once every participant accepted it, and
// before phase 1 can be published — (nothing at the announcement: a job
// refused in its accept round charges no one), and records each
// aggregated phase; keys are unique, so a duplicated update or a
// resubmission never charges again.
func TestServiceChargesBeforeAnnounce(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 8, Dim: 2})
	s.Step(&protocol.Join{Site: "b", Records: 8, Dim: 2})
	outs := s.Step(privSubmit("j", 0.5, 2))
	if !slices.Contains(kinds(outs), protocol.KindJobAnnounce) || slices.Contains(kinds(outs), protocol.KindPhaseStart) {
		t.Fatalf("job not announced alone: %v", kinds(outs))
	}
	if ch := s.TakeCharges(); len(ch) != 0 {
		t.Fatalf("charged %+v before every site accepted", ch)
	}
	if outs := acceptAll(s); !slices.Contains(kinds(outs), protocol.KindPhaseStart) {
		t.Fatalf("phase 1 did not start after every acceptance: %v", kinds(outs))
	}
	ch := s.TakeCharges()
	if len(ch) != 2 || ch[0].Phase != 0 || ch[0].Site != "a" || ch[1].Site != "b" || !certifiesRequest(ch[0], 0.5, 1e-3) || !ch[0].Private || ch[0].Mechanism != "gaussian" {
		t.Fatalf("reservations %+v", ch)
	}
	phases := s.inner.job.Phases
	for k := 1; k <= phases; k++ {
		for _, site := range []string{"a", "b"} {
			u := &protocol.SiteUpdate{Job: "j", Phase: k, Site: site, Model: []float64{0.1, 0.2}, Weight: 4, Sigma: 0.3, Epsilon: 0.5, Delta: 1e-3, Secure: true}
			s.Step(u)
			s.Step(u) // duplicate: ignored, never charged twice
		}
		got := s.TakeCharges()
		if len(got) != 2 || got[0].Phase != k || got[0].Sigma != 0.3 || got[0].Key != ChargeKey("j", "a", k) {
			t.Fatalf("phase %d charges %+v", k, got)
		}
	}
	if st := s.Status("j"); st.Status != protocol.StatusCompleted {
		t.Fatalf("status %+v", st)
	}
	s.Step(privSubmit("j", 0.5, 2)) // a resubmission only reports
	if extra := s.TakeCharges(); len(extra) != 0 {
		t.Fatalf("resubmission charged %+v", extra)
	}
	sp := Spent(s.Ledger())
	if len(sp) != 2 || sp[0].Epsilon != 0.5 || sp[0].Delta != 1e-3 || sp[0].Jobs != 1 {
		t.Fatalf("spent %+v (phases compose in parallel: the job's ε once)", sp)
	}
}

// Budgets at the coordinator: a site with ε = 1 takes a job at ε = 0.6
// and is left out of a second one; with the quorum unreachable the job is
// refused, naming what remains. The reloaded ledger counts (restart).
func TestServiceBudgets(t *testing.T) {
	budgets := map[string]Budget{"a": {Epsilon: 1, Delta: 1e-2}}
	s := newService(t, ServiceConfig{Budgets: budgets})
	s.Step(&protocol.Join{Site: "a", Records: 8, Dim: 2})
	s.Step(privSubmit("j1", 0.6, 1))
	if s.Running() != "j1" {
		t.Fatal("j1 did not start")
	}
	acceptAll(s)
	ledger := s.TakeCharges()
	s2 := newService(t, ServiceConfig{Budgets: budgets, Ledger: ledger}) // a restart with the durable ledger
	s2.Step(&protocol.Join{Site: "a", Records: 8, Dim: 2})
	outs := s2.Step(privSubmit("j2", 0.6, 1))
	st := lastStatus(t, outs, "c")
	if st.Status != protocol.StatusRefused || !slices.Equal(st.Refused, []string{"a"}) || !strings.Contains(st.Reason, "remaining (0.4") {
		t.Fatalf("second job %+v", st)
	}
	if ch := s2.TakeCharges(); len(ch) != 0 {
		t.Fatalf("refused job charged %+v", ch)
	}
	// Non-private jobs are refused to a budgeted site; others take part.
	s2.Step(&protocol.Join{Site: "b", Records: 8, Dim: 2})
	s2.Step(&protocol.JobSubmit{Job: "j3", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1})
	if s2.Running() != "j3" || !slices.Equal(s2.inner.job.Sites, []string{"b"}) {
		t.Fatalf("j3: running %q sites %v", s2.Running(), s2.inner.job.Sites)
	}
	if _, err := NewService(ServiceConfig{Federation: "f", Budgets: map[string]Budget{"a": {Epsilon: math.NaN()}}}); err == nil {
		t.Error("NaN budget accepted")
	}
}

// A checkpoint taken at a phase start, serialized and restored, resumes
// the job at that phase with the same model: the rest of the run equals
// an uninterrupted run, and no charge is repeated.
func TestServiceCheckpointResume(t *testing.T) {
	run := func(crashAt int) (*protocol.JobStatus, []Charge) {
		s := newService(t, ServiceConfig{})
		var ledger []Charge
		s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
		s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
		s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 4, MinSites: 2})
		s.Step(&protocol.JobSubmit{Job: "q", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 2})
		acceptAll(s)
		ledger = append(ledger, s.TakeCharges()...)
		for k := 1; k <= 4; k++ {
			if k == crashAt {
				b, err := json.Marshal(s.Checkpoint())
				if err != nil {
					t.Fatal(err)
				}
				var cp Checkpoint
				if err := json.Unmarshal(b, &cp); err != nil {
					t.Fatal(err)
				}
				s, err = RestoreService(ServiceConfig{Federation: "f", Ledger: ledger}, &cp)
				if err != nil {
					t.Fatal(err)
				}
				outs := s.Resume()
				var ps *protocol.PhaseStart
				for _, o := range outs {
					if p, ok := o.Msg.(*protocol.PhaseStart); ok {
						ps = p
					}
				}
				if ps == nil || ps.Phase != k {
					t.Fatalf("resume sent %v, want phase %d", kinds(outs), k)
				}
				// A site that had answered phase k before the crash
				// answers again with the same update.
			}
			runPhase(s, "j", k, float64(k), "a", "b")
			ledger = append(ledger, s.TakeCharges()...)
		}
		runPhase(s, "q", 1, 1, "a", "b")
		ledger = append(ledger, s.TakeCharges()...)
		if st := s.Status("q"); st == nil || st.Status != protocol.StatusCompleted {
			t.Fatalf("queued job after resume at %d: %+v", crashAt, st)
		}
		return s.Status("j"), ledger
	}
	want, wantLedger := run(0)
	for crash := 1; crash <= 4; crash++ {
		got, ledger := run(crash)
		if got.Status != protocol.StatusCompleted || !reflect.DeepEqual(got.Model, want.Model) {
			t.Errorf("resumed at phase %d: %+v, want model %v", crash, got, want.Model)
		}
		keys := map[string]bool{}
		for _, c := range ledger {
			if keys[c.Key] {
				t.Errorf("resumed at %d: key %s charged twice", crash, c.Key)
			}
			keys[c.Key] = true
		}
		if len(ledger) != len(wantLedger) {
			t.Errorf("resumed at %d: %d charges, uninterrupted %d", crash, len(ledger), len(wantLedger))
		}
	}
}

// A checkpoint whose running job is already persisted as finished (crash
// between the two writes) does not resume it; a corrupt one is refused.
func TestRestoreServiceChecks(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 2, MinSites: 1})
	// In the accept round a checkpoint says phase 0; it resumes there:
	// the announcement again, no phase.
	cp := s.Checkpoint()
	if cp.Running == nil || cp.Running.Phase != 0 {
		t.Fatalf("checkpoint in the accept round %+v", cp.Running)
	}
	r0, err := RestoreService(ServiceConfig{Federation: "f"}, cp)
	if err != nil {
		t.Fatal(err)
	}
	if outs := r0.Resume(); !slices.Equal(kinds(outs), []protocol.Kind{protocol.KindJobAnnounce}) {
		t.Fatalf("resume in the accept round sent %v", kinds(outs))
	}
	acceptAll(s)
	cp = s.Checkpoint()
	if cp.Running == nil || cp.Running.Phase != 1 {
		t.Fatalf("checkpoint %+v", cp)
	}
	done := &protocol.JobStatus{Job: "j", Status: protocol.StatusCompleted, Phases: 2, Sites: []string{"a"}, Model: []float64{1}}
	r, err := RestoreService(ServiceConfig{Federation: "f", Finished: []*protocol.JobStatus{done}}, cp)
	if err != nil || r.Running() != "" || len(r.Resume()) != 0 {
		t.Fatalf("finished job resumed: %v %q", err, r.Running())
	}
	bad := *cp
	run := *cp.Running
	run.Model = []float64{1, 2}
	bad.Running = &run
	if _, err := RestoreService(ServiceConfig{Federation: "f"}, &bad); err == nil || !strings.Contains(err.Error(), "parameters") {
		t.Errorf("wrong model size: %v", err)
	}
	bad.Version = 99
	if _, err := RestoreService(ServiceConfig{Federation: "f"}, &bad); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("version: %v", err)
	}
}

// A finished job's status carries its announcement (every parameter of the
// run) and the test AUC after each phase, also across a restart.
func TestStatusPhaseAUCAndAnnounce(t *testing.T) {
	calls := 0
	eval := func(_ *protocol.JobAnnounce, m []float64) (float64, int) { calls++; return 0.5 + m[0]/10, 7 }
	s := newService(t, ServiceConfig{Evaluate: eval})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 3, MinSites: 1, Eta: 0.5})
	runPhase(s, "j", 1, 1, "a")
	s, err := RestoreService(ServiceConfig{Federation: "f", Evaluate: eval}, s.Checkpoint())
	if err != nil {
		t.Fatal(err)
	}
	s.Resume()
	runPhase(s, "j", 2, 2, "a")
	runPhase(s, "j", 3, 3, "a")
	st := s.Status("j")
	if st.Status != protocol.StatusCompleted || !slices.Equal(st.PhaseAUC, []float64{0.6, 0.7, 0.8}) {
		t.Fatalf("phase AUCs %v (status %+v)", st.PhaseAUC, st)
	}
	if st.Announce == nil || st.Announce.Eta != 0.5 || st.Announce.Phases != 3 || !slices.Equal(st.Announce.Sites, []string{"a"}) {
		t.Fatalf("announce %+v", st.Announce)
	}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
}

// The coordinator's ledger records certified guarantees: a phase is
// charged the (ε, δ) the site's update certifies (≤ the request), an
// update claiming more than the request aborts the job uncharged, and the
// reservation is the plan's certificate (fed-dp-ssp, fed-dp-local-sgd:
// the same calibration the sites make).
func TestServiceChargesCertified(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 8, Dim: 2})
	s.Step(&protocol.Join{Site: "b", Records: 8, Dim: 2})
	s.Step(privSubmit("j", 0.5, 2))
	acceptAll(s)
	if ch := s.TakeCharges(); len(ch) != 2 || !certifiesRequest(ch[0], 0.5, 1e-3) || !certifiesRequest(ch[1], 0.5, 1e-3) {
		t.Fatalf("reservations %+v: want fed-dp-local-sgd's plan certificate, the request (0.5, 1e-3) less rounding", ch)
	}
	for _, site := range []string{"a", "b"} {
		s.Step(&protocol.SiteUpdate{Job: "j", Phase: 1, Site: site, Model: []float64{0.1, 0.2}, Weight: 4, Sigma: 0.3, Epsilon: 0.45, Delta: 9e-4, Secure: true})
	}
	if ch := s.TakeCharges(); len(ch) != 2 || ch[0].Phase != 1 || ch[0].Epsilon != 0.45 || ch[0].Delta != 9e-4 {
		t.Fatalf("phase 1 charges %+v, want the certified (0.45, 9e-4) the updates state", ch)
	}
	// Phase 2: a site claims more than the request.
	s.Step(&protocol.SiteUpdate{Job: "j", Phase: 2, Site: "a", Model: []float64{0.1, 0.2}, Weight: 4, Sigma: 0.3, Epsilon: 0.6, Delta: 1e-3, Secure: true})
	if st := s.Status("j"); st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "not within the job's") {
		t.Fatalf("status %+v after an update above the request", st)
	}
	if ch := s.TakeCharges(); len(ch) != 0 {
		t.Fatalf("charged %+v for a refused update", ch)
	}

	// fed-dp-ssp: the reservation is the plan's certificate.
	sub := &protocol.JobSubmit{Job: "k", Client: "c", Algo: fedalgo.FedDPSSP, Epsilon: 0.5, Delta: 1e-3, MinSites: 2}
	s.Step(sub)
	acceptAll(s)
	rel, err := dpalgo.SSPCalibrate(0.5, 1e-3, 1, 2, dpalgo.SSPClass)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: []float64{rel.Sensitivity}, Coordinates: int64(rel.Coords)}, []float64{rel.Sigma}, 0.5, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	ch := s.TakeCharges()
	if len(ch) != 2 || ch[0].Phase != 0 || ch[0].Epsilon != c.Epsilon || ch[0].Delta != c.Delta || !c.Covers(0.5, 1e-3) || (c.Epsilon == 0.5 && c.Delta == 1e-3) {
		t.Fatalf("fed-dp-ssp reservations %+v, want the certificate (%v, %v)", ch, c.Epsilon, c.Delta)
	}
}

// A finished private job's status reports, per site, what the ledger
// charged it for the job — the largest (ε, δ) among the job's charges of
// the site, the same figure Spent composes — never above the request, and
// nothing for a site that refused (it was not charged). fed-dp-local-sgd
// reserves its plan's certificate, which at the exact calibration is the
// request up to rounding, so its sites are charged that even though these
// test updates state less;
// fed-dp-ssp reserves the plan's certificate, below the request, and its
// sites are charged exactly that. The status survives the wire (Encode
// validates the new fields) and the dashboard's view shows the largest.
func TestStatusReportsCharges(t *testing.T) {
	s := newService(t, ServiceConfig{})
	for _, site := range []string{"a", "b", "c"} {
		s.Step(&protocol.Join{Site: site, Records: 8, Dim: 2})
	}
	// check compares the status of job with the ledger and returns its
	// site reports by site.
	check := func(job string, eps, delta float64) map[string]protocol.SiteReport {
		t.Helper()
		st := s.Status(job)
		if st == nil || st.Status != protocol.StatusCompleted || len(st.Privacy) == 0 {
			t.Fatalf("job %s: status %+v", job, st)
		}
		var ledger []Charge
		for _, c := range s.Ledger() {
			if c.Job == job {
				ledger = append(ledger, c)
			}
		}
		spent := map[string]Spend{}
		for _, sp := range Spent(ledger) {
			spent[sp.Site] = sp
		}
		out := map[string]protocol.SiteReport{}
		for _, p := range st.Privacy {
			out[p.Site] = p
			if p.CertifiedEpsilon != spent[p.Site].Epsilon || p.CertifiedDelta != spent[p.Site].Delta {
				t.Errorf("job %s site %s: status certifies (%v, %v), the ledger charged (%v, %v)", job, p.Site,
					p.CertifiedEpsilon, p.CertifiedDelta, spent[p.Site].Epsilon, spent[p.Site].Delta)
			}
			if p.CertifiedEpsilon > eps || p.CertifiedDelta > delta || p.Epsilon != eps || p.Delta != delta {
				t.Errorf("job %s site %s: certified (%v, %v), requested (%v, %v), job's request (%v, %v)", job, p.Site,
					p.CertifiedEpsilon, p.CertifiedDelta, p.Epsilon, p.Delta, eps, delta)
			}
		}
		for site := range spent {
			if _, ok := out[site]; !ok {
				t.Errorf("job %s: site %s was charged but the status does not report it", job, site)
			}
		}
		b, err := protocol.Encode(st)
		if err != nil {
			t.Fatalf("job %s: status does not encode: %v", job, err)
		}
		if got, err := protocol.Decode(b); err != nil || !reflect.DeepEqual(got, st) {
			t.Fatalf("job %s: status round trip %+v, %v", job, got, err)
		}
		for _, j := range s.View().Finished {
			if j.Job != job {
				continue
			}
			want := 0.0
			for _, p := range st.Privacy {
				want = max(want, p.CertifiedEpsilon)
			}
			if j.CertifiedEpsilon != want || want == 0 {
				t.Errorf("job %s: the view shows certified ε %v, want the largest charge %v", job, j.CertifiedEpsilon, want)
			}
		}
		return out
	}

	// fed-dp-local-sgd, site c refuses: a and b state certificates below
	// the plan's in their updates; the reservation (the plan's certificate)
	// is the largest charge.
	s.Step(privSubmit("j", 0.5, 2))
	s.Step(&protocol.Accept{Job: "j", Site: "a"})
	s.Step(&protocol.Accept{Job: "j", Site: "b"})
	s.Step(&protocol.Refuse{Job: "j", Site: "c", Reason: "budget"})
	if s.inner == nil || s.inner.job == nil || s.inner.job.Phases < 1 {
		t.Fatalf("job j did not start without c: %+v", s.Status("j"))
	}
	for k, phases := 1, s.inner.job.Phases; k <= phases; k++ {
		s.Step(&protocol.SiteUpdate{Job: "j", Phase: k, Site: "a", Model: []float64{0.1, 0.2}, Weight: 4, Sigma: 0.3, Epsilon: 0.45, Delta: 9e-4, Secure: true})
		s.Step(&protocol.SiteUpdate{Job: "j", Phase: k, Site: "b", Model: []float64{0.1, 0.2}, Weight: 4, Sigma: 0.3, Epsilon: 0.3, Delta: 5e-4, Secure: true})
	}
	got := check("j", 0.5, 1e-3)
	if p := got["a"]; !(p.CertifiedEpsilon <= 0.5 && p.CertifiedEpsilon > 0.5*(1-1e-9)) || !(p.CertifiedDelta <= 1e-3 && p.CertifiedDelta > 1e-3*(1-1e-9)) {
		t.Errorf("fed-dp-local-sgd site a: certified %+v, want the plan's certificate (the request less rounding), not the update's smaller (0.45, 9e-4)", p)
	}
	if p, ok := got["c"]; ok && (p.CertifiedEpsilon != 0 || p.CertifiedDelta != 0) {
		t.Errorf("site c refused and was charged nothing, yet the status certifies %+v", p)
	}

	// fed-dp-ssp with all three sites: every charge is the plan's
	// certificate, strictly below the request.
	s.Step(&protocol.JobSubmit{Job: "k", Client: "c", Algo: fedalgo.FedDPSSP, Epsilon: 0.5, Delta: 1e-3, MinSites: 3})
	acceptAll(s)
	rel, err := dpalgo.SSPCalibrate(0.5, 1e-3, 1, 2, dpalgo.SSPClass)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: []float64{rel.Sensitivity}, Coordinates: int64(rel.Coords)}, []float64{rel.Sigma}, 0.5, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if !(cert.Epsilon < 0.5 || cert.Delta < 1e-3) {
		t.Fatalf("certificate (%v, %v) equals the request: the test cannot tell a charge of the request apart", cert.Epsilon, cert.Delta)
	}
	if s.inner == nil || s.inner.job == nil || s.inner.job.Job != "k" {
		t.Fatalf("job k did not start: %+v", s.Status("k"))
	}
	n := fedalgo.UpdateLen(s.inner.comb, len(s.inner.model))
	for k, phases := 1, s.inner.job.Phases; k <= phases; k++ {
		for _, site := range []string{"a", "b", "c"} {
			s.Step(&protocol.SiteUpdate{Job: "k", Phase: k, Site: site, Model: make([]float64, n), Weight: 8, Sigma: rel.Sigma, Epsilon: cert.Epsilon, Delta: cert.Delta, Secure: true})
		}
	}
	for site, p := range check("k", 0.5, 1e-3) {
		if p.CertifiedEpsilon != cert.Epsilon || p.CertifiedDelta != cert.Delta {
			t.Errorf("fed-dp-ssp site %s: certified (%v, %v), want the plan's certificate (%v, %v)", site, p.CertifiedEpsilon, p.CertifiedDelta, cert.Epsilon, cert.Delta)
		}
	}
}

// certifiesRequest reports whether a reservation is an exact-calibration
// certificate of the request (ε, δ): at most the request, and below it by
// rounding only (relative 1e-9; the plan's allowance makes it the request).
func certifiesRequest(c Charge, eps, delta float64) bool {
	return c.Epsilon <= eps && c.Epsilon > eps*(1-1e-9) && c.Delta <= delta && c.Delta > delta*(1-1e-9)
}
