package coordinator

import (
	"slices"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

// Issue 28, finding 7: a worker restarted after the silence drop (5 s;
// the takeover window is half of it) never took its job back — it became
// a member again but stayed out of the running job. A participant dropped
// as silent that joins again (here from a new process, instance c-2) is
// readmitted: it is sent the job (announcing its new instance) and the
// current phase, the phase waits for its update, and it is among the
// job's sites at the end. A site that refused the job is not readmitted.
func TestServiceReadmitsRestartedSite(t *testing.T) {
	s := newService(t, ServiceConfig{SiteTimeout: 4})
	for _, site := range []string{"a", "b", "c"} {
		s.Step(&protocol.Join{Site: site, Records: 40, Dim: 1, Instance: site + "-1"})
	}
	s.Step(submit("j", 2))
	acceptAll(s)
	runPhase(s, "j", 1, 1, "a", "b", "c")
	if s.inner.Phase() != 2 {
		t.Fatalf("phase %d, want 2", s.inner.Phase())
	}
	// c's process dies: a and b heartbeat, c is silent past SiteTimeout.
	for i := 0; i < 6; i++ {
		s.Step(&protocol.Heartbeat{Site: "a", Seq: uint64(i + 1)})
		s.Step(&protocol.Heartbeat{Site: "b", Seq: uint64(i + 1)})
		s.Tick()
	}
	if slices.Contains(s.inner.Active(), "c") || s.Running() != "j" {
		t.Fatalf("c not dropped, or the job ended: active %v, status %+v", s.inner.Active(), s.Status("j"))
	}
	// c restarts and joins: it is caught up on its own subject.
	outs := s.Step(&protocol.Join{Site: "c", Records: 40, Dim: 1, Instance: "c-2"})
	var ann *protocol.JobAnnounce
	var ps *protocol.PhaseStart
	for _, o := range outs {
		if o.Subject != protocol.SiteSubject("f", "c") {
			continue
		}
		switch m := o.Msg.(type) {
		case *protocol.JobAnnounce:
			ann = m
		case *protocol.PhaseStart:
			ps = m
		}
	}
	if ann == nil || ps == nil || ps.Phase != 2 || !slices.Contains(s.inner.Active(), "c") {
		t.Fatalf("restarted c not readmitted: outputs %v, active %v", kinds(outs), s.inner.Active())
	}
	if i := slices.Index(ann.Sites, "c"); i < 0 || i >= len(ann.Instances) || ann.Instances[i] != "c-2" {
		t.Fatalf("announcement to the restarted c names instances %v", ann.Instances)
	}
	runPhase(s, "j", 2, 2, "a", "b")
	if s.Running() != "j" {
		t.Fatalf("phase 2 aggregated without the readmitted c: %+v", s.Status("j"))
	}
	runPhase(s, "j", 2, 2, "c")
	st := s.Status("j")
	if st.Status != protocol.StatusCompleted || !slices.Equal(st.Sites, []string{"a", "b", "c"}) || len(st.Dropped) != 0 {
		t.Fatalf("final status %+v", st)
	}

	// A site that refused the job stays out of it when it joins again.
	s = newService(t, ServiceConfig{SiteTimeout: 4})
	for _, site := range []string{"a", "b", "c"} {
		s.Step(&protocol.Join{Site: site, Records: 40, Dim: 1, Instance: site + "-1"})
	}
	s.Step(submit("k", 2))
	s.Step(&protocol.Refuse{Job: "k", Site: "c", Reason: "over budget"})
	s.Step(&protocol.Join{Site: "c", Records: 40, Dim: 1, Instance: "c-1"})
	if slices.Contains(s.inner.Active(), "c") {
		t.Fatalf("the refusing site was readmitted: active %v", s.inner.Active())
	}
}
