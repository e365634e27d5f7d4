package coordinator

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

func pageOf(t *testing.T, outs []Output, client string) *protocol.JobPage {
	t.Helper()
	for _, o := range outs {
		if p, ok := o.Msg.(*protocol.JobPage); ok && o.Subject == protocol.ClientSubject("f", client) {
			if err := p.Validate(); err != nil {
				t.Fatalf("invalid page: %v", err)
			}
			return p
		}
	}
	t.Fatalf("no page for %s among %v", client, kinds(outs))
	return nil
}

// job list: every job the service knows, in id order, paged at
// MaxJobPage whatever the client asks; each summary says the status, the
// sites, the times (from ServiceConfig.Now) and whether the result is
// private, with the reason when it is not.
func TestServiceJobList(t *testing.T) {
	now := int64(1_800_000_000)
	s := newService(t, ServiceConfig{Now: func() int64 { return now }})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(submit("j1", 1))
	now += 10
	runPhase(s, "j1", 1, 1, "a")
	now += 10
	runPhase(s, "j1", 2, 3, "a")
	s.Step(submit("j2", 5)) // waits for 5 sites
	p := pageOf(t, s.Step(&protocol.JobList{Client: "l"}), "l")
	if p.Total != 2 || p.Next != "" || len(p.Jobs) != 2 {
		t.Fatalf("page %+v", p)
	}
	j1, j2 := p.Jobs[0], p.Jobs[1]
	if j1.Job != "j1" || j1.Status != protocol.StatusCompleted || j1.Private || !strings.HasPrefix(j1.Privacy, "NOT private: fed-avg adds no noise") ||
		!slices.Equal(j1.Sites, []string{"a"}) || j1.Submitted != 1_800_000_000 || j1.Finished != 1_800_000_020 {
		t.Errorf("j1 %+v", j1)
	}
	if j2.Job != "j2" || j2.Status != protocol.StatusQueued || j2.Submitted != 1_800_000_020 || j2.Finished != 0 || !strings.Contains(j2.Reason, "waiting for 5 live sites") {
		t.Errorf("j2 %+v", j2)
	}
	// Paging: 250 jobs known, pages of 100, 100, 50 whatever the limit asked.
	s = newService(t, ServiceConfig{MaxQueue: 300})
	for i := range 250 {
		s.Step(&protocol.JobSubmit{Job: fmt.Sprintf("q%03d", i), Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 3})
	}
	var seen []string
	after := ""
	for range 4 {
		p := pageOf(t, s.Step(&protocol.JobList{Client: "l", After: after, Limit: 0}), "l")
		for _, j := range p.Jobs {
			seen = append(seen, j.Job)
		}
		if len(p.Jobs) > protocol.MaxJobPage || p.Total != 250 {
			t.Fatalf("page of %d, total %d", len(p.Jobs), p.Total)
		}
		if after = p.Next; after == "" {
			break
		}
	}
	if len(seen) != 250 || !slices.IsSorted(seen) || seen[0] != "q000" || seen[249] != "q249" {
		t.Errorf("paged %d jobs: %v…", len(seen), seen[:3])
	}
	if p := pageOf(t, s.Step(&protocol.JobList{Client: "l", Limit: 7}), "l"); len(p.Jobs) != 7 || p.Next != "q006" {
		t.Errorf("limit 7: %d jobs, next %q", len(p.Jobs), p.Next)
	}
}

// job cancel of a queued job: it leaves the queue, nothing is announced,
// no site is charged, and its status (to the canceller and the
// submitter) says who cancelled it. A job queued behind it that needs
// fewer sites did not wait for the cancel (probe 4 of issue 28: a job
// asking for more sites than are live once held every later job until
// it was cancelled).
func TestServiceCancelQueued(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(submit("j1", 2)) // waits for a second site
	outs := s.Step(&protocol.JobSubmit{Job: "j2", Client: "c2", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1})
	if s.Running() != "j2" || !slices.Contains(kinds(outs), protocol.KindJobAnnounce) {
		t.Fatalf("running %q (want j2, queued behind j1 but needing one site, to start at once): %v", s.Running(), kinds(outs))
	}
	outs = s.Step(&protocol.JobCancel{Job: "j1", Client: "x"})
	for _, who := range []string{"x", "c"} {
		if st := lastStatus(t, outs, who); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by x while queued") {
			t.Errorf("to %s: %+v", who, st)
		}
	}
	if s.Running() != "j2" || slices.Contains(kinds(outs), protocol.KindJobAnnounce) {
		t.Errorf("running %q after the cancel (want j2 still running, nothing announced): %v", s.Running(), kinds(outs))
	}
	if fin := s.TakeFinished(); len(fin) != 1 || fin[0].Job != "j1" {
		t.Errorf("finished %v", fin)
	}
	for _, c := range s.Ledger() {
		if c.Job == "j1" {
			t.Errorf("cancelled queued job charged: %+v", c)
		}
	}
	// Cancelling it again, or a job that does not exist, changes nothing.
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "j1", Client: "y"}), "y"); st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "cancelled by x") {
		t.Errorf("second cancel: %+v", st)
	}
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "nope", Client: "y"}), "y"); st.Status != protocol.StatusUnknown {
		t.Errorf("unknown job: %+v", st)
	}
}

// A job that needs more sites than are live keeps its place and its
// reason, and a later job its sites meet runs meanwhile; once the sites
// are there and nothing runs, the head starts first (probe 4 of issue
// 28: `--min-sites 1024` from one client wedged every later job).
func TestServiceQueueSkipsJobNeedingMoreSites(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(submit("big", 2))
	s.Step(&protocol.JobSubmit{Job: "small", Client: "c2", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1})
	if s.Running() != "small" {
		t.Fatalf("running %q, want small (big waits for 2 sites)", s.Running())
	}
	s.Step(&protocol.JobSubmit{Job: "next", Client: "c3", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1})
	if st := lastStatus(t, s.Step(&protocol.JobQuery{Job: "big", Client: "q"}), "q"); st.Status != protocol.StatusQueued || st.Reason != "waiting for 2 live sites" {
		t.Errorf("big: %+v", st)
	}
	// b joins while small runs; when small ends, big (the head) starts
	// before next.
	s.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	s.Step(&protocol.JobCancel{Job: "small", Client: "x"})
	if s.Running() != "big" {
		t.Errorf("running %q after small ended, want big (the head, now that 2 sites are live)", s.Running())
	}
}

// job cancel of a running job: aborted through the coordinator's
// abort path — every participant is sent an Abort, a late update for the
// job is never aggregated or charged, the phases aggregated before stay
// charged, and the status says who cancelled it. A completed job is not
// cancelled.
func TestServiceCancelRunning(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 50, Dim: 1})
	s.Step(&protocol.Join{Site: "b", Records: 50, Dim: 1})
	s.Step(&protocol.JobSubmit{Job: "p", Client: "c", Algo: fedalgo.FedAvg, Rounds: 3, MinSites: 2})
	runPhase(s, "p", 1, 1, "a", "b")
	if s.Running() != "p" {
		t.Fatalf("running %q", s.Running())
	}
	outs := s.Step(&protocol.JobCancel{Job: "p", Client: "x"})
	var aborts []Output
	for _, o := range outs {
		if a, ok := o.Msg.(*protocol.Abort); ok && a.Job == "p" && strings.Contains(a.Reason, "cancelled by x") {
			aborts = append(aborts, o)
		}
	}
	if len(aborts) == 0 {
		t.Fatalf("no Abort sent: %v", kinds(outs))
	}
	for _, who := range []string{"x", "c"} {
		st := lastStatus(t, outs, who)
		if st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by x while running") {
			t.Errorf("to %s: %+v", who, st)
		}
	}
	if s.Running() != "" {
		t.Errorf("still running %q", s.Running())
	}
	before := len(s.Ledger())
	if outs := s.Step(&protocol.SiteUpdate{Job: "p", Phase: 2, Site: "a", Model: []float64{1}, Weight: 5}); len(outs) != 0 || len(s.Ledger()) != before {
		t.Errorf("a late update after the cancel: outputs %v, ledger %d → %d", kinds(outs), before, len(s.Ledger()))
	}
	// A completed job stays completed.
	s.Step(&protocol.JobSubmit{Job: "q", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 2})
	runPhase(s, "q", 1, 1, "a", "b")
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "q", Client: "x"}), "x"); st.Status != protocol.StatusCompleted {
		t.Errorf("cancel of a completed job: %+v", st)
	}
}
