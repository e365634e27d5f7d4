//go:build integration

package integration

// Issue 13, Must show 2: hostile input and operator mistakes against real
// processes over Debian's nats-server — a ledger deleted under a running
// worker; two workers with one site name (separate and shared state
// directories); two coordinators on one state directory; one over-budget
// site among three; a job with absurd parameters. After each: no site's
// spend passes its budget, everything a site released is in its ledger
// and charged by the coordinator (checkLedgers), and every process still
// serves the next valid job.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/worker"
)

// runToEnd runs the binary to its end (bounded by ctx) and returns its
// exit status and stderr.
func runToEnd(t *testing.T, ctx context.Context, dir, name string, args ...string) (int, string) {
	t.Helper()
	p := start(t, ctx, dir, name, pairfed(t), args...)
	select {
	case <-p.done:
	case <-ctx.Done():
		t.Fatalf("%s still running", name)
	}
	b, _ := os.ReadFile(p.stderr)
	return p.cmd.ProcessState.ExitCode(), string(b)
}

// spentWithin asserts that no site's ledger passes budget ε.
func spentWithin(t *testing.T, f *crashFed, budget float64) {
	t.Helper()
	for i := range f.workers {
		rel, err := store.ReadLedger(filepath.Join(f.dir, fmt.Sprintf("site-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := worker.Spent(rel); e > budget*(1+1e-9) {
			t.Errorf("site-%d spent ε = %g, over its budget %g", i, e, budget)
		}
	}
}

func dirHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		fmt.Fprintf(h, "%s %x\n", path, sha256.Sum256(b))
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

func privateJob(f *crashFed, id string, eps float64, minSites int) []string {
	return []string{"--federation", "pairfed", "--job", id, "--algo", "fed-dp-local-sgd", "--epsilon", fmt.Sprint(eps), "--delta", "1e-3", "--min-sites", fmt.Sprint(minSites)}
}

func TestHostileLedgerDeletedUnderWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newCrashFed(t, ctx, "--scale", "none", "--budget-epsilon", "1.5", "--budget-delta", "0.1")
	fed := &f.federation
	if r, err := submit(t, ctx, fed, privateJob(f, "before", 0.5, 3)...); err != nil || r.Status != "completed" {
		t.Fatalf("first job: %+v %v", r, err)
	}
	ledger := filepath.Join(f.dir, "site-0", store.LedgerFile)
	backup, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ledger); err != nil {
		t.Fatal(err)
	}
	// The running site cannot record a release any more: it refuses the
	// job in the accept round (its ledger is probed before every job),
	// releases nothing, and the job — short of its quorum of 3 — is
	// refused with the reason.
	r, _ := submit(t, ctx, fed, privateJob(f, "deleted", 0.5, 3)...)
	if r.Status != "refused" || !strings.Contains(r.Reason, "site-0") || !strings.Contains(r.Reason, "cannot be written") {
		t.Fatalf("job over a deleted ledger: %+v", r)
	}
	waitFor(t, ctx, f.workers[0].stderr, "was deleted or replaced while this process had it open", 1)
	// Restarted, the site refuses to start: its saved job states record
	// releases that the (new, empty) ledger lacks.
	f.workers[0].kill()
	code, stderr := runToEnd(t, ctx, f.dir, "site-0-restart", f.workerArg[0]...)
	if code != 1 || !strings.Contains(stderr, "ledger lacks releases") || !strings.Contains(stderr, "job before phases") || !strings.Contains(stderr, "restore it from a backup") {
		t.Fatalf("restart over a lost ledger: exit %d\n%s", code, tail(stderr, 2000))
	}
	// Restored, it serves the next valid job.
	if err := os.WriteFile(ledger, backup, 0o644); err != nil {
		t.Fatal(err)
	}
	f.restartWorker(t, ctx, 0)
	waitForSpent(t, ctx, f.workers[0].stderr, "releases,", 0.5) // the restored ledger: job before
	if r, err := submit(t, ctx, fed, privateJob(f, "after", 0.5, 3)...); err != nil || r.Status != "completed" || len(r.Sites) != 3 {
		t.Fatalf("next job: %+v %v", r, err)
	}
	checkLedgers(t, f)
	spentWithin(t, f, 1.5)
}

func TestHostileTwoWorkersOneSite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newCrashFed(t, ctx, "--scale", "none")
	fed := &f.federation
	// The same site name and data, its own state directory: refused by
	// the coordinator while site-0 is live; it takes part in nothing.
	twinDir := filepath.Join(f.dir, "twin")
	twinArgs := append([]string(nil), f.workerArg[0]...)
	for i, a := range twinArgs {
		if a == "--state" {
			twinArgs[i+1] = twinDir
		}
	}
	twin := start(t, ctx, f.dir, "twin", pairfed(t), twinArgs...)
	waitFor(t, ctx, f.coord.stderr, "refused join of site site-0 from a second process", 1)
	// The same state directory: refused at start.
	code, stderr := runToEnd(t, ctx, f.dir, "twin-shared", f.workerArg[0]...)
	if code != 1 || !strings.Contains(stderr, "is in use by another live process") || !strings.Contains(stderr, "pid") {
		t.Fatalf("second worker on one state dir: exit %d\n%s", code, tail(stderr, 2000))
	}
	if r, err := submit(t, ctx, fed, privateJob(f, "one-site-one-process", 0.5, 3)...); err != nil || r.Status != "completed" || len(r.Sites) != 3 {
		t.Fatalf("job: %+v %v", r, err)
	}
	waitFor(t, ctx, twin.stderr, "not taking part in job one-site-one-process", 1)
	if rel, err := store.ReadLedger(twinDir); err != nil || len(rel) != 0 {
		t.Errorf("the second process released %v (%v)", rel, err)
	}
	checkLedgers(t, f)
}

func TestHostileTwoCoordinators(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newCrashFed(t, ctx, "--scale", "none")
	code, stderr := runToEnd(t, ctx, f.dir, "coordinator-2", f.coordArgs...)
	if code != 1 || !strings.Contains(stderr, "state directory "+filepath.Join(f.dir, "coord")+" is in use by another live process (pid") {
		t.Fatalf("second coordinator: exit %d\n%s", code, tail(stderr, 2000))
	}
	if r, err := submit(t, ctx, &f.federation, privateJob(f, "after-second-coordinator", 0.5, 3)...); err != nil || r.Status != "completed" {
		t.Fatalf("job: %+v %v", r, err)
	}
	checkLedgers(t, f)
}

func TestHostileOverBudgetSiteAmongThree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newCrashFed(t, ctx, "--scale", "none", "--budget-epsilon", "1", "--budget-delta", "0.1")
	// site-2's budget is ε = 0.2.
	f.workers[2].kill()
	f.workerArg[2] = append(f.workerArg[2], "--budget-epsilon", "0.2")
	f.restartWorker(t, ctx, 2)
	waitFor(t, ctx, f.coord.stderr, "joined the federation", 3)
	// The restarted worker records its tighter budget in its state
	// directory's budgets.json at start (before serving).
	waitFor(t, ctx, f.workers[2].stderr, "budget (ε, δ) = (0.2, 0.1) recorded", 1)
	before := map[string]string{}
	for _, d := range []string{"coord", "site-0", "site-1", "site-2"} {
		before[d] = dirHash(t, filepath.Join(f.dir, d))
	}
	// All three needed, site-2 refuses: no one is charged, no site
	// releases anything (the sites' ledgers and the coordinator's charges
	// are unchanged).
	charges := func() string { b, _ := os.ReadFile(filepath.Join(f.dir, "coord", store.ChargesFile)); return string(b) }
	c0 := charges()
	r, _ := submit(t, ctx, &f.federation, privateJob(f, "needs-three", 0.5, 3)...)
	if r.Status != "refused" || len(r.Refused) != 1 || r.Refused[0] != "site-2" || !strings.Contains(r.Reason, "privacy budget exceeded") {
		t.Fatalf("job: %+v", r)
	}
	for _, d := range []string{"site-0", "site-1", "site-2"} {
		if h := dirHash(t, filepath.Join(f.dir, d)); h != before[d] {
			t.Errorf("%s's state changed for a refused job", d)
		}
	}
	if c := charges(); c != c0 {
		t.Errorf("the coordinator charged a refused job:\n%s", strings.TrimPrefix(c, c0))
	}
	// Two needed: site-0 and site-1 run it; site-2 refuses and is not
	// charged.
	r, err := submit(t, ctx, &f.federation, privateJob(f, "needs-two", 0.5, 2)...)
	if err != nil || r.Status != "completed" || len(r.Sites) != 2 || strings.Contains(charges(), `"site":"site-2"`) {
		t.Fatalf("job: %+v %v\n%s", r, err, charges())
	}
	checkLedgers(t, f)
	spentWithin(t, f, 1)
}

// A job whose phase computes for seconds (fed-avg with 1000 local passes
// over 20 000 records) while the coordinator gives up after ~1 s: the
// sites abandon the phase at once (nothing released) and serve the next
// job; absurd values never leave the client or pass a site's decoder.
func TestHostileAbsurdJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var files []string
	// 200 000 records per site: 1000 local passes must outlast the
	// coordinator's 4 × 300 ms of waiting by far on any machine (the
	// specialized sgd-prev loop runs ~5·10⁷ pair steps/s; this phase is
	// 2·10⁸ steps).
	for s := 0; s < 2; s++ {
		var b strings.Builder
		for i := 0; i < 200000; i++ {
			y := 2*rng.IntN(2) - 1
			fmt.Fprintf(&b, "%+d", y)
			for k := 1; k <= 10; k++ {
				fmt.Fprintf(&b, " %d:%.3f", k, rng.Float64()/4+0.05*float64(y))
			}
			b.WriteByte('\n')
		}
		p := filepath.Join(dir, fmt.Sprintf("big-%d.libsvm", s))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	url, _ := natsServer(t, ctx, dir)
	coord := start(t, ctx, dir, "coordinator", pairfed(t), "coordinator", "--nats", url, "--state", filepath.Join(dir, "coord"), "--min-sites", "2",
		"--phase-timeout", "300ms", "--site-timeout", "3s", "--tick", "20ms")
	var sites []*proc
	for i, p := range files {
		name := fmt.Sprintf("site-%d", i)
		sites = append(sites, start(t, ctx, dir, name, pairfed(t), "worker", "--nats", url, "--site", name, "--data", p, "--state", filepath.Join(dir, name),
			"--heartbeat", "200ms", "--tick", "20ms", "--scale", "minmax"))
	}
	waitFor(t, ctx, coord.stderr, "joined the federation", 2)
	fed := &federation{dir: dir, url: url}
	// Refused by the client: the absurd values of the issue.
	for _, args := range [][]string{{"--algo", "fed-dp-local-sgd", "--epsilon", "1e308"}, {"--algo", "fed-avg", "--eta", "1e308", "--param-radius", "1e308"}, {"--algo", "fed-avg", "--local-passes", "1e12"}} {
		code, stderr := runToEnd(t, ctx, dir, "absurd", append([]string{"job", "submit", "--nats", url, "--min-sites", "2"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "outside") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	// The longest phase a spec may ask: abandoned when the coordinator
	// gives up.
	began := time.Now()
	r, _ := submit(t, ctx, fed, "--job", "long", "--algo", "fed-avg", "--rounds", "1", "--local-passes", "1000", "--min-sites", "2")
	if r.Status != "failed" {
		t.Fatalf("long job: %+v", r)
	}
	for _, s := range sites {
		waitFor(t, ctx, s.stderr, "abandoning its running phase", 1)
	}
	r, err := submit(t, ctx, fed, "--job", "next", "--algo", "fed-avg", "--rounds", "2", "--min-sites", "2")
	if err != nil || r.Status != "completed" || len(r.Sites) != 2 {
		t.Fatalf("next job: %+v %v", r, err)
	}
	t.Logf("long job failed and the next completed %.1f s after submission", time.Since(began).Seconds())
	for _, s := range sites {
		select {
		case <-s.done:
			t.Errorf("%s exited", s.name)
		default:
		}
	}
}
