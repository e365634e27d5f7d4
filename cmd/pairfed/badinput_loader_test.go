package main

// The loaders' part of the bad-input corpus (issues 13 and 16): data files
// and loader flags that must be refused with an error naming the problem,
// the value and the fix, with the right exit status, without touching a
// site's or a coordinator's state — and within a memory ceiling and a
// time limit. Unlike TestBadInputCorpus, every case runs in a child
// process (this test binary re-executed as pairfed, see
// TestHelperPairfedChild), so that its peak memory can be measured: the
// child's maximum resident set size, from the rusage of its exit.
//
// Measuring. Go starts a child with vfork (clone with CLONE_VM), and
// Linux folds the peak RSS of the memory it replaces at execve — the
// parent's — into the child's ru_maxrss: the rusage is the larger of the
// test process's own peak and the child's. So when the test process's
// peak (getrusage(RUSAGE_SELF)) is not below the child's ru_maxrss, the
// rusage says nothing about the child, and the child's own peak (VmHWM of
// its fresh address space, which it prints on exit) is used instead.
//
// Memory ceilings. A case with --max-memory B may hold B of accounted
// data, and 1.25 B while a backing array grows (the old one beside the
// new one until the loader hands it back to the system, data.growSlice
// and transientShare; the collector's soft limit, setMemoryLimit); on top
// comes the process's baseline (runtime, this test binary, reader
// buffers, ~30 MiB measured): ceiling = baseline + 1.25 B, with baseline
// = 64 MiB. A case refused before it
// allocates anything proportional to its input has ceiling = baseline,
// whatever its budget. The children are never race-built (childBinary):
// under `go test -race` they run the same test binary built without the
// race detector, whose shadow memory would multiply their heap (measured:
// 4.5×) and their time (≈ 15×), so the ceilings are the same under both.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/worker"
)

const childArgsEnv = "PAIRFED_CHILD_ARGS"

// TestHelperPairfedChild is not a test: runChild re-executes the test
// binary with it to run `pairfed <args>` (JSON in $PAIRFED_CHILD_ARGS) as
// main does, exit status included.
func TestHelperPairfedChild(t *testing.T) {
	env := os.Getenv(childArgsEnv)
	if env == "" {
		t.Skip("helper process of TestBadInputLoaders")
	}
	var args []string
	if err := json.Unmarshal([]byte(env), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad", childArgsEnv, err)
		os.Exit(99)
	}
	code := 0
	if err := newApp().RunContext(context.Background(), append([]string{"pairfed"}, args...)); err != nil {
		fmt.Fprintln(os.Stderr, "pairfed:", err)
		code = exitCode(err)
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				fmt.Fprintln(os.Stderr, childPeakPrefix+strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")))
			}
		}
	}
	os.Exit(code)
}

// childPeakPrefix starts the line on which a child reports its own peak.
const childPeakPrefix = "child peak RSS: "

// childBinary is the test binary runChild re-executes: this one, or,
// when this one runs under the race detector, the same package's test
// binary built without it (`go test -c` into t's temporary directory).
// Under -race a child decompressing a 512 MiB bomb took 5–27 s instead
// of 0.2–0.9 s (≈ 100 s for the corpus), and the race detector's shadow
// memory forced a ceiling of 128 MiB + 6 × the budget; a plain child is
// held to the plain ceiling, baseline + 1.25 × budget, under both
// builds. (The commands' own races are checked in-process by the race
// run of the other tests of this package.)
func childBinary(t *testing.T) string {
	t.Helper()
	if !raceBuild {
		return os.Args[0]
	}
	bin := filepath.Join(t.TempDir(), "pairfed.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c (a test binary without -race for the child processes): %v\n%s", err, out)
	}
	return bin
}

// childRun is the outcome of one child process.
type childRun struct {
	code           int
	stdout, stderr string
	maxRSS         int64 // bytes
	selfReported   bool  // maxRSS is the child's own report (VmHWM), not its rusage
	elapsed        time.Duration
	timedOut       bool
}

// runChild runs `pairfed args...` in a child process (bin, see
// childBinary), killed after timeout.
func runChild(t *testing.T, bin string, timeout time.Duration, args ...string) childRun {
	t.Helper()
	enc, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestHelperPairfedChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(enc))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	r := childRun{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start), timedOut: ctx.Err() != nil}
	if cmd.ProcessState == nil {
		t.Fatalf("pairfed %s: %v", strings.Join(args, " "), err)
	}
	r.code = cmd.ProcessState.ExitCode()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatalf("no rusage for the child")
	}
	r.maxRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		t.Fatal(err)
	}
	if self.Maxrss >= ru.Maxrss {
		// The rusage is the test process's own peak (see the top of the
		// file): use the child's report of its own.
		r.maxRSS = 0
		if i := strings.LastIndex(r.stderr, childPeakPrefix); i >= 0 {
			var kb int64
			if _, err := fmt.Sscanf(r.stderr[i+len(childPeakPrefix):], "%d kB", &kb); err == nil {
				r.maxRSS = kb * 1024
			}
		}
		r.selfReported = true
	}
	return r
}

// writeGzip writes n bytes of prefix followed by unit repeated, gzipped:
// the prefix and the remainder in one gzip member, then the same member
// of 1 MiB of unit (16 blocks of 64 KiB) copied, so that a 512 MiB bomb
// costs one 1 MiB compression, not 512 (the race detector made those
// ≈ 2 minutes of the test). The inflated bytes are those of one member
// holding everything; gzip readers (compress/gzip, gzip -d) read the
// concatenated members as one stream.
func writeGzip(t *testing.T, path string, prefix, unit string, n int64) {
	t.Helper()
	const perMember = 16
	block := strings.Repeat(unit, max(1, (64<<10)/len(unit)))
	blocks := int64(0)
	for written := int64(len(prefix)); written < n; written += int64(len(block)) {
		blocks++
	}
	member := func(s string) []byte {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
		zw.Write([]byte(s))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return z.Bytes()
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(member(prefix + strings.Repeat(block, int(blocks%perMember))))
	full := member(strings.Repeat(block, perMember))
	for i := int64(0); i < blocks/perMember; i++ {
		w.Write(full)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// loaderCase is one entry of the loaders' corpus.
type loaderCase struct {
	name   string
	args   []string
	code   int
	err    []string // words stderr must contain
	out    []string // words stdout must contain (code 0)
	budget int64    // the case's --max-memory, for its ceiling; 0: refused before allocating
}

func TestBadInputLoaders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~40 child processes")
	}
	const (
		mib      = int64(1) << 20
		baseline = 64 * mib
		timeout  = 60 * time.Second
	)
	bad := func(name string) string { return filepath.Join("testdata", "bad", name) }
	dir := t.TempDir()
	bin := childBinary(t)
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// The 1.2 KB LIBSVM file of issue 13: one feature index 2^31−1.
	var huge strings.Builder
	for huge.Len() < 1200 {
		huge.WriteString("+1 1:0.5 2:0.25 3:1\n-1 1:0.3 2:0.1 3:0.2\n")
	}
	huge.WriteString("+1 1:0.5 2147483647:1\n")
	hugeIndex := file("huge-index.libsvm", huge.String())
	hugeAt := fmt.Sprintf("huge-index.libsvm:%d:10", strings.Count(huge.String(), "\n"))

	// A dense copy of site a (labels 6.0000 / 2.0000, label first, tabs
	// and runs of spaces), gzipped; the good file of the positive cases.
	var dense strings.Builder
	siteA, err := os.ReadFile(bad("site-a.libsvm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(siteA)), "\n") {
		f := strings.Fields(line)
		label := map[string]string{"+1": "6.0000", "-1": "2.0000"}[f[0]]
		vals := []string{"0", "0", "0"}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, ":")
			i, _ := strconv.Atoi(k)
			vals[i-1] = v
		}
		fmt.Fprintf(&dense, "  %s \t%s   %s\t%s\n", label, vals[0], vals[1], vals[2])
	}
	denseGz := filepath.Join(dir, "site-a.dense.gz")
	writeGzip(t, denseGz, dense.String(), "\n", int64(dense.Len()+1))
	denseTxt := file("site-a.txt", dense.String())

	// Bombs and monsters, generated here (gzip) or committed (bzip2, xz).
	gzBomb := filepath.Join(dir, "bomb.csv.gz") // 512 MiB of CSV records
	writeGzip(t, gzBomb, "", "1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1\n0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1\n", 512*mib)
	longLine := filepath.Join(dir, "long-line.csv.gz") // one line of 300 MiB
	writeGzip(t, longLine, "", "0", 300*mib)
	manyCols := filepath.Join(dir, "many-columns.dense.gz") // 8M columns in its first record
	writeGzip(t, manyCols, "", "0 ", 16*mib)
	labels := filepath.Join(dir, "labels.csv.gz") // every record a new label: 96 MiB
	{
		f, err := os.Create(labels)
		if err != nil {
			t.Fatal(err)
		}
		// Stored, not compressed (the lines differ, so no member can be
		// copied): the same bytes inflate in a fraction of the time the
		// race detector gives compress/flate; the lines are those of
		// fmt.Fprintf(w, "1,2,label-%040d\n", i).
		zw, _ := gzip.NewWriterLevel(f, gzip.NoCompression)
		w := bufio.NewWriterSize(zw, 1<<20)
		line := []byte(fmt.Sprintf("1,2,label-%040d\n", 0))
		var digits []byte
		for i := 0; i < (96<<20)/56; i++ {
			digits = strconv.AppendInt(digits[:0], int64(i), 10)
			copy(line[len(line)-1-len(digits):], digits) // i grows: the zeros to the left stay
			w.Write(line)
		}
		if w.Flush() != nil || zw.Close() != nil || f.Close() != nil {
			t.Fatal("writing", labels)
		}
	}
	arffBomb := filepath.Join(dir, "bomb.arff.gz") // 512 MiB of ARFF records
	writeGzip(t, arffBomb, "@relation r\n@attribute x numeric\n@attribute y numeric\n@attribute class {0,1}\n@data\n", "1,2,0\n3,4,1\n", 512*mib)
	runBomb := filepath.Join(dir, "run.csv.gz") // 40 MiB of CSV: 24 MiB of records, read within 64 MiB, trained over it
	writeGzip(t, runBomb, "", "0.12345678901234567,0.98765432109876543,1\n0.22345678901234567,0.18765432109876543,0\n", 40*mib)
	nul := file("nul.libsvm", "+1 1:0.5\n-1 1:\x00\x00\x00\n")
	negIndex := file("negative-index.libsvm", "+1 1:0.5\n-1 -3:1\n")
	zeroIndex := file("zero-index.libsvm", "+1 1:0.5\n-1 0:1\n")
	overIndex := file("over-int32.libsvm", "+1 1:0.5\n-1 2147483648:1\n")
	wideSparse := file("wide.libsvm", "+1 1:1\n-1 1000000:1\n+1 2:1\n-1 3:1\n")
	wide := file("wide-400k.libsvm", strings.Repeat("+1 1:1 2:1\n-1 3:1 400000:1\n", 20)) // 40×400000: 122 MiB dense

	// State a site and a coordinator hold: a started bad command must
	// not change it.
	siteState, coordState := filepath.Join(dir, "site-state"), filepath.Join(dir, "coord-state")
	l, _, _, err := store.OpenLedger(siteState)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(worker.Release{Job: "old-job", Phase: 1, Records: 40, Sigma: 2.5, Epsilon: 0.8, Delta: 1e-3, Secure: true}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := os.MkdirAll(coordState, 0o755); err != nil {
		t.Fatal(err)
	}
	workerArgs := func(args ...string) []string {
		return append([]string{"worker", "--nats", "nats://127.0.0.1:1", "--federation", "f", "--site", "s", "--state", siteState}, args...)
	}
	coordArgs := func(args ...string) []string {
		return append([]string{"coordinator", "--listen", "127.0.0.1:0", "--federation", "f", "--state", coordState}, args...)
	}
	sim := func(args ...string) []string {
		return append([]string{"simulate", "--sites", "2", "--transport", "mem"}, args...)
	}

	// Issue 28's cases that one command shows (findings 4, 6, 7, 9, 11;
	// finding 10 is the run-over-budget cases above and the long
	// TestGzipBombDefaultBudget).
	schema := func(name, content string) string { return file(name, content) }
	three := `{"name": "a", "lo": 0, "hi": 1}, {"name": "b", "lo": 0, "hi": 1}, {"name": "c", "lo": 0, "hi": 1}`
	truncSchema := schema("trunc.json", `{"features": [{"name": "a", "lo": 0, `)
	emptySchema := schema("empty.json", "")
	bomSchema := schema("bom.json", "\xef\xbb\xbf{\"features\": ["+three+"]}")
	loHiSchema := schema("lohi.json", `{"features": [{"name": "a", "lo": 2, "hi": 1}, {"name": "b", "lo": 0, "hi": 1}, {"name": "c", "lo": 0, "hi": 1}]}`)
	fewSchema := schema("few.json", `{"features": [{"name": "a", "lo": 0, "hi": 1}]}`)
	posSchema := schema("pos.json", `{"positive_class": "+2", "features": [`+three+`]}`)
	crOnly := file("cr-only.csv", strings.ReplaceAll("a,b,label\n1,2,yes\n3,4,no\n5,6,yes\n7,8,no\n1,3,yes\n2,4,no\n3,3,yes\n4,1,no\n5,2,yes\n6,1,no\n", "\n", "\r"))
	mixedEnc := file("mixed.csv", "a,b,label\n1,2,B\xc3\xa9nin\n3,4,no\n5,6,B\xe9nin\n7,8,no\n")
	fifo := filepath.Join(dir, "fifo.libsvm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var oneClass strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(siteA)), "\n") {
		if strings.HasPrefix(line, "-1") {
			oneClass.WriteString(line + "\n")
		}
	}
	oneClassFile := file("one-class.libsvm", oneClass.String())

	cases := []loaderCase{
		// Issue 28.
		{name: "28/6 --epsilon 1e-300", args: []string{"train", "--data", denseTxt, "--epsilon", "1e-300"}, code: 2, err: []string{"--epsilon = 1e-300 is outside the accepted range [1e-06, 10000]"}},
		{name: "28/6 --epsilon 1e-300 --algo dpegd", args: []string{"train", "--data", denseTxt, "--epsilon", "1e-300", "--algo", "dpegd", "--loss", "logistic"}, code: 2, err: []string{"1e-300 is outside the accepted range"}},
		{name: "28/6 --epsilon 1e-150 --algo dp-ssp", args: []string{"train", "--data", denseTxt, "--epsilon", "1e-150", "--algo", "dp-ssp"}, code: 2, err: []string{"--epsilon = 1e-150 is outside the accepted range"}},
		{name: "28/6 --noise-scale 1e-300", args: []string{"train", "--data", denseTxt, "--epsilon", "1", "--algo", "dp-ssp", "--noise-scale", "1e-300"}, code: 2, err: []string{"--noise-scale = 1e-300 is outside the accepted range [1e-06, 1e+06]"}},
		{name: "28/6 simulate --epsilon 1e-300", args: sim("--data", denseTxt, "--epsilon", "1e-300"), code: 2, err: []string{"--epsilon = 1e-300 is outside the accepted range"}},
		{name: "26 simulate --delta 0", args: sim("--data", denseTxt, "--epsilon", "1", "--delta", "0"), code: 2, err: []string{"simulate: --delta = 0 asks for pure ε-DP, which no federated algorithm gives"}},
		{name: "26 audit --epsilon 1e-300", args: []string{"audit", "--algo", "dp-lda", "--epsilon", "1e-300"}, code: 1, err: []string{"--epsilon = 1e-300 is outside the accepted range [1e-06, 10000]"}},
		{name: "28/6 worker --tick 1ns", args: workerArgs("--data", denseTxt, "--tick", "1ns"), code: 2, err: []string{"--tick 1ns is outside the accepted range [1ms, 10s]"}},
		{name: "28/7 truncated schema", args: []string{"train", "--data", bad("site-a.libsvm"), "--feature-bounds", truncSchema}, code: 1, err: []string{"trunc.json:1:", "the JSON ends in the middle of a value (a truncated file"}},
		{name: "28/7 empty schema", args: []string{"train", "--data", bad("site-a.libsvm"), "--feature-bounds", emptySchema}, code: 1, err: []string{"empty.json: the file is empty: a schema is one JSON object"}},
		{name: "28/7 schema with a byte order mark", args: []string{"train", "--data", bad("site-a.libsvm"), "--feature-bounds", bomSchema, "--eta", "1"}, code: 0, out: []string{"sgd-prev"}},
		{name: "28/7 schema lo > hi", args: []string{"train", "--data", bad("site-a.libsvm"), "--feature-bounds", loHiSchema}, code: 1, err: []string{`lohi.json: features[0] ("a"): lo = 2 is above hi = 1: swap them`}},
		{name: "28/7 schema with fewer features than the file", args: []string{"train", "--data", bad("site-a.libsvm"), "--feature-bounds", fewSchema}, code: 1, err: []string{"site-a.libsvm:1:", "but feature bounds", "few.json declares 1 features: is it this file's schema?"}},
		{name: "28/7 positive_class typo", args: []string{"train", "--data", bad("site-a.libsvm"), "--feature-bounds", posSchema}, code: 1, err: []string{`positive class "+2" matches none of the 40 records' labels (-1: 20, 1: 20)`}},
		{name: "28/7 --radius 1e308 --loss logistic", args: []string{"train", "--data", bad("site-a.libsvm"), "--radius", "1e308", "--loss", "logistic", "--epsilon", "1"}, code: 2, err: []string{"--radius 1e+308 is outside the accepted range [1e-06, 1e+06]"}},
		{name: "28/7 simulate --radius 1e308", args: sim("--data", bad("site-a.libsvm"), "--radius", "1e308"), code: 2, err: []string{"--radius 1e+308 is outside the accepted range"}},
		{name: "28/7 CR-only line endings", args: []string{"train", "--data", crOnly, "--eta", "1"}, code: 0, out: []string{"line endings: CR alone (classic Mac OS), read as line breaks"}},
		{name: "28/7 mixed UTF-8 and Latin-1 labels", args: []string{"train", "--data", mixedEnc}, code: 1,
			err: []string{"mixed.csv:4:3", `label "B\xe9nin" is not UTF-8 text`, "so the file mixes encodings", "convert its Latin-1 lines to UTF-8"}},
		{name: "28/9 ledger export into a state directory", args: []string{"ledger", "export", "--state", siteState, "--out", filepath.Join(siteState, "export.jsonl")}, code: 2, err: []string{"export.jsonl is inside the state directory", "write it elsewhere"}},
		{name: "28/11 a FIFO as --data", args: []string{"train", "--data", fifo}, code: 1, err: []string{"fifo.libsvm is a named pipe (FIFO), not a regular file"}},
		{name: "28/4 a one-class site without --single-class", args: workerArgs("--data", oneClassFile), code: 1, err: []string{"only one class present", "start it with --single-class"}},

		// Memory before validation (issue 13, class 1).
		{name: "1.2 KB file with index 2^31-1: train", args: []string{"train", "--data", hugeIndex}, code: 1,
			err: []string{hugeAt, "feature index 2147483647", "256 GiB", "over the memory limit", "--max-memory", "--dim"}},
		{name: "index 2^31-1: worker", args: workerArgs("--data", hugeIndex), code: 1, err: []string{hugeAt, "feature index 2147483647"}},
		{name: "index 2^31-1: simulate", args: sim("--data", hugeIndex), code: 1, err: []string{"feature index 2147483647", "--max-memory"}},
		{name: "index 2^31-1: coordinator --test", args: coordArgs("--test", hugeIndex), code: 1, err: []string{"feature index 2147483647"}},
		{name: "index 2^31-1 with --dim 3", args: []string{"train", "--data", hugeIndex, "--dim", "3"}, code: 1, err: []string{"feature index 2147483647 exceeds Dim 3"}},
		{name: "index 2^31 (over int32)", args: []string{"train", "--data", overIndex}, code: 1, err: []string{"over-int32.libsvm:2:4", "feature index 2147483648 too large"}},
		{name: "index 10^6 under a 64 MiB budget", args: []string{"train", "--data", wideSparse, "--max-memory", "64MiB"}, code: 1,
			err: []string{"wide.libsvm:2:4", "feature index 1000000", "122.1 MiB", "over the memory limit of 64 MiB", "524288 features fit"}},
		{name: "--dim 2000000000", args: []string{"train", "--data", bad("site-a.libsvm"), "--dim", "2000000000"}, code: 2,
			err: []string{"Dim 2000000000", "238.4 GiB", "over the memory limit", "--max-memory"}},
		{name: "dense storage of a wide sparse file", args: []string{"train", "--data", wide, "--representation", "dense", "--max-memory", "64MiB"}, code: 1,
			err: []string{"dense storage of 40×400000 values needs 122.1 MiB", "over the memory limit of 64 MiB", "--representation sparse"}},
		{name: "gzip bomb: 512 MiB of CSV records", args: []string{"train", "--data", gzBomb, "--max-memory", "64MiB"}, code: 1,
			err: []string{"bomb.csv.gz:", "memory for the records", "over the memory limit of 64 MiB", "--max-memory"}, budget: 64 * mib},
		{name: "gzip bomb: worker", args: workerArgs("--data", gzBomb, "--max-memory", "64MiB"), code: 1,
			err: []string{"over the memory limit of 64 MiB"}, budget: 64 * mib},
		{name: "gzip bomb: 512 MiB of ARFF records", args: []string{"train", "--data", arffBomb, "--max-memory", "64MiB"}, code: 1,
			err: []string{"bomb.arff.gz:", "memory for the records", "over the memory limit of 64 MiB", "--max-memory"}, budget: 64 * mib},
		// Issue 28, finding 10: records that the loader reads within the
		// budget, whose training run would hold several copies of them.
		{name: "records within the budget, run over it: train", args: []string{"train", "--data", runBomb, "--max-memory", "64MiB"}, code: 1,
			err: []string{"run.csv.gz: its 999960 records take", "train needs about", "over the memory limit of 64 MiB", "raise --max-memory to"}, budget: 64 * mib},
		{name: "records within the budget, run over it: simulate", args: sim("--data", runBomb, "--max-memory", "64MiB"), code: 1,
			err: []string{"simulate needs about", "over the memory limit of 64 MiB", "--max-memory"}, budget: 64 * mib},
		{name: "bzip2 bomb: 512 MiB of LIBSVM records", args: []string{"train", "--data", bad("bomb.libsvm.bz2"), "--max-memory", "64MiB"}, code: 1,
			err: []string{"bomb.libsvm.bz2:", "over the memory limit of 64 MiB"}, budget: 64 * mib},
		{name: "xz bomb: 512 MiB of dense records", args: []string{"train", "--data", bad("bomb.dense.xz"), "--max-memory", "64MiB"}, code: 1,
			err: []string{"bomb.dense.xz:", "memory for the records", "over the memory limit of 64 MiB"}, budget: 64 * mib},
		{name: "xz bomb: simulate", args: sim("--data", bad("bomb.dense.xz"), "--max-memory", "64MiB"), code: 1,
			err: []string{"over the memory limit of 64 MiB"}, budget: 64 * mib},
		{name: "xz: 512 MiB of blank lines (text over the budget)", args: []string{"train", "--data", bad("blank-lines.libsvm.xz"), "--max-memory", "32MiB"}, code: 1,
			err: []string{"blank-lines.libsvm.xz:", "input exceeds MaxBytes (33554432 bytes after decompression)", "--max-memory"}, budget: 32 * mib},
		{name: "84-byte xz declaring a 1.5 GiB dictionary", args: []string{"train", "--data", bad("big-dict.libsvm.xz"), "--max-memory", "256MiB"}, code: 1,
			err: []string{"big-dict.libsvm.xz:1:1", "xz dictionary", "over the memory limit of 256 MiB"}},
		{name: "a line of 300 MiB", args: []string{"train", "--data", longLine, "--max-memory", "64MiB"}, code: 1,
			err: []string{"long-line.csv.gz:1:1", "a line over", "over the memory limit of 64 MiB"}, budget: 64 * mib},
		{name: "8M columns", args: []string{"train", "--data", manyCols, "--max-memory", "64MiB"}, code: 1,
			err: []string{"many-columns.dense.gz:1:1", "over the memory limit of 64 MiB"}, budget: 64 * mib},
		{name: "a new label on every line", args: []string{"train", "--data", labels, "--max-memory", "64MiB"}, code: 1,
			err: []string{"labels.csv.gz:", "distinct so far", "over the memory limit of 64 MiB"}, budget: 64 * mib},
		{name: "NUL bytes", args: []string{"train", "--data", nul}, code: 1, err: []string{"nul.libsvm:2:6", "binary content (a NUL byte)"}},
		{name: "endless NUL bytes (/dev/zero)", args: []string{"train", "--data", "/dev/zero"}, code: 1, err: []string{"/dev/zero is a character device", "not a regular file"}},
		{name: "UTF-16 file", args: []string{"train", "--data", file("utf16.csv", "\xff\xfe1\x00,\x002\x00\n\x00")}, code: 1, err: []string{"utf16.csv:1:1", "UTF-16", "iconv"}},
		{name: "a directory as --data", args: []string{"train", "--data", dir}, code: 1, err: []string{"is a directory", "give the path of a data file"}},
		{name: "empty --data", args: []string{"train", "--data", ""}, code: 1, err: []string{"empty file name"}},
		{name: "a directory as a site's data", args: workerArgs("--data", dir), code: 1, err: []string{"is a directory"}},
		{name: "metric learning over 20000 features", args: []string{"train", "--data", file("wide-20k.libsvm", strings.Repeat("+1 1:1\n-1 20000:1\n", 4)), "--task", "metric", "--max-memory", "1GiB"}, code: 1,
			err: []string{"metric learning over 20000 features", "8 of them need 23.8 GiB", "over the memory limit of 1 GiB", "at most 4096 features fit", "--task auc"}},
		{name: "simulate metric learning over 20000 features", args: sim("--data", filepath.Join(dir, "wide-20k.libsvm"), "--task", "metric", "--max-memory", "1GiB"), code: 1,
			err: []string{"metric learning over 20000 features", "at most 4096 features fit"}},
		{name: "negative index", args: []string{"train", "--data", negIndex}, code: 1, err: []string{"negative-index.libsvm:2:4", `bad feature index "-3"`}},
		{name: "zero index", args: []string{"train", "--data", zeroIndex}, code: 1, err: []string{"zero-index.libsvm:2:4", "feature index 0 (LIBSVM indices are 1-based)"}},

		// Dense files (issue 16, item 1).
		{name: "dense gz file trains", args: []string{"train", "--data", denseGz, "--eta", "1", "--param-radius", "10"}, code: 0,
			out: []string{"dense file: label in column 1", "positive class = minority class 6 (20 of 40)"}},
		{name: "worker --max-memory 1MiB", args: workerArgs("--data", denseTxt, "--max-memory", "1MiB"), code: 2, err: []string{"memory limit 1048576 bytes is below 16 MiB"}},
		{name: "dense file read as LIBSVM", args: []string{"train", "--data", denseTxt, "--format", "libsvm"}, code: 1,
			err: []string{"site-a.txt:1:11", "is not index:value", "looks like a dense whitespace-separated file", "--format dense"}},
		{name: "dense file read as CSV", args: []string{"train", "--data", denseTxt, "--format", "csv"}, code: 1,
			err: []string{"site-a.txt:1:2", `bad feature value "0.4229   0.2418" in column 2`, "blank-separated numbers in one field", "--format dense"}},
		{name: "dense file with --sep ;", args: []string{"train", "--data", denseTxt, "--sep", ";"}, code: 1, err: []string{"site-a.txt:1:1", "no ';' separator", "--format dense", "--sep"}},
		{name: "--format dense --sep ,", args: []string{"train", "--data", denseTxt, "--format", "dense", "--sep", ","}, code: 2, err: []string{"dense files are separated by blanks", "--format csv"}},
		{name: "--format libsvm --sep tab", args: []string{"train", "--data", denseTxt, "--format", "libsvm", "--sep", "tab"}, code: 2, err: []string{"applies to CSV and dense files"}},
		{name: "--sep ab", args: []string{"train", "--data", denseTxt, "--sep", "ab"}, code: 2, err: []string{`separator "ab"`, "tab", "space"}},
		{name: "dense file, label column 9 of 4", args: []string{"train", "--data", denseTxt, "--label-column", "9"}, code: 1, err: []string{"label column 9 out of range (the file has 4 columns)"}},

		// Loader flags (issue 13, class 6).
		{name: "--max-memory 1x", args: []string{"train", "--data", denseTxt, "--max-memory", "1x"}, code: 2, err: []string{"--max-memory", `size "1x" is not a byte count`, "512MiB"}},
		{name: "--max-memory -1G", args: []string{"train", "--data", denseTxt, "--max-memory", "-1G"}, code: 2, err: []string{`size "-1G" is not a byte count`}},
		{name: "--test-fraction 0", args: []string{"train", "--data", denseTxt, "--test-fraction", "0"}, code: 2, err: []string{"--test-fraction 0 is outside the accepted range [0.01, 0.9]", "--test"}},
		{name: "--test-fraction 1", args: []string{"train", "--data", denseTxt, "--test-fraction", "1"}, code: 2, err: []string{"--test-fraction 1 is outside the accepted range [0.01, 0.9]"}},
		{name: "--test-fraction NaN", args: []string{"train", "--data", denseTxt, "--test-fraction", "NaN"}, code: 2, err: []string{"--test-fraction NaN is outside the accepted range [0.01, 0.9]"}},
		{name: "--test-fraction -0.5", args: []string{"train", "--data", denseTxt, "--test-fraction", "-0.5"}, code: 2, err: []string{"--test-fraction -0.5 is outside"}},
		{name: "--test-fraction 1e-9", args: []string{"train", "--data", denseTxt, "--test-fraction", "1e-9"}, code: 2, err: []string{"--test-fraction 1e-09 is outside the accepted range [0.01, 0.9]"}},
		{name: "--range-share 0", args: []string{"train", "--data", denseTxt, "--epsilon", "1", "--range-share", "0"}, code: 2, err: []string{"--range-share 0", "(0, 1)"}},
		{name: "--tune-candidates without --tune", args: []string{"train", "--data", denseTxt, "--epsilon", "1", "--tune-candidates", "dp-ssp"}, code: 2, err: []string{"--tune-candidates dp-ssp", "add --tune"}},
		{name: "--test-fraction with --test", args: []string{"train", "--data", denseTxt, "--test", denseTxt, "--test-fraction", "0.3"}, code: 2, err: []string{"--test-fraction 0.3 has no effect with --test"}},
		{name: "--test-fraction with --folds", args: []string{"train", "--data", denseTxt, "--folds", "3", "--test-fraction", "0.3"}, code: 2, err: []string{"no effect with --folds 3"}},
		{name: "simulate --test-fraction 0", args: sim("--data", denseTxt, "--test-fraction", "0"), code: 2, err: []string{"--test-fraction 0 is outside the accepted range [0.01, 0.9]"}},
		{name: "experiment --test-fraction 1.5", args: []string{"experiment", "sweep", "--data", denseTxt, "--algos", "sgd-prev", "--out", filepath.Join(dir, "out"), "--test-fraction", "1.5"}, code: 2, err: []string{"--test-fraction 1.5 is outside the accepted range [0.01, 0.9]"}},
	}

	hashes := func() map[string]string {
		out := hashTree(t, siteState)
		for k, v := range hashTree(t, coordState) {
			out["coord/"+k] = v
		}
		return out
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := hashes()
			r := runChild(t, bin, timeout, c.args...)
			if r.timedOut {
				t.Fatalf("still running after %v (killed)", timeout)
			}
			if r.code != c.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%.2000s\nstderr:\n%.2000s", r.code, c.code, r.stdout, r.stderr)
			}
			for _, w := range c.err {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not say %q", r.stderr, w)
				}
			}
			for _, w := range c.out {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout does not say %q:\n%s", w, r.stdout)
				}
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "fatal error") {
				t.Errorf("crashed:\n%.3000s", r.stderr)
			}
			ceiling := baseline + c.budget + c.budget/4 // the child is never race-built (childBinary)
			if r.maxRSS == 0 || r.maxRSS > ceiling {
				t.Errorf("max RSS %d MiB, ceiling %d MiB", r.maxRSS>>20, ceiling>>20)
			}
			if after := hashes(); !maps.Equal(before, after) {
				t.Errorf("state changed:\nbefore %v\nafter  %v", before, after)
			}
			how := "rusage"
			if r.selfReported {
				how = "VmHWM"
			}
			t.Logf("exit %d, max RSS %d MiB (%s; ceiling %d), %v", r.code, r.maxRSS>>20, how, ceiling>>20, r.elapsed.Round(time.Millisecond))
		})
	}
	if len(cases) < 15 {
		t.Errorf("%d cases, want ≥ 15", len(cases))
	}
}
