package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/protocol"
)

// job list and job cancel against a coordinator and two workers (in-process
// CLI runs): a running job and one queued behind it are listed; the queued
// one is cancelled (it leaves the queue), then the running one (both sites
// hear the coordinator's Abort naming the canceller); the list then shows
// both failed, "cancelled by <client>"; cancelling an ended or unknown job
// exits 1 and changes nothing.
func TestJobListCancel(t *testing.T) {
	root := t.TempDir()
	site := map[string]string{"a": filepath.Join(root, "a.libsvm"), "b": filepath.Join(root, "b.libsvm")}
	writeLinearLIBSVM(t, site["a"], 100, 3, 2)
	writeLinearLIBSVM(t, site["b"], 100, 3, 3)
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*proc
	defer func() {
		cancel()
		for _, p := range procs {
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				t.Error("a process did not stop")
			}
		}
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	}()
	coord := startPairfed(ctx, &logs, "coordinator", "--listen", "127.0.0.1:0", "--federation", "jl", "--state", filepath.Join(root, "coord"),
		"--min-sites", "2", "--tick", "10ms")
	procs = append(procs, coord)
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool { return urlRE.MatchString(coord.stdout.String()) })
	url := urlRE.FindStringSubmatch(coord.stdout.String())[1]
	for _, s := range []string{"a", "b"} {
		procs = append(procs, startPairfed(ctx, &logs, "worker", "--nats", url, "--federation", "jl", "--site", s, "--data", site[s],
			"--state", filepath.Join(root, "site-"+s), "--tick", "10ms", "--heartbeat", "50ms", "--update-delay", "2s"))
	}
	waitFor(t, 15*time.Second, "sites a and b to join", func() bool {
		l := logs.String()
		return strings.Contains(l, "site a joined the federation") && strings.Contains(l, "site b joined the federation")
	})
	fed := []string{"--nats", url, "--federation", "jl"}
	// run1's cancel key goes to a file (--cancel-key-out), run2's is read
	// from the --json report.
	keyFile := filepath.Join(root, "run1.key")
	p, code := runPairfed(t, &logs, 30*time.Second, append(append([]string{"job", "submit"}, fed...), "--job", "run1", "--algo", "fed-avg", "--rounds", "50", "--min-sites", "2", "--cancel-key-out", keyFile)...)
	if code != 0 || !regexp.MustCompile(`(?m)^cancel key: [0-9a-f]{64}$`).MatchString(p.stdout.String()) || !strings.Contains(p.stdout.String(), "--cancel-key @"+keyFile+" run1") {
		t.Fatalf("submit run1: exit %d, %v\n%s", code, p.err, p.stdout.String())
	}
	fi, err := os.Stat(keyFile)
	kb, _ := os.ReadFile(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 || !regexp.MustCompile(`^[0-9a-f]{64}\n$`).Match(kb) || !strings.Contains(p.stdout.String(), "cancel key: "+strings.TrimSpace(string(kb))) {
		t.Fatalf("key file: %v, %v, %q", err, fi.Mode(), kb)
	}
	p, code = runPairfed(t, &logs, 30*time.Second, append(append([]string{"job", "submit"}, fed...), "--job", "run2", "--algo", "fed-avg", "--rounds", "50", "--min-sites", "2", "--json")...)
	var sub2 struct {
		Status    string `json:"status"`
		CancelKey string `json:"cancel_key"`
	}
	if code != 0 || json.Unmarshal([]byte(p.stdout.String()), &sub2) != nil || len(sub2.CancelKey) != 64 || sub2.CancelKey == strings.TrimSpace(string(kb)) {
		t.Fatalf("submit run2: exit %d, %v\n%s", code, p.err, p.stdout.String())
	}
	waitFor(t, 15*time.Second, "run1 to start", func() bool { return strings.Contains(logs.String(), "job run1 (fed-avg) starts") })

	list := func() []protocol.JobSummary {
		t.Helper()
		p, code := runPairfed(t, &logs, 30*time.Second, append(append([]string{"job", "list"}, fed...), "--json")...)
		var out struct {
			Jobs  []protocol.JobSummary `json:"jobs"`
			Total int                   `json:"total"`
		}
		if code != 0 || json.Unmarshal([]byte(p.stdout.String()), &out) != nil || out.Total != len(out.Jobs) {
			t.Fatalf("job list: exit %d, %v\n%s", code, p.err, p.stdout.String())
		}
		return out.Jobs
	}
	jobs := list()
	if len(jobs) != 2 || jobs[0].Job != "run1" || jobs[0].Status != protocol.StatusRunning || jobs[1].Status != protocol.StatusQueued ||
		jobs[0].Private || !strings.Contains(jobs[0].Privacy, "NOT private: fed-avg adds no noise") || jobs[0].Submitted == 0 || strings.Join(jobs[0].Sites, ",") != "a,b" {
		t.Fatalf("listed %+v", jobs)
	}

	p, code = runPairfed(t, &logs, 30*time.Second, append([]string{"job", "list"}, fed...)...)
	if code != 0 || !regexp.MustCompile(`run1\s+fed-avg\s+running \(cancel: its key only\)`).MatchString(p.stdout.String()) ||
		!regexp.MustCompile(`run2\s+fed-avg\s+queued \(cancel: its key only\)`).MatchString(p.stdout.String()) {
		t.Errorf("job list before the cancels: exit %d\n%s", code, p.stdout.String())
	}

	cancelJob := func(id string, key ...string) (string, int) {
		args := append([]string{"job", "cancel"}, fed...)
		if len(key) > 0 {
			args = append(args, "--cancel-key", key[0])
		}
		p, code := runPairfed(t, &logs, 30*time.Second, append(args, id)...)
		return p.stdout.String() + p.stderr.String() + fmt.Sprint(p.err), code
	}
	// Another holder of the client login: no key, a wrong key (run1's
	// for run2, a random one for run1): refused, exit 1, nothing changes.
	for _, c := range []struct{ job, key, want string }{
		{"run2", "", "this request carries none"},
		{"run2", "@" + keyFile, "does not match"},
		{"run1", strings.Repeat("ab", 32), "does not match"},
	} {
		var key []string
		if c.key != "" {
			key = []string{c.key}
		}
		out, code := cancelJob(c.job, key...)
		if code != 1 || !strings.Contains(out, "job cancel: refused: job "+c.job+" was submitted with a cancel key") || !strings.Contains(out, c.want) || !strings.Contains(out, "nothing was cancelled") {
			t.Errorf("cancel %s with key %q: exit %d\n%s", c.job, c.key, code, out)
		}
	}
	if jobs := list(); jobs[0].Status != protocol.StatusRunning || jobs[1].Status != protocol.StatusQueued {
		t.Fatalf("after the refused cancels: %+v", jobs)
	}
	if !strings.Contains(logs.String(), "job run2: cancel by client c-") {
		t.Errorf("the refusal is not in the coordinator's log")
	}
	if out, code := cancelJob("run2", sub2.CancelKey); code != 0 || !regexp.MustCompile(`job run2: cancelled by c-[0-9a-f]+ with the job's cancel key while queued`).MatchString(out) {
		t.Errorf("cancel queued: exit %d\n%s", code, out)
	}
	// The operator cancels run1 with the admin key the coordinator made
	// in its state directory (and named in its log).
	admin := filepath.Join(root, "coord", "admin.key")
	if !strings.Contains(logs.String(), "the operator's admin key is "+admin+" (mode 0600, generated now)") {
		t.Errorf("the coordinator's log does not name its admin key")
	}
	if fi, err := os.Stat(admin); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("admin key: %v %v", fi, err)
	}
	if out, code := cancelJob("run1", "@"+admin); code != 0 || !strings.Contains(out, "with the coordinator's admin key while running: aborted") {
		t.Errorf("cancel running: exit %d\n%s", code, out)
	}
	adminKey, _ := os.ReadFile(admin)
	for _, k := range []string{strings.TrimSpace(string(kb)), sub2.CancelKey, strings.TrimSpace(string(adminKey))} {
		if strings.Contains(logs.String(), k) {
			t.Errorf("a cancel key is in the processes' logs")
		}
	}
	for _, s := range []string{"a", "b"} {
		re := regexp.MustCompile(`worker ` + s + `: job run1 aborted by coordinator: cancelled by c-`)
		waitFor(t, 10*time.Second, "site "+s+" to hear the Abort", func() bool { return re.MatchString(logs.String()) })
	}
	jobs = list()
	for _, j := range jobs {
		if j.Status != protocol.StatusFailed || !strings.HasPrefix(j.Reason, "cancelled by c-") || j.Finished < j.Submitted || j.Finished == 0 {
			t.Errorf("after the cancels: %+v", j)
		}
	}
	p, code = runPairfed(t, &logs, 30*time.Second, append([]string{"job", "list"}, fed...)...)
	if code != 0 || !regexp.MustCompile(`run1\s+fed-avg\s+failed \(cancelled by c-[0-9a-f]+ with the coordinator's admin key\)\s+NOT: fed-avg adds no noise`).MatchString(p.stdout.String()) {
		t.Errorf("job list text: exit %d\n%s", code, p.stdout.String())
	}
	if out, code := cancelJob("run1"); code != 1 || !strings.Contains(out, "job run1 is failed: cancelled by") || !strings.Contains(out, "nothing was cancelled") {
		t.Errorf("second cancel: exit %d\n%s", code, out)
	}
	if out, code := cancelJob("nope"); code != 1 || !strings.Contains(out, "job nope is unknown") {
		t.Errorf("unknown job: exit %d\n%s", code, out)
	}
}

// The cancel-key flags refuse bad input before any connection (exit 2,
// nothing written): --cancel-key-out over an existing file or inside a
// state directory, and a --cancel-key that is not 32 bytes of hex (the
// message never repeats the value, which may be a mistyped secret).
func TestCancelKeyFlags(t *testing.T) {
	root := t.TempDir()
	existing := filepath.Join(root, "old.key")
	if err := os.WriteFile(existing, []byte("another job's key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "charges.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fed := []string{"--nats", "nats://127.0.0.1:1", "--federation", "kf", "--timeout", "2s"}
	submit := append([]string{"job", "submit"}, fed...)
	submit = append(submit, "--algo", "fed-avg", "--cancel-key-out")
	for _, c := range []struct{ path, want string }{
		{existing, "--cancel-key-out " + existing + " exists: job submit never overwrites a file"},
		{root, "--cancel-key-out " + root + " is a directory: give a new file name"},
		{filepath.Join(state, "job.key"), "inside the state directory " + state},
	} {
		var logs syncBuffer
		p, code := runPairfed(t, &logs, 20*time.Second, append(submit, c.path)...)
		if out := p.stderr.String() + fmt.Sprint(p.err); code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("--cancel-key-out %s: exit %d\n%s", c.path, code, out)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "another job's key\n" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(state, "job.key")); err == nil {
		t.Errorf("a key was written into the state directory")
	}
	cancel := append([]string{"job", "cancel"}, fed...)
	for _, c := range []struct{ key, want string }{
		{"secret-typo", "the value is not a cancel key: character 1 is 's', not a hex digit"},
		{strings.Repeat("ab", 31), "the value is not a cancel key: 62 hex digits (want 64 hex digits"},
		{"@" + existing, existing + " is not a cancel key"},
		{"@" + filepath.Join(root, "missing.key"), "missing.key: no such file"},
		{"@" + root, "is a directory"},
	} {
		var logs syncBuffer
		p, code := runPairfed(t, &logs, 20*time.Second, append(cancel, "--cancel-key", c.key, "j1")...)
		out := p.stderr.String() + fmt.Sprint(p.err)
		if code != 2 || !strings.Contains(out, c.want) || (!strings.HasPrefix(c.key, "@") && strings.Contains(out, c.key)) {
			t.Errorf("--cancel-key %s: exit %d\n%s", c.key, code, out)
		}
	}
}
