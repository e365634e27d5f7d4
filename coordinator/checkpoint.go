package coordinator

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// PhaseRelease is one site's update that the coordinator aggregated.
type PhaseRelease struct {
	Site        string
	Phase       int
	Records     int
	Sigma       float64
	Sensitivity float64
	Secure      bool
	// Epsilon and Delta are the certified guarantee the site's update
	// states for its releases of the job so far (≤ the job's request;
	// checked on receipt); 0 when the update states none (secure
	// aggregation: the job's (ε, δ) is charged).
	Epsilon, Delta float64
}

// TakeReleases returns the updates aggregated since the last call.
func (c *Coordinator) TakeReleases() []PhaseRelease {
	out := c.released
	c.released = nil
	return out
}

// CheckpointVersion is the version of the Checkpoint format.
const CheckpointVersion = 1

// Checkpoint is the durable state of a Service: enough to resume, after a
// crash, every queued job and the running one from the start of its
// current phase. The coordinator draws no randomness (job seeds travel in
// the announcement and sites draw their own), so there is no RNG state to
// keep. Updates received during the current phase are not kept: on resume
// the phase is broadcast again, and sites answer a phase they already
// released with the same bytes (worker.Worker releases a phase once), so
// nothing is computed, noised or charged twice.
type Checkpoint struct {
	Version int                            `json:"version"`
	Members map[string]MemberState         `json:"members"`
	Queue   []QueuedJob                    `json:"queue"`
	Status  map[string]*protocol.JobStatus `json:"status"` // jobs not yet finished
	Clients map[string]string              `json:"clients"`
	Running *RunningJob                    `json:"running,omitempty"`
}

// MemberState is a live site of the federation.
type MemberState struct {
	Records  int    `json:"records"`
	Dim      int    `json:"dim"`
	Instance string `json:"instance,omitempty"`
}

// QueuedJob is a submitted job. Submit keeps the job's cancel hash
// (protocol.JobSubmit.CancelHash, JSON "cancel_hash", base64; absent in
// checkpoints of earlier versions and for jobs without one), so a job's
// cancel rule survives a restart; RestoreService refuses a hash of
// another length than a SHA-256's.
type QueuedJob struct {
	Submit *protocol.JobSubmit `json:"submit"`
	Job    JobConfig           `json:"job"`
	Min    int                 `json:"min_sites"`
}

// RunningJob is the running job at the start of its current phase.
type RunningJob struct {
	QueuedJob
	Refused  map[string]string     `json:"refused"`
	Announce *protocol.JobAnnounce `json:"announce"`
	Phase    int                   `json:"phase"`
	Model    []float64             `json:"model"`
	// OutSum is the algorithm's combiner state beyond the model
	// (fedalgo.Combiner.State; named after its first use, a sum of
	// round outputs).
	OutSum   []float64            `json:"out_sum,omitempty"`
	Sites    map[string]SiteState `json:"sites"`
	PhaseAUC []float64            `json:"phase_auc,omitempty"`
	// BestPhase, BestAUC and BestModel are the best evaluated phase so
	// far (best.go); omitted when none.
	BestPhase int       `json:"best_phase,omitempty"`
	BestAUC   float64   `json:"best_auc,omitempty"`
	BestModel []float64 `json:"best_model,omitempty"`
}

// SiteState is a participant of the running job.
type SiteState struct {
	Records     int         `json:"records"`
	Dim         int         `json:"dim"`
	Left        bool        `json:"left"`
	Sensitivity float64     `json:"sensitivity,omitempty"`
	Privacy     SitePrivacy `json:"privacy"`
}

// Checkpoint returns the service's durable state (deep copies).
func (s *Service) Checkpoint() *Checkpoint {
	cp := &Checkpoint{Version: CheckpointVersion, Members: map[string]MemberState{}, Status: map[string]*protocol.JobStatus{}, Clients: map[string]string{}}
	for name, m := range s.members {
		cp.Members[name] = MemberState{Records: m.records, Dim: m.dim, Instance: m.instance}
	}
	for _, q := range s.queue {
		cp.Queue = append(cp.Queue, QueuedJob{Submit: q.submit, Job: q.job, Min: q.min})
	}
	for id, st := range s.status {
		if st.Status == protocol.StatusQueued || st.Status == protocol.StatusRunning {
			c := *st
			cp.Status[id] = &c
			if subj, ok := s.clients[id]; ok {
				// The reply subjects of the jobs the checkpoint holds only
				// (a finished job's client polls again after a restart).
				cp.Clients[id] = subj
			}
		}
	}
	if s.inner != nil && !s.inner.Done() && s.inner.job != nil {
		c := s.inner
		r := &RunningJob{QueuedJob: QueuedJob{Submit: s.cur.submit, Job: s.cur.job, Min: s.cur.min}, Refused: maps.Clone(s.refused),
			Announce: c.job, Phase: c.phase, Model: slices.Clone(c.model), OutSum: c.comb.State(), Sites: map[string]SiteState{},
			PhaseAUC: slices.Clone(s.phaseAUC)}
		if b := s.best; b != nil {
			r.BestPhase, r.BestAUC, r.BestModel = b.phase, b.auc, slices.Clone(b.model)
		}
		for name, st := range c.sites {
			if !st.participant {
				continue
			}
			p := st.privacy
			p.Sigmas = slices.Clone(p.Sigmas)
			r.Sites[name] = SiteState{Records: st.records, Dim: st.dim, Left: st.left, Sensitivity: st.sens, Privacy: p}
		}
		cp.Running = r
	}
	return cp
}

// progress is a value that changes whenever the state a Checkpoint keeps
// changes in a way that matters for resuming: a job queued, started or
// finished, or a new phase.
func (s *Service) progress() string {
	run, phase := "", 0
	if s.inner != nil {
		run, phase = s.cur.submit.Job, s.inner.phase
	}
	// Only what the checkpoint holds: submissions refused on arrival are
	// not in it, so a flood of them writes nothing (once each rewrote and
	// fsynced a checkpoint that grew with every client id).
	return fmt.Sprintf("%d/%s/%d/%d", len(s.queue), run, phase, s.ended)
}

// RestoreService returns a service resumed from cp (see Checkpoint): the
// queue, the members and the running job at the start of its current
// phase. Jobs listed in cfg.Finished (persisted before the crash) are not
// resumed. Call Resume to obtain the messages that restart the phase.
func RestoreService(cfg ServiceConfig, cp *Checkpoint) (*Service, error) {
	s, err := NewService(cfg)
	if err != nil {
		return nil, err
	}
	if cp == nil {
		return s, nil
	}
	if cp.Version != CheckpointVersion {
		return nil, fmt.Errorf("coordinator: checkpoint version %d, this build reads %d", cp.Version, CheckpointVersion)
	}
	for name, m := range cp.Members {
		if err := protocol.ValidName("site", name); err != nil {
			return nil, fmt.Errorf("coordinator: checkpoint: %w", err)
		}
		s.members[name] = &member{records: m.Records, dim: m.Dim, instance: m.Instance}
	}
	for id, st := range cp.Status {
		if s.status[id] == nil {
			s.status[id] = st
		}
	}
	maps.Copy(s.clients, cp.Clients)
	finished := func(id string) bool {
		st := s.status[id]
		return st != nil && st.Status != protocol.StatusQueued && st.Status != protocol.StatusRunning
	}
	for _, q := range cp.Queue {
		if q.Submit == nil || finished(q.Submit.Job) {
			continue
		}
		if err := protocol.CheckCancelHash(q.Submit.Job, q.Submit.CancelHash); err != nil {
			return nil, fmt.Errorf("coordinator: checkpoint: queued job %s: %w (the file was altered or damaged: restore it from a backup)", q.Submit.Job, err)
		}
		check := Config{Federation: cfg.Federation, Job: q.Job, MinSites: q.Min}
		if err := check.Validate(); err != nil {
			return nil, fmt.Errorf("coordinator: checkpoint: queued job %s: %w", q.Submit.Job, err)
		}
		s.queue = append(s.queue, &queued{submit: q.Submit, job: check.Job, min: q.Min})
	}
	if r := cp.Running; r != nil && r.Submit != nil && !finished(r.Submit.Job) {
		if err := protocol.CheckCancelHash(r.Submit.Job, r.Submit.CancelHash); err != nil {
			return nil, fmt.Errorf("coordinator: checkpoint: running job %s: %w (the file was altered or damaged: restore it from a backup)", r.Submit.Job, err)
		}
		if err := s.restoreRunning(r); err != nil {
			return nil, fmt.Errorf("coordinator: checkpoint: running job %s: %w", r.Submit.Job, err)
		}
	}
	return s, nil
}

func (s *Service) restoreRunning(r *RunningJob) error {
	if r.Announce == nil {
		return fmt.Errorf("no announcement")
	}
	if err := r.Announce.Validate(); err != nil {
		return err
	}
	// Phase 0: the job was checkpointed in its accept round (nothing was
	// charged or released yet); it resumes there.
	if r.Phase < 0 || r.Phase > r.Announce.Phases {
		return fmt.Errorf("phase %d outside [0, %d]", r.Phase, r.Announce.Phases)
	}
	if len(r.Model) != r.Announce.Params {
		return fmt.Errorf("model of %d parameters, job has %d", len(r.Model), r.Announce.Params)
	}
	// The combiner's state is the algorithm's own (fedalgo.Combiner.State:
	// an output sum of the model's length, a phase, one value, or
	// an optimizer's state of a few model lengths), checked by its NewCombiner
	// below; here only bounded and finite.
	if maxState := max(6*r.Announce.Params, 16); len(r.OutSum) > maxState {
		return fmt.Errorf("combiner state of %d values, at most %d for a job of %d parameters", len(r.OutSum), maxState, r.Announce.Params)
	}
	for _, v := range slices.Concat(r.Model, r.OutSum) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("model value %v is not finite", v)
		}
	}
	active := 0
	for _, name := range r.Announce.Sites {
		st, ok := r.Sites[name]
		if !ok {
			return fmt.Errorf("participant %s has no state", name)
		}
		if !st.Left {
			active++
		}
	}
	if len(r.Sites) != len(r.Announce.Sites) {
		return fmt.Errorf("%d site states for %d participants", len(r.Sites), len(r.Announce.Sites))
	}
	check := Config{Federation: s.cfg.Federation, Job: r.Job, MinSites: len(r.Announce.Sites), PhaseTimeout: s.cfg.PhaseTimeout,
		Quorum: r.Min, MaxRetries: s.cfg.MaxRetries, Logf: s.cfg.Logf, SecAggRoster: s.cfg.SecAggRoster}
	inner, err := New(check)
	if err != nil {
		return err
	}
	inner.state = stateRunning
	inner.restored = true // never returns the job's reservation
	if r.Phase == 0 {
		inner.state = stateAccepting
	}
	inner.job = r.Announce
	for _, st := range r.Sites {
		inner.dim = st.Dim // every participant has the job's dimension
	}
	inner.model = slices.Clone(r.Model)
	if inner.comb, err = inner.algo.NewCombiner(r.Announce, r.OutSum); err != nil {
		return err
	}
	for name, st := range r.Sites {
		p := st.Privacy
		p.Sigmas = slices.Clone(p.Sigmas)
		inner.sites[name] = &site{records: st.Records, dim: st.Dim, participant: true, left: st.Left, privacy: p, sens: st.Sensitivity}
		inner.sitesChanged()
		if i := slices.Index(r.Announce.Sites, name); i >= 0 && i < len(r.Announce.Instances) {
			inner.sites[name].instance = r.Announce.Instances[i]
		}
	}
	inner.phase = r.Phase
	inner.updates = map[string]*protocol.SiteUpdate{}
	s.cur = &queued{submit: r.Submit, job: r.Job, min: r.Min}
	s.phaseAUC = slices.Clone(r.PhaseAUC)
	if r.BestPhase > 0 && len(r.BestModel) == len(r.Model) {
		s.best = &bestPhase{phase: r.BestPhase, auc: r.BestAUC, model: slices.Clone(r.BestModel)}
	}
	s.inner = inner
	s.refused = maps.Clone(r.Refused)
	if s.refused == nil {
		s.refused = map[string]string{}
	}
	sec, err := fedalgo.SecAggOf(r.Announce)
	switch {
	case err == nil && sec != nil && r.Phase >= 1:
		// A secure aggregation round lives in the processes that began
		// it (the sites' masks, the shares, the survivor sets): a new
		// coordinator cannot finish it, and starting the phase's round
		// again would ask every site for a second masked vector of the
		// same records. The job ends here, with its reason, instead of
		// waiting for updates no site will send.
		s.resumeOuts = inner.abort(fmt.Sprintf("the coordinator restarted during phase %d of a secure aggregation job: its rounds cannot resume in a new process, so the job is aborted (every site keeps the charges of what it sent; nothing more is asked of them); submit it again", r.Phase))
	case active == 0 || active < inner.quorum():
		s.resumeOuts = inner.abort(fmt.Sprintf("resumed with %d active sites, quorum is %d", active, inner.quorum()))
	}
	s.status[r.Submit.Job] = &protocol.JobStatus{Job: r.Submit.Job, Status: protocol.StatusRunning, Algo: r.Job.Algo, Sites: inner.Active()}
	return nil
}

// Resume returns the messages that restart a restored service: the
// running job's announcement and current phase (sites that had released
// it answer with the same update), or nothing.
func (s *Service) Resume() []Output {
	outs := s.resumeOuts
	s.resumeOuts = nil
	if s.inner != nil && !s.inner.Done() {
		s.logf("resuming job %s at phase %d of %d", s.cur.submit.Job, s.inner.phase, s.inner.job.Phases)
		outs = s.inner.phaseOutputs(protocol.SitesSubject(s.cfg.Federation))
	}
	return append(outs, s.settle()...)
}
