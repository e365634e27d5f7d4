package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// The progress line: exact rendering, throttling (at most one redraw per
// 200 ms, except the first update and reaching the total), blanking of a
// shorter line, the final redraw with a newline, and silence afterwards.
func TestProgressRenderThrottleFinish(t *testing.T) {
	clk := &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	p := newProgress(&out, "sweep", clk.now)
	step := func(d time.Duration, done, total int, want string) {
		t.Helper()
		clk.advance(d)
		out.Reset()
		p.Update(done, total)
		if got := out.String(); got != want {
			t.Fatalf("after Update(%d, %d): wrote %q, want %q", done, total, got, want)
		}
	}
	step(0, 0, 10, "\rsweep [--------------------]  0/10 runs   0%  elapsed 0:00  ETA --:--")
	step(100*time.Millisecond, 1, 10, "") // throttled
	step(50*time.Millisecond, 2, 10, "")  // throttled
	// 10 s in, 2 of 10 done: 40 s to go; "ETA 0:40" is one rune shorter
	// than "ETA --:--", so one blank follows.
	step(9850*time.Millisecond, 2, 10, "\rsweep [####----------------]  2/10 runs  20%  elapsed 0:10  ETA 0:40 ")
	step(199*time.Millisecond, 3, 10, "") // still within 200 ms of the last draw
	step(time.Millisecond, 5, 10, "\rsweep [##########----------]  5/10 runs  50%  elapsed 0:10  ETA 0:10")
	// Reaching the total is always drawn.
	step(10*time.Millisecond, 10, 10, "\rsweep [####################] 10/10 runs 100%  elapsed 0:10  ETA 0:00")

	clk.advance(2 * time.Second)
	out.Reset()
	p.Finish()
	if want := "\rsweep [####################] 10/10 runs 100%  elapsed 0:12  ETA 0:00\n"; out.String() != want {
		t.Fatalf("Finish wrote %q, want %q", out.String(), want)
	}
	out.Reset()
	p.Update(10, 10)
	p.Finish()
	if out.Len() != 0 {
		t.Fatalf("wrote %q after Finish", out.String())
	}
}

// Finish after an interrupted run redraws the last state and ends the
// line, so that an error message starts on a line of its own.
func TestProgressFinishEndsAnInterruptedLine(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	var out bytes.Buffer
	p := newProgress(&out, "train", clk.now)
	p.Update(0, 3)
	clk.advance(3 * time.Second)
	p.Update(1, 3)
	clk.advance(50 * time.Millisecond)
	p.Update(2, 3) // throttled, but Finish shows it
	p.Finish()
	lines := strings.Split(out.String(), "\r")
	last := lines[len(lines)-1]
	if last != "train [#############-------] 2/3 runs  66%  elapsed 0:03  ETA 0:02\n" {
		t.Fatalf("final line %q", last)
	}
}

func TestProgressNilAndUndrawn(t *testing.T) {
	var p *progress
	p.Update(1, 2) // no panic
	p.Finish()
	if p.OnRun() != nil {
		t.Fatal("a disabled progress line gave a callback")
	}
	var out bytes.Buffer
	q := newProgress(&out, "x", time.Now)
	q.Finish()
	if out.Len() != 0 {
		t.Fatalf("an undrawn line wrote %q on Finish", out.String())
	}
}

// A line wider than the terminal is cut to the width minus one column (a
// full-width line would wrap and break the carriage return).
func TestProgressCutToTerminalWidth(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, "simulate", func() time.Time { return time.Unix(0, 0) })
	p.cols = 20
	p.Update(1, 4)
	if got := out.String(); got != "\rsimulate [#####----" {
		t.Fatalf("wrote %q", got)
	}
}

func TestFmtClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 59600 * time.Millisecond: "1:00", 754 * time.Second: "12:34",
		3725 * time.Second: "1:02:05", -time.Second: "0:00",
	} {
		if got := fmtClock(d); got != want {
			t.Errorf("fmtClock(%v) = %q, want %q", d, got, want)
		}
	}
}

// ttyBuffer is a stderr that says it is a terminal.
type ttyBuffer struct{ bytes.Buffer }

func (*ttyBuffer) IsTerminal() bool { return true }

// runCLITTY runs the app with separate stdout and stderr; with tty the
// stderr claims to be a terminal.
func runCLITTY(t *testing.T, tty bool, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	app := newApp()
	var out bytes.Buffer
	var errw interface {
		Write([]byte) (int, error)
		String() string
	} = &bytes.Buffer{}
	if tty {
		errw = &ttyBuffer{}
	}
	app.Writer, app.ErrWriter = &out, errw
	err = app.RunContext(context.Background(), append([]string{"pairfed"}, args...))
	return out.String(), errw.String(), err
}

// train, simulate and sweep draw the progress line on a terminal stderr
// only (with or without --json), never with --no-progress, and never on
// stdout.
func TestCommandsDrawProgressOnlyOnATerminal(t *testing.T) {
	out := t.TempDir()
	commands := map[string][]string{
		"train":    {"train", "--data", "../../datasets/diabetes", "--runs", "2", "--eta", "10", "--param-radius", "100", "--passes", "0.5"},
		"simulate": {"simulate", "--data", "../../datasets/diabetes", "--sites", "2", "--runs", "2", "--rounds", "2", "--transport", "mem"},
		"sweep": {"experiment", "sweep", "--data", "../../datasets/diabetes", "--algos", "dp-local-sgd", "--epsilons", "1,2,4",
			"--runs", "2", "--seed", "3", "--out", filepath.Join(out, "s")},
	}
	final := map[string]string{"train": "2/2 runs 100%", "simulate": "2/2 runs 100%", "sweep": "6/6 runs 100%"}
	for name, args := range commands {
		stdout, stderr, err := runCLITTY(t, true, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		if !strings.HasPrefix(stderr, "\r"+name+" [") || !strings.Contains(stderr, final[name]) || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%s: progress on a terminal: %q", name, stderr)
		}
		if strings.Contains(stdout, "\r") {
			t.Errorf("%s: progress on stdout: %q", name, stdout)
		}
		// --json keeps the progress line on a terminal stderr (issue 16
		// item 5), with one clean JSON document on stdout.
		{
			stdout, stderr, err := runCLITTY(t, true, append(args, "--json")...)
			if err != nil {
				t.Fatalf("%s --json: %v", name, err)
			}
			if !strings.Contains(stderr, final[name]) {
				t.Errorf("%s --json: no progress on a terminal stderr: %q", name, stderr)
			}
			var v any
			if err := json.Unmarshal([]byte(stdout), &v); err != nil {
				t.Errorf("%s --json: stdout is not one JSON document: %v\n%q", name, err, stdout)
			}
		}
		_, stderr, err = runCLITTY(t, true, append(args, "--no-progress")...)
		if err != nil {
			t.Fatalf("%s --no-progress: %v", name, err)
		}
		if stderr != "" {
			t.Errorf("%s --no-progress: wrote %q on stderr", name, stderr)
		}
		if _, stderr, err := runCLITTY(t, false, args...); err != nil || stderr != "" {
			t.Errorf("%s, stderr not a terminal: %v, wrote %q", name, err, stderr)
		}
	}
}

func TestSweepCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"experiment", "sweep", "--data", "../../datasets/diabetes", "--algos", "sgd-prev, dp-local-sgd", "--epsilons", "0.5,2",
		"--sizes", "64,128", "--runs", "2", "--eta", "10", "--param-radius", "100", "--dim", "8", "--out", dir}
	stdout, _, err := runCLITTY(t, false, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## AUC vs ε", "## AUC vs n", "| dp-local-sgd | — | logistic | yes |", "wrote " + filepath.Join(dir, "results.csv")} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	for _, f := range []string{"results.csv", "results.md", "auc_vs_epsilon.png", "auc_vs_n.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(stdout, string(md)) {
		t.Error("stdout is not results.md")
	}

	// --json: the rows, ε null for the non-private algorithm; an explicit
	// --seed seeds the noise and labels the private rows not private.
	args = []string{"experiment", "sweep", "--data", "../../datasets/diabetes", "--algos", "sgd-prev,dp-local-sgd", "--epsilons", "0.5,2",
		"--eta", "10", "--param-radius", "100", "--runs", "1", "--out", dir}
	stdout, _, err = runCLITTY(t, false, append(args, "--json", "--seed", "5")...)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Seeded bool
		Rows   []struct {
			Sweep, Algorithm string
			Epsilon          *float64
			N, Count         int
			Mean             float64
			Private          bool
		}
		Files []string
	}
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if !m.Seeded || len(m.Rows) != 3 || len(m.Files) != 3 {
		t.Fatalf("unexpected JSON: %+v", m)
	}
	for _, r := range m.Rows {
		if (r.Algorithm == "sgd-prev") != (r.Epsilon == nil) || r.Private || r.Count != 1 {
			t.Errorf("row %+v", r)
		}
	}
}

func TestSweepUsageErrors(t *testing.T) {
	base := []string{"experiment", "sweep", "--data", "../../datasets/diabetes", "--out", t.TempDir()}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--algos", "fed-avg"}, "--sites"},
		{[]string{"--algos", "dpegd"}, "--epsilons"},
		{[]string{"--algos", "dpegd", "--epsilons", "1,x"}, "--epsilons"},
		{[]string{"--algos", "dpegd", "--epsilons", "-1"}, "accepted range [1e-06, 10000]"},
		{[]string{"--algos", "sgd-prev", "--sizes", "10,"}, "--sizes"},
		{[]string{"--algos", "sgd-prev", "--runs", "0"}, "--runs"},
		{[]string{"--algos", "nope"}, "unknown algorithm"},
	} {
		_, _, err := runCLITTY(t, false, append(base, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("%v: error %v (exit %d), want a usage error mentioning %q", c.args, err, exitCode(err), c.want)
		}
	}
}
