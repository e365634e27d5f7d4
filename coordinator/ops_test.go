package coordinator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// The issue-28 case: s0 has a budget of 1 and has spent 0.4 in j1; the
// operator lowers it to 0.3 (`ledger budget set` rewrites budgets.json)
// while the coordinator runs. The next admission re-reads it: s0 is left
// out of j2 (before: j2 ran and s0 ended at 0.8 > 0.3). A budget file that
// does not validate is logged and the budgets in force are kept.
func TestServiceReloadsBudgetsAtAdmission(t *testing.T) {
	src := map[string]Budget{"s0": {Epsilon: 1, Delta: 1e-2}}
	changed := true
	var logs strings.Builder
	s := newService(t, ServiceConfig{Budgets: map[string]Budget{"s0": {Epsilon: 1, Delta: 1e-2}},
		BudgetSource: func() (map[string]Budget, bool, error) {
			c := changed
			changed = false
			return src, c, nil
		},
		Logf: func(f string, a ...any) { logs.WriteString(sprintf(f, a...) + "\n") }})
	s.Step(&protocol.Join{Site: "s0", Records: 8, Dim: 2})
	s.Step(privSubmit("j1", 0.4, 1))
	if s.Running() != "j1" {
		t.Fatal("j1 did not start")
	}
	acceptAll(s)
	s.inner.abort("end of the test job") // charged: the reservation stands
	s.settle()
	src, changed = map[string]Budget{"s0": {Epsilon: 0.3, Delta: 1e-2}}, true
	st := lastStatus(t, s.Step(privSubmit("j2", 0.4, 1)), "c")
	if st.Status != protocol.StatusRefused || !slices.Equal(st.Refused, []string{"s0"}) || !strings.Contains(st.Reason, "budget") {
		t.Fatalf("j2 after the budget was lowered: %+v\n%s", st, logs.String())
	}
	// Raised again: admitted.
	src, changed = map[string]Budget{"s0": {Epsilon: 2, Delta: 1e-2}}, true
	s.Step(privSubmit("j3", 0.4, 1))
	if s.Running() != "j3" {
		t.Fatalf("j3 not admitted after the budget was raised: %+v", s.Status("j3"))
	}
	acceptAll(s)
	s.inner.abort("end")
	s.settle()
	// A bad set (NaN) is ignored: the budget of 2 stays in force.
	src, changed = map[string]Budget{"s0": {Epsilon: 0.1, Delta: 2}}, true
	s.Step(privSubmit("j4", 0.4, 1))
	if s.Running() != "j4" || !strings.Contains(logs.String(), "budgets not reloaded") {
		t.Fatalf("bad budgets replaced the ones in force: %+v\n%s", s.Status("j4"), logs.String())
	}
}

// failingStore is a state directory whose writes fail with ENOSPC while
// full is set.
type failingStore struct {
	mu      sync.Mutex
	full    bool
	charges []Charge
	saved   []string
	cps     int
}

func (f *failingStore) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.full {
		return syscall.ENOSPC
	}
	return nil
}

func (f *failingStore) setFull(v bool) { f.mu.Lock(); f.full = v; f.mu.Unlock() }

func (f *failingStore) opts() ServeOptions {
	return ServeOptions{
		Ledger: func(cs []Charge) error {
			if err := f.err(); err != nil {
				return err
			}
			f.mu.Lock()
			f.charges = append(f.charges, cs...)
			f.mu.Unlock()
			return nil
		},
		Persist: func(st *protocol.JobStatus) error {
			if err := f.err(); err != nil {
				return err
			}
			f.mu.Lock()
			f.saved = append(f.saved, st.Job+":"+st.Status)
			f.mu.Unlock()
			return nil
		},
		Checkpoint: func(*Checkpoint) error {
			if err := f.err(); err != nil {
				return err
			}
			f.mu.Lock()
			f.cps++
			f.mu.Unlock()
			return nil
		},
	}
}

// A full disk at the coordinator: Serve stays up (before, ENOSPC on the
// checkpoint ended it, taking an embedded NATS server down while the
// submitter waited), the running job's phase 1 — whose charges could not
// be written — is never published and the job is aborted, new jobs are
// refused naming the disk error, and once writes succeed again what was
// pending is written and the next job runs.
func TestServeSurvivesFullDisk(t *testing.T) {
	hub := transport.NewMem()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go hub.Serve(ctx)
	var logMu sync.Mutex
	var logs strings.Builder
	logf := func(f string, a ...any) { logMu.Lock(); logs.WriteString(sprintf(f, a...) + "\n"); logMu.Unlock() }
	s := newService(t, ServiceConfig{Logf: logf})
	fs := &failingStore{}
	done := make(chan error, 1)
	coordT := hub.Connect("coordinator")
	opts := fs.opts()
	var viewMu sync.Mutex
	var viewErr []string // the status page's storage_error, each time it changed
	opts.Observe = func(s *Service) {
		e := s.View().StorageError
		viewMu.Lock()
		if len(viewErr) == 0 || viewErr[len(viewErr)-1] != e {
			viewErr = append(viewErr, e)
		}
		viewMu.Unlock()
	}
	go func() { done <- Serve(ctx, s, coordT, time.Millisecond, opts) }()

	site := hub.Connect("site-a")
	var mu sync.Mutex
	var got []protocol.Message
	site.Subscribe(protocol.SitesSubject("f"), func(_ string, b []byte) {
		if m, err := protocol.Decode(b); err == nil {
			mu.Lock()
			got = append(got, m)
			mu.Unlock()
		}
	})
	client := hub.Connect("client")
	statuses := map[string]*protocol.JobStatus{}
	client.Subscribe(protocol.ClientSubject("f", "c"), func(_ string, b []byte) {
		if m, err := protocol.Decode(b); err == nil {
			mu.Lock()
			st := m.(*protocol.JobStatus)
			statuses[st.Job] = st
			mu.Unlock()
		}
	})
	send := func(tr transport.Transport, subj string, m protocol.Message) {
		b, err := protocol.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		tr.Publish(subj, b)
	}
	status := func(job string) *protocol.JobStatus {
		mu.Lock()
		defer mu.Unlock()
		return statuses[job]
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for i := 0; !cond(); i++ {
			select {
			case err := <-done:
				t.Fatalf("Serve ended: %v\n%s", err, logs.String())
			default:
			}
			if i > 5000 {
				t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	siteSubj := protocol.SiteToCoordSubject("f", "a")
	var subMu sync.Mutex
	var submitted []*protocol.JobSubmit
	submitJob := func(m *protocol.JobSubmit) {
		subMu.Lock()
		submitted = append(submitted, m)
		subMu.Unlock()
		send(client, protocol.JobsSubject("f"), m)
	}
	// The site's Joins, as a worker repeats them, and the client's polls
	// (a resubmission of a known id): a message sent before Serve
	// subscribed is lost, as on NATS.
	go func() {
		for ctx.Err() == nil {
			send(site, siteSubj, &protocol.Join{Site: "a", Records: 8, Dim: 2})
			subMu.Lock()
			subs := slices.Clone(submitted)
			subMu.Unlock()
			for _, m := range subs {
				send(client, protocol.JobsSubject("f"), m)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	submitJob(privSubmit("j1", 0.5, 1))
	waitUntil("j1's announcement", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(got, func(m protocol.Message) bool { return m.Kind() == protocol.KindJobAnnounce })
	})
	fs.setFull(true)
	send(site, siteSubj, &protocol.Accept{Job: "j1", Site: "a"})
	waitUntil("j1 aborted", func() bool { st := status("j1"); return st != nil && st.Status == protocol.StatusFailed })
	if st := status("j1"); !strings.Contains(st.Reason, "cannot write its state directory") || !strings.Contains(st.Reason, "no space") {
		t.Errorf("j1's reason: %q", st.Reason)
	}
	mu.Lock()
	for _, m := range got {
		if m.Kind() == protocol.KindPhaseStart {
			t.Error("phase 1 published although its charges were not durable")
		}
	}
	mu.Unlock()
	submitJob(privSubmit("j2", 0.5, 1))
	waitUntil("j2 refused", func() bool { st := status("j2"); return st != nil && st.Status == protocol.StatusRefused })
	if st := status("j2"); !strings.Contains(st.Reason, "cannot write its state directory") {
		t.Errorf("j2's reason: %q", st.Reason)
	}
	fs.setFull(false)
	waitUntil("the pending writes", func() bool {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		return slices.Contains(fs.saved, "j1:failed")
	})
	submitJob(privSubmit("j3", 0.5, 1))
	waitUntil("j3 announced", func() bool { st := status("j3"); return st != nil && st.Status == protocol.StatusRunning })
	send(site, siteSubj, &protocol.Accept{Job: "j3", Site: "a"})
	waitUntil("j3's phase 1", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(got, func(m protocol.Message) bool { ps, ok := m.(*protocol.PhaseStart); return ok && ps.Job == "j3" })
	})
	fs.mu.Lock()
	var j1, j3 int
	for _, c := range fs.charges {
		switch c.Job {
		case "j1":
			j1++
		case "j3":
			j3++
		}
	}
	fs.mu.Unlock()
	if j1 != 0 || j3 != 1 {
		t.Errorf("reservations on disk: j1 %d (its phase 1 never left: none), j3 %d (want 1)", j1, j3)
	}
	viewMu.Lock()
	if len(viewErr) < 3 || viewErr[0] != "" || !strings.Contains(viewErr[1], "no space left") || viewErr[len(viewErr)-1] != "" {
		t.Errorf("status page's storage_error over time: %q", viewErr)
	}
	viewMu.Unlock()
	if !strings.Contains(logs.String(), "writable again") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve: %v", err)
	}
}
