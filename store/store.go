// Package store is the durable state of pairfed processes in their
// --state directories: the coordinator's finished job results and a site's
// privacy ledger. It is I/O at the edge: the coordinator and worker state
// machines never import it; cmd/ wires it into their run loops.
//
// Layout of a coordinator's directory:
//
//	jobs/<job>.json    one protocol.JobStatus (JSON) per finished job,
//	                   written atomically (temp file, fsync, rename, fsync dir)
//	jobs/<job>.model.json  a completed job's model artefact (package model;
//	                   written by cmd/pairfed, skipped by Load)
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
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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

// ReadJobs returns the finished jobs of the coordinator directory dir
// without creating anything (none when dir/jobs does not exist).
func ReadJobs(dir string) ([]*protocol.JobStatus, error) {
	j := &Jobs{dir: filepath.Join(dir, "jobs")}
	if _, err := os.Stat(j.dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return j.Load()
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
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".model.json") {
			continue // .model.json: a job's model artefact (cmd/pairfed), beside its status
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
type Ledger struct{ j *journal }

var _ worker.LedgerStore = (*Ledger)(nil)

// OpenLedger opens (creating dir and the file if needed) the ledger of the
// site whose state directory is dir and returns it with the releases it
// already holds. A torn last line is truncated away (see the package
// documentation); notes says so when it happens.
func OpenLedger(dir string) (l *Ledger, releases []worker.Release, notes []string, err error) {
	j, notes, err := openJournal(dir, LedgerFile, func(line []byte) error {
		r, err := decodeRelease(line)
		releases = append(releases, r)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &Ledger{j: j}, releases, notes, nil
}

// Append stamps r with the current time when it has none, writes it as
// one line and fsyncs the file before returning.
func (l *Ledger) Append(r worker.Release) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	return l.j.append(r)
}

// Close closes the file.
func (l *Ledger) Close() error { return l.j.close() }

// ReadLedger returns the releases of the site ledger in dir without
// opening it for appends (and without repairing a torn last line).
func ReadLedger(dir string) ([]worker.Release, error) {
	var out []worker.Release
	err := readJournal(filepath.Join(dir, LedgerFile), func(line []byte) error {
		r, err := decodeRelease(line)
		out = append(out, r)
		return err
	})
	return out, err
}

// decodeRelease decodes one line of a site's ledger.
func decodeRelease(line []byte) (worker.Release, error) {
	var r worker.Release
	if err := decodeStrict(line, &r); err != nil {
		return r, err
	}
	if err := protocol.ValidName("job", r.Job); err != nil {
		return r, fmt.Errorf("release: %w", err)
	}
	return r, checkEntry(r.Phase, 1, r.Records, r.Epsilon, r.Delta, append([]float64{r.Sigma, r.Sensitivity}, r.Sigmas...))
}

// checkEntry checks the numbers of a ledger entry: phase ≥ minPhase,
// records ≥ 0, ε finite ≥ 0, δ in [0, 1), every σ and sensitivity finite
// ≥ 0. A ledger that says a site spent a negative ε would hide spending.
func checkEntry(phase, minPhase, records int, eps, delta float64, scales []float64) error {
	switch {
	case phase < minPhase || phase > protocol.MaxPhases:
		return fmt.Errorf("phase %d outside [%d, %d]", phase, minPhase, protocol.MaxPhases)
	case records < 0:
		return fmt.Errorf("records %d < 0", records)
	case math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0:
		return fmt.Errorf("epsilon %v must be a finite number ≥ 0 (a negative ε would hide spending)", eps)
	case !(delta >= 0 && delta < 1):
		return fmt.Errorf("delta %v outside [0, 1)", delta)
	}
	for _, x := range scales {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("sigma or sensitivity %v must be a finite number ≥ 0", x)
		}
	}
	return nil
}

// Writable reports whether the ledger can take a new entry now (see
// journal.writable): a site asks before it accepts a job, so that a full
// disk costs the site (it refuses) rather than the job (an abort at the
// first release). An earlier failed append is repaired first: freeing
// the disk is enough, no restart.
func (l *Ledger) Writable() error { return l.j.writable() }
