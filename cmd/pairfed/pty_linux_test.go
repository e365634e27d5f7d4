//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair (/dev/ptmx and its /dev/pts/N).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	return m, s
}

// TestJSONProgressOnAPseudoTerminal (issue 16 item 5): with stderr on a real
// pseudo-terminal, `train --json` draws its progress there and prints one
// JSON document on stdout; --no-progress silences it.
func TestJSONProgressOnAPseudoTerminal(t *testing.T) {
	run := func(extra ...string) (stdout, tty string) {
		master, slave := openPTY(t)
		defer master.Close()
		got := make(chan string)
		go func() {
			var b bytes.Buffer
			io.Copy(&b, master) // ends with EIO once the slave is closed
			got <- b.String()
		}()
		app := newApp()
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, slave
		args := append([]string{"pairfed", "train", "--data", "../../datasets/diabetes", "--runs", "2", "--eta", "10", "--param-radius", "100", "--passes", "0.5", "--json"}, extra...)
		err := app.RunContext(context.Background(), args)
		slave.Close()
		tty = <-got
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, tty)
		}
		return out.String(), tty
	}
	stdout, tty := run()
	if !strings.Contains(tty, "train [") || !strings.Contains(tty, "2/2 runs 100%") {
		t.Errorf("--json on a terminal: no progress line on stderr: %q", tty)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Errorf("stdout is not one JSON document: %v\n%q", err, stdout)
	}
	if _, tty = run("--no-progress"); strings.Contains(tty, "train [") {
		t.Errorf("--no-progress drew on the terminal: %q", tty)
	}
}
