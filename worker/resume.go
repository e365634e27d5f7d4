package worker

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// JobState is what a site keeps durably of a job it released values for,
// so that after a restart it can take the job up again: answer a phase it
// already released with the same update (never a fresh noisy value) and
// run the remaining phases on the same disjoint partition (a new partition
// would let a record take part in two phases, breaking the parallel
// composition the guarantee rests on). It lives in the site's own state
// directory, next to its ledger: the partition never leaves the site.
type JobState struct {
	Announce  *protocol.JobAnnounce        `json:"announce"`
	Partition [][]int                      `json:"partition,omitempty"`
	Sent      map[int]*protocol.SiteUpdate `json:"sent"`
	StartOf   map[int][]float64            `json:"start_of"`
}

// JobStore persists JobStates. Save must return only once the state is
// durable; the worker calls it after the ledger entry of a release and
// before the release leaves the state machine.
type JobStore interface {
	SaveJob(*JobState) error
}

// state returns the job's durable state (deep enough copies).
func (w *Worker) state() *JobState {
	st := &JobState{Announce: w.job, Sent: maps.Clone(w.sent), StartOf: map[int][]float64{}}
	for k, v := range w.startOf {
		st.StartOf[k] = slices.Clone(v)
	}
	for _, p := range w.partition() {
		st.Partition = append(st.Partition, slices.Clone(p))
	}
	return st
}

// resumable reports whether st lets this site take up job m again after a
// restart: the same announcement, and a saved update for every phase the
// ledger says was released (a release whose state was not saved cannot
// be repeated, so the site must refuse the job).
func resumable(st *JobState, m *protocol.JobAnnounce, ledger []Release) error {
	if st == nil || st.Announce == nil {
		return fmt.Errorf("no saved state")
	}
	// The admitted instances may differ (this process is a new one);
	// every parameter of the job must not.
	a, b := *st.Announce, *m
	a.Instances, b.Instances = nil, nil
	if !reflect.DeepEqual(&a, &b) {
		return fmt.Errorf("the job was announced with other parameters before the restart")
	}
	for _, r := range ledger {
		if r.Job == m.Job && st.Sent[r.Phase] == nil {
			return fmt.Errorf("phase %d was released but its update was not saved", r.Phase)
		}
	}
	return nil
}

// partition is the disjoint partition of the job's records that the
// algorithm's half keeps (fedalgo.Partitioned), or nil.
func (w *Worker) partition() [][]int {
	if p, ok := w.site.(fedalgo.Partitioned); ok {
		return p.Partition()
	}
	return nil
}

// resume takes up job st.Announce with the releases of ledger: it sets
// the job up as an announcement would, then restores the saved partition,
// updates and start models.
func (w *Worker) resume(st *JobState, ledger []Release) error {
	m := st.Announce
	if err := w.setup(m); err != nil {
		return err
	}
	if part := w.partition(); part != nil {
		if len(st.Partition) != len(part) {
			return fmt.Errorf("saved partition has %d subsets, the job %d", len(st.Partition), len(part))
		}
		for k, p := range st.Partition {
			if len(p) != len(part[k]) {
				return fmt.Errorf("saved subset %d has %d records, the job's has %d", k+1, len(p), len(part[k]))
			}
			for _, i := range p {
				if i < 0 || i >= w.cfg.Data.N {
					return fmt.Errorf("saved subset %d names record %d of %d", k+1, i, w.cfg.Data.N)
				}
			}
		}
		w.site.(fedalgo.Partitioned).SetPartition(st.Partition)
	}
	w.job = m
	w.sent = maps.Clone(st.Sent)
	w.startOf = maps.Clone(st.StartOf)
	for _, r := range ledger {
		if r.Job == m.Job {
			w.ledger = append(w.ledger, r)
		}
	}
	w.logf("resumed job %s after a restart: %d phases already released", m.Job, len(w.sent))
	return nil
}

// CheckLedger cross-checks a site's ledger against its saved job states at
// start: every phase a saved state says was released must be in the
// ledger (the ledger entry is written before the state, so a state never
// runs ahead of an intact ledger). A state whose releases the ledger lacks
// means the ledger was deleted, truncated or replaced — a site that went on
// would forget spending and could pass its budget — so the site must not
// start. The error names the jobs and phases.
func CheckLedger(ledger []Release, jobs map[string]*JobState) error {
	have := map[string]map[int]bool{}
	for _, r := range ledger {
		if have[r.Job] == nil {
			have[r.Job] = map[int]bool{}
		}
		have[r.Job][r.Phase] = true
	}
	var missing []string
	for _, id := range slices.Sorted(maps.Keys(jobs)) {
		st := jobs[id]
		var phases []int
		for _, k := range slices.Sorted(maps.Keys(st.Sent)) {
			if u := st.Sent[k]; u != nil && u.Epsilon > 0 && !have[id][k] {
				phases = append(phases, k)
			}
		}
		if len(phases) > 0 {
			missing = append(missing, fmt.Sprintf("job %s phases %v", id, phases))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("worker: the ledger lacks releases that the saved job states record (%s): the ledger was deleted, truncated or replaced, and this site would forget what it spent", strings.Join(missing, "; "))
	}
	return nil
}
