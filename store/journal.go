package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// journal is an append-only file of JSON lines, each appended with one
// write and fsynced before append returns. It is the storage of both
// privacy ledgers (a site's and the coordinator's).
type journal struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	broken error // a failed append may have left a partial line: no more appends until repair
	// replaced is set when the file at path is no longer the open one:
	// that is never repaired in place (a restart must look at it).
	replaced bool
	// good is the size of the file up to its last acknowledged line: a
	// failed write or fsync is undone by truncating back to it.
	good int64
	// fail, when set (tests), replaces the write of an append or probe.
	fail func([]byte) error
}

// openJournal opens dir/name for appends (creating both if needed), hands
// every complete line to decode in order, and truncates a torn last line
// (an append interrupted by a crash: its caller never got nil, so what it
// guarded was never released); notes reports that. A line that does not
// decode is an error that names the file and line.
func openJournal(dir, name string, decode func(line []byte) error) (j *journal, notes []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	path := filepath.Join(dir, name)
	// O_APPEND: every write lands at the end of the file, whatever else
	// has the file open (a second writer's lines are never overwritten).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	// One journal, one state directory: the directory's lock (LockDir)
	// guards this path only, so a file hard-linked into a second
	// directory would have two owners, each spending budget the other
	// does not see.
	if n, ok := linkCount(f); ok && n > 1 {
		return nil, nil, fmt.Errorf("store: %s has %d hard links: a journal belongs to one state directory, and another path shares this file — give each site and coordinator its own --state (copy a file, never link it)", path, n)
	}
	if err := syncDir(dir); err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("store: read %s: %w", path, err)
	}
	good := bytes.LastIndexByte(b, '\n') + 1 // bytes up to the last complete line
	if err := checkTorn(path, b[good:]); err != nil {
		return nil, nil, err
	}
	if good < len(b) {
		notes = append(notes, fmt.Sprintf("%s: dropped a torn last line of %d bytes (an entry interrupted before what it guarded was released)", path, len(b)-good))
		if err := f.Truncate(int64(good)); err != nil {
			return nil, nil, fmt.Errorf("store: truncate %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return nil, nil, fmt.Errorf("store: fsync %s: %w", path, err)
		}
	}
	if err := scanLines(path, b[:good], decode); err != nil {
		return nil, nil, err
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	return &journal{f: f, path: path, good: end}, notes, nil
}

// readJournal decodes the complete lines of path (missing: none).
func readJournal(path string, decode func(line []byte) error) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	good := bytes.LastIndexByte(b, '\n') + 1
	if err := checkTorn(path, b[good:]); err != nil {
		return err
	}
	return scanLines(path, b[:good], decode)
}

// maxEntry bounds one journal line (scanLines reads no longer one).
const maxEntry = 1 << 20

// checkTorn accepts what follows a journal's last newline only when it
// can be what a crash leaves of an append: nothing, or the beginning of
// one JSON entry (a '{', no longer than an entry, valid JSON so far and
// cut short), possibly followed or replaced by zero bytes (the blocks a
// file system allocated for the append but never wrote). Anything else — a file replaced by other content, binary
// junk, lines whose newlines were lost — is not an interrupted append:
// dropping it (the journal's repair) would silently forget what the
// lines recorded, so it is an error naming the file and the fix.
func checkTorn(path string, tail []byte) error {
	n := len(tail)
	tail = bytes.TrimRight(tail, "\x00")
	if len(tail) == 0 {
		return nil
	}
	var v json.RawMessage
	err := json.Unmarshal(tail, &v)
	if tail[0] == '{' && len(tail) < maxEntry && err != nil && err.Error() == "unexpected end of JSON input" {
		return nil
	}
	return fmt.Errorf("store: %s ends with %d bytes after its last complete line that are not the beginning of one entry (an append interrupted by a crash leaves at most that): the file was replaced, edited or damaged, and reading it would forget what it recorded; restore it from a backup", path, n)
}

func scanLines(path string, b []byte, decode func(line []byte) error) error {
	for line := 1; len(b) > 0; line++ {
		l, rest, _ := bytes.Cut(b, []byte{'\n'})
		b = rest
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		// Probe 6 (issue 28): a line longer than any entry was
		// "bufio.Scanner: token too long", naming neither the line nor
		// the fix.
		if len(l) > maxEntry {
			return fmt.Errorf("store: %s:%d: a line of %d bytes, longer than any entry pairfed writes (at most %d): the file was edited or damaged, and reading past it would forget what it records; restore it from a backup", path, line, len(l), maxEntry)
		}
		if err := decode(l); err != nil {
			return fmt.Errorf("store: %s:%d: %w", path, line, err)
		}
	}
	return nil
}

// decodeStrict decodes exactly one JSON value into v: unknown fields and
// anything after the value (a second object, stray bytes) are errors, so
// that a line carrying extra content is rejected rather than partially
// read.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the entry at byte %d: one entry per line, nothing else", dec.InputOffset())
	}
	return nil
}

// append writes the JSON lines of vs with one write and fsyncs the file.
func (j *journal) append(vs ...any) error {
	var buf []byte
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		buf = append(append(buf, b...), '\n')
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("store: ledger closed")
	}
	if err := j.repair(); err != nil {
		return err
	}
	// The file must still be the one this process opened: appending to a
	// ledger deleted or replaced under it would record spending nowhere.
	if err := j.same(); err != nil {
		j.broken, j.replaced = err, true
		return err
	}
	// A failed append is undone at once (best effort; else by the next
	// append): the part of a batch that fitted before the disk filled
	// must not be read — by this process after a restart, or by `pairfed
	// ledger show` meanwhile — as entries that were acknowledged.
	if err := j.write(buf); err != nil {
		j.broken = err
		j.repair()
		return fmt.Errorf("store: append to %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		j.broken = err
		j.repair()
		return fmt.Errorf("store: fsync %s: %w", j.path, err)
	}
	j.good += int64(len(buf))
	return nil
}

func (j *journal) write(b []byte) error {
	if j.fail != nil {
		if err := j.fail(b); err != nil {
			return err
		}
	}
	_, err := j.f.Write(b)
	return err
}

// repair undoes a failed append (a write that hit a full disk, or an
// fsync that failed) by truncating the file back to its last acknowledged
// line and fsyncing it, so that appends can go on once the disk has room
// again, without a restart. What the failed append guarded was never
// released (its caller got the error). A file deleted or replaced under
// the process is not repaired. Called with j.mu held.
func (j *journal) repair() error {
	if j.broken == nil {
		return nil
	}
	if j.replaced {
		return fmt.Errorf("store: ledger unusable (restart the process once the file is restored): %w", j.broken)
	}
	if err := j.same(); err != nil {
		j.broken, j.replaced = err, true
		return err
	}
	if err := j.f.Truncate(j.good); err != nil {
		return fmt.Errorf("store: %s cannot be repaired after an earlier failure (%v): truncate: %w", j.path, j.broken, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("store: %s cannot be repaired after an earlier failure (%v): fsync: %w", j.path, j.broken, err)
	}
	j.broken = nil
	return nil
}

// probeSize is the size of the blank line Writable appends and removes.
const probeSize = 4096

// writable reports whether an entry can be appended now: it repairs an
// earlier failure, then appends a blank line of probeSize bytes (decoders
// skip blank lines, so a crash in between leaves a valid file), fsyncs
// and truncates it away. A full disk, a read-only file system or a ledger
// replaced under the process is an error naming the file.
func (j *journal) writable() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("store: ledger closed")
	}
	if err := j.repair(); err != nil {
		return err
	}
	if err := j.same(); err != nil {
		j.broken, j.replaced = err, true
		return err
	}
	probe := make([]byte, probeSize)
	for i := range probe {
		probe[i] = ' '
	}
	probe[len(probe)-1] = '\n'
	err := j.write(probe)
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		j.broken = err
		_ = j.repair() // remove what part of the probe was written; retried by the next call otherwise
		return fmt.Errorf("store: %s cannot take a new entry: %w", j.path, err)
	}
	if err := j.f.Truncate(j.good); err != nil {
		j.broken = err
		return fmt.Errorf("store: %s: truncate the probe: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		j.broken = err
		return fmt.Errorf("store: fsync %s: %w", j.path, err)
	}
	return nil
}

// same checks that j.path still names the open file.
func (j *journal) same() error {
	open, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("store: stat %s: %w", j.path, err)
	}
	cur, err := os.Stat(j.path)
	if err != nil || !os.SameFile(open, cur) {
		return fmt.Errorf("store: %s was deleted or replaced while this process had it open: nothing more is appended (and nothing more released); restore the file from a backup and restart", j.path)
	}
	return nil
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
