package main

// The bad-input corpus of issue 5 (Must show 3): files, flags, job specs
// and protocol messages that every entry point must reject with an error
// naming the problem, the right exit status (2: command-line misuse,
// 1: bad data or a failed job, 3: a job refused by its sites) and without
// touching any state directory — the running coordinator's, its two
// sites' privacy ledgers, and those of a coordinator and a site that are
// started with the bad input.
//
// Everything runs in this process: `pairfed coordinator --listen` (its own
// embedded NATS server), two `pairfed worker`s with privacy budgets whose
// ledgers already hold ε = 0.8 of their ε = 1, and every case through
// newApp().RunContext; the test reads what the coordinator and workers log.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"
	"github.com/urfave/cli/v2"
	"github.com/vmihailenco/msgpack/v5"
)

// syncBuffer is a bytes.Buffer safe for concurrent writers and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is one in-process run of the CLI.
type proc struct {
	stdout, stderr syncBuffer
	done           chan struct{}
	err            error
}

// cliStart serializes the start of in-process CLI runs: urfave/cli's
// global help flag is written while a command line is parsed.
var cliStart sync.Mutex

// startPairfed runs `pairfed args...` in a goroutine with its own stdout
// and stderr; stderr is also copied to logs, which thus receives every
// line the coordinators and workers log (the app's Before hook points the
// process-wide slog logger at the ErrWriter of the app that ran last). It
// returns once the command's action started (or the run ended).
func startPairfed(ctx context.Context, logs io.Writer, args ...string) *proc {
	p := &proc{done: make(chan struct{})}
	app := newApp()
	app.Writer, app.ErrWriter = &p.stdout, io.MultiWriter(&p.stderr, logs)
	app.ExitErrHandler = func(*cli.Context, error) {} // cli.Exit must not end the test binary
	started := make(chan struct{})
	var once sync.Once
	var wrap func(cmds []*cli.Command)
	wrap = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			wrap(cmd.Subcommands)
			if action := cmd.Action; action != nil {
				cmd.Action = func(c *cli.Context) error {
					once.Do(func() { close(started) })
					return action(c)
				}
			}
		}
	}
	wrap(app.Commands)
	cliStart.Lock()
	defer cliStart.Unlock()
	go func() {
		defer close(p.done)
		p.err = app.RunContext(ctx, append([]string{"pairfed"}, args...))
	}()
	select {
	case <-started:
	case <-p.done:
	}
	return p
}

// runPairfed runs `pairfed args...` to its end (at most timeout; a command
// still running then is cancelled and reported as having accepted its
// input) and returns it with its exit status.
func runPairfed(t *testing.T, logs io.Writer, timeout time.Duration, args ...string) (p *proc, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	p = startPairfed(ctx, logs, args...)
	<-p.done
	if ctx.Err() != nil {
		t.Errorf("pairfed %s: still running after %v (input accepted)", strings.Join(args, " "), timeout)
	}
	if p.err != nil {
		code = exitCode(p.err)
	}
	return p, code
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hashTree returns the SHA-256 of every file under dir, by relative path
// (directories are listed too, so that a new empty directory counts).
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel+"/"] = "dir"
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// encodeRaw is protocol.Encode without its validation and with any
// version: the wire form of a message a faulty or hostile peer sends.
func encodeRaw(t *testing.T, m protocol.Message, version uint16) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteByte(byte(m.Kind()))
	enc := msgpack.NewEncoder(&buf)
	if err := enc.EncodeArrayLen(2); err != nil {
		t.Fatal(err)
	}
	if err := enc.EncodeUint16(version); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var remainingRE = regexp.MustCompile(`remaining \(([-+0-9.eE]+), ([-+0-9.eE]+)\)`)

// badCase is one entry of the corpus run through the CLI.
type badCase struct {
	name string
	args []string
	code int      // exit status; 0: the command must run to its end
	err  []string // words the error (printed as "pairfed: <err>") must contain
	out  []string // words of the job's status and reason (job submit --json)
	warn []string // words stderr must contain (warnings of runs that go on)
	// records: the job spec reaches the running coordinator, which
	// records the job's status (its checkpoint and jobs/ directory); its
	// ledger and every site's state still must not change.
	records bool
	// remaining: the (ε, δ) the refusal must say remain.
	remaining []float64
	// refused: the job reaches the sites, which refuse it. The running
	// coordinator's ledger then holds the job's reservation for them (by
	// design, coordinator.Charge: it cannot prove that a site released
	// nothing, so it over-counts); the sites' own ledgers are exact and
	// must not change.
	refused bool
}

func TestBadInputCorpus(t *testing.T) {
	bad := func(name string) string { return filepath.Join("testdata", "bad", name) }
	siteA, siteB := bad("site-a.libsvm"), bad("site-b.libsvm")

	var logs syncBuffer // what the coordinators and workers log
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*proc
	defer func() {
		cancel()
		for _, p := range procs {
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				t.Error("a coordinator or worker did not stop")
			}
		}
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	}()
	start := func(args ...string) *proc {
		p := startPairfed(ctx, &logs, args...)
		procs = append(procs, p)
		return p
	}
	logged := func(s string) func() bool { return func() bool { return strings.Contains(logs.String(), s) } }

	// State directories. The sites' ledgers hold ε = 0.8, δ = 1e-3 of an
	// earlier job; their budgets are (1, 0.01).
	root := t.TempDir()
	coordDir, dirA, dirB := filepath.Join(root, "coord"), filepath.Join(root, "site-a"), filepath.Join(root, "site-b")
	scratchCoord, scratchSite := filepath.Join(root, "scratch-coord"), filepath.Join(root, "scratch-site")
	for _, dir := range []string{dirA, dirB, scratchSite} {
		l, _, _, err := store.OpenLedger(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(worker.Release{Job: "old-job", Phase: 1, Records: 40, Sigma: 2.5, Epsilon: 0.8, Delta: 1e-3, Secure: true}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}

	// The federation "bad": a coordinator (quorum 2) and sites a, b.
	coord := start("coordinator", "--listen", "127.0.0.1:0", "--federation", "bad", "--state", coordDir, "--min-sites", "2", "--tick", "10ms")
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool { return urlRE.MatchString(coord.stdout.String()) })
	url := urlRE.FindStringSubmatch(coord.stdout.String())[1]
	for _, s := range []struct{ site, data, dir string }{{"a", siteA, dirA}, {"b", siteB, dirB}} {
		start("worker", "--nats", url, "--federation", "bad", "--site", s.site, "--data", s.data, "--state", s.dir,
			"--budget-epsilon", "1", "--budget-delta", "0.01", "--scale", "none", "--tick", "10ms", "--heartbeat", "50ms")
	}
	waitFor(t, 15*time.Second, "sites a and b to join", func() bool {
		return logged("site a joined the federation")() && logged("site b joined the federation")()
	})

	// The scratch directories of a coordinator and a site started with bad
	// input below: each is used once with good input first, so that they
	// hold what a real deployment's do (a bad restart must not touch it).
	{
		wctx, wcancel := context.WithCancel(ctx)
		c := startPairfed(wctx, &logs, "coordinator", "--listen", "127.0.0.1:0", "--federation", "scratch", "--state", scratchCoord, "--tick", "10ms")
		w := startPairfed(wctx, &logs, "worker", "--nats", url, "--federation", "scratch", "--site", "s", "--data", siteA, "--state", scratchSite, "--tick", "10ms")
		waitFor(t, 15*time.Second, "the scratch coordinator and site to start", func() bool {
			return strings.Contains(c.stdout.String(), "listening on") && logged("worker s: n = 40")()
		})
		wcancel()
		<-c.done
		<-w.done
		if c.err != nil || w.err != nil {
			t.Fatalf("scratch coordinator: %v; scratch site: %v", c.err, w.err)
		}
	}

	states := map[string]string{"coordinator": coordDir, "site a": dirA, "site b": dirB, "scratch coordinator": scratchCoord, "scratch site": scratchSite}
	snapshot := func() map[string]map[string]string {
		out := map[string]map[string]string{}
		for name, dir := range states {
			out[name] = hashTree(t, dir)
		}
		return out
	}
	initial := snapshot()
	if len(initial["site a"]) < 2 || len(initial["coordinator"]) < 2 {
		t.Fatalf("state directories not populated: %v", initial)
	}
	// unchanged asserts that no state directory changed since before,
	// except, with records, the running coordinator's record of job
	// statuses, and with reserved, the running coordinator's state.
	unchanged := func(t *testing.T, before map[string]map[string]string, records, reserved bool) {
		t.Helper()
		after := snapshot()
		for name := range states {
			if reserved && name == "coordinator" {
				continue
			}
			b, a := before[name], after[name]
			if records && name == "coordinator" {
				status := func(path, _ string) bool { return path == "checkpoint.json" || strings.HasPrefix(path, "jobs/") }
				b, a = maps.Clone(b), maps.Clone(a)
				maps.DeleteFunc(b, status)
				maps.DeleteFunc(a, status)
			}
			if !maps.Equal(b, a) {
				var changed []string
				for path, h := range a {
					if b[path] != h && !strings.HasSuffix(path, "/") {
						content, _ := os.ReadFile(filepath.Join(states[name], path))
						changed = append(changed, fmt.Sprintf("%s:\n%.2000s", path, content))
					}
				}
				t.Errorf("state of %s changed:\nbefore %v\nafter  %v\n%s", name, before[name], after[name], strings.Join(changed, "\n"))
			}
		}
	}

	// 1. Files, flags and job specs through the CLI.
	dpTrain := []string{"train", "--data", siteA, "--algo", "dpegd", "--loss", "logistic"}
	workerArgs := func(args ...string) []string {
		return append([]string{"worker", "--nats", url, "--federation", "scratch", "--site", "s", "--state", scratchSite, "--tick", "10ms"}, args...)
	}
	coordArgs := func(args ...string) []string {
		return append([]string{"coordinator", "--federation", "scratch", "--state", scratchCoord, "--tick", "10ms"}, args...)
	}
	submit := func(args ...string) []string {
		return append([]string{"job", "submit", "--nats", url, "--federation", "bad", "--wait", "--json", "--timeout", "30s"}, args...)
	}
	cases := []badCase{
		// Malformed files, one per format, and bad values: file:line:col and the problem.
		{name: "LIBSVM bad token", args: []string{"train", "--data", bad("bad-token.libsvm")}, code: 1, err: []string{"bad-token.libsvm:2:12", `bad feature value "abc"`}},
		{name: "CSV ragged row", args: []string{"train", "--data", bad("ragged.csv")}, code: 1, err: []string{"ragged.csv:4:3", "record has 2 fields, want 3"}},
		{name: "ARFF missing @data", args: []string{"train", "--data", bad("no-data.arff")}, code: 1, err: []string{"no-data.arff:5:1", "before @data", "no @data line"}},
		{name: "NaN feature", args: []string{"train", "--data", bad("nan.libsvm")}, code: 1, err: []string{"nan.libsvm:2:6", "non-finite", "NaN"}},
		{name: "Inf feature", args: []string{"train", "--data", bad("inf.csv")}, code: 1, err: []string{"inf.csv:3:2", "non-finite", "-Inf", `column 2 "b"`}},
		{name: "NaN label", args: []string{"train", "--data", bad("nan-label.libsvm")}, code: 1, err: []string{"nan-label.libsvm:2:1", "non-finite label"}},
		{name: "missing value", args: []string{"train", "--data", bad("missing.csv")}, code: 1, err: []string{"missing.csv:3:2", "missing value", "--impute"}},
		{name: "test file of another dimension", args: []string{"train", "--data", bad("dim2.csv"), "--test", bad("dim3.csv")}, code: 1,
			err: []string{"dimension mismatch", "dim2.csv has 2 features", "dim3.csv has 3"}},
		{name: "three classes without --positive-classes", args: []string{"train", "--data", bad("three-classes.libsvm")}, code: 1,
			err: []string{"three-classes.libsvm", "3 classes", "--positive-classes"}},
		{name: "single class", args: []string{"train", "--data", bad("one-class.libsvm")}, code: 1, err: []string{"one-class.libsvm:1:1", "only one class", "need both classes"}},
		{name: "empty file", args: []string{"train", "--data", bad("empty.libsvm")}, code: 1, err: []string{"empty.libsvm:1:1", "no records"}},
		{name: "truncated gzip", args: []string{"train", "--data", bad("truncated.libsvm.gz")}, code: 1, err: []string{"truncated.libsvm.gz:", "corrupt or truncated gzip stream"}},
		{name: "zip archive (binary)", args: []string{"train", "--data", bad("archive.zip")}, code: 1, err: []string{"archive.zip:1:6", "binary content", "not a LIBSVM, CSV or ARFF"}},
		{name: "missing file", args: []string{"train", "--data", bad("no-such-file")}, code: 1, err: []string{"no-such-file", "no such file"}},

		// Command-line misuse: exit status 2, before any file is read.
		{name: "--data not given", args: []string{"train"}, code: 2, err: []string{"required flag --data"}},
		{name: "unparsable --epsilon", args: append(dpTrain, "--epsilon", "one"), code: 2, err: []string{`"one"`, "epsilon"}},
		{name: "unknown --format", args: []string{"train", "--data", siteA, "--format", "xml"}, code: 2, err: []string{`unknown format "xml"`}},
		{name: "unknown --impute", args: []string{"train", "--data", siteA, "--impute", "guess"}, code: 2, err: []string{`unknown impute mode "guess"`}},
		{name: "unknown --scale", args: []string{"train", "--data", siteA, "--scale", "log"}, code: 2, err: []string{`unknown scaling "log"`}},
		{name: "--folds 1", args: []string{"train", "--data", siteA, "--folds", "1"}, code: 2, err: []string{"folds (1)", "0 or ≥ 2"}},
		{name: "--runs 0", args: []string{"train", "--data", siteA, "--runs", "0"}, code: 2, err: []string{"--runs 0"}},
		{name: "unknown algorithm", args: []string{"train", "--data", siteA, "--algo", "sgd-magic"}, code: 2, err: []string{`unknown algorithm "sgd-magic"`}},
		{name: "ε = 0", args: append(dpTrain, "--epsilon", "0"), code: 2, err: []string{"--epsilon = 0", "accepted range [1e-06, 10000]"}},
		{name: "ε < 0", args: append(dpTrain, "--epsilon", "-1"), code: 2, err: []string{"--epsilon = -1", "accepted range"}},
		{name: "ε NaN", args: append(dpTrain, "--epsilon", "NaN"), code: 2, err: []string{"--epsilon = NaN", "accepted range"}},
		{name: "ε +Inf", args: append(dpTrain, "--epsilon", "Inf"), code: 2, err: []string{"--epsilon = +Inf", "accepted range"}},
		// Absurd ε and noise scales: once an endless analytic-Gaussian
		// search that ignored signals (1e-300) or a panic in the noise
		// granularity check (1e-150, --noise-scale 1e-300).
		{name: "ε = 1e-300, default algorithm", args: []string{"train", "--data", siteA, "--epsilon", "1e-300"}, code: 2, err: []string{"--epsilon = 1e-300", "accepted range"}},
		{name: "ε = 1e-300, dpegd", args: []string{"train", "--data", siteA, "--algo", "dpegd", "--loss", "logistic", "--epsilon", "1e-300"}, code: 2, err: []string{"--epsilon = 1e-300", "accepted range"}},
		{name: "ε = 1e-150, dp-ssp", args: []string{"train", "--data", siteA, "--algo", "dp-ssp", "--epsilon", "1e-150"}, code: 2, err: []string{"--epsilon = 1e-150", "accepted range"}},
		{name: "ε = 1e5", args: append(dpTrain[:len(dpTrain):len(dpTrain)], "--epsilon", "1e5"), code: 2, err: []string{"--epsilon = 100000", "accepted range"}},
		{name: "--noise-scale 1e-300", args: append(dpTrain[:len(dpTrain):len(dpTrain)], "--epsilon", "1", "--noise-scale", "1e-300"), code: 2, err: []string{"--noise-scale = 1e-300", "accepted range"}},
		{name: "simulate ε = 1e-300, default algorithm", args: []string{"simulate", "--data", siteA, "--sites", "2", "--epsilon", "1e-300"}, code: 2, err: []string{"--epsilon = 1e-300", "accepted range"}},
		{name: "δ = 1", args: append(dpTrain, "--epsilon", "1", "--delta", "1"), code: 2, err: []string{"--delta = 1", "[0, 1)"}},
		{name: "δ < 0", args: append(dpTrain, "--epsilon", "1", "--delta", "-0.1"), code: 2, err: []string{"--delta = -0.1", "[0, 1)"}},
		{name: "δ NaN", args: append(dpTrain, "--epsilon", "1", "--delta", "NaN"), code: 2, err: []string{"--delta = NaN"}},
		{name: "--epsilon for a non-private algorithm", args: []string{"train", "--data", siteA, "--algo", "sgd-prev", "--epsilon", "1"}, code: 2, err: []string{"sgd-prev is not private"}},
		{name: "dpgdsc with the hinge loss", args: []string{"train", "--data", siteA, "--algo", "dpgdsc", "--loss", "hinge", "--lambda", "0.1", "--epsilon", "1"}, code: 2,
			err: []string{"dpgdsc", "logistic/square loss only, not hinge"}},
		{name: "dpgdsc without strong convexity", args: []string{"train", "--data", siteA, "--algo", "dpgdsc", "--loss", "logistic", "--epsilon", "1"}, code: 2,
			err: []string{"strongly convex", "--lambda > 0"}},
		{name: "private, radius 0", args: append(dpTrain, "--epsilon", "1", "--radius", "0"), code: 2, err: []string{"--radius R > 0"}},
		{name: "radius < 0", args: []string{"train", "--data", siteA, "--radius", "-1"}, code: 2, err: []string{"radius = -1", "≥ 0"}},
		// δ ≥ 1/n for a run called private: refused, naming the value, the bound and the fix.
		{name: "train δ ≥ 1/n refused", args: append(dpTrain, "--epsilon", "1", "--delta", "0.5"), code: 2,
			err: []string{"--delta 0.5", "1/n = 0.0312", "n = 32", "1/(10·n)"}},
		// δ > 1/(10·n): a warning on stderr, and the run goes on.
		{name: "train δ > 1/(10·n) warns", args: append(dpTrain, "--epsilon", "1", "--delta", "0.1", "--noise-seed", "1"), code: 0,
			warn: []string{"warning", "δ = 0.1 exceeds 1/(10·n)", "n = 32"}},

		// simulate: the same checks, and the per-site δ > 1/(10·n) warning.
		{name: "simulate ε NaN", args: []string{"simulate", "--data", siteA, "--sites", "2", "--algo", "fed-dpegd", "--epsilon", "NaN"}, code: 2, err: []string{"ε = NaN", "accepted range"}},
		{name: "simulate δ = 1", args: []string{"simulate", "--data", siteA, "--sites", "2", "--algo", "fed-dpegd", "--epsilon", "1", "--delta", "1"}, code: 2, err: []string{"δ = 1", "[0, 1)"}},
		{name: "simulate radius 0", args: []string{"simulate", "--data", siteA, "--sites", "2", "--algo", "fed-dpegd", "--epsilon", "1", "--radius", "0"}, code: 2, err: []string{"--radius 0", "> 0"}},
		{name: "simulate unknown algorithm", args: []string{"simulate", "--data", siteA, "--algo", "fed-magic"}, code: 2, err: []string{`unknown federated algorithm "fed-magic"`}},
		{name: "simulate fed-oneshot dpgdsc hinge", args: []string{"simulate", "--data", siteA, "--algo", "fed-oneshot", "--local-algo", "dpgdsc", "--loss", "hinge", "--lambda", "0.1", "--epsilon", "1"}, code: 2,
			err: []string{"dpgdsc", "not hinge"}},
		{name: "simulate 0 sites", args: []string{"simulate", "--data", siteA, "--sites", "0"}, code: 2, err: []string{"sites 0"}},
		{name: "simulate NaN file", args: []string{"simulate", "--data", bad("nan.libsvm")}, code: 1, err: []string{"nan.libsvm:2:6", "NaN"}},
		{name: "simulate δ > 1/(10·n) warns", args: []string{"simulate", "--data", siteA, "--sites", "2", "--transport", "mem", "--algo", "fed-dpegd", "--epsilon", "1", "--delta", "0.2", "--noise-seed", "1", "--scale", "none"}, code: 0,
			warn: []string{"warning: site-0: δ = 0.2 exceeds 1/(10·n)", "site-1"}},

		// A site started with a bad file or budget exits before it joins,
		// and its ledger is untouched.
		{name: "worker NaN file", args: workerArgs("--data", bad("nan.libsvm")), code: 1, err: []string{"nan.libsvm:2:6", "NaN"}},
		{name: "worker three classes", args: workerArgs("--data", bad("three-classes.libsvm")), code: 1, err: []string{"3 classes", "--positive-classes"}},
		{name: "worker truncated gzip", args: workerArgs("--data", bad("truncated.libsvm.gz")), code: 1, err: []string{"corrupt or truncated gzip stream"}},
		{name: "worker budget ε < 0", args: workerArgs("--data", siteA, "--budget-epsilon", "-1"), code: 2, err: []string{"budget", "-1", "≥ 0"}},
		{name: "worker budget ε = inf", args: workerArgs("--data", siteA, "--budget-epsilon", "inf"), code: 2, err: []string{"--budget-epsilon = +Inf is no budget: leave the flag out for no ε cap"}},
		{name: "worker budget δ NaN", args: workerArgs("--data", siteA, "--budget-delta", "NaN"), code: 2, err: []string{"budget", "NaN"}},
		{name: "worker unknown --format", args: workerArgs("--data", siteA, "--format", "parquet"), code: 2, err: []string{`unknown format "parquet"`}},
		{name: "worker unknown --scale", args: workerArgs("--data", siteA, "--scale", "log"), code: 2, err: []string{`unknown scaling "log"`}},

		// A coordinator started with bad flags or a bad test file.
		{name: "coordinator --listen and --nats", args: coordArgs("--listen", "127.0.0.1:0", "--nats", url), code: 2, err: []string{"exactly one of --listen"}},
		{name: "coordinator bad port", args: coordArgs("--listen", "127.0.0.1:99999"), code: 2, err: []string{"bad port"}},
		{name: "coordinator --min-sites 0", args: coordArgs("--listen", "127.0.0.1:0", "--min-sites", "0"), code: 2, err: []string{"--min-sites 0"}},
		{name: "worker bad site name", args: append(workerArgs("--data", siteA)[:0:0], "worker", "--nats", url, "--site", "a.b", "--state", scratchSite, "--data", siteA), code: 2, err: []string{"site", "a.b"}},
		{name: "coordinator --tick 1ns", args: coordArgs("--listen", "127.0.0.1:0", "--tick", "1ns"), code: 2, err: []string{"--tick 1ns", "[1ms, 10s]"}},
		{name: "worker --tick 1ns", args: workerArgs("--data", siteA, "--tick", "1ns"), code: 2, err: []string{"--tick 1ns", "[1ms, 10s]"}},
		{name: "coordinator --tick 0", args: coordArgs("--listen", "127.0.0.1:0", "--tick", "0s"), code: 2, err: []string{"--tick 0s"}},
		{name: "coordinator NaN test file", args: coordArgs("--listen", "127.0.0.1:0", "--test", bad("nan.libsvm")), code: 1, err: []string{"nan.libsvm:2:6", "NaN"}},

		// Job specs the client refuses to send (usage errors).
		{name: "submit min-sites 0", args: submit("--algo", "fed-avg", "--min-sites", "0"), code: 2, err: []string{"min sites 0"}},
		{name: "submit ε NaN", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "NaN"), code: 2, err: []string{"epsilon = NaN", "not finite"}},
		{name: "submit δ = 1", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "0.1", "--delta", "1"), code: 2, err: []string{"delta = 1", "[0, 1)"}},
		{name: "submit radius < 0", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "0.1", "--radius", "-1"), code: 2, err: []string{"feature_radius = -1", "negative"}},
		// Job specs the coordinator would reject: the client checks them
		// with coordinator.CheckSubmit and refuses to send them (exit 2).
		// (The coordinator's own rejection: coordinator/service_test.go.)
		{name: "submit unknown algorithm", args: submit("--algo", "fed-magic"), code: 2, err: []string{`unknown federated algorithm "fed-magic"`}},
		{name: "submit ε = 0", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "0"), code: 2, err: []string{"ε = 0", "accepted range"}},
		{name: "submit fed-oneshot dpgdsc hinge", args: submit("--algo", "fed-oneshot", "--local-algo", "dpgdsc", "--loss", "hinge", "--lambda", "0.1", "--epsilon", "0.1"), code: 2,
			err: []string{"dpgdsc", "not hinge"}},
		{name: "submit fed-dp-gd-grad hinge", args: submit("--algo", "fed-dp-gd-grad", "--loss", "hinge", "--epsilon", "0.1"), code: 2, err: []string{"L-smooth", "hinge"}},
		{name: "submit unknown aggregation", args: submit("--algo", "fed-avg", "--aggregation", "krum"), code: 2, err: []string{"unknown aggregation"}},
		// Probe 4: a timeout of 0 was "no answer from a coordinator within
		// 0s"; 1e9 certificate days overflowed into "negative validity".
		{name: "submit --timeout 0s", args: []string{"job", "submit", "--nats", url, "--federation", "bad", "--algo", "fed-avg", "--timeout", "0s"}, code: 2,
			err: []string{"job submit: --timeout 0s leaves no time", "positive duration"}},
		{name: "job status --timeout -1s", args: []string{"job", "status", "--nats", url, "--federation", "bad", "--timeout", "-1s", "x"}, code: 2, err: []string{"--timeout -1s"}},
		{name: "ledger show --state a typo", args: []string{"ledger", "show", "--state", filepath.Join(root, "TYPO")}, code: 1, err: []string{"no such state directory", "TYPO"}},
		{name: "ledger show --state a file", args: []string{"ledger", "show", "--state", siteA}, code: 1, err: []string{"is a file, not a state directory"}},
		{name: "deploy --cert-days 1e9", args: []string{"deploy", "init", "--federation", "f", "--sites", "a,b", "--out", filepath.Join(root, "never-deploy"), "--cert-days", "1000000000"}, code: 2,
			err: []string{"--cert-days 1000000000 outside [1, 36500] days"}},
		{name: "deploy --sites with an empty name", args: []string{"deploy", "init", "--federation", "f", "--sites", "a,,c", "--out", filepath.Join(root, "never-deploy")}, code: 2,
			err: []string{`--sites "a,,c": name 2 is empty`, "--sites a,b,c"}},
		{name: "deploy --sites A,a", args: []string{"deploy", "init", "--federation", "f", "--sites", "A,a", "--out", filepath.Join(root, "never-deploy")}, code: 2,
			err: []string{`sites "A" and "a" differ only in case`, "rename one"}},
	}
	// Jobs the sites refuse before any computation (status refused, exit 3).
	refused := []badCase{
		{name: "budget ε exhausted", args: submit("--algo", "fed-dp-local-sgd", "--epsilon", "0.6", "--delta", "0.001", "--min-sites", "2"), code: 3, records: true, refused: true,
			err: []string{"refused"}, out: []string{"status: refused", "privacy budget exceeded", "spent (ε, δ) = (0.8, 0.001)", "budget (1, 0.01)", "remaining (", "job asks (0.6, 0.001)"},
			remaining: []float64{0.2, 0.009}},
		{name: "budget δ exhausted", args: submit("--algo", "fed-dpegd", "--epsilon", "0.1", "--delta", "0.02", "--min-sites", "2"), code: 3, records: true, refused: true,
			err: []string{"refused"}, out: []string{"status: refused", "privacy budget exceeded", "job asks (0.1, 0.02)", "budget (1, 0.01)"}},
		{name: "non-private job at budgeted sites", args: submit("--algo", "fed-avg", "--min-sites", "2"), code: 3, records: true, refused: true,
			err: []string{"refused"}, out: []string{"status: refused", "not differentially private", "privacy budget"}},
	}

	n := 0
	run := func(c badCase) {
		n++
		t.Run(c.name, func(t *testing.T) {
			before := snapshot()
			p, code := runPairfed(t, &logs, 45*time.Second, c.args...)
			msg := ""
			if p.err != nil {
				msg = p.err.Error()
			}
			if code != c.code {
				t.Errorf("exit status %d, want %d (error %q)\nstdout:\n%s\nstderr:\n%s", code, c.code, msg, p.stdout.String(), p.stderr.String())
			}
			for _, w := range c.err {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if len(c.out) > 0 {
				// job submit --json: the status and reason the coordinator gave.
				var rep struct {
					Status, Reason string
					Refused        []string
				}
				if err := json.Unmarshal([]byte(p.stdout.String()), &rep); err != nil {
					t.Fatalf("job submit --json: %v\n%s", err, p.stdout.String())
				}
				got := "status: " + rep.Status + "\nreason: " + rep.Reason
				for _, w := range c.out {
					if !strings.Contains(got, w) {
						t.Errorf("job status does not say %q:\n%s", w, got)
					}
				}
				if c.remaining != nil {
					m := remainingRE.FindStringSubmatch(rep.Reason)
					if m == nil {
						t.Errorf("no remaining (ε, δ) in %q", rep.Reason)
					} else {
						for i, want := range c.remaining {
							if got, err := strconv.ParseFloat(m[i+1], 64); err != nil || math.Abs(got-want) > 1e-9 {
								t.Errorf("remaining %s = %q, want %g", []string{"ε", "δ"}[i], m[i+1], want)
							}
						}
					}
				}
				if c.refused && (len(rep.Refused) == 0 || slices.ContainsFunc(rep.Refused, func(s string) bool { return s != "a" && s != "b" })) {
					t.Errorf("refused by %v, want sites a and/or b", rep.Refused)
				}
			}
			for _, w := range c.warn {
				if !strings.Contains(p.stderr.String(), w) {
					t.Errorf("stderr does not say %q:\n%s", w, p.stderr.String())
				}
			}
			unchanged(t, before, c.records, c.refused)
		})
	}
	for _, c := range cases {
		run(c)
	}

	// 2. Protocol messages a faulty or hostile peer sends: the receiver
	// logs and drops each one and keeps working (the job specs above and
	// below are answered after them).
	client, err := transport.Connect(url, "pairfed-test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	join, err := protocol.Encode(&protocol.Join{Site: "x", Records: 1, Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	if join[2] != 0xcd { // [Version, m]: the version is a msgpack uint16
		t.Fatalf("unexpected encoding % x", join[:5])
	}
	v99 := slices.Clone(join)
	v99[3], v99[4] = 0, 99
	coordSubj, jobsSubj, sitesSubj := protocol.SiteToCoordSubject("bad", "a"), protocol.JobsSubject("bad"), protocol.SitesSubject("bad")
	messages := []struct {
		name, subject string
		data          []byte
		log           string // what the receiver's "dropped message" line must say
	}{
		{"garbage bytes", coordSubj, []byte("\xee\x01hello, coordinator"), "dropped message on " + coordSubj + ": protocol: unknown message"},
		{"unknown protocol version", coordSubj, v99, "unknown protocol version 99 (this build speaks 1)"},
		{"truncated message", coordSubj, join[:len(join)-4], "dropped message on " + coordSubj + ": protocol: join:"},
		{"trailing bytes", coordSubj, append(slices.Clone(join), 0xc0), "1 trailing bytes"},
		{"lying array length", coordSubj, []byte{byte(protocol.KindPhaseStart), 0xdd, 0x7f, 0xff, 0xff, 0xff}, "dropped message on " + coordSubj + ": protocol: phase-start:"},
		{"2 MiB message of junk (chunked, reassembled, then refused)", coordSubj, bytes.Repeat([]byte{0xc1}, 2<<20), "dropped message on " + coordSubj + ": protocol: unknown message"},
		{"site a speaking for site b", coordSubj, encodeRaw(t, &protocol.SiteUpdate{Job: "j", Phase: 1, Site: "b", Model: []float64{1, 2, 3}, Weight: 1}, protocol.Version), "site-update on " + coordSubj + " claims to come from"},
		{"a job spec on a site's subject", coordSubj, encodeRaw(t, &protocol.JobSubmit{Job: "raw-0", Client: "c", Algo: "fed-avg", MinSites: 1}, protocol.Version), "job-submit on " + coordSubj + " claims to come from"},
		{"job spec with min sites 0", jobsSubj, encodeRaw(t, &protocol.JobSubmit{Job: "raw-1", Client: "c", Algo: "fed-avg"}, protocol.Version), "job raw-1: min sites 0 outside"},
		{"job spec with ε NaN", jobsSubj, encodeRaw(t, &protocol.JobSubmit{Job: "raw-2", Client: "c", Algo: "fed-dp-local-sgd", MinSites: 2, Epsilon: math.NaN()}, protocol.Version), "epsilon = NaN is not finite"},
		{"phase start with a NaN model, to the sites", sitesSubj, encodeRaw(t, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{math.NaN(), 0, 0}}, protocol.Version), "worker a: dropped message on " + sitesSubj},
		{"garbage to the sites", sitesSubj, []byte("\x00\x00"), "worker b: dropped message on " + sitesSubj},
	}
	for _, m := range messages {
		n++
		t.Run("message/"+m.name, func(t *testing.T) {
			state := snapshot()
			before := strings.Count(logs.String(), "dropped message")
			if err := client.Publish(m.subject, m.data); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, fmt.Sprintf("a log line saying %q", m.log), func() bool {
				log := logs.String()
				return strings.Count(log, "dropped message") > before && strings.Contains(log, m.log)
			})
			unchanged(t, state, false, false)
		})
	}
	n++
	t.Run("message/over 64 MiB", func(t *testing.T) {
		// The sender's transport refuses it (so does every receiver's
		// reassembler, transport.TestChunkedLimits) and the decoder
		// refuses it too (protocol.TestDecodeRejects "too large").
		state := snapshot()
		huge := make([]byte, protocol.MaxMessageSize+1)
		if err := client.Publish(coordSubj, huge); !errors.Is(err, transport.ErrTooLarge) {
			t.Errorf("publish of %d bytes: %v, want ErrTooLarge", len(huge), err)
		}
		if _, err := protocol.Decode(huge); !errors.Is(err, protocol.ErrTooLarge) || !strings.Contains(err.Error(), "exceeds") {
			t.Errorf("decode of %d bytes: %v", len(huge), err)
		}
		unchanged(t, state, false, false)
	})

	// 3. The coordinator still works: it answers, and jobs the sites
	// refuse (budget exhausted) are refused before any site computes.
	for _, c := range refused {
		run(c)
	}
	for _, site := range []string{"a", "b"} {
		if !logged("worker " + site + ": refusing job")() {
			t.Errorf("site %s did not log its refusals", site)
		}
	}
	// At the end, the sites' ledgers are still byte for byte those the
	// test started with.
	final := snapshot()
	for _, name := range []string{"site a", "site b", "scratch site"} {
		if !maps.Equal(initial[name], final[name]) {
			t.Errorf("state of %s changed over the corpus:\nbefore %v\nafter  %v", name, initial[name], final[name])
		}
	}
	if n < 30 {
		t.Errorf("corpus of %d cases, want ≥ 30", n)
	}
	t.Logf("%d bad-input cases", n)
}
