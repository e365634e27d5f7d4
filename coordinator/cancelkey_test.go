package coordinator

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// testKey is a distinct cancel key of protocol.CancelKeyLen bytes.
func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, protocol.CancelKeyLen) }

func keyedSubmit(job string, minSites int, key []byte) *protocol.JobSubmit {
	m := &protocol.JobSubmit{Job: job, Client: "c", Algo: fedalgo.FedAvg, Rounds: 3, MinSites: minSites}
	if key != nil {
		m.CancelHash = CancelHash(key)
	}
	return m
}

// hasAbort reports whether outs abort job.
func hasAbort(outs []Output, job string) bool {
	return slices.ContainsFunc(outs, func(o Output) bool { a, ok := o.Msg.(*protocol.Abort); return ok && a.Job == job })
}

// A job submitted with a cancel hash is cancelled only with its key (or
// the admin key): no key, a wrong key and another job's key are refused,
// with the job's status unchanged, a reason saying why, a log line
// without the key, and nothing sent to the sites; the job's own key then
// cancels it, queued or running, and the status names the key used.
func TestServiceCancelKey(t *testing.T) {
	var logs strings.Builder
	s := newService(t, ServiceConfig{Logf: func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) }})
	s.Step(&protocol.Join{Site: "a", Records: 50, Dim: 1})
	s.Step(&protocol.Join{Site: "b", Records: 50, Dim: 1})
	kp, kq, wrong := testKey(1), testKey(2), testKey(3)
	s.Step(keyedSubmit("p", 2, kp))
	s.Step(keyedSubmit("q", 2, kq)) // queued behind p
	runPhase(s, "p", 1, 1, "a", "b")
	if s.Running() != "p" {
		t.Fatalf("running %q", s.Running())
	}
	ledger := len(s.Ledger())
	for _, c := range []struct {
		name, job string
		key       []byte
		want      string
		status    string
	}{
		{"no key, running", "p", nil, "carries none", protocol.StatusRunning},
		{"wrong key, running", "p", wrong, "does not match", protocol.StatusRunning},
		{"another job's key, running", "p", kq, "does not match", protocol.StatusRunning},
		{"no key, queued", "q", nil, "carries none", protocol.StatusQueued},
		{"the running job's key, queued", "q", kp, "does not match", protocol.StatusQueued},
	} {
		outs := s.Step(&protocol.JobCancel{Job: c.job, Client: "x", Key: c.key})
		st := lastStatus(t, outs, "x")
		if st.Status != c.status || !strings.HasPrefix(st.Reason, CancelRefusedPrefix+"job "+c.job+" was submitted with a cancel key") ||
			!strings.Contains(st.Reason, c.want) || !strings.Contains(st.Reason, "admin key") {
			t.Errorf("%s: reply %+v", c.name, st)
		}
		if err := st.Validate(); err != nil {
			t.Errorf("%s: invalid reply: %v", c.name, err)
		}
		if len(outs) != 1 || hasAbort(outs, c.job) {
			t.Errorf("%s: outputs %v (want only the reply)", c.name, kinds(outs))
		}
		if stored := s.status[c.job]; stored.Status != c.status || strings.HasPrefix(stored.Reason, CancelRefusedPrefix) {
			t.Errorf("%s: the stored status changed: %+v", c.name, stored)
		}
	}
	if s.Running() != "p" || len(s.queue) != 1 || len(s.TakeFinished()) != 0 || len(s.Ledger()) != ledger {
		t.Fatalf("refused cancels changed the service: running %q, %d queued, ledger %d → %d", s.Running(), len(s.queue), ledger, len(s.Ledger()))
	}
	if n := strings.Count(logs.String(), "cancel by client x refused"); n != 5 {
		t.Errorf("%d refusals logged, want 5:\n%s", n, logs.String())
	}
	// The phase goes on after the refusals.
	outs := runPhase(s, "p", 2, 1, "a", "b")
	if !slices.Contains(kinds(outs), protocol.KindPhaseStart) {
		t.Errorf("phase 2 did not close after the refused cancels: %v", kinds(outs))
	}

	outs = s.Step(&protocol.JobCancel{Job: "q", Client: "x", Key: kq})
	if st := lastStatus(t, outs, "x"); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by x with the job's cancel key while queued") {
		t.Errorf("q with its key: %+v", st)
	}
	outs = s.Step(&protocol.JobCancel{Job: "p", Client: "y", Key: kp})
	if st := lastStatus(t, outs, "y"); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by y with the job's cancel key while running: aborted") {
		t.Errorf("p with its key: %+v", st)
	}
	if !hasAbort(outs, "p") || s.Running() != "" {
		t.Errorf("p not aborted: %v, running %q", kinds(outs), s.Running())
	}
	for _, k := range [][]byte{kp, kq, wrong, CancelHash(kp), CancelHash(kq)} {
		if strings.Contains(logs.String(), hex.EncodeToString(k)) || strings.Contains(logs.String(), string(k)) {
			t.Errorf("a key or hash is in the log:\n%s", logs.String())
		}
	}
	// An ended job: nothing changes, whatever the key.
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "p", Client: "z"}), "z"); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by y") {
		t.Errorf("cancel of an ended job: %+v", st)
	}
}

// The operator's admin key (ServiceConfig.AdminCancelHash) cancels a job
// whose key is lost, and one without a key; a service without an admin
// hash refuses it like any other wrong key.
func TestServiceCancelAdminKey(t *testing.T) {
	admin := testKey(9)
	s := newService(t, ServiceConfig{AdminCancelHash: CancelHash(admin)})
	s.Step(&protocol.Join{Site: "a", Records: 50, Dim: 1})
	s.Step(keyedSubmit("p", 1, testKey(1)))
	s.Step(keyedSubmit("q", 1, nil))
	runPhase(s, "p", 1, 1, "a")
	outs := s.Step(&protocol.JobCancel{Job: "q", Client: "op", Key: admin})
	if st := lastStatus(t, outs, "op"); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by op with the coordinator's admin key while queued") {
		t.Errorf("q (no key) by the admin key: %+v", st)
	}
	outs = s.Step(&protocol.JobCancel{Job: "p", Client: "op", Key: admin})
	if st := lastStatus(t, outs, "op"); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by op with the coordinator's admin key while running") || !hasAbort(outs, "p") {
		t.Errorf("p by the admin key: %+v %v", st, kinds(outs))
	}

	s = newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 50, Dim: 1})
	s.Step(keyedSubmit("p", 1, testKey(1)))
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "p", Client: "op", Key: admin}), "op"); st.Status != protocol.StatusRunning || !strings.HasPrefix(st.Reason, CancelRefusedPrefix) {
		t.Errorf("admin key without an admin hash configured: %+v", st)
	}
	if _, err := NewService(ServiceConfig{Federation: "f", AdminCancelHash: []byte{1, 2, 3}}); err == nil || !strings.Contains(err.Error(), "admin cancel hash of 3 bytes") {
		t.Errorf("a 3-byte admin hash: %v", err)
	}
}

// A job submitted without a cancel hash (an older client) keeps the
// earlier rule: any client cancels it, with or without a key; the job
// list says which rule applies to each queued or running job.
func TestServiceCancelWithoutHash(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 50, Dim: 1})
	s.Step(keyedSubmit("old", 1, nil))
	s.Step(keyedSubmit("new", 1, testKey(1)))
	s.Step(keyedSubmit("old2", 1, nil))
	p := pageOf(t, s.Step(&protocol.JobList{Client: "l"}), "l")
	want := map[string]string{"new": CancelByKeyNote, "old": CancelByAnyNote, "old2": CancelByAnyNote}
	for _, j := range p.Jobs {
		if !strings.Contains(j.Reason, want[j.Job]) {
			t.Errorf("list: %s: reason %q, want it to say %q", j.Job, j.Reason, want[j.Job])
		}
	}
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "old", Client: "x"}), "x"); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by x while running") {
		t.Errorf("no-hash job without a key: %+v", st)
	}
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "old2", Client: "x", Key: testKey(7)}), "x"); st.Status != protocol.StatusFailed || !strings.HasPrefix(st.Reason, "cancelled by x while queued") {
		t.Errorf("no-hash job with some key: %+v", st)
	}
	// The stored summaries of ended jobs carry no cancel note.
	for _, j := range pageOf(t, s.Step(&protocol.JobList{Client: "l"}), "l").Jobs {
		if j.Job != "new" && strings.Contains(j.Reason, "cancel: ") {
			t.Errorf("ended %s: %q", j.Job, j.Reason)
		}
	}
}

// Submitting a known, queued or running id again under another cancel
// key is a poll: the reply says the new key does not apply, the stored
// status is unchanged and only the first key cancels; the same key (the
// --wait poll of its own submitter) gets the plain status.
func TestServiceResubmitOtherCancelKey(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 50, Dim: 1})
	first, second := testKey(1), testKey(2)
	s.Step(keyedSubmit("p", 2, first)) // waits for a second site
	st := lastStatus(t, s.Step(keyedSubmit("p", 2, second)), "c")
	if st.Status != protocol.StatusQueued || !strings.Contains(st.Reason, fmt.Sprintf(CancelKeyNotTaken, "p")) || !strings.Contains(st.Reason, "waiting for 2 live sites") {
		t.Errorf("second submission: %+v", st)
	}
	if strings.Contains(s.status["p"].Reason, "cancel key") {
		t.Errorf("stored status changed: %+v", s.status["p"])
	}
	if st := lastStatus(t, s.Step(keyedSubmit("p", 2, first)), "c"); strings.Contains(st.Reason, "cancel key") {
		t.Errorf("poll under the job's own key: %+v", st)
	}
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "p", Client: "x", Key: second}), "x"); st.Status != protocol.StatusQueued {
		t.Errorf("the second submission's key cancelled: %+v", st)
	}
	if st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "p", Client: "x", Key: first}), "x"); st.Status != protocol.StatusFailed {
		t.Errorf("the job's key: %+v", st)
	}
}

// The cancel hash of a queued and of a running job is in the checkpoint
// (JSON, as store.SaveCheckpoint writes it) and the restored service
// applies it; a checkpoint of an earlier version (no cancel_hash) restores
// its jobs under the earlier rule; a hash of another length is refused
// with a message naming the job and the length.
func TestServiceCancelHashSurvivesRestart(t *testing.T) {
	s := newService(t, ServiceConfig{})
	s.Step(&protocol.Join{Site: "a", Records: 50, Dim: 1})
	kp, kq := testKey(1), testKey(2)
	s.Step(keyedSubmit("p", 1, kp))
	s.Step(keyedSubmit("q", 1, kq))
	runPhase(s, "p", 1, 1, "a")
	b, err := json.Marshal(s.Checkpoint())
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(`"cancel_hash"`)); n != 2 {
		t.Fatalf("%d cancel hashes in the checkpoint, want 2: %s", n, b)
	}
	restore := func(b []byte) (*Service, error) {
		var cp Checkpoint
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatal(err)
		}
		return RestoreService(ServiceConfig{Federation: "f"}, &cp)
	}
	r, err := restore(b)
	if err != nil {
		t.Fatal(err)
	}
	r.Resume()
	if r.Running() != "p" {
		t.Fatalf("restored running %q", r.Running())
	}
	for _, job := range []string{"p", "q"} {
		if st := lastStatus(t, r.Step(&protocol.JobCancel{Job: job, Client: "x", Key: testKey(5)}), "x"); st.Status == protocol.StatusFailed || !strings.HasPrefix(st.Reason, CancelRefusedPrefix) {
			t.Errorf("restored %s cancelled with a wrong key: %+v", job, st)
		}
	}
	if st := lastStatus(t, r.Step(&protocol.JobCancel{Job: "q", Client: "x", Key: kq}), "x"); st.Status != protocol.StatusFailed {
		t.Errorf("restored q with its key: %+v", st)
	}
	if st := lastStatus(t, r.Step(&protocol.JobCancel{Job: "p", Client: "x", Key: kp}), "x"); st.Status != protocol.StatusFailed {
		t.Errorf("restored p with its key: %+v", st)
	}

	// A checkpoint written before cancel hashes existed.
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw["running"].(map[string]any)["submit"].(map[string]any), "cancel_hash")
	delete(raw["queue"].([]any)[0].(map[string]any)["submit"].(map[string]any), "cancel_hash")
	old, _ := json.Marshal(raw)
	if bytes.Contains(old, []byte("cancel_hash")) {
		t.Fatal("the old checkpoint still has a hash")
	}
	r, err = restore(old)
	if err != nil {
		t.Fatalf("an old checkpoint: %v", err)
	}
	r.Resume()
	if st := lastStatus(t, r.Step(&protocol.JobCancel{Job: "q", Client: "x"}), "x"); st.Status != protocol.StatusFailed {
		t.Errorf("old checkpoint's q without a key: %+v", st)
	}

	// A damaged hash: 5 bytes, in the queue and in the running job.
	for _, where := range []string{"queue", "running"} {
		var raw map[string]any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		sub := raw["running"].(map[string]any)["submit"].(map[string]any)
		if where == "queue" {
			sub = raw["queue"].([]any)[0].(map[string]any)["submit"].(map[string]any)
		}
		sub["cancel_hash"] = []byte{1, 2, 3, 4, 5} // base64 in JSON
		bad, _ := json.Marshal(raw)
		if _, err := restore(bad); err == nil || !strings.Contains(err.Error(), "cancel hash of 5 bytes, want 32") {
			t.Errorf("%s: a 5-byte hash: %v", where, err)
		}
	}
}

// TestServiceCancelRefusalsLogThinned (probe 7): a flood of wrong keys for
// one job does not add a log line per request: the first four refusals
// are logged, then one per doubling of their count; every request is
// still answered and nothing changes.
func TestServiceCancelRefusalsLogThinned(t *testing.T) {
	var logs strings.Builder
	s := newService(t, ServiceConfig{Logf: func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) }})
	s.Step(keyedSubmit("p", 3, testKey(1)))
	for i := range 1000 {
		st := lastStatus(t, s.Step(&protocol.JobCancel{Job: "p", Client: "x", Key: testKey(byte(2 + i%200))}), "x")
		if st.Status != protocol.StatusQueued || !strings.HasPrefix(st.Reason, CancelRefusedPrefix) {
			t.Fatalf("request %d: %+v", i, st)
		}
	}
	// 1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512.
	if n := strings.Count(logs.String(), "cancel by client x refused"); n != 11 {
		t.Errorf("%d refusals logged for 1000 requests, want 11:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "(512 cancels of this job refused so far") {
		t.Errorf("the count is not logged:\n%s", logs.String())
	}
	if len(s.queue) != 1 || s.status["p"].Status != protocol.StatusQueued {
		t.Errorf("the refusals changed the job: %+v", s.status["p"])
	}
}
