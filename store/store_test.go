package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// Appended releases survive a reopen (a restarted site reloads them).
func TestLedgerAppendReload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	l, rel, notes, err := OpenLedger(dir)
	if err != nil || len(rel) != 0 || len(notes) != 0 {
		t.Fatalf("fresh ledger: %v %v %v", rel, notes, err)
	}
	want := []worker.Release{
		{Job: "j", Phase: 1, Records: 10, Sigma: 0.5, Epsilon: 1, Delta: 1e-3, Secure: true},
		{Job: "j", Phase: 2, Records: 5, Sigma: 0.25, Epsilon: 1, Delta: 1e-3, Secure: true},
	}
	for _, r := range want {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	if err := l.Append(want[0]); err == nil {
		t.Error("append after close accepted")
	}
	l, rel, _, err = OpenLedger(dir)
	for i := range rel { // Append stamps the time it made the entry durable
		if rel[i].Time.IsZero() {
			t.Errorf("entry %d has no time", i)
		}
		rel[i].Time = time.Time{}
	}
	if err != nil || !reflect.DeepEqual(rel, want) {
		t.Fatalf("reloaded %v, %v", rel, err)
	}
	// Appends continue after the reloaded entries.
	if err := l.Append(worker.Release{Job: "k", Phase: 1, Epsilon: 0.5}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, rel, _, _ = OpenLedger(dir)
	if len(rel) != 3 || rel[2].Job != "k" {
		t.Fatalf("after reopen+append: %v", rel)
	}
}

// A journal hard-linked into a second state directory (two sites sharing
// one ledger, whose appends once overwrote each other) is refused when
// opened; appends go to the end of the file (O_APPEND) even when another
// writer extended it.
func TestLedgerHardLinkAndAppend(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	l, _, _, err := OpenLedger(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(worker.Release{Job: "j", Phase: 1, Epsilon: 0.5}); err != nil {
		t.Fatal(err)
	}
	// Another writer appends a line behind this one's back.
	other, err := os.OpenFile(filepath.Join(a, LedgerFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	other.WriteString(`{"job":"k","phase":1,"records":0,"sigma":0,"epsilon":0.25,"delta":0,"secure":false}` + "\n")
	other.Close()
	if err := l.Append(worker.Release{Job: "j", Phase: 2, Epsilon: 0.5}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, rel, _, err := OpenLedger(a)
	if err != nil || len(rel) != 3 || rel[1].Job != "k" || rel[2].Phase != 2 {
		t.Fatalf("after an interleaved append: %+v, %v (an append overwrote another writer's line)", rel, err)
	}
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(a, LedgerFile), filepath.Join(b, LedgerFile)); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for _, dir := range []string{a, b} {
		if _, _, _, err := OpenLedger(dir); err == nil || !strings.Contains(err.Error(), "hard links") {
			t.Errorf("%s: a hard-linked ledger opened: %v", dir, err)
		}
	}
}

// A torn last line (crash inside Append: never published) is dropped and
// truncated; a malformed complete line stops the site.
func TestLedgerTornAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LedgerFile)
	good := `{"job":"j","phase":1,"records":3,"sigma":1,"epsilon":1,"delta":0.001,"secure":true}` + "\n"
	os.WriteFile(path, []byte(good+`{"job":"j","pha`), 0o644)
	l, rel, notes, err := OpenLedger(dir)
	if err != nil || len(rel) != 1 || len(notes) != 1 || !strings.Contains(notes[0], "torn") {
		t.Fatalf("torn: %v %v %v", rel, notes, err)
	}
	l.Append(worker.Release{Job: "j", Phase: 2, Epsilon: 1})
	l.Close()
	if _, rel, _, err := OpenLedger(dir); err != nil || len(rel) != 2 {
		t.Fatalf("after truncation: %v %v", rel, err)
	}
	os.WriteFile(path, []byte(good+"{\"job\":\"j\",\"bogus\":1}\n"), 0o644)
	if _, _, _, err := OpenLedger(dir); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("corrupt line: %v", err)
	}
}

// What follows the last newline is dropped only when it can be a torn
// append (the beginning of one entry, or zero bytes a crash left): a
// ledger replaced by other content without a newline was once truncated
// to nothing, and the site started with ε = 0 spent (issue 28, probe 4).
// Both the site (OpenLedger) and `ledger show` (ReadLedger) refuse it,
// and the file is left as it was.
func TestLedgerTailNotTorn(t *testing.T) {
	good := `{"job":"j","phase":1,"records":3,"sigma":1,"epsilon":1,"delta":0.001,"secure":true}` + "\n"
	for _, c := range []struct {
		name, tail string
		ok         bool
	}{
		{"prefix of an entry", `{"job":"j","pha`, true},
		{"zero bytes", "\x00\x00\x00\x00", true},
		{"prefix then zero bytes", `{"job":` + "\x00\x00", true},
		{"base64 junk", "bm90IGEgbGVkZ2VyIGF0IGFsbA==", false},
		{"binary junk", "\x01\x02garbage", false},
		{"a whole entry without its newline", good[:len(good)-1], false},
		{"two entries, newline lost", good[:len(good)-1] + good[:len(good)-1], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, LedgerFile)
			content := good + c.tail
			os.WriteFile(path, []byte(content), 0o644)
			_, rerr := ReadLedger(dir)
			l, rel, _, err := OpenLedger(dir)
			if c.ok {
				if err != nil || rerr != nil || len(rel) != 1 {
					t.Fatalf("torn tail refused: %v / %v (%d releases)", err, rerr, len(rel))
				}
				l.Close()
				return
			}
			for _, e := range []error{err, rerr} {
				if e == nil || !strings.Contains(e.Error(), "not the beginning of one entry") || !strings.Contains(e.Error(), "restore it from a backup") {
					t.Errorf("error %v, want a refusal naming the file and the fix", e)
				}
			}
			if err == nil {
				l.Close()
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("the ledger was changed to %q", b)
			}
		})
	}
}

// Job results are written atomically (no temporary file remains) and
// reloaded sorted.
func TestJobsSaveLoad(t *testing.T) {
	dir := t.TempDir()
	j, err := OpenJobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := &protocol.JobStatus{Job: "b", Status: protocol.StatusCompleted, Algo: "fed-avg", Phases: 2, Sites: []string{"s"}, Model: []float64{1, 2}, AUC: 0.8, TestRecords: 9}
	b := &protocol.JobStatus{Job: "a", Status: protocol.StatusRefused, Reason: "budget", Refused: []string{"s"}}
	for _, st := range []*protocol.JobStatus{a, b, a} {
		if err := j.Save(st); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "jobs"))
	if len(entries) != 2 {
		t.Fatalf("files %v", entries)
	}
	os.WriteFile(filepath.Join(dir, "jobs", ".c.json.tmp-1"), []byte("{"), 0o644) // an interrupted save
	got, err := j.Load()
	if err != nil || len(got) != 2 || !reflect.DeepEqual(got[0], b) || !reflect.DeepEqual(got[1], a) {
		t.Fatalf("loaded %+v, %v", got, err)
	}
	if err := j.Save(&protocol.JobStatus{Job: "../x", Status: protocol.StatusFailed}); err == nil {
		t.Error("path-like job id accepted")
	}
}

// TestLedgerHugeLine: a complete line longer than any entry (probe 6, issue
// 28) was "bufio.Scanner: token too long"; it is refused naming the file,
// the line, its length and the fix, by the reader and by a worker opening
// the ledger, and the file is left as it was.
func TestLedgerHugeLine(t *testing.T) {
	good := `{"job":"j","phase":1,"records":3,"sigma":1,"epsilon":1,"delta":0.001,"secure":true}` + "\n"
	dir := t.TempDir()
	path := filepath.Join(dir, LedgerFile)
	content := good + `{"x":"` + strings.Repeat("A", 2<<20) + `"}` + "\n" + good
	os.WriteFile(path, []byte(content), 0o644)
	_, rerr := ReadLedger(dir)
	l, _, _, err := OpenLedger(dir)
	if err == nil {
		l.Close()
	}
	for _, e := range []error{rerr, err} {
		if e == nil || !strings.Contains(e.Error(), LedgerFile+":2: a line of 2097160 bytes") || !strings.Contains(e.Error(), "restore it from a backup") {
			t.Errorf("error %v, want the file, line 2, its length and the fix", e)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Error("the ledger was changed")
	}
}
