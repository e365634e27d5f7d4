package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/store"
	"github.com/urfave/cli/v2"
)

// checkTimeout refuses a --timeout of a job client that leaves no time to
// hear the coordinator (it was reported as "no answer from a coordinator
// within 0s").
func checkTimeout(c *cli.Context) error {
	if d := c.Duration("timeout"); d <= 0 {
		return usageError{fmt.Errorf("job %s: --timeout %v leaves no time for the coordinator's answer: give a positive duration (e.g. 30s, 10m)", c.Command.Name, d)}
	}
	return nil
}

// openInput opens a file the user named (--model, --eval, a key or a
// roster) for reading, refusing a directory and every special file with
// an error naming the flag and the path: a FIFO with no writer would block
// the open — and the process, deaf to signals — for ever, a device or a
// socket yields no end. The open is non-blocking, so a FIFO is refused at
// once; on a regular file O_NONBLOCK has no effect. (The data loaders do
// the same: data.openRegular.)
func openInput(flag, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if kind := data.FileKind(st.Mode()); kind != "" {
		f.Close()
		return nil, fmt.Errorf("%s %s is a %s, not a regular file: give the path of the file itself", flag, path, kind)
	}
	return f, nil
}

// readInput reads a file the user named (openInput), at most limit bytes.
func readInput(flag, path string, limit int64) ([]byte, error) {
	f, err := openInput(flag, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s %s is larger than %d bytes: not the file this flag takes", flag, path, limit)
	}
	return b, nil
}

// namedPath is an input file of a command, by the flag that named it.
type namedPath struct{ flag, path string }

// checkOutput refuses, before anything is read or computed, an output
// file path that would destroy what the command reads or what a
// coordinator or a site owns: an existing directory (the write would fail
// at the end, after the work), a file inside a state directory
// (store.InStateDir: a job's model, a ledger, a checkpoint), or one of the
// command's own inputs (the same file under any name: os.SameFile).
func checkOutput(flag, out string, inputs ...namedPath) error {
	if out == "" {
		return nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return usageError{fmt.Errorf("%s %s is a directory: give a file name (e.g. %s)", flag, out, filepath.Join(out, "NAME"))}
	}
	if dir, ok := store.InStateDir(out); ok {
		return usageError{fmt.Errorf("%s %s is inside the state directory %s of a coordinator or a site: never write into one (it could replace a job's model, a ledger or a checkpoint); write it elsewhere", flag, out, dir)}
	}
	return notAnInput(flag, out, inputs)
}

// checkOutputDir is checkOutput for an output directory (card, report,
// deploy): it must not be a state directory or inside one.
func checkOutputDir(flag, dir string, inputs ...namedPath) error {
	if dir == "" {
		// Probe 6 (issue 28): "mkdir : no such file or directory", after
		// the whole sweep had run.
		return usageError{fmt.Errorf("%s \"\" names no directory (an empty value: an unset variable?): give the output directory", flag)}
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return usageError{fmt.Errorf("%s %s is a file, not a directory: give a directory (created if absent)", flag, dir)}
	}
	if state, ok := store.InStateDir(filepath.Join(dir, "x")); ok {
		return usageError{fmt.Errorf("%s %s is inside the state directory %s of a coordinator or a site: never write into one; write it elsewhere", flag, dir, state)}
	}
	return nil
}

func notAnInput(flag, out string, inputs []namedPath) error {
	fo, err := os.Stat(out)
	if err != nil {
		return nil // a new file is no input
	}
	for _, in := range inputs {
		if in.path == "" {
			continue
		}
		if fi, err := os.Stat(in.path); err == nil && os.SameFile(fi, fo) {
			return usageError{fmt.Errorf("%s %s is the %s file: writing it would destroy the input; give another path", flag, out, in.flag)}
		}
	}
	// Probe 5 (issue 28): score --out KEY.pub (the --trust-key file) or
	// --out KEY.pem (a signing key) replaced the key by scores. A key is
	// never an output of these commands: refuse any file that holds one.
	if fo.Mode().IsRegular() && holdsPEMKey(out) {
		return usageError{fmt.Errorf("%s %s holds a PEM key (a signing, trust or TLS key?): writing it would destroy the key; give another path", flag, out)}
	}
	return nil
}

// holdsPEMKey reports whether the file at path begins, within its first
// 4 KiB, a PEM block of a key ("-----BEGIN … KEY-----").
func holdsPEMKey(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	i := bytes.Index(b, []byte("-----BEGIN "))
	if i < 0 {
		return false
	}
	line := b[i:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return bytes.Contains(line, []byte("KEY-----"))
}
