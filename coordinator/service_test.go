package coordinator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

func newService(t *testing.T, cfg ServiceConfig) *Service {
	t.Helper()
	cfg.Federation = "f"
	s, err := NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// statusOf returns the JobStatus replies among outs sent to client.
func statusOf(t *testing.T, outs []Output, client string) []*protocol.JobStatus {
	t.Helper()
	var out []*protocol.JobStatus
	for _, o := range outs {
		if st, ok := o.Msg.(*protocol.JobStatus); ok && o.Subject == protocol.ClientSubject("f", client) {
			if err := st.Validate(); err != nil {
				t.Errorf("invalid status: %v", err)
			}
			out = append(out, st)
		}
	}
	return out
}

func lastStatus(t *testing.T, outs []Output, client string) *protocol.JobStatus {
	t.Helper()
	sts := statusOf(t, outs, client)
	if len(sts) == 0 {
		t.Fatalf("no status among %v", kinds(outs))
	}
	return sts[len(sts)-1]
}

func submit(job string, minSites int) *protocol.JobSubmit {
	return &protocol.JobSubmit{Job: job, Client: "c", Algo: fedalgo.FedAvg, Rounds: 2, MinSites: minSites}
}

// runPhase answers the current phase for the given sites with model v.
func runPhase(s *Service, job string, phase int, v float64, sites ...string) []Output {
	outs := acceptAll(s)
	for _, site := range sites {
		outs = append(outs, s.Step(&protocol.SiteUpdate{Job: job, Phase: phase, Site: site, Model: []float64{v}, Weight: 5})...)
	}
	return outs
}

// A submitted job waits for enough live sites, runs with all of them,
// replies on the client's subject at each stage, and is recorded as
// finished once (TakeFinished) with its evaluation; resubmitting its id
// returns the final status instead of a second run.
func TestServiceSubmitQueueComplete(t *testing.T) {
	s := newService(t, ServiceConfig{Evaluate: func(_ *protocol.JobAnnounce, m []float64) (float64, int) { return 0.75, 10 }})
	st := lastStatus(t, s.Step(submit("j1", 2)), "c")
	if st.Status != protocol.StatusQueued {
		t.Fatalf("status %+v, want queued", st)
	}
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	outs := s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	if st := lastStatus(t, outs, "c"); st.Status != protocol.StatusRunning || !slices.Equal(st.Sites, []string{"a", "b"}) {
		t.Fatalf("status %+v, want running with a, b", st)
	}
	if !slices.Contains(kinds(outs), protocol.KindJobAnnounce) {
		t.Fatalf("no announcement: %v", kinds(outs))
	}
	// A second job queues behind the first.
	if st := lastStatus(t, s.Step(&protocol.JobSubmit{Job: "j2", Client: "c2", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1}), "c2"); st.Status != protocol.StatusQueued {
		t.Fatalf("second job %+v, want queued", st)
	}
	runPhase(s, "j1", 1, 1, "a", "b")
	outs = runPhase(s, "j1", 2, 3, "a", "b")
	st = statusOf(t, outs, "c")[0]
	if st.Status != protocol.StatusCompleted || st.AUC != 0.75 || st.TestRecords != 10 || st.Phases != 2 || !slices.Equal(st.Model, []float64{2}) { // fed-avg: mean over rounds of 1 and 3
		t.Fatalf("final status %+v", st)
	}
	if s.Running() != "j2" {
		t.Fatalf("running %q, want the queued j2 to start", s.Running())
	}
	fin := s.TakeFinished()
	if len(fin) != 1 || fin[0].Job != "j1" || len(s.TakeFinished()) != 0 {
		t.Fatalf("finished %v", fin)
	}
	again := lastStatus(t, s.Step(submit("j1", 2)), "c")
	if again.Status != protocol.StatusCompleted || s.Running() != "j2" {
		t.Fatalf("resubmission: %+v, running %q", again, s.Running())
	}
}

// A site that refuses leaves the job; below the quorum the job ends
// refused, naming the site and its reason.
func TestServiceRefusal(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	s.Step(submit("j", 2))
	outs := s.Step(&protocol.Refuse{Job: "j", Site: "b", Reason: "privacy budget exceeded"})
	st := lastStatus(t, outs, "c")
	if st.Status != protocol.StatusRefused || !slices.Equal(st.Refused, []string{"b"}) || !strings.Contains(st.Reason, "budget") {
		t.Fatalf("status %+v", st)
	}
	if !slices.Contains(kinds(outs), protocol.KindAbort) {
		t.Errorf("sites not told: %v", kinds(outs))
	}
	// With quorum 1 the job goes on without the refusing site.
	s.Step(submit("k", 1))
	s.Step(&protocol.Refuse{Job: "k", Site: "b", Reason: "no"})
	outs = runPhase(s, "k", 1, 1, "a")
	outs = append(outs, runPhase(s, "k", 2, 1, "a")...)
	st = lastStatus(t, outs, "c")
	if st.Status != protocol.StatusCompleted || !slices.Equal(st.Sites, []string{"a"}) || !slices.Equal(st.Refused, []string{"b"}) {
		t.Fatalf("status %+v", st)
	}
}

// A participant that falls silent (killed) is dropped after SiteTimeout
// ticks; the phase it did not answer is aggregated from the quorum after
// PhaseTimeout, and the job completes with the remaining sites.
func TestServiceSilentSiteQuorum(t *testing.T) {
	s := newService(t, ServiceConfig{MinSites: 2, PhaseTimeout: 4, SiteTimeout: 3})
	for _, site := range []string{"a", "b", "c"} {
		s.Step(&protocol.Join{Site: site, Records: 5, Dim: 1})
	}
	s.Step(submit("j", 2))
	runPhase(s, "j", 1, 1, "a", "b") // c was killed
	var outs []Output
	for i := 0; i < 10 && s.Running() == "j"; i++ {
		s.Step(&protocol.Heartbeat{Site: "a", Seq: uint64(i)})
		s.Step(&protocol.Heartbeat{Site: "b", Seq: uint64(i)})
		outs = append(outs, s.Tick()...)
		if slices.ContainsFunc(outs, func(o Output) bool {
			ps, ok := o.Msg.(*protocol.PhaseStart)
			return ok && ps.Phase == 2
		}) {
			outs = append(outs, runPhase(s, "j", 2, 1, "a", "b")...)
		}
	}
	st := lastStatus(t, outs, "c")
	if st.Status != protocol.StatusCompleted || !slices.Equal(st.Sites, []string{"a", "b"}) || !slices.Equal(st.Dropped, []string{"c"}) {
		t.Fatalf("status %+v", st)
	}
}

func TestServiceRejects(t *testing.T) {
	s := newService(t, ServiceConfig{MaxQueue: 1})
	st := lastStatus(t, s.Step(&protocol.JobSubmit{Job: "bad", Client: "c", Algo: "nope", MinSites: 1}), "c")
	if st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "unknown federated algorithm") {
		t.Fatalf("invalid job: %+v", st)
	}
	st = lastStatus(t, s.Step(&protocol.JobSubmit{Job: "bad2", Client: "c", Algo: fedalgo.FedAvg, Epsilon: 1, MinSites: 1}), "c")
	if st.Status != protocol.StatusFailed {
		t.Fatalf("fed-avg with ε: %+v", st)
	}
	s.Step(submit("q1", 5)) // waits: no sites
	st = lastStatus(t, s.Step(submit("q2", 5)), "c")
	if st.Status != protocol.StatusRefused || !strings.Contains(st.Reason, "busy") {
		t.Fatalf("queue full: %+v", st)
	}
	// Jobs finished before a restart answer resubmissions.
	s2 := newService(t, ServiceConfig{Finished: []*protocol.JobStatus{{Job: "old", Status: protocol.StatusCompleted}}})
	if st := lastStatus(t, s2.Step(submit("old", 1)), "c"); st.Status != protocol.StatusCompleted {
		t.Fatalf("reloaded job: %+v", st)
	}
}

// A flood of 20 000 submissions refused on arrival (invalid) from one
// client changes nothing a checkpoint holds — the run loop writes a
// checkpoint only when its progress changes, so the flood costs no disk
// writes — keeps at most maxRejected statuses in memory, and a legitimate
// job submitted after it is queued and runs (issue 28: each rejection
// rewrote and fsynced a checkpoint growing with every client id).
func TestServiceRejectionFloodIsBounded(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	p0 := s.progress()
	cp0, err := json.Marshal(s.Checkpoint())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		outs := s.Step(&protocol.JobSubmit{Job: fmt.Sprintf("bad-%d", i), Client: fmt.Sprintf("c%d", i), Algo: "no-such-algorithm", MinSites: 2})
		if st := statusOf(t, outs, fmt.Sprintf("c%d", i)); len(st) != 1 || st[0].Status != protocol.StatusFailed {
			t.Fatalf("submission %d: replies %v", i, st)
		}
		if s.progress() != p0 {
			t.Fatalf("submission %d changed the checkpoint's progress: %s → %s", i, p0, s.progress())
		}
	}
	cp1, err := json.Marshal(s.Checkpoint())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cp0, cp1) {
		t.Fatalf("the flood changed the checkpoint: %d → %d bytes", len(cp0), len(cp1))
	}
	if len(s.status) > maxRejected || len(s.clients) > maxRejected {
		t.Fatalf("%d statuses and %d client subjects kept after the flood, bound %d", len(s.status), len(s.clients), maxRejected)
	}
	// The most recent rejections still answer polls.
	if st := statusOf(t, s.Step(&protocol.JobSubmit{Job: "bad-19999", Client: "c19999", Algo: "no-such-algorithm", MinSites: 2}), "c19999"); len(st) != 1 || st[0].Status != protocol.StatusFailed {
		t.Fatalf("poll of the last rejection: %v", st)
	}
	s.Step(&protocol.JobSubmit{Job: "good", Client: "ok", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 2})
	if s.Running() != "good" {
		t.Fatalf("legitimate job after the flood: %+v", s.Status("good"))
	}
	acceptAll(s)
	runPhase(s, "good", 1, 1, "a", "b")
	if st := s.Status("good"); st == nil || st.Status != protocol.StatusCompleted {
		t.Fatalf("legitimate job: %+v", st)
	}
}
