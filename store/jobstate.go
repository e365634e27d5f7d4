package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// SiteJobsDir holds, in a site's state directory, one worker.JobState per
// private job the site released values for (<job>.json, replaced
// atomically after each release's ledger entry and before the release).
const SiteJobsDir = "site-jobs"

// JobStates is a site's directory of job states. It implements
// worker.JobStore.
type JobStates struct{ dir string }

var _ worker.JobStore = (*JobStates)(nil)

// OpenJobStates creates dir/site-jobs if needed and returns the states it
// holds, by job. Temporary files of an interrupted save are ignored; a
// state that does not decode is an error naming the file.
func OpenJobStates(dir string) (*JobStates, map[string]*worker.JobState, error) {
	j := &JobStates{dir: filepath.Join(dir, SiteJobsDir)}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	out, err := ReadJobStates(dir)
	if err != nil {
		return nil, nil, err
	}
	return j, out, nil
}

// ReadJobStates returns the saved job states of the site directory dir
// without creating anything.
func ReadJobStates(dir string) (map[string]*worker.JobState, error) {
	j := &JobStates{dir: filepath.Join(dir, SiteJobsDir)}
	out := map[string]*worker.JobState{}
	entries, err := os.ReadDir(j.dir)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(j.dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		var st worker.JobState
		if err := decodeStrict(b, &st); err != nil {
			return nil, fmt.Errorf("store: %s: %w", path, err)
		}
		if st.Announce == nil || st.Announce.Validate() != nil || st.Announce.Job+".json" != name {
			return nil, fmt.Errorf("store: %s: not the state of a valid job", path)
		}
		out[st.Announce.Job] = &st
	}
	return out, nil
}

// SaveJob replaces the job's state atomically (durable on return).
func (j *JobStates) SaveJob(st *worker.JobState) error {
	if st.Announce == nil {
		return fmt.Errorf("store: job state without a job")
	}
	if err := protocol.ValidName("job", st.Announce.Job); err != nil { // a path component
		return fmt.Errorf("store: %w", err)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return WriteFileAtomic(filepath.Join(j.dir, st.Announce.Job+".json"), append(b, '\n'))
}
