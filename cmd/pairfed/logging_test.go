package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer safe for the goroutines of a run.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runApp runs the app with separate stdout and stderr; the default slog
// logger it installs is restored afterwards.
func runApp(t *testing.T, ctx context.Context, stdout, stderr *lockedBuffer, args ...string) error {
	t.Helper()
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	app := newApp()
	app.Writer, app.ErrWriter = stdout, stderr
	return app.RunContext(ctx, append([]string{"pairfed"}, args...))
}

// --log-format json makes every log line of a simulation (coordinator
// and workers) one JSON object with level, message and component (and the
// worker's site); --log-level warn leaves out the information lines; the
// report on stdout is unchanged.
func TestLogFormatJSON(t *testing.T) {
	var stdout, stderr lockedBuffer
	err := runApp(t, context.Background(), &stdout, &stderr, "--log-format", "json", "simulate", "--data", "../../datasets/diabetes",
		"--sites", "3", "--rounds", "3", "--transport", "mem", "--verbose", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	components := map[string]int{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v\n%q", err, l)
		}
		msg, _ := m["msg"].(string)
		comp, _ := m["component"].(string)
		if m["level"] != "INFO" && m["level"] != "WARN" || msg == "" || m["time"] == nil || comp == "" {
			t.Errorf("log line %q", l)
		}
		components[comp]++
		if comp == "worker" {
			if site, _ := m["site"].(string); !strings.HasPrefix(msg, "worker "+site+": ") || !strings.HasPrefix(site, "site-") {
				t.Errorf("worker line without its site: %q", l)
			}
		}
		if comp == "coordinator" && !strings.HasPrefix(msg, "coordinator: ") {
			t.Errorf("coordinator line %q", l)
		}
	}
	if components["coordinator"] < 4 || components["worker"] < 3 {
		t.Fatalf("components %v in:\n%s", components, stderr.String())
	}
	if !strings.Contains(stderr.String(), `"msg":"coordinator: job run-0 done after 3 phases"`) {
		t.Errorf("no line for the job's end:\n%s", stderr.String())
	}

	var out2, err2 lockedBuffer
	if err := runApp(t, context.Background(), &out2, &err2, "--log-level", "warn", "simulate", "--data", "../../datasets/diabetes",
		"--sites", "2", "--rounds", "2", "--transport", "mem", "--verbose", "--json"); err != nil {
		t.Fatal(err)
	}
	if s := err2.String(); strings.Contains(s, "level=INFO") || strings.Contains(s, "joined") {
		t.Errorf("--log-level warn logged information lines:\n%s", s)
	}
}

// The text format is key=value (the message intact, so that greps for it
// keep working); unknown formats and levels are usage errors.
func TestLogFormatTextAndErrors(t *testing.T) {
	var stdout, stderr lockedBuffer
	if err := runApp(t, context.Background(), &stdout, &stderr, "simulate", "--data", "../../datasets/diabetes",
		"--sites", "2", "--rounds", "2", "--transport", "mem", "--verbose", "--json"); err != nil {
		t.Fatal(err)
	}
	if s := stderr.String(); !strings.Contains(s, `level=INFO msg="coordinator: site site-0 joined (n = `) || !strings.Contains(s, "component=coordinator") {
		t.Errorf("text log:\n%s", s)
	}
	for _, args := range [][]string{{"--log-format", "xml", "algos"}, {"--log-level", "loud", "algos"}} {
		var o, e lockedBuffer
		err := runApp(t, context.Background(), &o, &e, args...)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
}

// stderrLogf's lines: the message is the formatted line; the component is
// the prefix, or the line's coordinator/worker prefix; errors are
// warnings.
func TestStderrLogfAttributes(t *testing.T) {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	var buf lockedBuffer
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	stderrLogf("nats: ")("async error: %v", "permissions violation")
	stderrLogf("")("worker %s: joined job %s", "h-1", "j")
	stderrLogf("")("coordinator: job %s aborted", "j")
	stderrLogf("")("something else")
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		delete(m, "time")
		got = append(got, m)
	}
	want := []map[string]any{
		{"level": "WARN", "msg": "async error: permissions violation", "component": "nats"},
		{"level": "INFO", "msg": "worker h-1: joined job j", "component": "worker", "site": "h-1"},
		{"level": "WARN", "msg": "coordinator: job j aborted", "component": "coordinator"},
		{"level": "INFO", "msg": "something else", "component": "pairfed"},
	}
	if len(got) != len(want) {
		t.Fatalf("lines %v", got)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Errorf("line %d: %v, want %v", i, got[i], want[i])
		}
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Errorf("line %d: %v, want %v", i, got[i], want[i])
			}
		}
	}
}
