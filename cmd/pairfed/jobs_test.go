package main

import (
	"context"
	"encoding/json"
	"fmt"
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
	for _, id := range []string{"run1", "run2"} {
		if p, code := runPairfed(t, &logs, 30*time.Second, append(append([]string{"job", "submit"}, fed...), "--job", id, "--algo", "fed-avg", "--rounds", "50", "--min-sites", "2")...); code != 0 {
			t.Fatalf("submit %s: exit %d, %v", id, code, p.err)
		}
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

	cancelJob := func(id string) (string, int) {
		p, code := runPairfed(t, &logs, 30*time.Second, append(append([]string{"job", "cancel"}, fed...), id)...)
		return p.stdout.String() + p.stderr.String() + fmt.Sprint(p.err), code
	}
	if out, code := cancelJob("run2"); code != 0 || !regexp.MustCompile(`job run2: cancelled by c-[0-9a-f]+ while queued`).MatchString(out) {
		t.Errorf("cancel queued: exit %d\n%s", code, out)
	}
	if out, code := cancelJob("run1"); code != 0 || !strings.Contains(out, "while running: aborted") {
		t.Errorf("cancel running: exit %d\n%s", code, out)
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
	p, code := runPairfed(t, &logs, 30*time.Second, append([]string{"job", "list"}, fed...)...)
	if code != 0 || !regexp.MustCompile(`run1\s+fed-avg\s+failed \(cancelled by c-[0-9a-f]+\)\s+NOT: fed-avg adds no noise`).MatchString(p.stdout.String()) {
		t.Errorf("job list text: exit %d\n%s", code, p.stdout.String())
	}
	if out, code := cancelJob("run1"); code != 1 || !strings.Contains(out, "job run1 is failed: cancelled by") || !strings.Contains(out, "nothing was cancelled") {
		t.Errorf("second cancel: exit %d\n%s", code, out)
	}
	if out, code := cancelJob("nope"); code != 1 || !strings.Contains(out, "job nope is unknown") {
		t.Errorf("unknown job: exit %d\n%s", code, out)
	}
}
