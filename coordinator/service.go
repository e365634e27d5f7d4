package coordinator

import (
	"crypto/ed25519"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// ServiceConfig configures a Service: a long-running coordinator whose
// jobs are submitted at run time (protocol.JobSubmit) instead of being
// fixed in Config.Job.
type ServiceConfig struct {
	// Federation names the federation (a subject token).
	Federation string
	// MinSites is the least number of live sites any job starts with (its
	// quorum); a submission asking fewer is raised to it (default 1).
	MinSites int
	// PhaseTimeout is Config.PhaseTimeout of every job, in ticks (0: wait
	// forever); MaxRetries likewise.
	PhaseTimeout, MaxRetries int
	// SiteTimeout is the number of ticks without any message after which a
	// site is not live: it is not picked for new jobs and, if it takes part
	// in the running job, it is dropped from it as if it had left
	// (0: sites never time out).
	SiteTimeout int
	// MaxQueue bounds the jobs waiting behind the running one (default
	// 16); submissions beyond it are refused.
	MaxQueue int
	// Evaluate, when set, scores a completed job's final model (e.g. AUC
	// on the coordinator's test file) and returns the score and the number
	// of records it used. It must not retain model.
	Evaluate func(job *protocol.JobAnnounce, model []float64) (auc float64, records int)
	// TestDim, when > 0, is the dimension of the records Evaluate scores
	// on: a job whose sites have another dimension is refused when it
	// would start (its AUC could not be computed), with both dimensions.
	TestDim int
	// Finished are jobs that ended before a restart (loaded from the state
	// directory): resubmitting their id returns their status.
	Finished []*protocol.JobStatus
	// Ledger holds the charges made before this process started (the
	// durable ledger reloaded by the caller); see Charge.
	Ledger []Charge
	// Budgets are per-site privacy budgets at the coordinator: a site
	// whose ledger total plus a job's (ε, δ) would exceed its budget is
	// left out of that job, as is a budgeted site from non-private jobs
	// (each site also enforces its own budget: worker.Budget).
	Budgets map[string]Budget
	// BudgetSource, when set, is asked at every job admission (before
	// the budget check) whether the budgets changed since its last
	// answer, e.g. because `pairfed ledger budget set` rewrote the state
	// directory's budgets.json while the coordinator runs: changed
	// budgets replace Budgets for that job and every later one. An error
	// (a file that does not decode) is logged and the budgets in force
	// are kept.
	BudgetSource func() (budgets map[string]Budget, changed bool, err error)
	// Logf receives one line per notable event; nil discards.
	Logf func(format string, args ...any)
	// SecAggRoster is the sites' secure aggregation public keys (Config).
	SecAggRoster map[string]ed25519.PublicKey
	// Now, when set, is the wall-clock time in Unix seconds, recorded in
	// a job's status when it is queued and when it ends (JobStatus
	// Submitted, Finished; `pairfed job list`). Nil: times unknown (0);
	// the state machine itself never reads a clock.
	Now func() int64
	// AdminCancelHash is the SHA-256 (CancelHash) of the operator's admin
	// key: a JobCancel carrying that key cancels any job, whatever its
	// cancel key (the override for a job whose submitter lost its key;
	// see protocol.JobCancel). Nil: no override. Its key is generated
	// into the coordinator's state directory (node.AdminKeyFile).
	AdminCancelHash []byte
}

// Validate fills defaults and checks the configuration.
func (c *ServiceConfig) Validate() error {
	if err := protocol.ValidName("federation", c.Federation); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if c.MinSites == 0 {
		c.MinSites = 1
	}
	if c.MinSites < 1 || c.MinSites > protocol.MaxSites {
		return fmt.Errorf("coordinator: min sites %d outside [1, %d]", c.MinSites, protocol.MaxSites)
	}
	if c.PhaseTimeout < 0 || c.MaxRetries < 0 || c.SiteTimeout < 0 || c.MaxQueue < 0 {
		return fmt.Errorf("coordinator: phase timeout (%d), max retries (%d), site timeout (%d) and max queue (%d) must be ≥ 0",
			c.PhaseTimeout, c.MaxRetries, c.SiteTimeout, c.MaxQueue)
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = 16
	}
	if len(c.AdminCancelHash) != 0 && len(c.AdminCancelHash) != protocol.CancelKeyLen {
		return fmt.Errorf("coordinator: admin cancel hash of %d bytes, want %d (a SHA-256)", len(c.AdminCancelHash), protocol.CancelKeyLen)
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	for site, b := range c.Budgets {
		if err := protocol.ValidName("site", site); err != nil {
			return fmt.Errorf("coordinator: budget: %w", err)
		}
		if err := b.Validate(); err != nil {
			return fmt.Errorf("coordinator: site %s: %w", site, err)
		}
	}
	return nil
}

type member struct {
	records, dim int
	lastSeen     int
	instance     string // the admitted process (Join.Instance)
}

type queued struct {
	submit *protocol.JobSubmit
	job    JobConfig
	min    int
}

// Service is the coordinator of a federation that runs submitted jobs one
// at a time, in submission order. Sites join the federation once (a Join
// repeated while idle keeps them live) and take part in every job that
// starts while they are live. Each job is run by a fresh Coordinator, so a
// job's rules (phases, quorum, timeouts, retries) are exactly those of
// the one-job state machine; the Service adds membership, the queue,
// refusals and the replies to clients.
//
// Like Coordinator it is a pure state machine: Step and Tick return the
// messages to send; TakeFinished returns the jobs that ended, which the
// run loop persists before it publishes those outputs (the final status is
// durable before a client sees it). Not safe for concurrent use.
type Service struct {
	cfg     ServiceConfig
	now     int
	members map[string]*member
	queue   []*queued
	status  map[string]*protocol.JobStatus
	clients map[string]string // job → client subject

	cur      *queued
	inner    *Coordinator
	refused  map[string]string // site → reason, of the running job
	finished []*protocol.JobStatus
	ended    int // jobs finished by this process

	charges    []Charge          // the whole ledger: reloaded and new
	keys       map[string]bool   // the keys of charges
	pending    []Charge          // new charges not yet taken (TakeCharges)
	resumeOuts []Output          // outputs of RestoreService, sent by Resume
	reserved   bool              // the running job's participants were charged (its phases started)
	twins      map[string]string // site → the last refused second instance (logged once)
	rejected   []string          // ids of submissions refused on arrival, oldest first (bounded)
	phaseAUC   []float64         // the running job's test AUC after each phase
	storeErr   error             // the state directory cannot be written (SetStorageError)
	cancelled  string            // "cancelled by <client>" when the running job was cancelled (onCancel)
	refusals   map[string]int    // job → cancels refused (onCancel; logs thinned out)
	best       *bestPhase        // the running job's best evaluated phase (best.go)
}

// NewService returns an idle service.
func NewService(cfg ServiceConfig) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, members: map[string]*member{}, status: map[string]*protocol.JobStatus{}, clients: map[string]string{}, keys: map[string]bool{}, twins: map[string]string{}}
	for _, st := range cfg.Finished {
		s.status[st.Job] = st
	}
	for _, c := range cfg.Ledger {
		if !s.keys[c.Key] {
			s.keys[c.Key] = true
			s.charges = append(s.charges, c)
		}
	}
	return s, nil
}

// TakeCharges returns the ledger charges made since the last call. The run
// loop must make them durable before it publishes the outputs of the same
// step: a job is charged before its announcement leaves the coordinator.
func (s *Service) TakeCharges() []Charge {
	out := s.pending
	s.pending = nil
	return out
}

// Ledger returns every charge: the reloaded ones and the new ones.
func (s *Service) Ledger() []Charge { return slices.Clone(s.charges) }

func (s *Service) charge(c Charge) {
	if s.keys[c.Key] {
		return
	}
	c.Accountant = AccountantRule
	s.keys[c.Key] = true
	s.charges = append(s.charges, c)
	s.pending = append(s.pending, c)
}

// collect charges the updates the running job aggregated.
func (s *Service) collect() {
	if s.inner == nil || s.inner.job == nil {
		return
	}
	a := s.inner.job
	rels := s.inner.TakeReleases()
	if len(rels) > 0 && s.cfg.Evaluate != nil {
		// The model after the phase just aggregated.
		if auc, n := s.cfg.Evaluate(a, s.inner.model); n > 0 && auc >= 0 && auc <= 1 {
			s.phaseAUC = append(s.phaseAUC, auc)
			s.noteBest(auc, rels)
		}
	}
	for _, r := range rels {
		// A release is charged what its site certified for the job's
		// releases so far (checked ≤ the request on receipt); the job's
		// request when the update states nothing (secure aggregation).
		eps, delta := a.Epsilon, a.Delta
		if r.Epsilon > 0 {
			eps, delta = r.Epsilon, r.Delta
		}
		s.charge(Charge{Key: ChargeKey(a.Job, r.Site, r.Phase), Site: r.Site, Job: a.Job, Phase: r.Phase, Algo: a.Algo,
			Mechanism: mechanism(a), Sigma: r.Sigma, Sensitivity: r.Sensitivity, Records: r.Records,
			Epsilon: eps, Delta: delta, Private: fedalgo.Private(a.Algo) && r.Secure})
	}
}

// charged returns, per site, what the ledger charged it for job: the
// largest (ε, δ) among the job's charges of the site (the reservation and
// every aggregated release), which is how Spent composes entries within a
// job; a site charged nothing (it refused the job) is absent. Every entry
// is ≤ the job's request: the reservation is the plan's certificate or
// the request, and an update claiming more than the request aborts the
// job uncharged.
func (s *Service) charged(job string) map[string]fedalgo.Guarantee {
	out := map[string]fedalgo.Guarantee{}
	for _, c := range s.charges {
		if c.Job == job {
			g := out[c.Site]
			out[c.Site] = fedalgo.Guarantee{Epsilon: max(g.Epsilon, c.Epsilon), Delta: max(g.Delta, c.Delta)}
		}
	}
	return out
}

// reserve charges the participants of the job whose phases just started
// (every participant accepted it or was dropped) for its whole (ε, δ),
// before phase 1 is published. A site that refused the job is not
// charged: it has no worker for the job and releases nothing; a site that
// was dropped silently may still compute from the broadcast phases, so it
// is charged (over-count, never under-count). A job that never leaves its
// accept round charges no one.
func (s *Service) reserve() {
	a := s.inner.job
	for _, name := range a.Sites {
		if _, refused := s.refused[name]; refused {
			continue
		}
		st := s.inner.sites[name]
		// The plan's certificate of all the site's releases when it
		// states one (the site's own charges cannot exceed it: they are
		// the same certificate of the same public numbers), else the
		// request, an upper bound on any release the site makes.
		eps, delta := a.Epsilon, a.Delta
		if g := st.certified; g.Epsilon > 0 && g.Epsilon <= eps && g.Delta >= 0 && g.Delta <= delta && fedalgo.Mechanism(a) != fedalgo.MechanismDDG {
			eps, delta = g.Epsilon, g.Delta
		}
		s.charge(Charge{Key: ChargeKey(a.Job, name, 0), Site: name, Job: a.Job, Algo: a.Algo, Mechanism: mechanism(a),
			Sensitivity: st.sens, Records: st.records, Epsilon: eps, Delta: delta, Private: fedalgo.Private(a.Algo)})
	}
}

// returnReservation records, for each participant reserved for job, that
// the reservation was not released (Charge.Returned), and says so. The
// caller has established Coordinator.NothingReleased: the job ran with
// secure aggregation and no round reached its unmasking step.
//
// Why this is safe. The coordinator's ledger counts what the sites'
// records released to the coordinator (and through it, to whoever sees
// its broadcasts). Under secure aggregation the only messages derived from
// a site's records are its masked vectors y_u = x_u + PRG(b_u) + Σ ±PRG(s_uv)
// (secagg). Before the unmasking step no honest site has sent a share of
// any self-mask seed b_u, so the coordinator holds at most t − 1 of them
// (those of colluding sites; t − κ > 0 honest ones are missing) and b_u is
// information-theoretically hidden from it; y_u is then indistinguishable
// from uniform (the PRG's security), whatever x_u. No model was broadcast
// (a phase's model comes from an unmasked sum). So everything the
// coordinator received and sent is simulatable without the records:
// nothing was released, and the reservation, an upper bound on releases
// that did not happen, is returned. A job with an aggregated phase is never
// returned (Spent ignores the return then). The sites' own ledgers keep
// their charges: a site that sent its masked vector cannot know that the
// coordinator did not unmask it; they never under-count either.
func (s *Service) returnReservation(job string, cause error) string {
	a := s.inner.job
	var sites []string
	for _, name := range a.Sites {
		if !s.keys[ChargeKey(job, name, 0)] {
			continue
		}
		note := truncate("reserved, not released: the job aborted before any secure aggregation round reached its unmasking step (nothing derived from site data reached the coordinator): "+cause.Error(), 1000)
		s.charge(Charge{Key: ReturnKey(job, name), Site: name, Job: job, Algo: a.Algo, Mechanism: mechanism(a),
			Records: recordsOf(s.inner.sites[name]), Private: fedalgo.Private(a.Algo), Returned: true, Note: note})
		sites = append(sites, name)
	}
	s.logf("job %s: reservations of %v returned: aborted before any unmasking", job, sites)
	return fmt.Sprintf("reserved, not released: the reservations of %s were returned (no secure aggregation round reached its unmasking step)", strings.Join(sites, ", "))
}

func (s *Service) logf(format string, args ...any) { s.cfg.Logf("coordinator: "+format, args...) }

// Status returns the status of job id, or nil if the job is unknown.
func (s *Service) Status(id string) *protocol.JobStatus { return s.status[id] }

// TakeFinished returns the jobs that ended since the last call.
func (s *Service) TakeFinished() []*protocol.JobStatus {
	out := s.finished
	s.finished = nil
	return out
}

// Running returns the running job's id, or "".
func (s *Service) Running() string {
	if s.cur == nil {
		return ""
	}
	return s.cur.submit.Job
}

// maxRejected bounds the submissions refused on arrival (invalid, or the
// queue full) whose status the service remembers for polls: a flood of
// bad submissions from one client costs bounded memory, and none of them
// is checkpointed (they were never queued), so it costs no disk writes.
const maxRejected = 1024

// rejectedReply replies to a submission refused on arrival and remembers
// its status among the last maxRejected such ones.
func (s *Service) rejectedReply(job string) []Output {
	outs := s.reply(job)
	s.rejected = append(s.rejected, job)
	if len(s.rejected) > maxRejected {
		old := s.rejected[0]
		s.rejected = s.rejected[1:]
		if st := s.status[old]; st != nil && (st.Status == protocol.StatusFailed || st.Status == protocol.StatusRefused) {
			delete(s.status, old)
			delete(s.clients, old)
		}
	}
	return outs
}

func (s *Service) reply(job string) []Output {
	subj, ok := s.clients[job]
	if !ok {
		return nil
	}
	return []Output{{Subject: subj, Msg: s.status[job]}}
}

// Step processes one received message.
func (s *Service) Step(m protocol.Message) []Output {
	var outs []Output
	switch m := m.(type) {
	case *protocol.JobSubmit:
		return s.onSubmit(m)
	case *protocol.JobQuery:
		return s.onQuery(m)
	case *protocol.JobList:
		return s.onList(m)
	case *protocol.JobCancel:
		return s.onCancel(m)
	case *protocol.Join:
		mem := s.members[m.Site]
		if mem != nil && m.Instance != mem.instance && mem.instance != "" && m.Instance != "" {
			// Another process under a known site's name: while the
			// admitted one is live it is a second process (both would
			// release values, each spending the site's budget with its
			// own noise), refused; once the admitted one has been silent
			// for the instance window it is a restart, which takes over.
			if silent := s.now - mem.lastSeen; silent <= s.instanceWindow() {
				if s.twins[m.Site] != m.Instance {
					s.twins[m.Site] = m.Instance
					s.logf("refused join of site %s from a second process (instance %s): instance %s of %s is live (heard %d ticks ago); two processes must not run with --site %s: stop one of them", m.Site, m.Instance, mem.instance, m.Site, silent, m.Site)
				}
				return nil
			}
			s.logf("site %s restarted: instance %s replaces %s (silent for %d ticks)", m.Site, m.Instance, mem.instance, s.now-mem.lastSeen)
			mem.instance = m.Instance
			delete(s.twins, m.Site)
		}
		switch {
		case mem == nil:
			s.logf("site %s joined the federation (n = %d, d = %d)", m.Site, m.Records, m.Dim)
			s.members[m.Site] = &member{records: m.Records, dim: m.Dim, lastSeen: s.now, instance: m.Instance}
		case mem.records != m.Records || mem.dim != m.Dim:
			if s.participates(m.Site) {
				s.logf("ignored join of %s with n = %d, d = %d: it takes part in job %s with n = %d, d = %d", m.Site, m.Records, m.Dim, s.cur.submit.Job, mem.records, mem.dim)
				return nil
			}
			s.logf("site %s rejoined with n = %d, d = %d", m.Site, m.Records, m.Dim)
			*mem = member{records: m.Records, dim: m.Dim, lastSeen: s.now, instance: m.Instance}
		default:
			mem.lastSeen = s.now
		}
		if s.participates(m.Site) {
			outs = s.inner.Step(m) // catch-up of a participant that missed the announcement
		} else if _, refused := s.refused[m.Site]; s.inner != nil && !refused {
			// A participant that left the running job (dropped as silent,
			// or its process stopped) and is back, e.g. restarted: it
			// takes its place again (issue 28, finding 7; it resumes from
			// its saved state or refuses the job) — it was charged for the
			// whole job at its reservation, whether or not it comes back.
			outs = s.inner.readmit(m)
		}
	case *protocol.Heartbeat:
		s.seen(m.Site)
		if s.participates(m.Site) {
			outs = s.inner.Step(m)
		}
	case *protocol.SiteUpdate:
		s.seen(m.Site)
		if s.inner == nil {
			// An update for a job this coordinator is not running (never
			// announced, or ended): ignored, never aggregated or charged.
			s.logf("ignored update of %s for job %s phase %d: no job is running", m.Site, m.Job, m.Phase)
			return nil
		}
		outs = s.inner.Step(m)
	case *protocol.Abort:
		s.seen(m.From)
		if s.inner != nil {
			outs = s.inner.Step(m)
		}
	case *protocol.SecAggKeys, *protocol.SecAggShares, *protocol.SecAggMasked, *protocol.SecAggUnmask, *protocol.SecAggCheck:
		// A site's secure aggregation message (sender checked by the
		// transport loop): for the running job's round, if any.
		from, _ := protocol.Sender(m)
		s.seen(from)
		if s.inner == nil || !s.participates(from) {
			s.logf("ignored %v from %s: not a participant of a running job", m.Kind(), from)
			return nil
		}
		outs = s.inner.Step(m)
	case *protocol.Accept:
		if mem := s.members[m.Site]; mem != nil && mem.instance != "" && m.Instance != "" && m.Instance != mem.instance {
			s.logf("ignored accept of job %s by instance %s of %s: the admitted instance is %s", m.Job, m.Instance, m.Site, mem.instance)
			return nil
		}
		s.seen(m.Site)
		if s.inner == nil || m.Job != s.cur.submit.Job {
			s.logf("ignored accept of job %s by %s: not the running job", m.Job, m.Site)
			return nil
		}
		outs = s.inner.Step(m)
	case *protocol.Leave:
		if mem := s.members[m.Site]; mem != nil && mem.instance != "" && m.Instance != "" && m.Instance != mem.instance {
			s.logf("ignored leave of %s from instance %s: the admitted instance is %s", m.Site, m.Instance, mem.instance)
			return nil
		}
		delete(s.members, m.Site)
		if s.participates(m.Site) {
			outs = s.inner.Step(m)
		}
	case *protocol.Refuse:
		s.seen(m.Site)
		if s.inner == nil || m.Job != s.cur.submit.Job || !s.participates(m.Site) {
			s.logf("ignored refusal of job %s by %s: not a participant of a running job", m.Job, m.Site)
			return nil
		}
		if _, dup := s.refused[m.Site]; !dup {
			s.logf("site %s refused job %s: %s", m.Site, m.Job, m.Reason)
			s.refused[m.Site] = m.Reason
			outs = s.inner.Step(&protocol.Leave{Site: m.Site, Reason: "refused: " + m.Reason})
		}
	default:
		s.logf("ignored %v: not a message for the coordinator", m.Kind())
		return nil
	}
	return append(outs, s.settle()...)
}

// instanceWindow is how long (ticks) the admitted instance of a site must
// have been silent before another instance may take over (a restart):
// half the site timeout, so that a restarted site takes over before it
// would be dropped; 0 without site timeouts (no liveness is tracked).
func (s *Service) instanceWindow() int { return s.cfg.SiteTimeout / 2 }

func (s *Service) seen(site string) {
	if mem := s.members[site]; mem != nil {
		mem.lastSeen = s.now
	}
}

// participates reports whether site takes part in the running job and has
// not left it.
func (s *Service) participates(site string) bool {
	return s.inner != nil && slices.Contains(s.inner.Active(), site)
}

func (s *Service) onSubmit(m *protocol.JobSubmit) []Output {
	client := protocol.ClientSubject(s.cfg.Federation, m.Client)
	if st := s.status[m.Job]; st != nil {
		// A known id: the client polls (or retries a lost submission).
		s.clients[m.Job] = client
		active := st.Status == protocol.StatusQueued || st.Status == protocol.StatusRunning
		if h := s.cancelHash(m.Job); active && len(m.CancelHash) > 0 && !hashesEqual(h, m.CancelHash) {
			// Another submission of a known id (two `job submit --job
			// ID`): its cancel key is not the job's, and its user must
			// hear so (the reply is a copy; the status is unchanged).
			c := *st
			c.Reason = truncate(joinReason(c.Reason, fmt.Sprintf(CancelKeyNotTaken, m.Job)), protocol.MaxReasonLen)
			return []Output{{Subject: client, Msg: &c}}
		}
		return s.reply(m.Job)
	}
	s.clients[m.Job] = client
	q := &queued{submit: m, min: max(m.MinSites, s.cfg.MinSites), job: JobFromSubmit(m)}
	check := Config{Federation: s.cfg.Federation, Job: q.job, MinSites: q.min}
	if err := check.Validate(); err != nil {
		s.status[m.Job] = &protocol.JobStatus{Job: m.Job, Status: protocol.StatusFailed, Algo: validAlgo(m.Algo), Reason: truncate("invalid job: "+err.Error(), protocol.MaxReasonLen)}
		s.logf("job %s rejected: %v", m.Job, err)
		return s.rejectedReply(m.Job)
	}
	q.job = check.Job
	if s.storeErr != nil {
		s.status[m.Job] = &protocol.JobStatus{Job: m.Job, Status: protocol.StatusRefused, Algo: m.Algo,
			Reason: truncate(s.storageReason(), protocol.MaxReasonLen)}
		return s.rejectedReply(m.Job)
	}
	if len(s.queue) >= s.cfg.MaxQueue {
		s.status[m.Job] = &protocol.JobStatus{Job: m.Job, Status: protocol.StatusRefused, Algo: m.Algo,
			Reason: fmt.Sprintf("coordinator busy: %d jobs queued (max %d)", len(s.queue), s.cfg.MaxQueue)}
		return s.rejectedReply(m.Job)
	}
	s.queue = append(s.queue, q)
	s.status[m.Job] = &protocol.JobStatus{Job: m.Job, Status: protocol.StatusQueued, Algo: m.Algo,
		Reason: fmt.Sprintf("waiting for %d live sites", q.min), Submitted: s.clock()}
	s.logf("job %s (%s) queued, needs %d sites", m.Job, m.Algo, q.min)
	outs := s.settle()
	if s.Running() != m.Job {
		outs = append(outs, s.reply(m.Job)...) // settle replied if it started
	}
	return outs
}

// onQuery answers a JobQuery with the job's status (StatusUnknown for an
// id it does not know), on the querying client's subject only: the
// submitter's subject (s.clients) is left as it is, and no job starts.
func (s *Service) onQuery(m *protocol.JobQuery) []Output {
	st := s.status[m.Job]
	if st == nil {
		st = &protocol.JobStatus{Job: m.Job, Status: protocol.StatusUnknown, Reason: "no job " + m.Job + " at this coordinator (job ids are case-sensitive)"}
	}
	return []Output{{Subject: protocol.ClientSubject(s.cfg.Federation, m.Client), Msg: st}}
}

// JobFromSubmit is the job configuration a submission asks for.
func JobFromSubmit(m *protocol.JobSubmit) JobConfig {
	return JobConfig{
		ID: m.Job, Algo: m.Algo, LocalAlgo: m.LocalAlgo, Loss: m.Loss, Rounds: m.Rounds, LocalPasses: m.LocalPasses, Eta: m.Eta,
		ParamRadius: m.ParamRadius, FeatureRadius: m.FeatureRadius, Lambda: m.Lambda, Epsilon: m.Epsilon, Delta: m.Delta, Seed: m.Seed, Aggregation: m.Aggregation, Task: m.Task,
		Options: slices.Clone(m.Options), Calibration: m.Calibration, Schema: m.Schema,
	}
}

// CheckSubmit checks a submission as the coordinator will (a client can
// refuse a bad job before sending it).
func CheckSubmit(federation string, m *protocol.JobSubmit) error {
	if err := m.Validate(); err != nil {
		return err
	}
	cfg := Config{Federation: federation, Job: JobFromSubmit(m), MinSites: m.MinSites}
	return cfg.Validate()
}

func validAlgo(a string) string {
	if protocol.ValidName("algorithm", a) != nil {
		return ""
	}
	return a
}

// Tick advances time: the running job's timeouts, silent sites, and the
// start of a queued job.
func (s *Service) Tick() []Output {
	s.now++
	var outs []Output
	if s.cfg.SiteTimeout > 0 {
		var silent []string
		for name, mem := range s.members {
			if s.now-mem.lastSeen > s.cfg.SiteTimeout {
				silent = append(silent, name)
			}
		}
		slices.Sort(silent)
		for _, name := range silent {
			s.logf("site %s silent for %d ticks: no longer live", name, s.now-s.members[name].lastSeen)
			delete(s.members, name)
			if s.participates(name) {
				outs = append(outs, s.inner.Step(&protocol.Leave{Site: name, Reason: "silent"})...)
			}
		}
	}
	if s.inner != nil && !s.inner.Done() {
		outs = append(outs, s.inner.Tick()...)
	}
	return append(outs, s.settle()...)
}

// settle finishes the running job if it ended and starts the next queued
// job if enough sites are live.
func (s *Service) settle() []Output {
	var outs []Output
	if s.inner != nil && s.inner.job != nil && s.inner.Accepted() && !s.reserved {
		s.reserve()
		s.reserved = true
	}
	s.collect()
	for {
		if s.inner != nil {
			if !s.inner.Done() {
				return outs
			}
			outs = append(outs, s.finish()...)
		}
		if len(s.queue) == 0 || s.storeErr != nil {
			return outs
		}
		started, o := s.start()
		outs = append(outs, o...)
		if !started {
			return outs
		}
	}
}

// start starts the first queued job whose minimum the live sites of the
// most common dimension meet, with all of them. Jobs ahead of it that
// need more sites keep their place and are told why they wait: a job
// that asks for more sites than the federation has (a typo, or a client
// that wants to wedge the others) no longer holds every later job
// behind it until it is cancelled. The head still goes first whenever
// its sites are live: a job is started only when none runs, and the
// queue is scanned from its head each time.
func (s *Service) start() (bool, []Output) {
	byDim := map[int][]string{}
	for name, mem := range s.members {
		byDim[mem.dim] = append(byDim[mem.dim], name)
	}
	var live []string
	for _, names := range byDim {
		slices.Sort(names)
		if len(names) > len(live) || len(names) == len(live) && names[0] < live[0] {
			live = names
		}
	}
	i := slices.IndexFunc(s.queue, func(q *queued) bool { return len(live) >= q.min })
	waiting := s.queue
	if i >= 0 {
		waiting = s.queue[:i]
	}
	for _, q := range waiting {
		// Say why the job waits, naming the dimensions when the live
		// sites would be enough but disagree on d.
		reason := fmt.Sprintf("waiting for %d live sites", q.min)
		if len(s.members) >= q.min && len(byDim) > 1 {
			var dims []string
			for _, name := range slices.Sorted(maps.Keys(s.members)) {
				dims = append(dims, fmt.Sprintf("%s: d = %d", name, s.members[name].dim))
			}
			reason = fmt.Sprintf("waiting for %d live sites of one dimension: the %d live sites have different dimensions (%s); give every site data with the same features", q.min, len(s.members), strings.Join(dims, ", "))
		}
		if st := s.status[q.submit.Job]; st != nil && st.Status == protocol.StatusQueued && st.Reason != reason {
			st.Reason = truncate(reason, protocol.MaxReasonLen)
			s.logf("job %s queued: %s", q.submit.Job, st.Reason)
		}
	}
	if i < 0 {
		return false, nil
	}
	q := s.queue[i]
	s.queue = slices.Delete(s.queue, i, i+1)
	if d := s.members[live[0]].dim; s.cfg.TestDim > 0 && d != s.cfg.TestDim {
		st := &protocol.JobStatus{Job: q.submit.Job, Status: protocol.StatusFailed, Algo: q.job.Algo,
			Reason: truncate(fmt.Sprintf("the coordinator's --test file has d = %d features, the live sites d = %d: the job's model could not be scored; restart the coordinator with a test file of the sites' %d features (or without --test)", s.cfg.TestDim, d, d), protocol.MaxReasonLen)}
		s.logf("job %s not started: %s", q.submit.Job, st.Reason)
		s.status[q.submit.Job] = s.stamp(st)
		s.finished = append(s.finished, st)
		s.ended++
		return true, s.reply(q.submit.Job)
	}
	// Fix what each site is charged before the budget check, so that the
	// check and the job use the same (ε, δ): the algorithm's plan for the
	// live sites (δ = 0 lets it choose). A job the plan rejects fails when
	// it starts.
	private := fedalgo.Private(q.job.Algo)
	if private && q.job.Delta == 0 {
		infos := make([]fedalgo.SiteInfo, len(live))
		for i, name := range live {
			infos[i] = fedalgo.SiteInfo{Name: name, Records: s.members[name].records}
		}
		if _, delta, err := fedalgo.PlanCharge(&q.job, infos, s.members[live[0]].dim); err == nil {
			q.job.Delta = delta
		}
	}
	s.reloadBudgets()
	refused := map[string]string{}
	if len(s.cfg.Budgets) > 0 {
		spent := map[string]Spend{}
		for _, sp := range Spent(s.charges) {
			spent[sp.Site] = sp
		}
		kept := live[:0:0]
		for _, name := range live {
			b, ok := s.cfg.Budgets[name]
			if !ok {
				kept = append(kept, name)
				continue
			}
			if why := overBudget(name, spent[name], b, private, q.job.Epsilon, q.job.Delta); why != "" {
				s.logf("job %s: leaving out %s: %s", q.submit.Job, name, why)
				refused[name] = why
				continue
			}
			kept = append(kept, name)
		}
		live = kept
	}
	if len(live) < q.min {
		st := &protocol.JobStatus{Job: q.submit.Job, Status: protocol.StatusRefused, Algo: q.job.Algo, Refused: slices.Sorted(maps.Keys(refused))}
		reason := ""
		for _, name := range st.Refused {
			reason += refused[name] + "; "
		}
		st.Reason = truncate(reason+fmt.Sprintf("%d sites within their budgets, the job needs %d", len(live), q.min), protocol.MaxReasonLen)
		s.status[q.submit.Job] = s.stamp(st)
		s.finished = append(s.finished, st)
		s.ended++
		return true, s.reply(q.submit.Job)
	}
	inner, err := New(Config{Federation: s.cfg.Federation, Job: q.job, MinSites: len(live), PhaseTimeout: s.cfg.PhaseTimeout,
		Quorum: q.min, MaxRetries: s.cfg.MaxRetries, Logf: s.cfg.Logf, SecAggRoster: s.cfg.SecAggRoster})
	if err != nil { // validated at submission; defensive
		s.status[q.submit.Job] = s.stamp(&protocol.JobStatus{Job: q.submit.Job, Status: protocol.StatusFailed, Algo: q.job.Algo, Reason: truncate(err.Error(), protocol.MaxReasonLen)})
		s.finished = append(s.finished, s.status[q.submit.Job])
		return true, s.reply(q.submit.Job)
	}
	s.cur, s.inner, s.refused = q, inner, refused
	s.phaseAUC, s.best = nil, nil
	var outs []Output
	for _, name := range live {
		mem := s.members[name]
		outs = append(outs, inner.Step(&protocol.Join{Site: name, Records: mem.records, Dim: mem.dim, Instance: mem.instance})...)
	}
	s.reserved = false
	s.status[q.submit.Job] = s.stamp(&protocol.JobStatus{Job: q.submit.Job, Status: protocol.StatusRunning, Algo: q.job.Algo, Sites: live})
	return true, append(outs, s.reply(q.submit.Job)...)
}

// finish records the ended job's status and replies to its client.
func (s *Service) finish() []Output {
	id := s.cur.submit.Job
	st := &protocol.JobStatus{Job: id, Algo: s.cur.job.Algo, Sites: s.inner.Active(), Announce: s.inner.Job(), PhaseAUC: s.phaseAUC}
	if s.cur.job.Task == protocol.TaskMetric {
		st.Metric = protocol.MetricKNN3
	}
	s.phaseAUC = nil
	for _, name := range s.inner.Dropped() {
		if _, ok := s.refused[name]; ok {
			st.Refused = append(st.Refused, name)
		} else {
			st.Dropped = append(st.Dropped, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.refused)) { // left out by the coordinator's budgets
		if !slices.Contains(st.Refused, name) && !slices.Contains(st.Sites, name) {
			st.Refused = append(st.Refused, name)
		}
	}
	slices.Sort(st.Refused)
	var excludedWhy []string
	st.Excluded, excludedWhy = s.inner.Excluded()
	if err := s.inner.Err(); err != nil {
		st.Status = protocol.StatusFailed
		reason := err.Error()
		if s.cancelled != "" {
			reason = s.cancelled + " while running: aborted, every participant was sent an Abort and released nothing further (" + err.Error() + ")"
		}
		if len(st.Refused) > 0 {
			st.Status = protocol.StatusRefused
			reason = ""
			for _, name := range st.Refused {
				reason += fmt.Sprintf("%s refused: %s; ", name, s.refused[name])
			}
			reason += err.Error()
		}
		if s.reserved && s.inner.NothingReleased() {
			reason += "; " + s.returnReservation(id, err)
		}
		if len(excludedWhy) > 0 {
			reason += "; " + strings.Join(excludedWhy, "; ")
		}
		st.Reason = truncate(reason, protocol.MaxReasonLen)
	} else {
		if len(excludedWhy) > 0 {
			st.Reason = truncate(strings.Join(excludedWhy, "; "), protocol.MaxReasonLen)
		}
		res := s.inner.Result()
		st.Status, st.Phases, st.Model = protocol.StatusCompleted, res.Phases, slices.Clone(res.Model)
		s.keepBest(st)
		if s.cfg.Evaluate != nil {
			st.AUC, st.TestRecords = s.cfg.Evaluate(s.inner.Job(), res.Model)
		}
		// Every participant of a private job, dropped ones included: they
		// may have released phases before they went away.
		charged := s.charged(id)
		for _, p := range s.inner.Privacy() {
			if !fedalgo.Private(s.cur.job.Algo) {
				break
			}
			r := protocol.SiteReport{Site: p.Site, Records: p.Records, Epsilon: p.Epsilon, Delta: p.Delta, Sigmas: p.Sigmas, Secure: p.Secure, ComposedEpsilon: p.ComposedEpsilon}
			r.CertifiedEpsilon, r.CertifiedDelta = charged[p.Site].Epsilon, charged[p.Site].Delta
			st.Privacy = append(st.Privacy, r)
		}
	}
	if err := st.Validate(); err != nil { // e.g. a NaN evaluation
		s.logf("job %s: %v: status without evaluation", id, err)
		st.AUC, st.TestRecords = 0, 0
		st.BestPhase, st.BestAUC, st.BestModel = 0, 0, nil
	}
	s.logf("job %s %s with sites %v", id, st.Status, st.Sites)
	s.status[id] = s.stamp(st)
	s.finished = append(s.finished, st)
	s.ended++
	s.cur, s.inner, s.refused, s.cancelled, s.best = nil, nil, nil, "", nil
	return s.reply(id)
}

// reloadBudgets replaces the budgets in force by BudgetSource's when they
// changed (validated as at start; a bad set is logged and ignored).
func (s *Service) reloadBudgets() {
	if s.cfg.BudgetSource == nil {
		return
	}
	b, changed, err := s.cfg.BudgetSource()
	if err != nil {
		s.logf("budgets not reloaded, the budgets in force are kept: %v", err)
		return
	}
	if !changed || maps.Equal(b, s.cfg.Budgets) || len(b) == 0 && len(s.cfg.Budgets) == 0 {
		return
	}
	for site, bud := range b {
		if err := protocol.ValidName("site", site); err != nil {
			s.logf("budgets not reloaded, the budgets in force are kept: %v", err)
			return
		}
		if err := bud.Validate(); err != nil {
			s.logf("budgets not reloaded, the budgets in force are kept: site %s: %v", site, err)
			return
		}
	}
	s.logf("budgets reloaded: %d sites budgeted", len(b))
	s.cfg.Budgets = maps.Clone(b)
}

// StorageError returns the error that stops the coordinator from writing
// its state directory (its ledger, finished jobs or checkpoint), or nil.
func (s *Service) StorageError() error { return s.storeErr }

func (s *Service) storageReason() string {
	return fmt.Sprintf("the coordinator cannot write its state directory (%v): it takes no job until the write succeeds — free space on its disk; the job was not queued", s.storeErr)
}

// SetStorageError tells the service that its state could not be made
// durable (err ≠ nil: e.g. ENOSPC on the checkpoint or the ledger) or can
// be again (nil). The run loop (Serve) calls it; it never publishes the
// outputs of the step whose state failed to be written.
//
// While the error holds, the service stays up: a running job is aborted
// (its next messages would depend on state that is not durable — a phase
// start before its charges, a result before its status), no queued job
// starts, new submissions are refused with the error, and the clients of
// queued jobs are told why they wait. The returned outputs (the abort,
// the replies) are safe to publish without durability: an abort makes no
// site release anything. Clearing the error changes nothing else: the
// next tick starts the head of the queue as usual.
func (s *Service) SetStorageError(err error) []Output {
	if err == nil {
		if s.storeErr != nil {
			s.logf("the state directory is writable again: jobs are admitted")
			s.storeErr = nil
			for _, q := range s.queue {
				if st := s.status[q.submit.Job]; st != nil && st.Status == protocol.StatusQueued {
					st.Reason = fmt.Sprintf("waiting for %d live sites", q.min)
				}
			}
		}
		return nil
	}
	first := s.storeErr == nil
	s.storeErr = err
	if !first {
		return nil
	}
	s.logf("cannot write the state directory: %v — running job aborted, new jobs refused until a write succeeds", err)
	var outs []Output
	if s.inner != nil && !s.inner.Done() {
		outs = append(outs, s.inner.abort(fmt.Sprintf("the coordinator cannot write its state directory (%v)", err))...)
	}
	outs = append(outs, s.settle()...)
	for _, q := range s.queue {
		if st := s.status[q.submit.Job]; st != nil && st.Status == protocol.StatusQueued {
			st.Reason = truncate(fmt.Sprintf("waiting: the coordinator cannot write its state directory (%v)", err), protocol.MaxReasonLen)
			outs = append(outs, s.reply(q.submit.Job)...)
		}
	}
	return outs
}

// Unreserve drops, from cs (charges that could not be made durable) and
// from the service's ledger, the reservations (phase 0) of jobs that no
// longer run, and returns the rest. A reservation is durable before its
// job's phase 1 is published (Serve), so one that never was means phase
// 1 never left the coordinator: no site released anything for the job,
// which SetStorageError aborted, and charging it would over-count. The
// charges of aggregated phases (releases that happened) are kept.
func (s *Service) Unreserve(cs []Charge) []Charge {
	var keep []Charge
	for _, c := range cs {
		if c.Phase != 0 || s.Running() == c.Job {
			keep = append(keep, c)
			continue
		}
		delete(s.keys, c.Key)
		s.charges = slices.DeleteFunc(s.charges, func(x Charge) bool { return x.Key == c.Key })
		s.logf("job %s: reservation of %s withdrawn: phase 1 was never published", c.Job, c.Site)
	}
	return keep
}

func recordsOf(st *site) int {
	if st == nil {
		return 0
	}
	return st.records
}
