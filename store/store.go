// Package store is the durable state of pairfed processes in their
// --state directories: the coordinator's finished job results and a site's
// privacy ledger. It is I/O at the edge: the coordinator and worker state
// machines never import it; cmd/ wires it into their run loops.
//
// Layout of a coordinator's directory:
//
//	jobs/<job>.json    one protocol.JobStatus (JSON) per finished job,
//	                   written atomically (temp file, fsync, rename, fsync dir)
//
// Layout of a site's directory:
//
//	ledger.jsonl       one worker.Release (JSON) per line, appended and
//	                   fsynced before the release is published (write-ahead)
//
// A crash can leave a torn last ledger line (a release whose Append did not
// return, hence never published): OpenLedger drops it. Any other malformed
// line is an error: the site refuses to start rather than forget spending.
package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// WriteFileAtomic replaces path by data: it writes a temporary file in the
// same directory, fsyncs it, renames it over path and fsyncs the directory,
// so a reader sees the old or the new content, never a mix.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("store: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("store: fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	ok = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store: fsync %s: %w", dir, err)
	}
	return nil
}

// Jobs is a coordinator's directory of finished jobs.
type Jobs struct{ dir string }

// OpenJobs creates dir/jobs if needed.
func OpenJobs(dir string) (*Jobs, error) {
	j := &Jobs{dir: filepath.Join(dir, "jobs")}
	if err := os.MkdirAll(j.dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return j, syncDir(dir)
}

// Path returns the file of job id.
func (j *Jobs) Path(id string) string { return filepath.Join(j.dir, id+".json") }

// Save writes st atomically to jobs/<job>.json.
func (j *Jobs) Save(st *protocol.JobStatus) error {
	if err := protocol.ValidName("job", st.Job); err != nil { // a path component
		return fmt.Errorf("store: %w", err)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return WriteFileAtomic(j.Path(st.Job), append(b, '\n'))
}

// Load returns every saved job, sorted by id. Temporary files of an
// interrupted Save are ignored.
func (j *Jobs) Load() ([]*protocol.JobStatus, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var out []*protocol.JobStatus
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(j.dir, name))
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		var st protocol.JobStatus
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("store: %s: %w", name, err)
		}
		if err := st.Validate(); err != nil {
			return nil, fmt.Errorf("store: %s: %w", name, err)
		}
		out = append(out, &st)
	}
	slices.SortFunc(out, func(a, b *protocol.JobStatus) int { return strings.Compare(a.Job, b.Job) })
	return out, nil
}

// LedgerFile is the name of a site's ledger in its state directory.
const LedgerFile = "ledger.jsonl"

// Ledger is a site's append-only, fsynced release ledger. It implements
// worker.LedgerStore.
type Ledger struct {
	mu     sync.Mutex
	f      *os.File
	broken error // a failed Append may have left a partial line: no more appends
}

var _ worker.LedgerStore = (*Ledger)(nil)

// OpenLedger opens (creating dir and the file if needed) the ledger of the
// site whose state directory is dir and returns it with the releases it
// already holds. A torn last line is truncated away (see the package
// documentation); notes says so when it happens.
func OpenLedger(dir string) (l *Ledger, releases []worker.Release, notes []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("store: %w", err)
	}
	path := filepath.Join(dir, LedgerFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("store: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := syncDir(dir); err != nil {
		return nil, nil, nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("store: read %s: %w", path, err)
	}
	good := bytes.LastIndexByte(b, '\n') + 1 // bytes up to the last complete line
	if good < len(b) {
		notes = append(notes, fmt.Sprintf("%s: dropped a torn last line of %d bytes (a release interrupted before it was published)", path, len(b)-good))
		if err := f.Truncate(int64(good)); err != nil {
			return nil, nil, nil, fmt.Errorf("store: truncate %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return nil, nil, nil, fmt.Errorf("store: fsync %s: %w", path, err)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b[:good]))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r worker.Release
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, nil, nil, fmt.Errorf("store: %s:%d: %w", path, line, err)
		}
		if r.Job == "" {
			return nil, nil, nil, fmt.Errorf("store: %s:%d: release without a job", path, line)
		}
		releases = append(releases, r)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return nil, nil, nil, fmt.Errorf("store: %w", err)
	}
	return &Ledger{f: f}, releases, notes, nil
}

// Append writes r as one line and fsyncs the file before returning.
func (l *Ledger) Append(r worker.Release) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("store: ledger closed")
	}
	if l.broken != nil {
		return fmt.Errorf("store: ledger unusable after an earlier failure (restart the site to recover it): %w", l.broken)
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		l.broken = err
		return fmt.Errorf("store: append to ledger: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		l.broken = err
		return fmt.Errorf("store: fsync ledger: %w", err)
	}
	return nil
}

// Close closes the file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
