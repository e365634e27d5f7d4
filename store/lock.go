package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFile is the lock of a state directory: a process that uses the
// directory holds an exclusive flock(2) on it for its whole life and
// writes its pid into it.
const LockFile = ".lock"

// Lock is a held lock of a state directory.
type Lock struct{ f *os.File }

// LockDir takes the lock of the state directory dir (creating dir if
// needed), so that a directory has one live owner: a second coordinator
// or worker on the same directory would interleave its journal appends
// with the first's and each would spend budget the other does not see.
// The kernel releases the lock when the process dies (kill -9 included),
// so a crash never leaves a stale lock. what names the owner in the file
// ("coordinator", "worker a"). The error names the pid holding it.
func LockDir(dir, what string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("store: state directory %s is in use by another live process (%s): one directory has one owner — stop that process, or give this one its own --state", dir, describeHolder(holder))
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d %s\n", os.Getpid(), what)), 0)
	}
	return &Lock{f: f}, nil
}

func describeHolder(b []byte) string {
	s := strings.TrimSpace(string(b))
	if f := strings.Fields(s); len(f) >= 2 && f[0] == "pid" {
		if _, err := strconv.Atoi(f[1]); err == nil {
			return s
		}
	}
	return "pid unknown"
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
