package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Lock is a held lock of a state directory.
type Lock struct{ fd int }

// LockDir takes the lock of the state directory dir (creating dir if
// needed), so that a directory has one live owner: a second coordinator
// or worker on the same directory would interleave its journal appends
// with the first's, and each would spend budget the other does not see.
// The lock is an exclusive flock(2) on the directory itself — no file is
// written, so a command that fails afterwards leaves the directory as it
// was — and the kernel releases it when the process dies (kill -9
// included), so a crash never leaves a stale lock. The error names the
// pid and command line of the holder (from /proc/locks).
func LockDir(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("store: state directory %s is in use by another live process (%s): one directory has one owner — stop that process, or give this one its own --state", dir, holder(dir))
		}
		return nil, fmt.Errorf("store: lock %s: %w", dir, err)
	}
	return &Lock{fd: fd}, nil
}

// holder describes the process holding the flock on dir, from
// /proc/locks (Linux), or says it is unknown.
func holder(dir string) string {
	fi, err := os.Stat(dir)
	if err != nil {
		return "pid unknown"
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "pid unknown"
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return "pid unknown"
	}
	want := ":" + strconv.FormatUint(st.Ino, 10)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		// "1: FLOCK ADVISORY WRITE 13720 fe:00:9980673 0 EOF"
		if len(f) >= 6 && f[1] == "FLOCK" && strings.HasSuffix(f[5], want) {
			pid := f[4]
			cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			args := strings.Fields(strings.ReplaceAll(string(cmd), "\x00", " "))
			if len(args) > 3 {
				args = args[:3]
			}
			if len(args) > 0 {
				return "pid " + pid + ": " + strings.Join(args, " ")
			}
			return "pid " + pid
		}
	}
	return "pid unknown"
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.fd < 0 {
		return nil
	}
	err := unix.Close(l.fd) // closing the descriptor releases the flock
	l.fd = -1
	return err
}
