package main

// Issue 28, probe 7 (docs/results/probe-7.md): the job commands and the
// per-job cancel keys under hostile input and operator mistakes; the
// cases that were BAD or UNCLEAR, each refused naming the problem, the
// value and the fix with nothing changed.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestProbe7CancelKeyArg: a --cancel-key that is not a key says what is
// wrong with it (without repeating it), and @FILE naming no file or a
// missing one says so with the fix.
func TestProbe7CancelKeyArg(t *testing.T) {
	dir := t.TempDir()
	key := strings.Repeat("ab", 32)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return "@" + p
	}
	for _, c := range []struct {
		arg  string
		want []string
	}{
		{"abcd", []string{"4 hex digits", "want 64 hex digits"}},
		{key + "0", []string{"65 hex digits"}},
		{"zz" + key, []string{"character 1 is 'z', not a hex digit"}},
		{key + " x", []string{"character 65 is a blank"}},
		{write("bom", "\ufeff"+key+"\n"), []string{"byte order mark", "save it as plain text"}},
		{write("line", "cancel key: "+key+"\n"), []string{"character 3 is 'n'", "give the key alone"}},
		{"@" + filepath.Join(dir, "nosuch"), []string{"no such file", "--cancel-key-out wrote"}},
		{"@", []string{"--cancel-key @ names no file", "give @FILE"}},
	} {
		_, err := cancelKeyArg(c.arg)
		if err == nil {
			t.Errorf("%q: accepted", c.arg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %q does not say %q", c.arg, err, w)
			}
		}
		if len(c.arg) > 8 && strings.Contains(err.Error(), key[:16]) {
			t.Errorf("%q: the error repeats the key: %q", c.arg, err)
		}
	}
	if os.Geteuid() != 0 { // root reads any file
		p := write("private", key+"\n")
		if err := os.Chmod(p[1:], 0); err != nil {
			t.Fatal(err)
		}
		if _, err := cancelKeyArg(p); err == nil || !strings.Contains(err.Error(), "this user may not read it (permission denied): run job cancel as the file's owner") {
			t.Errorf("an unreadable file: %v", err)
		}
	}
	// A file as `echo KEY > f` writes it, blanks and CRLF around it, and
	// capitals, are the key.
	for _, text := range []string{key + "\n", "  " + key + "  \n\n", key + "\r\n", strings.ToUpper(key)} {
		got, err := cancelKeyArg(write("ok", text))
		if err != nil || len(got) != 32 || got[0] != 0xab {
			t.Errorf("%q: %x, %v; want the key", text, got, err)
		}
	}
}

// TestProbe7CancelKeyOut: --cancel-key-out naming a directory or a file in
// a missing directory is refused before anything is drawn or sent, naming
// the fix; nothing is written.
func TestProbe7CancelKeyOut(t *testing.T) {
	dir := t.TempDir()
	base := []string{"job", "submit", "--nats", "nats://127.0.0.1:1", "--federation", "f", "--job", "j", "--algo", "fed-avg", "--timeout", "1s"}
	probe6Refused(t, dir, append(base, "--cancel-key-out", dir), "is a directory: give a new file name", filepath.Join(dir, "j.key"))
	probe6Refused(t, dir, append(base, "--cancel-key-out", filepath.Join(dir, "nodir", "k")), "the directory "+filepath.Join(dir, "nodir")+" does not exist", "create it")
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		_, err := runCLI(t, append(base, "--cancel-key-out", filepath.Join(ro, "k"))...)
		if err == nil || !strings.Contains(err.Error(), "cannot be written (permission denied): nothing was submitted") {
			t.Errorf("an unwritable directory: %v", err)
		}
	}
}

// TestProbe7ResubmitKnownID: `job submit --job ID` of an id the
// coordinator already knows under another algorithm exits 1 saying so
// (it printed the other job's status, exit 0, and with --wait its
// result); the same algorithm on an ended id notes that nothing new ran.
func TestProbe7ResubmitKnownID(t *testing.T) {
	root := t.TempDir()
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	coord := startPairfed(ctx, &logs, "coordinator", "--listen", "127.0.0.1:0", "--federation", "p7", "--state", filepath.Join(root, "coord"), "--tick", "10ms")
	defer func() {
		cancel()
		select {
		case <-coord.done:
		case <-time.After(20 * time.Second):
			t.Error("the coordinator did not stop")
		}
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	}()
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool { return urlRE.MatchString(coord.stdout.String()) })
	fed := []string{"job", "submit", "--nats", urlRE.FindStringSubmatch(coord.stdout.String())[1], "--federation", "p7", "--timeout", "20s", "--min-sites", "3", "--job", "j"}
	key := filepath.Join(root, "j.key")
	if p, code := runPairfed(t, &logs, 30*time.Second, append(fed, "--algo", "fed-avg", "--cancel-key-out", key)...); code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, p.stdout.String())
	}
	other := filepath.Join(root, "other.key")
	p, code := runPairfed(t, &logs, 30*time.Second, append(fed, "--algo", "fed-dp-local-sgd", "--epsilon", "1", "--cancel-key-out", other)...)
	if code != 1 || p.err == nil || !strings.Contains(p.err.Error(), "job j already exists at the coordinator as a fed-avg job (queued), not the fed-dp-local-sgd job this command describes: nothing new was queued") {
		t.Errorf("another algorithm under a queued id: exit %d\n%s", code, p.stdout.String())
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("%s kept: its key cancels nothing", other)
	}
	cancelArgs := []string{"job", "cancel", fed[2], fed[3], fed[4], fed[5], "--cancel-key", "@" + key, "j"}
	if p, code := runPairfed(t, &logs, 30*time.Second, cancelArgs...); code != 0 {
		t.Fatalf("cancel: exit %d\n%s", code, p.stdout.String())
	}
	p, code = runPairfed(t, &logs, 30*time.Second, append(fed, "--algo", "fed-avg")...)
	if !strings.Contains(logs.String(), "job j had already ended (failed) when this submission got its first answer") {
		t.Errorf("the same algorithm under an ended id: exit %d\n%s", code, p.stdout.String())
	}
}

// TestProbe7FlagsAfterJobID: a flag after the job id (job status J
// --json) is named as not read, with the order that works.
func TestProbe7FlagsAfterJobID(t *testing.T) {
	for _, sub := range []string{"status", "cancel", "model"} {
		args := []string{"job", sub, "--nats", "nats://127.0.0.1:1", "--timeout", "1s"}
		if sub == "model" {
			args = append(args, "--out", filepath.Join(t.TempDir(), "m.json"))
		}
		probe6Refused(t, "", append(args, "j4", "--json"), "job "+sub+": flags after the job id are not read (got [--json] after j4)", "pairfed job "+sub+" --json j4")
	}
	key := strings.Repeat("ab", 32)
	for _, k := range [][]string{{"--cancel-key", key}, {"--cancel-key=" + key}} {
		args := append([]string{"job", "cancel", "--nats", "nats://127.0.0.1:1", "j4"}, k...)
		probe6Refused(t, "", args, "flags after the job id are not read", "KEY j4")
		if _, err := runCLI(t, args...); err == nil || strings.Contains(err.Error(), key) {
			t.Errorf("%v: the error repeats the key: %v", args, err)
		}
	}
}
