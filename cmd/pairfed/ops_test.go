package main

// Issue 28 over the in-process federation (a coordinator and workers as
// `pairfed` commands in this test process, over an embedded NATS server):
// sites of one class, and budgets set while the processes run.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/store"
)

// writeOneClassLIBSVM writes n records of label +1 with d features in
// [−1, 1].
func writeOneClassLIBSVM(t *testing.T, path string, n, d int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for range n {
		b.WriteString("+1")
		for j := range d {
			fmt.Fprintf(&b, " %d:%.6f", j+1, 2*r.Float64()-1)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

type opsFed struct {
	t      *testing.T
	root   string
	schema string
	url    string
	logs   *syncBuffer
	ctx    context.Context
	procs  []*proc
	stopFn context.CancelFunc
}

// startOpsFed starts a coordinator (state root/coord) on a loopback port.
func startOpsFed(t *testing.T, fed string) *opsFed {
	t.Helper()
	f := &opsFed{t: t, root: t.TempDir(), logs: &syncBuffer{}}
	f.schema = filepath.Join(f.root, "s.json")
	os.WriteFile(f.schema, []byte(`{"features": [{"lo": -1, "hi": 1, "count": 4}]}`), 0o644)
	f.ctx, f.stopFn = context.WithCancel(context.Background())
	t.Cleanup(func() {
		f.stopFn()
		for _, p := range f.procs {
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				t.Error("a process did not stop")
			}
		}
		if t.Failed() {
			t.Logf("log:\n%s", f.logs.String())
		}
	})
	coord := startPairfed(f.ctx, f.logs, "coordinator", "--listen", "127.0.0.1:0", "--federation", fed, "--state", filepath.Join(f.root, "coord"),
		"--min-sites", "1", "--tick", "10ms", "--site-timeout", "5s")
	f.procs = append(f.procs, coord)
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool { return urlRE.MatchString(coord.stdout.String()) })
	f.url = urlRE.FindStringSubmatch(coord.stdout.String())[1]
	return f
}

func (f *opsFed) worker(fed, site, data string, extra ...string) *proc {
	args := append([]string{"worker", "--nats", f.url, "--federation", fed, "--site", site, "--data", data,
		"--state", filepath.Join(f.root, "site-"+site), "--feature-bounds", f.schema, "--tick", "10ms", "--heartbeat", "50ms"}, extra...)
	p := startPairfed(f.ctx, f.logs, args...)
	f.procs = append(f.procs, p)
	return p
}

type opsStatus struct {
	Status  string   `json:"status"`
	Reason  string   `json:"reason"`
	Sites   []string `json:"sites"`
	Refused []string `json:"refused"`
}

func (f *opsFed) submit(fed string, args ...string) (opsStatus, int) {
	f.t.Helper()
	p, code := runPairfed(f.t, f.logs, 90*time.Second, append([]string{"job", "submit", "--nats", f.url, "--federation", fed, "--wait", "--json"}, args...)...)
	var st opsStatus
	if err := json.Unmarshal([]byte(p.stdout.String()), &st); err != nil {
		f.t.Fatalf("job submit %v: exit %d, %v: %v\n%s", args, code, p.err, err, p.stdout.String())
	}
	return st, code
}

// A worker with a one-class file: without --single-class it stops at
// once naming the flag; with it, it takes part in fed-dp-lda, and the
// site itself refuses fed-avg and fed-dp-local-sgd (the generic reason),
// which go on with the two other sites.
func TestSingleClassWorkerInFederation(t *testing.T) {
	f := startOpsFed(t, "oc")
	one := filepath.Join(f.root, "one.libsvm")
	writeOneClassLIBSVM(t, one, 60, 4, 1)
	p, code := runPairfed(t, f.logs, 30*time.Second, "worker", "--nats", f.url, "--federation", "oc", "--site", "s0", "--data", one,
		"--state", filepath.Join(f.root, "refused"), "--feature-bounds", f.schema)
	if code == 0 || p.err == nil || !strings.Contains(p.err.Error(), "only one class present") || !strings.Contains(p.err.Error(), "--single-class") {
		t.Fatalf("one-class file without --single-class: exit %d, %v", code, p.err)
	}
	f.worker("oc", "s0", one, "--single-class")
	for i, s := range []string{"s1", "s2"} {
		path := filepath.Join(f.root, s+".libsvm")
		writeLinearLIBSVM(t, path, 60, 4, uint64(i+2))
		f.worker("oc", s, path)
	}
	waitFor(t, 20*time.Second, "three sites to join", func() bool {
		l := f.logs.String()
		return strings.Contains(l, "site s0 joined the federation") && strings.Contains(l, "site s1 joined the federation") && strings.Contains(l, "site s2 joined the federation")
	})
	st, code := f.submit("oc", "--job", "lda", "--algo", "fed-dp-lda", "--epsilon", "1", "--delta", "0.001", "--min-sites", "3")
	if code != 0 || st.Status != "completed" || len(st.Sites) != 3 || len(st.Refused) != 0 {
		t.Fatalf("fed-dp-lda with a one-class site: exit %d, %+v", code, st)
	}
	for _, job := range [][]string{
		{"--job", "avg", "--algo", "fed-avg", "--rounds", "2", "--min-sites", "2"},
		{"--job", "sgd", "--algo", "fed-dp-local-sgd", "--epsilon", "1", "--delta", "0.001", "--min-sites", "2"},
	} {
		st, code := f.submit("oc", job...)
		if code != 0 || st.Status != "completed" || !slices.Equal(st.Refused, []string{"s0"}) || !slices.Equal(st.Sites, []string{"s1", "s2"}) {
			t.Fatalf("%v: exit %d, %+v", job, code, st)
		}
		if !strings.Contains(f.logs.String(), "site s0 refused job "+job[1]+": "+job[3]+" needs both classes at every site") {
			t.Errorf("%s: the site's refusal is not logged", job[3])
		}
	}
	rel, err := store.ReadLedger(filepath.Join(f.root, "site-s0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rel {
		if r.Job != "lda" {
			t.Errorf("s0 released for job %s it refused", r.Job)
		}
	}
}

// Budgets set with `pairfed ledger budget set` while the processes run
// take effect at the next job: lowered below what s0 spent at the site
// (its own state directory) the site refuses the next job; at the
// coordinator it leaves s0 out. And 30 concurrent settings for 30 sites
// all land (before: 8 to 13 of 20).
func TestBudgetSetTakesEffectWhileRunning(t *testing.T) {
	f := startOpsFed(t, "bu")
	for i, s := range []string{"s0", "s1"} {
		path := filepath.Join(f.root, s+".libsvm")
		writeLinearLIBSVM(t, path, 60, 4, uint64(i+2))
		f.worker("bu", s, path)
	}
	waitFor(t, 20*time.Second, "two sites to join", func() bool {
		l := f.logs.String()
		return strings.Contains(l, "site s0 joined the federation") && strings.Contains(l, "site s1 joined the federation")
	})
	job := func(id string) (opsStatus, int) {
		return f.submit("bu", "--job", id, "--algo", "fed-dp-lda", "--epsilon", "0.4", "--delta", "0.001", "--min-sites", "1")
	}
	if st, code := job("j1"); code != 0 || st.Status != "completed" || len(st.Sites) != 2 {
		t.Fatalf("j1: exit %d, %+v", code, st)
	}
	// At the site: budget 0.3 < 0.4 spent.
	out, err := runCLI(t, "ledger", "budget", "set", "--state", filepath.Join(f.root, "site-s0"), "--epsilon", "0.3", "--delta", "0.01")
	if err != nil {
		t.Fatalf("budget set: %v\n%s", err, out)
	}
	st, code := job("j2")
	if code != 0 || st.Status != "completed" || !slices.Equal(st.Sites, []string{"s1"}) || !slices.Equal(st.Refused, []string{"s0"}) {
		t.Fatalf("j2 after lowering s0's budget at the site: exit %d, %+v", code, st)
	}
	if !strings.Contains(f.logs.String(), "site s0 refused job j2: privacy budget exceeded") {
		t.Errorf("s0's refusal not logged")
	}
	// At the coordinator: s1 to 0.5 < 0.8 spent.
	coordDir := filepath.Join(f.root, "coord")
	if out, err := runCLI(t, "ledger", "budget", "set", "--state", coordDir, "--site", "s1", "--epsilon", "0.5", "--delta", "0.01"); err != nil {
		t.Fatalf("budget set: %v\n%s", err, out)
	}
	st, code = job("j3")
	if code != 3 || st.Status != "refused" || !slices.Contains(st.Refused, "s1") {
		t.Fatalf("j3 after lowering s1's budget at the coordinator: exit %d, %+v", code, st)
	}
	// Concurrent settings lose nothing.
	var ps []*proc
	for i := range 30 {
		ps = append(ps, startPairfed(context.Background(), f.logs, "ledger", "budget", "set", "--state", coordDir, "--site", fmt.Sprintf("c%02d", i), "--epsilon", "1", "--delta", "0.01"))
	}
	for i, p := range ps {
		<-p.done
		if p.err != nil {
			t.Errorf("setting %d: %v", i, p.err)
		}
	}
	b, err := store.LoadBudgets(coordDir)
	if err != nil || len(b) != 31 {
		t.Fatalf("%d budgets on disk (want 30 + s1), %v", len(b), err)
	}
}
