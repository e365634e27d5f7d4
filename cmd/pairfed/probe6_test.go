package main

// Issue 28, probe 6 (docs/results/probe-6.md): the cases of simulate,
// audit, experiment sweep, report, ledger, score and deploy that were BAD
// or UNCLEAR, each refused naming the problem, the value and the fix
// with nothing written, or done as asked.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/worker"
)

// probe6Refused runs args, wants an error containing every want, and
// checks that dir (when not "") holds the same files afterwards.
func probe6Refused(t *testing.T, dir string, args []string, want ...string) {
	t.Helper()
	before := probe6Files(t, dir)
	out, err := runCLI(t, args...)
	if err == nil {
		t.Fatalf("%v: accepted, want a refusal\n%s", args, out)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v: error %q does not say %q", args, err, w)
		}
	}
	if exitCode(err) != 2 {
		t.Errorf("%v: exit status %d, want 2 (a usage error)", args, exitCode(err))
	}
	if after := probe6Files(t, dir); after != before {
		t.Errorf("%v: files changed on refusal:\n%s\nthen\n%s", args, before, after)
	}
}

// probe6Files lists the files under dir with their sizes ("" for none).
func probe6Files(t *testing.T, dir string) string {
	t.Helper()
	if dir == "" {
		return ""
	}
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			b.WriteString(p + " " + fi.Mode().String() + " " + strings.Repeat("#", int(fi.Size()%7)) + "\n")
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	return b.String()
}

// TestProbe6StrayArguments: urfave/cli stops reading flags at the first
// argument, so `simulate --verbose true --algo fed-dp-local-sgd
// --epsilon 1` ran fed-avg, not private, and `train --json true --epsilon
// 1 --out-model m.json` wrote no model, without a word. A command that
// takes no arguments now refuses them, naming the unread flags.
func TestProbe6StrayArguments(t *testing.T) {
	dir := t.TempDir()
	probe6Refused(t, dir, []string{"simulate", "--data", "../../datasets/diabetes", "--verbose", "true", "--algo", "fed-dp-local-sgd", "--epsilon", "1"},
		`pairfed simulate takes no arguments, got "true"`, "(--algo fed-dp-local-sgd --epsilon 1) were not read as flags", "--json=false")
	probe6Refused(t, dir, []string{"train", "--data", "../../datasets/diabetes", "--json", "true", "--epsilon", "1", "--out-model", filepath.Join(dir, "m.json")},
		`pairfed train takes no arguments, got "true"`)
	probe6Refused(t, dir, []string{"ledger", "show", "--state", dir, "extra"}, `pairfed ledger show takes no arguments, got "extra"`)
	probe6Refused(t, dir, []string{"bench", "--json", "extra"}, `pairfed bench takes no arguments`)
	probe6Refused(t, dir, []string{"job", "submit", "--nats", "nats://127.0.0.1:1", "--wait", "true", "--epsilon", "1"},
		`pairfed job submit takes no arguments, got "true"`, "(--epsilon 1) were not read as flags")
	probe6Refused(t, dir, []string{"job", "cancel", "--nats", "nats://127.0.0.1:1", "j1", "--cancel-key", "@k"}, "flags after the job id are not read")
	// A global option after the command says where it goes.
	probe6Refused(t, dir, []string{"simulate", "--data", "../../datasets/diabetes", "--cpuprofile", filepath.Join(dir, "cpu.prof")},
		"--cpuprofile is an option of pairfed itself: give it before the command")
	probe6Refused(t, dir, []string{"score", "--log-level", "debug"}, "--log-level is an option of pairfed itself")
	// Commands that take an argument keep it.
	if out, err := runCLI(t, "algos", "dpegd"); err != nil || !strings.Contains(out, "dpegd") {
		t.Errorf("algos dpegd: %v\n%s", err, out)
	}
}

// TestProbe6AuditZeros: an explicit 0 was read as "the default": --noise-scale
// 0 audited noise ×1, --confidence 0 ran at 0.95.
func TestProbe6AuditZeros(t *testing.T) {
	for _, f := range []string{"trials", "confidence", "noise-scale"} {
		probe6Refused(t, "", []string{"audit", "--algo", "dpegd", "--epsilon", "1", "--" + f, "0"}, "--"+f+" 0 is not a valid value", "leave it out for the default")
	}
}

// TestProbe6SweepSingleClass: the sweep ran fed-avg on single-class sites
// (AUC 0.5) without the warning simulate gives.
func TestProbe6SweepSingleClass(t *testing.T) {
	dir := t.TempDir()
	out, err := runCLI(t, "experiment", "sweep", "--data", "../../datasets/diabetes", "--algos", "fed-avg", "--sites", "3",
		"--partition", "single-class", "--runs", "1", "--out", dir, "--no-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "warning: --partition single-class with fed-avg") || !strings.Contains(out, "fed-dp-lda") {
		t.Errorf("no warning naming fed-avg and the algorithms for single-class sites:\n%s", out)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "cannot learn from sites that hold one class") {
		t.Errorf("results.md does not note it:\n%s", md)
	}
}

// TestProbe6LedgerExportDash: --out - wrote a file named "-".
func TestProbe6LedgerExportDash(t *testing.T) {
	dir := t.TempDir()
	state := probe6SiteLedger(t, dir)
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	out, err := runCLI(t, "ledger", "export", "--state", state, "--out", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "site,job,phase") {
		t.Errorf("the export is not on standard output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error(`a file named "-" was written`)
	}
}

// probe6SiteLedger writes a site's state directory under dir with one
// charge and returns it.
func probe6SiteLedger(t *testing.T, dir string) string {
	t.Helper()
	state := filepath.Join(dir, "site")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := claimSiteDir(state, "h1"); err != nil {
		t.Fatal(err)
	}
	l, _, _, err := store.OpenLedger(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(worker.Release{Job: "j", Phase: 1, Records: 5, Sigma: 2, Epsilon: 0.6, Delta: 1e-3, Secure: true}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	return state
}

// TestProbe6ScoreFiles: score of a file with a UTF-8 byte order mark
// (Excel's "CSV UTF-8") was refused, `has no column "patient_id"` listing
// a column that looked the same; a cell of 5 MB was quoted whole in the
// error and a header of 100 000 unknown columns was listed whole.
func TestProbe6ScoreFiles(t *testing.T) {
	dir := t.TempDir()
	m := probe5Model(t, dir, "m.json", "")
	plain, err := os.ReadFile(patientsCSV)
	if err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(dir, "bom.csv")
	os.WriteFile(bom, append([]byte("\xef\xbb\xbf"), strings.ReplaceAll(string(plain), "\n", "\r\n")...), 0o644)
	want, err := runCLI(t, "score", "--model", m, "--data", patientsCSV, "--id-column", "patient_id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := runCLI(t, "score", "--model", m, "--data", bom, "--id-column", "patient_id")
	if err != nil || got != want {
		t.Errorf("score of the file with a BOM and CRLF: %v\n%s\nwant\n%s", err, got, want)
	}
	if out, err := runCLI(t, "evaluate", "--model", m, "--data", bom); err != nil || !strings.Contains(out, "n = 60") {
		t.Errorf("evaluate of the file with a BOM: %v\n%s", err, out)
	}

	lines := strings.SplitAfter(string(plain), "\n")
	long := filepath.Join(dir, "long.csv")
	row := strings.SplitN(lines[1], ",", 3)
	os.WriteFile(long, []byte(lines[0]+row[0]+","+strings.Repeat("7", 5<<20)+","+row[2]+strings.Join(lines[2:], "")), 0o644)
	_, err = runCLI(t, "score", "--model", m, "--data", long, "--id-column", "patient_id")
	if err == nil || len(err.Error()) > 2000 || !strings.Contains(err.Error(), "(5242880 bytes)") {
		t.Errorf("a 5 MB cell: error of %d bytes, want a short one giving the cell's length: %.300v", len(err.Error()), err)
	}

	var cols []string
	for i := range 100000 {
		cols = append(cols, "c"+strconv.Itoa(i))
	}
	wide := filepath.Join(dir, "wide.csv")
	os.WriteFile(wide, []byte(strings.TrimSuffix(lines[0], "\n")+","+strings.Join(cols, ",")+"\n"+strings.Join(lines[1:], "")), 0o644)
	_, err = runCLI(t, "score", "--model", m, "--data", wide, "--id-column", "patient_id")
	if err == nil || len(err.Error()) > 2000 || !strings.Contains(err.Error(), "(99980 more)") {
		t.Errorf("a header of 100 000 unknown columns: error of %d bytes, want the first 20 and the count: %.300v", len(err.Error()), err)
	}
}

// TestProbe6ReportDamagedJob: a cut job record was "unexpected end of JSON
// input"; a missing --state and an empty --job named no fix.
func TestProbe6ReportDamagedJob(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "coord")
	os.MkdirAll(filepath.Join(state, "jobs"), 0o700)
	os.WriteFile(filepath.Join(state, "jobs", "j1.json"), []byte(`{"job": "j1", "sta`), 0o600)
	out := filepath.Join(dir, "r")
	before := probe6Files(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--job", "j1", "--state", state}, "(18 bytes) is not a job record (unexpected end of JSON input): the coordinator writes it whole, so it was cut, edited or damaged; restore it from a backup"},
		{[]string{"--job", "j1", "--state", filepath.Join(dir, "nosuch")}, "nosuch: no such file or directory: give the coordinator's state directory"},
		{[]string{"--job", "", "--state", state}, `--job "": protocol: empty job: give the id of a job of --state`},
	} {
		_, err := runCLI(t, append(append([]string{"report"}, c.args...), "--out", out)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if after := probe6Files(t, dir); after != before {
		t.Errorf("files changed:\n%s", after)
	}
}

// TestProbe6OutModelDirectory: --out-model in a directory pairfed cannot
// write into failed after the run, naming its temporary file ("open
// ./.m.json.4008861012: permission denied"); it is refused before the
// run, naming the file, the directory and the fix.
func TestProbe6OutModelDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range []string{"train", "simulate"} {
		probe6Refused(t, dir, []string{cmd, "--data", "../../datasets/diabetes", "--out-model", filepath.Join(dir, "nodir", "m.json")},
			"nodir does not exist: create it first (mkdir -p ")
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: the read-only directory case is skipped (root writes anywhere)")
		return
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	probe6Refused(t, dir, []string{"simulate", "--data", "../../datasets/diabetes", "--out-model", filepath.Join(ro, "m.json")},
		"cannot write "+filepath.Join(ro, "m.json")+": permission denied in its directory", "choose a directory you can write to")
}

// TestProbe6SecAggDropoutBelowThreshold: a dropout leaving fewer sites
// than the threshold aborted every round after the run started ("secagg:
// too few surviving sites … threshold 4"), with no fix; it is refused
// before the run, giving the largest dropout and threshold that work.
func TestProbe6SecAggDropoutBelowThreshold(t *testing.T) {
	base := []string{"simulate", "--data", "../../datasets/diabetes", "--feature-bounds", "../../schemas/diabetes.json",
		"--algo", "fed-dp-local-sgd", "--epsilon", "1", "--secure-aggregation", "--sites", "4", "--no-progress"}
	probe6Refused(t, "", append(base, "--secagg-threshold", "4", "--secagg-dropout", "0.5"),
		"drops ⌊0.5·4⌋ = 2 of the 4 sites from every round, leaving 2, fewer than the threshold t = 4 (--secagg-threshold)", "(--secagg-dropout < 0.25) or lower --secagg-threshold to at most 2")
	probe6Refused(t, "", append(base, "--secagg-dropout", "0.5"), "t = 3 (the default ⌊2N/3⌋+1 of N = 4 sites)", "--secagg-dropout < 0.5")
}

// TestProbe6OutputDirectories: --out "" (an unset variable) of card,
// report, deploy init and experiment sweep was "mkdir : no such file or
// directory" — the sweep's after its whole run —, and the sweep wrote its
// tables into a site's or a coordinator's state directory, which every
// other output refuses.
func TestProbe6OutputDirectories(t *testing.T) {
	dir := t.TempDir()
	m := probe5Model(t, dir, "m.json", "")
	state := probe6SiteLedger(t, dir)
	sweep := []string{"experiment", "sweep", "--data", "../../datasets/diabetes", "--algos", "sgd-prev", "--runs", "1", "--no-progress"}
	for _, args := range [][]string{
		{"card", "--model", m},
		{"report", "--job", "j1", "--state", dir},
		{"deploy", "init", "--federation", "f", "--sites", "a"},
		sweep,
	} {
		probe6Refused(t, dir, append(args, "--out", ""), `--out "" names no directory (an empty value: an unset variable?)`)
	}
	probe6Refused(t, dir, append(sweep, "--out", state), "is inside the state directory", "never write into one")
	probe6Refused(t, dir, append(sweep, "--out", filepath.Join(state, "sweep")), "is inside the state directory")
}

// TestProbe6SimulateSecAggZeros: --secagg-threshold 0 and --secagg-timeout
// 0 ran with the defaults without a word.
func TestProbe6SimulateSecAggZeros(t *testing.T) {
	for _, f := range []string{"--secagg-threshold", "--secagg-timeout"} {
		probe6Refused(t, "", []string{"simulate", "--data", "../../datasets/diabetes", "--feature-bounds", "../../schemas/diabetes.json",
			"--algo", "fed-dp-local-sgd", "--epsilon", "1", "--secure-aggregation", f, "0", "--no-progress"}, f+" 0 is not a valid value", "leave it out for the default")
	}
}
