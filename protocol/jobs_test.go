package protocol

import (
	"strings"
	"testing"
)

// Every malformed job-object message is refused by Decode (and Encode),
// naming the problem; the well-formed samples (samples()) round-trip.
func TestJobObjectsValidate(t *testing.T) {
	sites := make([]string, MaxSites+1)
	for i := range sites {
		sites[i] = "s"
	}
	many := make([]JobSummary, MaxJobPage+1)
	for i := range many {
		many[i] = JobSummary{Job: "j" + strings.Repeat("x", i%60) + string(rune('a'+i/60)), Status: StatusQueued}
	}
	for _, c := range []struct {
		name string
		m    Message
		want string
	}{
		{"list without client", &JobList{}, "client"},
		{"list with a bad cursor", &JobList{Client: "c", After: "a b"}, "after"},
		{"list limit above the page", &JobList{Client: "c", Limit: MaxJobPage + 1}, "limit 101 outside [0, 100]"},
		{"list negative limit", &JobList{Client: "c", Limit: -1}, "limit -1"},
		{"page too long", &JobPage{Jobs: many, Total: len(many)}, "101 jobs exceeds 100"},
		{"page total below its jobs", &JobPage{Jobs: []JobSummary{{Job: "a", Status: StatusQueued}}, Total: 0}, "total 0 below its 1 jobs"},
		{"page out of order", &JobPage{Jobs: []JobSummary{{Job: "b", Status: StatusQueued}, {Job: "a", Status: StatusQueued}}, Total: 2}, "strictly increasing"},
		{"page duplicate", &JobPage{Jobs: []JobSummary{{Job: "a", Status: StatusQueued}, {Job: "a", Status: StatusQueued}}, Total: 2}, "strictly increasing"},
		{"page unknown status", &JobPage{Jobs: []JobSummary{{Job: "a", Status: "paused"}}, Total: 1}, `unknown status "paused"`},
		{"page status unknown", &JobPage{Jobs: []JobSummary{{Job: "a", Status: StatusUnknown}}, Total: 1}, "unknown status"},
		{"page long reason", &JobPage{Jobs: []JobSummary{{Job: "a", Status: StatusFailed, Reason: strings.Repeat("x", MaxReasonLen+1)}}, Total: 1}, "reason of 1025 bytes"},
		{"page too many sites", &JobPage{Jobs: []JobSummary{{Job: "a", Status: StatusRunning, Sites: sites}}, Total: 1}, "1025 active sites exceeds 1024"},
		{"page negative time", &JobPage{Jobs: []JobSummary{{Job: "a", Status: StatusQueued, Submitted: -1}}, Total: 1}, "negative time"},
		{"page bad next", &JobPage{Next: "a.b"}, "next"},
		{"cancel without job", &JobCancel{Client: "c"}, "job"},
		{"cancel without client", &JobCancel{Job: "j"}, "client"},
		{"status negative time", &JobStatus{Job: "j", Status: StatusQueued, Finished: -5}, "negative time"},
		{"best phase beyond the phases", bestStatus(func(m *JobStatus) { m.BestPhase = 4 }), "best phase 4 outside [1, 3]"},
		{"best model without a phase", bestStatus(func(m *JobStatus) { m.BestPhase = 0 }), "best phase 0"},
		{"best auc above 1", bestStatus(func(m *JobStatus) { m.BestAUC = 1.5 }), "best auc 1.5 outside [0, 1]"},
		{"best model of another length", bestStatus(func(m *JobStatus) { m.BestModel = []float64{1} }), "best model of 1 parameters, final model 2"},
		{"best phase without a model", bestStatus(func(m *JobStatus) { m.BestModel = nil }), "best model: protocol: empty model"},
	} {
		if _, err := Encode(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: encode err = %v, want it to mention %q", c.name, err, c.want)
		}
		b, err := encodeUnchecked(c.m, Version)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: decode err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if _, err := Encode(bestStatus(func(*JobStatus) {})); err != nil {
		t.Errorf("a valid best phase: %v", err)
	}
	// A full page of the largest summaries fits a message.
	big := make([]JobSummary, MaxJobPage)
	long := make([]string, MaxSites)
	for i := range long {
		long[i] = strings.Repeat("s", MaxNameLen-4) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
	}
	for i := range big {
		big[i] = JobSummary{Job: strings.Repeat("j", MaxNameLen-2) + string(rune('a'+i/26)) + string(rune('a'+i%26)), Algo: "fed-dp-lda", Status: StatusFailed,
			Reason: strings.Repeat("r", MaxReasonLen), Privacy: strings.Repeat("p", MaxReasonLen), Sites: long, Submitted: 1 << 40, Finished: 1 << 40}
	}
	b, err := Encode(&JobPage{Jobs: big, Total: MaxJobPage, Next: big[MaxJobPage-1].Job})
	if err != nil || len(b) > MaxMessageSize {
		t.Errorf("a full page: %d bytes, %v", len(b), err)
	}
	if _, err := Decode(b); err != nil {
		t.Errorf("a full page does not decode: %v", err)
	}
}

// bestStatus is a completed 3-phase status with a best phase, edited by f.
func bestStatus(f func(*JobStatus)) *JobStatus {
	m := &JobStatus{Job: "j", Status: StatusCompleted, Algo: "fed-avg", Phases: 3, Model: []float64{1, 2}, AUC: 0.7, TestRecords: 10,
		PhaseAUC: []float64{0.6, 0.8, 0.7}, BestPhase: 2, BestAUC: 0.8, BestModel: []float64{0.5, 1}}
	f(m)
	return m
}

// The cancel fields (JobSubmit.CancelHash, JobCancel.Key): empty or
// exactly CancelKeyLen bytes round-trip; any other length, tampered on
// the wire, is refused by Decode (and Encode) naming the field and the
// length.
func TestCancelKeyFieldsValidate(t *testing.T) {
	sub := func(h []byte) *JobSubmit {
		return &JobSubmit{Job: "j", Client: "c", Algo: "fed-avg", MinSites: 1, CancelHash: h}
	}
	for _, m := range []Message{sub(nil), sub(make([]byte, CancelKeyLen)), &JobCancel{Job: "j", Client: "c"}, &JobCancel{Job: "j", Client: "c", Key: make([]byte, CancelKeyLen)}} {
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("%v: %v", m.Kind(), err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%v: decode: %v", m.Kind(), err)
		}
		switch g := got.(type) {
		case *JobSubmit:
			if len(g.CancelHash) != len(m.(*JobSubmit).CancelHash) {
				t.Errorf("submit: hash of %d bytes after the round trip", len(g.CancelHash))
			}
		case *JobCancel:
			if len(g.Key) != len(m.(*JobCancel).Key) {
				t.Errorf("cancel: key of %d bytes after the round trip", len(g.Key))
			}
		}
	}
	for _, c := range []struct {
		name string
		m    Message
		want string
	}{
		{"submit hash of 1 byte", sub([]byte{1}), "cancel hash of 1 bytes, want 32"},
		{"submit hash of 31 bytes", sub(make([]byte, 31)), "cancel hash of 31 bytes, want 32"},
		{"submit hash of 33 bytes", sub(make([]byte, 33)), "cancel hash of 33 bytes, want 32"},
		{"submit hash of 1 MiB", sub(make([]byte, 1<<20)), "cancel hash of 1048576 bytes"},
		{"cancel key of 1 byte", &JobCancel{Job: "j", Client: "c", Key: []byte{1}}, "key of 1 bytes, want 32"},
		{"cancel key of 31 bytes", &JobCancel{Job: "j", Client: "c", Key: make([]byte, 31)}, "key of 31 bytes, want 32"},
		{"cancel key of 64 bytes (the hex text)", &JobCancel{Job: "j", Client: "c", Key: make([]byte, 64)}, "key of 64 bytes, want 32"},
	} {
		if _, err := Encode(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: encode err = %v, want it to mention %q", c.name, err, c.want)
		}
		b, err := encodeUnchecked(c.m, Version)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: decode err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if err := CheckCancelHash("j", make([]byte, 16)); err == nil || !strings.Contains(err.Error(), "job j: cancel hash of 16 bytes") {
		t.Errorf("CheckCancelHash of 16 bytes: %v", err)
	}
}
