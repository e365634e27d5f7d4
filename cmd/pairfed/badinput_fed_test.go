package main

// The bad-input corpus of issue 13 (hostile input and operator mistakes),
// classes 2–7: job specs that would kill or wedge every site, signals,
// state directories with two owners or a forgetful ledger, jobs refused by
// one site, unclear errors and an unauthenticated --listen. Unlike
// badinput_test.go every case runs `pairfed` as a real child process (the
// binary built once from this package), so that each case is bounded by a
// timeout, its peak memory is measured (the child's max RSS, against
// fedMemCeiling) and signals are real signals. Each case asserts the exit
// status, the words of the error and that every state directory is byte
// for byte unchanged (hashTree), except where a case says what may change.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"
)

// fedMemCeiling is the peak RSS no case may exceed: the corpus's data
// files hold 40 records of 3 features, so anything near this is a bug
// (the binary itself starts at ≈ 30 MiB).
const fedMemCeiling = 256 << 20

var (
	childOnce sync.Once
	childBin  string
	childErr  error
)

// childPairfed builds this package once into a temporary binary.
func childPairfed(t *testing.T) string {
	t.Helper()
	childOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pairfed-badinput-")
		if err != nil {
			childErr = err
			return
		}
		childBin = filepath.Join(dir, "pairfed")
		if out, err := exec.Command("go", "build", "-o", childBin, ".").CombinedOutput(); err != nil {
			childErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if childErr != nil {
		t.Fatal(childErr)
	}
	return childBin
}

// child is one run of the binary.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
	code           int
	maxRSS         int64 // bytes
}

func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(childPairfed(t), args...), done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := c.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.code = ee.ExitCode()
		}
		if ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			c.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		}
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait waits for the child's end, at most timeout (then it is killed and
// the case fails: a hang).
func (c *child) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		c.cmd.Process.Kill()
		<-c.done
		t.Errorf("pairfed %s: still running after %v (killed)", strings.Join(c.cmd.Args[1:], " "), timeout)
	}
	// A child's ru_maxrss starts at the test process's own resident size
	// when it is forked (Linux keeps the high-water mark across the
	// exec), so a peak at or below the parent's says nothing about the
	// child: only a peak above both the parent's and the ceiling is the
	// child's own (a race-built test process passes 256 MiB on its own).
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err == nil && c.maxRSS > fedMemCeiling && c.maxRSS > self.Maxrss*1024 {
		t.Errorf("pairfed %s: max RSS %d MiB over the ceiling of %d MiB", strings.Join(c.cmd.Args[1:], " "), c.maxRSS>>20, fedMemCeiling>>20)
	}
}

// logLine waits until the child's stderr contains s.
func (c *child) logLine(t *testing.T, timeout time.Duration, s string) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("%q in the log", s), func() bool { return strings.Contains(c.stderr.String(), s) })
}

// fedCase is one entry of the corpus.
type fedCase struct {
	name string
	args []string
	code int
	err  []string // words stderr must contain
	// before runs first (e.g. writes a bad state file into a scratch
	// directory); after checks more than the exit status.
	before func(t *testing.T)
	after  func(t *testing.T, c *child)
	// changes lists state directories the case may change (by name).
	changes []string
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goodRelease is one valid line of a site's ledger.
const goodRelease = `{"job":"old-job","phase":1,"records":40,"sigma":2.5,"epsilon":0.8,"delta":0.001,"secure":true}`

// goodCharge is one valid line of a coordinator's ledger.
const goodCharge = `{"key":"old/a/0","site":"a","job":"old","phase":0,"algorithm":"fed-dpegd","mechanism":"gaussian","records":40,"epsilon":0.5,"delta":0.001,"private":true,"accountant":"x","time":"2026-01-01T00:00:00Z"}`

func TestBadInputFederation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	childPairfed(t)
	bad := func(name string) string { return filepath.Join("testdata", "bad", name) }
	siteA, siteB := bad("site-a.libsvm"), bad("site-b.libsvm")
	root := t.TempDir()
	coordDir, dirA, dirB := filepath.Join(root, "coord"), filepath.Join(root, "site-a"), filepath.Join(root, "site-b")
	scratch := filepath.Join(root, "scratch") // bad state files, rebuilt per case
	for _, dir := range []string{dirA, dirB} {
		l, _, _, err := store.OpenLedger(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(worker.Release{Job: "old-job", Phase: 1, Records: 40, Sigma: 2.5, Epsilon: 0.8, Delta: 1e-3, Secure: true}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}

	// The federation "hostile": a coordinator and sites a, b, whose
	// ledgers hold ε = 0.8 of their budget ε = 1.
	coord := startChild(t, "coordinator", "--listen", "127.0.0.1:0", "--federation", "hostile", "--state", coordDir, "--min-sites", "2",
		"--tick", "10ms", "--phase-timeout", "1s", "--site-timeout", "2s")
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool { return urlRE.MatchString(coord.stdout.String()) })
	url := urlRE.FindStringSubmatch(coord.stdout.String())[1]
	workers := map[string]*child{}
	for _, s := range []struct{ site, data, dir string }{{"a", siteA, dirA}, {"b", siteB, dirB}} {
		workers[s.site] = startChild(t, "worker", "--nats", url, "--federation", "hostile", "--site", s.site, "--data", s.data, "--state", s.dir,
			"--budget-epsilon", "1", "--budget-delta", "0.01", "--scale", "none", "--tick", "10ms", "--heartbeat", "100ms")
	}
	coord.logLine(t, 15*time.Second, "site a joined the federation")
	coord.logLine(t, 15*time.Second, "site b joined the federation")

	states := map[string]string{"coordinator": coordDir, "site a": dirA, "site b": dirB, "scratch": scratch}
	snapshot := func() map[string]map[string]string {
		out := map[string]map[string]string{}
		for name, dir := range states {
			if _, err := os.Stat(dir); err == nil {
				out[name] = hashTree(t, dir)
			}
		}
		return out
	}
	submit := func(args ...string) []string {
		return append([]string{"job", "submit", "--nats", url, "--federation", "hostile", "--wait", "--json", "--timeout", "20s"}, args...)
	}
	resetScratch := func(t *testing.T, files map[string]string) {
		t.Helper()
		if err := os.RemoveAll(scratch); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			writeFile(t, filepath.Join(scratch, name), content)
		}
	}
	scratchWorker := func(args ...string) []string {
		return append([]string{"worker", "--nats", url, "--federation", "scratch", "--site", "s", "--data", siteA, "--state", scratch, "--tick", "10ms"}, args...)
	}
	scratchCoord := func(args ...string) []string {
		return append([]string{"coordinator", "--listen", "127.0.0.1:0", "--federation", "scratch", "--state", scratch, "--tick", "10ms"}, args...)
	}
	siteFiles := func(ledger string) map[string]string {
		return map[string]string{store.LedgerFile: ledger, "site": "s\n"}
	}
	coordFiles := func(name, content string) map[string]string {
		return map[string]string{name: content}
	}

	// A port held by this test (class 6: --listen on a port in use).
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	var cases []fedCase
	add := func(c ...fedCase) { cases = append(cases, c...) }

	// Class 2: job specs that would kill or wedge every site are refused
	// by the client before anything is sent (exit 2), naming the value,
	// the range and the flag.
	add(
		fedCase{name: "ε = 1e308", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "1e308"), code: 2, err: []string{"epsilon = 1e+308", "outside", "--epsilon"}},
		fedCase{name: "η = B = 1e308", args: submit("--algo", "fed-avg", "--eta", "1e308", "--param-radius", "1e308"), code: 2, err: []string{"eta = 1e+308", "--eta"}},
		fedCase{name: "local passes 1e12", args: submit("--algo", "fed-avg", "--local-passes", "1e12"), code: 2, err: []string{"local_passes = 1e+12", "[1e-06, 1000]", "--local-passes"}},
		fedCase{name: "local passes 1001", args: submit("--algo", "fed-avg", "--local-passes", "1001"), code: 2, err: []string{"local_passes = 1001", "--local-passes"}},
		fedCase{name: "B = 1e308 alone", args: submit("--algo", "fed-avg", "--param-radius", "1e308"), code: 2, err: []string{"param_radius = 1e+308", "--param-radius"}},
		fedCase{name: "λ = 1e300", args: submit("--algo", "fed-avg", "--lambda", "1e300"), code: 2, err: []string{"lambda = 1e+300", "--lambda"}},
		fedCase{name: "R = 1e-300", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "1", "--radius", "1e-300"), code: 2, err: []string{"feature_radius = 1e-300", "--radius"}},
		fedCase{name: "η = 1e-300 (σ would underflow)", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "1", "--eta", "1e-300"), code: 2, err: []string{"eta = 1e-300", "[1e-06, 1e+06]"}},
		fedCase{name: "ε = 1e-300", args: submit("--algo", "fed-dpegd", "--epsilon", "1e-300"), code: 2, err: []string{"epsilon = 1e-300", "outside"}},
		fedCase{name: "ε = 1e10", args: submit("--algo", "fed-dp-gd-grad", "--epsilon", "1e10"), code: 2, err: []string{"epsilon = 1e+10", "--epsilon"}},
		fedCase{name: "subnormal δ", args: submit("--algo", "fed-dpegd", "--epsilon", "1", "--delta", "1e-320"), code: 2, err: []string{"subnormal"}},
		fedCase{name: "η = -Inf", args: submit("--algo", "fed-avg", "--eta", "-Inf"), code: 2, err: []string{"eta = -Inf", "not finite"}},
		fedCase{name: "rounds 70000", args: submit("--algo", "fed-avg", "--rounds", "70000"), code: 2, err: []string{"rounds 70000", "65536"}},
		fedCase{name: "fed-oneshot ε = 1e308", args: submit("--algo", "fed-oneshot", "--local-algo", "dpegd", "--epsilon", "1e308"), code: 2, err: []string{"epsilon = 1e+308"}},
		fedCase{name: "simulate ε = 1e308", args: []string{"simulate", "--data", siteA, "--sites", "2", "--algo", "fed-dp-local-sgd", "--epsilon", "1e308"}, code: 2, err: []string{"ε = 1e+308", "accepted range"}},
		fedCase{name: "simulate local passes 1e12", args: []string{"simulate", "--data", siteA, "--sites", "2", "--algo", "fed-avg", "--local-passes", "1e12"}, code: 2, err: []string{"local_passes = 1e+12"}},
	)

	// Class 4: one live owner per state directory; strict journals; a
	// ledger that lost releases its saved jobs record.
	add(
		fedCase{name: "second coordinator on a live state dir", args: []string{"coordinator", "--listen", "127.0.0.1:0", "--state", coordDir}, code: 1,
			err: []string{"state directory " + coordDir + " is in use by another live process", "pid", "coordinator", "own --state"}},
		fedCase{name: "second worker with the same site and dir", args: []string{"worker", "--nats", url, "--federation", "hostile", "--site", "a", "--data", siteA, "--state", dirA, "--scale", "none"}, code: 1,
			err: []string{"in use by another live process", "worker a"}},
		fedCase{name: "another site on a live site's dir", args: []string{"worker", "--nats", url, "--federation", "hostile", "--site", "c", "--data", siteA, "--state", dirA}, code: 1,
			err: []string{"in use by another live process"}},
		fedCase{name: "ledger line with trailing data", before: func(t *testing.T) { resetScratch(t, siteFiles(goodRelease+` {"job":"x"}`+"\n")) }, args: scratchWorker(), code: 1,
			err: []string{"ledger.jsonl:1", "trailing data"}},
		fedCase{name: "ledger line with trailing garbage", before: func(t *testing.T) { resetScratch(t, siteFiles(goodRelease+"xyz\n")) }, args: scratchWorker(), code: 1,
			err: []string{"ledger.jsonl:1", "trailing data"}},
		fedCase{name: "ledger with negative ε", before: func(t *testing.T) {
			resetScratch(t, siteFiles(goodRelease+"\n"+strings.Replace(goodRelease, `"epsilon":0.8`, `"epsilon":-0.5`, 1)+"\n"))
		}, args: scratchWorker(), code: 1, err: []string{"ledger.jsonl:2", "epsilon -0.5", "hide spending"}},
		fedCase{name: "ledger with an unknown field", before: func(t *testing.T) {
			resetScratch(t, siteFiles(strings.Replace(goodRelease, `"secure":true`, `"secure":true,"refund":1`, 1)+"\n"))
		}, args: scratchWorker(), code: 1, err: []string{"ledger.jsonl:1", `unknown field "refund"`}},
		fedCase{name: "ledger with ε = 1e999", before: func(t *testing.T) {
			resetScratch(t, siteFiles(strings.Replace(goodRelease, `"epsilon":0.8`, `"epsilon":1e999`, 1)+"\n"))
		}, args: scratchWorker(), code: 1, err: []string{"ledger.jsonl:1"}},
		fedCase{name: "ledger with phase 0", before: func(t *testing.T) {
			resetScratch(t, siteFiles(strings.Replace(goodRelease, `"phase":1`, `"phase":0`, 1)+"\n"))
		}, args: scratchWorker(), code: 1, err: []string{"ledger.jsonl:1", "phase 0 outside"}},
		fedCase{name: "ledger with δ = 1", before: func(t *testing.T) {
			resetScratch(t, siteFiles(strings.Replace(goodRelease, `"delta":0.001`, `"delta":1`, 1)+"\n"))
		}, args: scratchWorker(), code: 1, err: []string{"ledger.jsonl:1", "delta 1 outside [0, 1)"}},
		fedCase{name: "ledger with a bad job name", before: func(t *testing.T) {
			resetScratch(t, siteFiles(strings.Replace(goodRelease, `"job":"old-job"`, `"job":"../etc"`, 1)+"\n"))
		}, args: scratchWorker(), code: 1, err: []string{"ledger.jsonl:1", "job"}},
		fedCase{name: "ledger deleted, saved job remains", before: func(t *testing.T) {
			st := worker.JobState{Announce: &protocol.JobAnnounce{Job: "lost", Algo: "fed-dpegd", Task: "auc", Loss: "logistic", Params: 3, Phases: 2,
				Eta: 0.1, ParamRadius: 1, FeatureRadius: 1, Epsilon: 0.9, Delta: 1e-3, Sites: []string{"s"}},
				Sent: map[int]*protocol.SiteUpdate{1: {Job: "lost", Phase: 1, Site: "s", Model: []float64{0, 0, 0}, Weight: 20, Sigma: 1, Epsilon: 0.9, Delta: 1e-3, Secure: true}}}
			b, _ := json.Marshal(st)
			resetScratch(t, map[string]string{"site": "s\n", store.LedgerFile: "", "site-jobs/lost.json": string(b) + "\n"})
		}, args: scratchWorker(), code: 1, err: []string{"ledger lacks releases", "job lost phases [1]", "restore it from a backup"}},
		fedCase{name: "ledger show of a bad ledger", before: func(t *testing.T) { resetScratch(t, siteFiles(goodRelease+"{}\n")) },
			args: []string{"ledger", "show", "--state", scratch}, code: 1, err: []string{"ledger.jsonl:1", "trailing data"}},
		// Probe 4 (issue 28): a torn last line was skipped without a word.
		fedCase{name: "ledger show of a ledger with a torn last line", before: func(t *testing.T) { resetScratch(t, siteFiles(goodRelease+"\n"+goodRelease[:30])) },
			args: []string{"ledger", "show", "--state", scratch}, code: 0, err: []string{"note:", "ledger.jsonl ends with a torn last line of 30 bytes", "not counted"}},
		fedCase{name: "charges deleted, finished private job remains", before: func(t *testing.T) {
			st := &protocol.JobStatus{Job: "done", Status: protocol.StatusCompleted, Algo: "fed-dpegd", Phases: 2, Sites: []string{"a"}, Model: []float64{1, 2, 3},
				Privacy: []protocol.SiteReport{{Site: "a", Records: 40, Epsilon: 0.5, Delta: 1e-3, Sigmas: []float64{2, 3}, Secure: true}}}
			b, _ := json.Marshal(st)
			resetScratch(t, map[string]string{"jobs/done.json": string(b), store.ChargesFile: ""})
		}, args: scratchCoord(), code: 1, err: []string{"ledger lacks the reservations", "done/a/0", "restore it from a backup"}},
		fedCase{name: "charges with trailing data", before: func(t *testing.T) { resetScratch(t, coordFiles(store.ChargesFile, goodCharge+"[]\n")) },
			args: scratchCoord(), code: 1, err: []string{"charges.jsonl:1", "trailing data"}},
		fedCase{name: "charges with a forged key", before: func(t *testing.T) {
			resetScratch(t, coordFiles(store.ChargesFile, strings.Replace(goodCharge, `"old/a/0"`, `"old/b/0"`, 1)+"\n"))
		}, args: scratchCoord(), code: 1, err: []string{"charges.jsonl:1", `charge key "old/b/0" is not "old/a/0"`}},
		fedCase{name: "charges with negative ε", before: func(t *testing.T) {
			resetScratch(t, coordFiles(store.ChargesFile, strings.Replace(goodCharge, `"epsilon":0.5`, `"epsilon":-0.5`, 1)+"\n"))
		}, args: scratchCoord(), code: 1, err: []string{"charges.jsonl:1", "epsilon -0.5"}},
		fedCase{name: "charges with a negative σ", before: func(t *testing.T) {
			resetScratch(t, coordFiles(store.ChargesFile, strings.Replace(goodCharge, `"records":40`, `"records":40,"sigma":-1`, 1)+"\n"))
		}, args: scratchCoord(), code: 1, err: []string{"charges.jsonl:1", "sigma or sensitivity -1"}},
		fedCase{name: "budgets with trailing data", before: func(t *testing.T) {
			resetScratch(t, coordFiles(store.BudgetsFile, `{"a":{"epsilon":1,"delta":0.1}} {}`))
		},
			args: scratchCoord(), code: 1, err: []string{"budgets.json", "trailing data"}},
		fedCase{name: "budgets with negative ε", before: func(t *testing.T) { resetScratch(t, coordFiles(store.BudgetsFile, `{"a":{"epsilon":-1,"delta":0.1}}`)) },
			args: scratchCoord(), code: 1, err: []string{"budgets.json", "site a", "budget ε = -1"}},
		fedCase{name: "checkpoint with trailing data", before: func(t *testing.T) { resetScratch(t, coordFiles(store.CheckpointFile, `{"version":1} x`)) },
			args: scratchCoord(), code: 1, err: []string{"checkpoint.json", "trailing data"}},
		fedCase{name: "checkpoint with an unknown field", before: func(t *testing.T) { resetScratch(t, coordFiles(store.CheckpointFile, `{"version":1,"owner":"eve"}`)) },
			args: scratchCoord(), code: 1, err: []string{"checkpoint.json", `unknown field "owner"`}},
		fedCase{name: "checkpoint of another version", before: func(t *testing.T) { resetScratch(t, coordFiles(store.CheckpointFile, `{"version":7}`)) },
			args: scratchCoord(), code: 1, err: []string{"checkpoint version 7"}},
	)

	// Class 6: errors that name the problem, the value and the fix, and
	// change no state.
	typo := filepath.Join(root, "TYPO")
	add(
		fedCase{name: "--listen on a port in use", args: []string{"coordinator", "--listen", fmt.Sprintf("127.0.0.1:%d", busyPort), "--state", filepath.Join(root, "never")}, code: 1,
			err: []string{fmt.Sprintf("--listen 127.0.0.1:%d: cannot listen", busyPort), "address already in use", "another port"},
			after: func(t *testing.T, _ *child) {
				if _, err := os.Stat(filepath.Join(root, "never")); err == nil {
					t.Error("the state directory was created")
				}
			}},
		fedCase{name: "ledger budget set --state TYPO", args: []string{"ledger", "budget", "set", "--state", typo, "--site", "a", "--epsilon", "1", "--delta", "0.01"}, code: 2,
			err: []string{`no such state directory "` + typo + `"`},
			after: func(t *testing.T, _ *child) {
				if _, err := os.Stat(typo); err == nil {
					t.Error("ledger budget set created the directory")
				}
			}},
		fedCase{name: "audit --trials 1e9 (memory before allocation)", args: []string{"audit", "--algo", "dp-local-sgd", "--epsilon", "1", "--trials", "1000000000"}, code: 1,
			err: []string{"1000000000 trials exceeds the 1000000 allowed", "--trials ≤ 1000000"}},
		fedCase{name: "ledger budget set ε < 0", args: []string{"ledger", "budget", "set", "--state", coordDir, "--site", "a", "--epsilon", "-1", "--delta", "0.01"}, code: 2,
			err: []string{"budget ε = -1"}},
		fedCase{name: "worker ledger line with a torn JSON object mid-file", before: func(t *testing.T) { resetScratch(t, siteFiles(`{"job":"x",`+"\n"+goodRelease+"\n")) },
			args: scratchWorker(), code: 1, err: []string{"ledger.jsonl:1"}},
	)

	// Class 7: --listen beyond loopback needs --insecure (plaintext) and
	// then requires a token.
	add(
		fedCase{name: "--listen 0.0.0.0 without --insecure", args: []string{"coordinator", "--listen", "0.0.0.0:0", "--state", filepath.Join(root, "never")}, code: 2,
			err: []string{"plaintext", "--insecure"}},
		fedCase{name: "--listen with --nkey", args: []string{"coordinator", "--listen", "127.0.0.1:0", "--nkey", "x", "--state", filepath.Join(root, "never")}, code: 2,
			err: []string{"--nkey applies to --nats"}},
	)

	// Probe 4 (issue 28): the model artefact's files. A FIFO named as an
	// input once blocked the open past SIGTERM; an output path naming an
	// input or a file of a state directory was overwritten.
	files := filepath.Join(root, "files")
	modelFile, dataCopy, fifo := filepath.Join(files, "m.json"), filepath.Join(files, "data.libsvm"), filepath.Join(root, "fifo") // not in files: hashTree would block on it
	if b, err := os.ReadFile(siteA); err != nil {
		t.Fatal(err)
	} else {
		writeFile(t, dataCopy, string(b))
	}
	if p := startChild(t, "train", "--data", dataCopy, "--out-model", modelFile); true {
		p.wait(t, 30*time.Second)
		if p.code != 0 {
			t.Fatalf("train --out-model: %s", p.stderr.String())
		}
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	filesBefore := hashTree(t, files)
	unchangedFiles := func(t *testing.T, _ *child) {
		if after := hashTree(t, files); !maps.Equal(filesBefore, after) {
			t.Errorf("the model's and the data's files changed:\nbefore %v\nafter  %v", filesBefore, after)
		}
	}
	add(
		fedCase{name: "score --model FIFO", args: []string{"score", "--model", fifo, "--data", dataCopy}, code: 1,
			err: []string{"--model " + fifo + " is a named pipe (FIFO), not a regular file"}, after: unchangedFiles},
		fedCase{name: "card --eval FIFO", args: []string{"card", "--model", modelFile, "--eval", fifo, "--out", filepath.Join(root, "card")}, code: 1,
			err: []string{"--eval " + fifo + " is a named pipe (FIFO)"}, after: unchangedFiles},
		// Probe 4: a file of another layout failed in the loader without
		// saying what the model reads.
		fedCase{name: "score a LIBSVM model on a CSV file", args: []string{"score", "--model", modelFile, "--data", filepath.Join("testdata", "bad", "dim3.csv")}, code: 1,
			err: []string{`bad label "a,b,c,label"`, "the model reads its data as libsvm records of the model's d = 3 features"}, after: unchangedFiles},
		fedCase{name: "score a LIBSVM index beyond the model's d", before: func(t *testing.T) { writeFile(t, filepath.Join(root, "d10.libsvm"), "1 1:0.5 10:1\n-1 1:0.2\n") },
			args: []string{"score", "--model", modelFile, "--data", filepath.Join(root, "d10.libsvm")}, code: 1,
			err: []string{"feature index 10 exceeds", "the model's d = 3 features (feature indices 1 to 3)"}, after: unchangedFiles},
		fedCase{name: "evaluate a file with a label the model does not know warns", before: func(t *testing.T) {
			writeFile(t, filepath.Join(root, "c3.libsvm"), "1 1:0.5 2:0.1\n-1 1:0.2 3:0.4\n1 2:0.9\n-1 3:0.1\n7 1:0.3\n")
		}, args: []string{"evaluate", "--model", modelFile, "--data", filepath.Join(root, "c3.libsvm")}, code: 0,
			err: []string{"warning:", "c3.libsvm has 3 distinct labels", `every other label counts as negative`, `"7" (1 records)`}, after: unchangedFiles},
		fedCase{name: "score --out = --data", args: []string{"score", "--model", modelFile, "--data", dataCopy, "--out", dataCopy}, code: 2,
			err: []string{"--out " + dataCopy + " is the --data file", "give another path"}, after: unchangedFiles},
		fedCase{name: "score --out = --model", args: []string{"score", "--model", modelFile, "--data", dataCopy, "--out", modelFile}, code: 2,
			err: []string{"is the --model file"}, after: unchangedFiles},
		fedCase{name: "export --out = --model", args: []string{"export", "--model", modelFile, "--out", modelFile}, code: 2,
			err: []string{"is the --model file"}, after: unchangedFiles},
		fedCase{name: "train --out-model = --data", args: []string{"train", "--data", dataCopy, "--out-model", dataCopy}, code: 2,
			err: []string{"--out-model " + dataCopy + " is the --data file"}, after: unchangedFiles},
		fedCase{name: "train --out-model into a coordinator's jobs/", args: []string{"train", "--data", dataCopy, "--out-model", filepath.Join(coordDir, "jobs", "old.model.json")}, code: 2,
			err: []string{"inside the state directory " + coordDir, "write it elsewhere"}},
		fedCase{name: "export --out a directory", args: []string{"export", "--model", modelFile, "--out", files}, code: 2,
			err: []string{"--out " + files + " is a directory"}, after: unchangedFiles},
		fedCase{name: "report --out a site's state", args: []string{"report", "--job", "old", "--state", coordDir, "--out", dirA}, code: 2,
			err: []string{"inside the state directory " + dirA}},
		fedCase{name: "simulate --scale bounds with --feature-bounds (was refused as lacking the schema)", before: func(t *testing.T) {
			writeFile(t, filepath.Join(root, "schema3.json"), `{"version":1,"name":"three","source":"test","features":[`+
				`{"name":"a","lo":-1,"hi":1,"source":"test"},{"name":"b","lo":-1,"hi":1,"source":"test"},{"name":"c","lo":-1,"hi":1,"source":"test"}]}`)
		}, args: []string{"simulate", "--data", siteA, "--sites", "2", "--transport", "mem", "--algo", "fed-dpegd", "--epsilon", "1", "--noise-seed", "1",
			"--feature-bounds", filepath.Join(root, "schema3.json"), "--scale", "bounds"}, code: 0,
			after: func(t *testing.T, c *child) {
				if !strings.Contains(c.stdout.String(), "fed-dpegd") {
					t.Errorf("no result table:\n%s", c.stdout.String())
				}
			}},
		fedCase{name: "ledger budget set for another site in a site's directory", args: []string{"ledger", "budget", "set", "--state", dirA, "--site", "b", "--epsilon", "5", "--delta", "0.01"}, code: 2,
			err: []string{"--site b, but " + dirA + " is the state directory of site a", "enforced nowhere", "give --site a"}},
		fedCase{name: "simulate --partition single-class with fed-avg warns", args: []string{"simulate", "--data", siteA, "--sites", "2", "--transport", "mem", "--partition", "single-class", "--noise-seed", "5"}, code: 0,
			err: []string{"warning: --partition single-class with fed-avg", "cannot learn from sites that hold one class", "fed-dp-ssp"},
			after: func(t *testing.T, c *child) {
				for _, w := range []string{"note: --partition single-class with fed-avg", "note: --noise-seed 5: fed-avg is not private and adds no privacy noise"} {
					if !strings.Contains(c.stdout.String(), w) {
						t.Errorf("stdout does not say %q:\n%s", w, c.stdout.String())
					}
				}
			}},
		fedCase{name: "worker ledger replaced without a newline", before: func(t *testing.T) { resetScratch(t, siteFiles("bm90IGEgbGVkZ2Vy"+goodRelease)) },
			args: scratchWorker(), code: 1, err: []string{"ledger.jsonl ends with", "not the beginning of one entry", "restore it from a backup"}},
	)

	n := 0
	for _, c := range cases {
		n++
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before(t)
			}
			before := snapshot()
			p := startChild(t, c.args...)
			p.wait(t, 30*time.Second)
			if p.code != c.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", p.code, c.code, p.stdout.String(), fedTail(p.stderr.String(), 3000))
			}
			for _, w := range c.err {
				if !strings.Contains(p.stderr.String(), w) {
					t.Errorf("stderr does not say %q:\n%s", w, fedTail(p.stderr.String(), 3000))
				}
			}
			after := snapshot()
			for name := range states {
				if !maps.Equal(before[name], after[name]) && !fedContains(c.changes, name) {
					t.Errorf("state of %s changed:\nbefore %v\nafter  %v", name, before[name], after[name])
				}
			}
			if c.after != nil {
				c.after(t, p)
			}
		})
	}

	// Messages a hostile peer sends on the bus: logged and dropped, no
	// state changes, every process still up.
	nc, err := transport.Connect(url, "pairfed-hostile-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	coordSubjA, sitesSubj, jobsSubj := protocol.SiteToCoordSubject("hostile", "a"), protocol.SitesSubject("hostile"), protocol.JobsSubject("hostile")
	announce := &protocol.JobAnnounce{Job: "evil", Algo: "fed-dp-local-sgd", Task: "auc", Loss: "logistic", Params: 3, Phases: 2, Eta: 0.1, ParamRadius: 1,
		FeatureRadius: 1, Epsilon: 1e308, Delta: 1e-3, Sites: []string{"a", "b"}}
	messages := []struct {
		name, subject string
		data          []byte
		who           *child
		log           string
	}{
		{"announce with ε = 1e308 to the sites", sitesSubj, encodeRaw(t, announce, protocol.Version), workers["a"], "dropped message on " + sitesSubj + ": protocol: epsilon = 1e+308 outside"},
		{"announce with local passes 1e12", sitesSubj, encodeRaw(t, &protocol.JobAnnounce{Job: "evil2", Algo: "fed-avg", Task: "auc", Loss: "hinge", Params: 3, Phases: 1,
			LocalPasses: 1e12, Eta: 1, ParamRadius: 1, FeatureRadius: 1, Sites: []string{"a", "b"}}, protocol.Version), workers["b"], "local_passes = 1e+12 outside"},
		{"submit with ε = 1e308 past the client", jobsSubj, encodeRaw(t, &protocol.JobSubmit{Job: "raw-e", Client: "c", Algo: "fed-dp-local-sgd", MinSites: 2, Epsilon: 1e308}, protocol.Version),
			coord, "epsilon = 1e+308 outside"},
		{"an update for a job never announced", coordSubjA, encodeRaw(t, &protocol.SiteUpdate{Job: "ghost", Phase: 1, Site: "a", Model: []float64{1, 2, 3}, Weight: 1}, protocol.Version),
			coord, "ignored update of a for job ghost phase 1: no job is running"},
		{"an accept for a job never announced", coordSubjA, encodeRaw(t, &protocol.Accept{Job: "ghost", Site: "a"}, protocol.Version), coord, "ignored accept of job ghost by a"},
		{"site a accepting for site b", coordSubjA, encodeRaw(t, &protocol.Accept{Job: "ghost", Site: "b"}, protocol.Version), coord, "accept on " + coordSubjA + " claims to come from"},
		{"a second process joins as site a", coordSubjA, encodeRaw(t, &protocol.Join{Site: "a", Records: 40, Dim: 3, Instance: "i-impostor"}, protocol.Version), coord,
			"refused join of site a from a second process (instance i-impostor)"},
	}
	for _, m := range messages {
		n++
		t.Run("message/"+m.name, func(t *testing.T) {
			before := snapshot()
			if err := nc.Publish(m.subject, m.data); err != nil {
				t.Fatal(err)
			}
			m.who.logLine(t, 10*time.Second, m.log)
			if after := snapshot(); !fedMapsEqualAll(before, after) {
				t.Errorf("state changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}

	// Class 5: a job one site refuses (b's budget is exhausted by ε = 0.5)
	// charges no one: neither ledger changes, and no site releases.
	n++
	t.Run("a refused job charges no one", func(t *testing.T) {
		before := snapshot()
		ran := func() int {
			return strings.Count(workers["a"].stderr.String(), "joined job") + strings.Count(workers["b"].stderr.String(), "joined job")
		}
		ranBefore := ran()
		p := startChild(t, submit("--algo", "fed-dp-local-sgd", "--epsilon", "0.5", "--delta", "0.001", "--min-sites", "2")...)
		p.wait(t, 30*time.Second)
		if p.code != 3 || !strings.Contains(p.stdout.String(), `"status": "refused"`) || !strings.Contains(p.stdout.String(), "privacy budget exceeded") {
			t.Fatalf("exit %d, want 3 (refused)\n%s\n%s", p.code, p.stdout.String(), p.stderr.String())
		}
		after := snapshot()
		for _, name := range []string{"site a", "site b"} {
			if !maps.Equal(before[name], after[name]) {
				t.Errorf("%s's state changed", name)
			}
		}
		if before["coordinator"][store.ChargesFile] != after["coordinator"][store.ChargesFile] {
			b, _ := os.ReadFile(filepath.Join(coordDir, store.ChargesFile))
			t.Errorf("the coordinator charged a refused job:\n%s", b)
		}
		if ran() != ranBefore {
			t.Error("a site took part in a refused job")
		}
	})

	// Class 3: Ctrl-C (SIGINT) and SIGTERM stop long commands within a
	// second, leaving state consistent.
	signals := []struct {
		name string
		args []string
		sig  syscall.Signal
		code int
		// state: a directory that must decode afterwards
		state string
	}{
		{"train --runs 1e8, SIGINT", []string{"train", "--data", siteA, "--runs", "100000000"}, syscall.SIGINT, 1, ""},
		{"train --runs 1e8, SIGTERM", []string{"train", "--data", siteA, "--runs", "100000000", "--json"}, syscall.SIGTERM, 1, ""},
		{"train --folds, SIGINT", []string{"train", "--data", siteA, "--folds", "2", "--runs", "100000000"}, syscall.SIGINT, 1, ""},
		{"simulate --runs 1e6, SIGINT", []string{"simulate", "--data", siteA, "--sites", "2", "--transport", "mem", "--runs", "1000000"}, syscall.SIGINT, 1, ""},
		{"sweep, SIGTERM", []string{"experiment", "sweep", "--data", siteA, "--algos", "sgd-prev,dp-local-sgd", "--epsilons", "0.5,1", "--runs", "100000", "--out", filepath.Join(root, "sweep")}, syscall.SIGTERM, 1, ""},
		{"audit --trials 1e6, SIGINT", []string{"audit", "--algo", "dp-local-sgd", "--epsilon", "1", "--trials", "1000000"}, syscall.SIGINT, 1, ""},
		{"coordinator, SIGTERM", scratchCoord(), syscall.SIGTERM, 0, scratch},
		{"worker, SIGINT", scratchWorker(), syscall.SIGINT, 0, scratch},
	}
	for _, s := range signals {
		n++
		t.Run("signal/"+s.name, func(t *testing.T) {
			if s.state != "" {
				resetScratch(t, map[string]string{})
				if strings.HasPrefix(s.name, "worker") {
					resetScratch(t, siteFiles(goodRelease+"\n"))
				}
			}
			p := startChild(t, s.args...)
			// Let it get into its loop (or serve) first.
			time.Sleep(700 * time.Millisecond)
			select {
			case <-p.done:
				t.Fatalf("ended before the signal (exit %d):\n%s", p.code, fedTail(p.stderr.String(), 2000))
			default:
			}
			sent := time.Now()
			if err := p.cmd.Process.Signal(s.sig); err != nil {
				t.Fatal(err)
			}
			p.wait(t, 10*time.Second)
			if took := time.Since(sent); took > time.Second {
				t.Errorf("stopped %v after the signal, want ≤ 1 s", took)
			}
			if p.code != s.code {
				t.Errorf("exit status %d, want %d:\n%s", p.code, s.code, fedTail(p.stderr.String(), 2000))
			}
			if s.code != 0 && !strings.Contains(p.stderr.String(), "interrupted") {
				t.Errorf("stderr does not say it was interrupted:\n%s", fedTail(p.stderr.String(), 2000))
			}
			if s.state != "" {
				if _, err := store.ReadLedger(s.state); err != nil {
					t.Errorf("ledger after the signal: %v", err)
				}
				if _, err := store.ReadCharges(s.state); err != nil {
					t.Errorf("charges after the signal: %v", err)
				}
				if _, err := store.LoadCheckpoint(s.state); err != nil {
					t.Errorf("checkpoint after the signal: %v", err)
				}
			}
		})
	}

	// Class 7: --listen beyond loopback (with --insecure) requires a token,
	// generated into the state directory (mode 0600) and said where.
	n++
	t.Run("listen beyond loopback requires a token", func(t *testing.T) {
		resetScratch(t, map[string]string{})
		p := startChild(t, "coordinator", "--listen", "0.0.0.0:0", "--insecure", "--federation", "tok", "--state", scratch, "--tick", "10ms")
		waitFor(t, 15*time.Second, "the URL", func() bool { return urlRE.MatchString(p.stdout.String()) })
		if !strings.Contains(p.stdout.String(), "clients must present a token (stored in "+filepath.Join(scratch, "listen-token")) {
			t.Errorf("stdout does not say where the token is:\n%s", p.stdout.String())
		}
		fi, err := os.Stat(filepath.Join(scratch, "listen-token"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("token file: %v %v", fi, err)
		}
		tok, _ := os.ReadFile(filepath.Join(scratch, "listen-token"))
		port := strings.TrimPrefix(urlRE.FindStringSubmatch(p.stdout.String())[1], "nats://0.0.0.0:")
		if _, err := nats.Connect("nats://127.0.0.1:"+port, nats.Timeout(2*time.Second)); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("a client without the token connected: %v", err)
		}
		nc, err := nats.Connect("nats://127.0.0.1:"+port, nats.Token(strings.TrimSpace(string(tok))), nats.Timeout(2*time.Second))
		if err != nil {
			t.Fatalf("with the token: %v", err)
		}
		nc.Close()
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t, 10*time.Second)
	})

	// Issue 28 (probe 4, row 151): a loopback --listen admitted any local
	// process as any site. With --site-logins each site has its own
	// login (STATE/logins/NAME, 0600) and may use only its own subjects:
	// no login is refused, site a's login cannot speak for site b nor read
	// b's messages, and a worker with its login joins.
	n++
	t.Run("listen with a login per site", func(t *testing.T) {
		resetScratch(t, map[string]string{})
		p := startChild(t, scratchCoord("--site-logins", "s,t")...)
		waitFor(t, 15*time.Second, "the URL", func() bool { return urlRE.MatchString(p.stdout.String()) })
		// The login line follows the URL in a write of its own: wait for
		// it too (checking at once raced with it on a loaded CI run).
		waitFor(t, 15*time.Second, "how to log in on stdout", func() bool { return strings.Contains(p.stdout.String(), "clients must log in") })
		pw := map[string]string{}
		for _, name := range []string{"s", "t", "client"} {
			f := filepath.Join(scratch, "logins", name)
			fi, err := os.Stat(f)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("login file %s: %v %v", f, fi, err)
			}
			b, _ := os.ReadFile(f)
			pw[name] = strings.TrimSpace(string(b))
		}
		port := strings.TrimPrefix(urlRE.FindStringSubmatch(p.stdout.String())[1], "nats://127.0.0.1:")
		addr := "nats://127.0.0.1:" + port
		if _, err := nats.Connect(addr, nats.Timeout(2*time.Second)); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("a client without a login connected: %v", err)
		}
		if _, err := nats.Connect(addr, nats.UserInfo("s", pw["t"]), nats.Timeout(2*time.Second)); err == nil {
			t.Errorf("site s connected with t's password")
		}
		denied := make(chan string, 4)
		nc, err := nats.Connect(addr, nats.UserInfo("s", pw["s"]), nats.Timeout(2*time.Second),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err.Error() }))
		if err != nil {
			t.Fatalf("site s with its login: %v", err)
		}
		defer nc.Close()
		nc.Publish(protocol.SiteToCoordSubject("scratch", "t"), []byte("x"))   // speak for t
		nc.Subscribe(protocol.SiteSubject("scratch", "t"), func(*nats.Msg) {}) // read t's messages
		nc.Flush()
		for k := 0; k < 2; k++ {
			select {
			case e := <-denied:
				if !strings.Contains(strings.ToLower(e), "permissions violation") {
					t.Errorf("site s: %s, want a permissions violation", e)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("site s published or subscribed on site t's subjects without a permissions violation (%d of 2 seen)", k)
			}
		}
		w := startChild(t, "worker", "--nats", "nats://s:"+pw["s"]+"@127.0.0.1:"+port, "--federation", "scratch", "--site", "s",
			"--data", siteA, "--state", filepath.Join(root, "login-site-s"), "--scale", "none", "--tick", "10ms", "--heartbeat", "100ms")
		p.logLine(t, 15*time.Second, "site s joined the federation")
		// Job clients: the client login submits; a site's login cannot
		// (its publication on the jobs subject is refused), and the error
		// does not print the password in the URL.
		j := startChild(t, "job", "submit", "--nats", "nats://client:"+pw["client"]+"@127.0.0.1:"+port, "--federation", "scratch",
			"--algo", "fed-avg", "--min-sites", "1", "--rounds", "2", "--wait", "--json", "--timeout", "30s")
		j.wait(t, 40*time.Second)
		if j.code != 0 || !strings.Contains(j.stdout.String(), `"status": "completed"`) {
			t.Errorf("a job from the client login: exit %d\n%s\n%s", j.code, j.stdout.String(), j.stderr.String())
		}
		js := startChild(t, "job", "submit", "--nats", "nats://s:"+pw["s"]+"@127.0.0.1:"+port, "--federation", "scratch",
			"--algo", "fed-avg", "--min-sites", "1", "--wait", "--timeout", "2s")
		js.wait(t, 20*time.Second)
		if js.code == 0 || !strings.Contains(js.stderr.String(), "Permissions Violation for Publish") {
			t.Errorf("a job submitted with site s's login: exit %d\n%s", js.code, js.stderr.String())
		}
		// Probe 5: the refusal names the client login (it was "no answer
		// from a coordinator" after the whole --timeout), and a worker
		// given another site's login or the client login stops, naming
		// its own (it ran on, never taking part).
		if !strings.Contains(js.stderr.String(), "job commands log in as client") || strings.Contains(js.stderr.String(), "no answer") {
			t.Errorf("a job submitted with site s's login does not name the client login:\n%s", js.stderr.String())
		}
		for login, site := range map[string]string{"s": "t", "client": "t"} {
			wl := startChild(t, "worker", "--nats", "nats://"+login+":"+pw[login]+"@127.0.0.1:"+port, "--federation", "scratch", "--site", site,
				"--data", siteA, "--state", filepath.Join(root, "login-"+login+"-as-"+site), "--scale", "none", "--tick", "10ms", "--heartbeat", "100ms")
			wl.wait(t, 20*time.Second)
			if wl.code == 0 || !strings.Contains(wl.stderr.String(), "is not site "+site+"'s") || strings.Contains(wl.stderr.String(), pw[login]) {
				t.Errorf("worker %s with the %s login: exit %d\n%s", site, login, wl.code, fedTail(wl.stderr.String(), 2000))
			}
		}
		for name, c := range map[string]*child{"worker": w, "coordinator": p, "job client": j, "refused job client": js} {
			if strings.Contains(c.stderr.String(), pw["s"]) || strings.Contains(c.stdout.String(), pw["s"]) || strings.Contains(c.stderr.String(), pw["client"]) {
				t.Errorf("the %s printed a password:\n%s", name, c.stderr.String())
			}
		}
		w.cmd.Process.Signal(syscall.SIGTERM)
		w.wait(t, 10*time.Second)
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t, 10*time.Second)
	})

	// Every process still serves the next valid job.
	n++
	t.Run("the federation still serves a valid job", func(t *testing.T) {
		p := startChild(t, submit("--algo", "fed-dp-local-sgd", "--epsilon", "0.1", "--delta", "0.001", "--min-sites", "2")...)
		p.wait(t, 30*time.Second)
		if p.code != 0 || !strings.Contains(p.stdout.String(), `"status": "completed"`) {
			t.Fatalf("exit %d\n%s\n%s", p.code, p.stdout.String(), p.stderr.String())
		}
		for name, w := range map[string]*child{"coordinator": coord, "a": workers["a"], "b": workers["b"]} {
			select {
			case <-w.done:
				t.Errorf("%s exited: %s", name, fedTail(w.stderr.String(), 2000))
			default:
			}
		}
		// No site's spend passes its budget, and each site's ledger and the
		// coordinator's agree on what was released.
		for _, dir := range []string{dirA, dirB} {
			rels, err := store.ReadLedger(dir)
			if err != nil {
				t.Fatal(err)
			}
			if e, d := worker.Spent(rels); e > 1+1e-9 || d > 0.01 {
				t.Errorf("%s spent (%g, %g) of (1, 0.01)", dir, e, d)
			}
		}
	})
	if n < 45 {
		t.Errorf("%d cases, want ≥ 45", n)
	}
	t.Logf("%d hostile-input cases", n)
}

func fedMapsEqualAll(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !maps.Equal(a[k], b[k]) {
			return false
		}
	}
	return true
}

func fedContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fedTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
