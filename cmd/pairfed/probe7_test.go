package main

// Issue 28, probe 7 (docs/results/probe-7.md): the job commands and the
// per-job cancel keys under hostile input and operator mistakes; the
// cases that were BAD or UNCLEAR, each refused naming the problem, the
// value and the fix with nothing changed.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
