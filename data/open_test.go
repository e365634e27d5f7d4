package data

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO with no writer, a device and a directory given as a data file or
// a schema are refused at once with an error naming them (a FIFO once
// blocked the open for ever, ignoring signals).
func TestLoadRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	cases := []struct{ path, want string }{
		{fifo, "named pipe (FIFO)"},
		{"/dev/null", "special file"},
		{t.TempDir(), "is a directory"},
	}
	for _, c := range cases {
		done := make(chan error, 2)
		go func() {
			_, err := Load(c.path, Options{})
			done <- err
			_, err = LoadSchema(c.path)
			done <- err
		}()
		for i := 0; i < 2; i++ {
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
					t.Errorf("%s: %v, want an error saying %q", c.path, err, c.want)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s: the open blocked", c.path)
			}
		}
	}
	if _, err := os.Stat(fifo); err != nil {
		t.Fatal(err)
	}
}
