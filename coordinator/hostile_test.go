package coordinator

import (
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// A second process under a live site's name is refused (logged once),
// the job is announced to the admitted instance only, and the second
// process's accept is ignored; once the admitted instance has been silent
// for half the site timeout, a new instance (a restart) takes over, and
// the running job is announced to it.
func TestServiceRefusesSecondInstance(t *testing.T) {
	var sink logSink
	s, err := NewService(ServiceConfig{Federation: "f", SiteTimeout: 10, PhaseTimeout: 100, Logf: sink.logf})
	if err != nil {
		t.Fatal(err)
	}
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1, Instance: "i-1"})
	s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1, Instance: "i-b"})
	for range 3 {
		s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1, Instance: "i-2"})
	}
	if n := strings.Count(strings.Join(sink.lines, "\n"), "refused join of site a from a second process (instance i-2)"); n != 1 {
		t.Fatalf("second instance logged %d times:\n%s", n, strings.Join(sink.lines, "\n"))
	}
	outs := s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 2})
	var a *protocol.JobAnnounce
	for _, o := range outs {
		if m, ok := o.Msg.(*protocol.JobAnnounce); ok {
			a = m
		}
	}
	if a == nil || !slices.Equal(a.Instances, []string{"i-1", "i-b"}) {
		t.Fatalf("announcement %+v, want instances [i-1 i-b]", a)
	}
	if outs := s.Step(&protocol.Accept{Job: "j", Site: "a", Instance: "i-2"}); len(outs) != 0 || s.inner.sites["a"].accepted {
		t.Fatalf("the second instance's accept counted: %v", outs)
	}
	// The second process shutting down does not remove the first.
	s.Step(&protocol.Leave{Site: "a", Reason: "shutting down", Instance: "i-2"})
	if s.members["a"] == nil || !s.participates("a") {
		t.Fatal("the second instance's leave removed site a")
	}
	// i-1 goes silent (killed): after 5 ticks (SiteTimeout/2) the new
	// instance takes over, and the job is announced to it.
	for range 6 {
		s.Tick()
		s.Step(&protocol.Heartbeat{Site: "b"})
	}
	outs = s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1, Instance: "i-2"})
	if s.members["a"].instance != "i-2" || !slices.Equal(s.inner.job.Instances, []string{"i-2", "i-b"}) {
		t.Fatalf("restart not admitted: member %+v, instances %v", s.members["a"], s.inner.job.Instances)
	}
	if len(outs) == 0 || outs[0].Msg.Kind() != protocol.KindJobAnnounce {
		t.Fatalf("the restarted site was not sent the job: %v", outs)
	}
	// The announcement already sent is not modified (the run loops'
	// encoder remembers encodings by pointer): the new instance travels
	// in a new message, and its encoding is not the remembered one.
	if !slices.Equal(a.Instances, []string{"i-1", "i-b"}) {
		t.Fatalf("the sent announcement was modified: instances %v", a.Instances)
	}
	var enc encoder
	old, err := enc.encode(a)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := enc.encode(a); &again[0] != &old[0] {
		t.Fatal("the same announcement was encoded twice")
	}
	b, err := enc.encode(outs[0].Msg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.Decode(b)
	if err != nil || !slices.Equal(m.(*protocol.JobAnnounce).Instances, []string{"i-2", "i-b"}) {
		t.Fatalf("the restart's announcement encodes as %+v, %v", m, err)
	}
	acceptAll(s)
	if !s.inner.Accepted() {
		t.Fatal("job did not start after the restarted instance accepted")
	}
}

// The accept round: a job one site refuses charges no one and releases
// nothing (no phase starts); a site silent through the accept round is
// dropped after the timeout when a quorum accepted, and the others run.
func TestAcceptRoundRefusalChargesNoOne(t *testing.T) {
	s := newService(t, ServiceConfig{PhaseTimeout: 2})
	for _, site := range []string{"a", "b", "c"} {
		s.Step(&protocol.Join{Site: site, Records: 8, Dim: 2})
	}
	outs := s.Step(privSubmit("j", 0.5, 3))
	outs = append(outs, s.Step(&protocol.Accept{Job: "j", Site: "a"})...)
	outs = append(outs, s.Step(&protocol.Accept{Job: "j", Site: "b"})...)
	outs = append(outs, s.Step(&protocol.Refuse{Job: "j", Site: "c", Reason: "privacy budget exceeded"})...)
	for _, o := range outs {
		if o.Msg.Kind() == protocol.KindPhaseStart {
			t.Fatalf("a phase started before every site answered: %v", kinds(outs))
		}
	}
	if st := s.Status("j"); st.Status != protocol.StatusRefused || !slices.Equal(st.Refused, []string{"c"}) || !strings.Contains(st.Reason, "privacy budget") {
		t.Fatalf("status %+v", st)
	}
	if ch := s.TakeCharges(); len(ch) != 0 || len(s.Ledger()) != 0 {
		t.Fatalf("a refused job charged %+v", ch)
	}

	// Quorum 2 of 3, c silent: after the timeout a and b run, and c is
	// charged too (it was announced the job and may compute from the
	// broadcast phases: over-count, never under-count).
	s.Step(privSubmit("k", 0.5, 2))
	s.Step(&protocol.Accept{Job: "k", Site: "a"})
	s.Step(&protocol.Accept{Job: "k", Site: "b"})
	var started bool
	for i := 0; i < 4 && !started; i++ {
		for _, o := range s.Tick() {
			started = started || o.Msg.Kind() == protocol.KindPhaseStart
		}
	}
	if !started || !slices.Equal(s.inner.Active(), []string{"a", "b"}) {
		t.Fatalf("started %v with %v", started, s.inner.Active())
	}
	var sites []string
	for _, c := range s.TakeCharges() {
		sites = append(sites, c.Site)
	}
	if !slices.Equal(sites, []string{"a", "b", "c"}) {
		t.Fatalf("reserved %v, want a, b and the silent c", sites)
	}
}

// Sites that disagree on d leave a job queued with the reason naming each
// site's dimension; a test file of another dimension than the sites' makes
// the job fail at its start, naming both.
func TestServiceExplainsDimensions(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 3})
	s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 5})
	s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, MinSites: 2})
	st := s.Status("j")
	for _, w := range []string{"waiting for 2 live sites of one dimension", "a: d = 3", "b: d = 5", "same features"} {
		if st.Status != protocol.StatusQueued || !strings.Contains(st.Reason, w) {
			t.Errorf("status %q: %q does not say %q", st.Status, st.Reason, w)
		}
	}

	s = newService(t, ServiceConfig{TestDim: 4, Evaluate: func(*protocol.JobAnnounce, []float64) (float64, int) { return 0.5, 1 }})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 3})
	s.Step(&protocol.JobSubmit{Job: "k", Client: "c", Algo: fedalgo.FedAvg, MinSites: 1})
	st = s.Status("k")
	for _, w := range []string{"--test file has d = 4", "the live sites d = 3", "restart the coordinator"} {
		if st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, w) {
			t.Errorf("status %q: %q does not say %q", st.Status, st.Reason, w)
		}
	}
	if len(s.Ledger()) != 0 {
		t.Errorf("charged %v", s.Ledger())
	}
}

// Finite updates whose combination overflows (1.7e308 from two sites)
// abort the job with the reason instead of crashing the coordinator or
// broadcasting a non-finite model; the service serves the next job.
func TestCombinationOverflowAbortsJob(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 2, MinSites: 2})
	outs := runPhase(s, "j", 1, 1.7e308, "a", "b")
	for _, o := range outs {
		if _, err := protocol.Encode(o.Msg); err != nil {
			t.Fatalf("output %v does not encode: %v", o.Msg.Kind(), err)
		}
	}
	if st := s.Status("j"); st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "cannot be broadcast") {
		t.Fatalf("status %+v", st)
	}
	s.Step(&protocol.JobSubmit{Job: "k", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 2})
	runPhase(s, "k", 1, 1, "a", "b")
	if st := s.Status("k"); st.Status != protocol.StatusCompleted {
		t.Fatalf("next job %+v", st)
	}
}

// The coordinator's ledger must hold the reservation of every participant
// of a finished private job and of a running one past its accept round.
func TestCheckLedger(t *testing.T) {
	done := &protocol.JobStatus{Job: "d", Status: protocol.StatusCompleted, Algo: fedalgo.FedDPEGD,
		Privacy: []protocol.SiteReport{{Site: "a", Sigmas: []float64{1}}, {Site: "b", Sigmas: []float64{1}}}}
	running := &Checkpoint{Running: &RunningJob{Phase: 2, Refused: map[string]string{"z": "budget"},
		Announce: &protocol.JobAnnounce{Job: "r", Algo: fedalgo.FedDPLocalSGD, Sites: []string{"a", "z"}}}}
	all := []Charge{{Key: ChargeKey("d", "a", 0)}, {Key: ChargeKey("d", "b", 0)}, {Key: ChargeKey("r", "a", 0)}}
	if err := CheckLedger([]*protocol.JobStatus{done}, running, all); err != nil {
		t.Fatalf("complete ledger: %v", err)
	}
	err := CheckLedger([]*protocol.JobStatus{done}, running, all[1:2])
	if err == nil || !strings.Contains(err.Error(), "d/a/0, r/a/0") {
		t.Fatalf("ledger missing two reservations: %v", err)
	}
	running.Running.Phase = 0 // in its accept round nothing is charged yet
	if err := CheckLedger(nil, running, nil); err != nil {
		t.Fatalf("accept round: %v", err)
	}
}
