//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// Issue 28, finding 14: a NATS hub outage longer than the site timeout
// (2 s here) cost the job: the coordinator counted its own disconnection
// as the sites' silence, dropped them all and aborted, and the sites,
// who never heard the abort, sat in the dead job until their job timeout.
// The run loops now stand still while their own connection is down: the
// server is stopped for 10 s (5 site timeouts, 10 phase timeouts, twice
// the workers' --job-timeout) in the middle of a private job and
// restarted on the same port, and the job completes with all three sites.
func TestNATSHubOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := newCrashFed(t, ctx, "--job-timeout", "5s")
	port := strings.TrimPrefix(f.url, "nats://127.0.0.1:")
	ns, _ := exec.LookPath("nats-server")
	done := make(chan *report, 1)
	go func() {
		r, err := submit(t, ctx, &f.federation, "--algo", "fed-dp-local-sgd", "--epsilon", "0.5", "--min-sites", "3", "--job", "outage")
		if err != nil {
			t.Errorf("outage: %v", err)
		}
		done <- r
	}()
	waitFor(t, ctx, f.coord.stderr, "job outage (fed-dp-local-sgd) starts", 1)
	time.Sleep(200 * time.Millisecond)
	f.server.kill()
	time.Sleep(10 * time.Second)
	f.server = start(t, ctx, f.dir, "nats-server-2", ns, "-a", "127.0.0.1", "-p", port)
	var r *report
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("no result after the server restart")
	}
	b, _ := os.ReadFile(f.coord.stderr)
	if r == nil || r.Status != "completed" || len(r.Sites) != 3 || len(r.Dropped) != 0 {
		t.Fatalf("after a 10 s NATS outage: %+v\ncoordinator:\n%s", r, tail(string(b), 4000))
	}
	if !strings.Contains(string(b), "lost the connection to the message hub") {
		t.Errorf("the coordinator did not log the outage:\n%s", tail(string(b), 2000))
	}
	for i := range f.workers {
		wb, _ := os.ReadFile(f.workers[i].stderr)
		if strings.Contains(string(wb), "giving up on it") {
			t.Errorf("site-%d gave up its job during the outage:\n%s", i, tail(string(wb), 2000))
		}
	}
	checkLedgers(t, f)
	t.Logf("job completed across a 10 s NATS outage (AUC %.3f)", r.AUC.Mean)
}

// Issue 28, finding 7: a worker killed (kill -9) in the middle of a job
// and restarted only after the coordinator dropped it as silent (2 s)
// never took its job back (0 of 20): the takeover window (1 s) had
// passed. It is readmitted now: the job completes with all three sites,
// none dropped, and the restarted site resumed the job from its saved
// state. The job is long (150 phases, ≈ 13 s at the workers' 60 ms
// update delay) so that it outlives the drop by a wide margin: with 60
// phases (≈ 5 s) a CI run under load once finished the job with two
// sites before the restarted worker was readmitted (kill at 1 s, drop
// at ≈ 3 s, job done at 6.1 s).
func TestWorkerRestartAfterDrop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := newCrashFed(t, ctx)
	done := make(chan *report, 1)
	go func() {
		r, err := submit(t, ctx, &f.federation, "--algo", "fed-dp-pair-sgd", "--epsilon", "0.5", "--delta", "1e-3", "--rounds", "150", "--min-sites", "2", "--job", "back")
		if err != nil {
			t.Errorf("back: %v", err)
		}
		done <- r
	}()
	waitFor(t, ctx, f.coord.stderr, "job back (fed-dp-pair-sgd) starts", 1)
	time.Sleep(time.Second) // a few phases released by every site
	f.workers[1].kill()
	waitFor(t, ctx, f.coord.stderr, "site site-1 silent for", 1)
	f.restartWorker(t, ctx, 1)
	var r *report
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("no result")
	}
	b, _ := os.ReadFile(f.coord.stderr)
	wb, _ := os.ReadFile(f.workers[1].stderr)
	// A kill between a phase's release and the save of its update leaves
	// the site unable to rebuild that phase's state: it refuses the job
	// rather than release the phase again (the designed, safe outcome;
	// the window is a few writes wide, so a loaded machine hits it
	// rarely). The job then completes with the other two sites.
	if r != nil && r.Status == "completed" && len(r.Sites) == 2 && slices.Equal(r.Refused, []string{"site-1"}) &&
		strings.Contains(string(wb), "was released but its update was not saved") {
		t.Logf("site-1 was killed between a release and its save and refused to release again (the safe outcome; the resume path was not exercised this time)")
		checkLedgers(t, f)
		return
	}
	if r == nil || r.Status != "completed" || len(r.Sites) != 3 || len(r.Dropped) != 0 {
		t.Fatalf("site-1 restarted after its drop: %+v\ncoordinator:\n%s", r, tail(string(b), 4000))
	}
	if !strings.Contains(string(b), "site site-1 is back") {
		t.Errorf("the coordinator did not readmit site-1:\n%s", tail(string(b), 3000))
	}
	if !strings.Contains(string(wb), "resumed job back") {
		t.Errorf("site-1 did not resume its job:\n%s", tail(string(wb), 3000))
	}
	checkLedgers(t, f)
}
