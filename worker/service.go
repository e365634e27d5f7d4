package worker

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// Budget is a site's total record-level privacy budget over all the jobs
// it takes part in. A limit of +Inf does not bind.
type Budget struct {
	Epsilon, Delta float64
}

// ServiceConfig configures a Service: a site that stays in its federation
// and serves one job after the other.
type ServiceConfig struct {
	// Worker is the configuration of the per-job Worker (Store included:
	// it receives every release before it is published).
	Worker Config
	// Budget, when set, is the site's privacy budget: a job whose (ε, δ)
	// would take the ledger's total past it is refused, and so is every
	// non-private job (its releases have no finite ε).
	Budget *Budget
	// Ledger holds the releases made before this process started (the
	// durable ledger reloaded by the caller).
	Ledger []Release
	// JobTimeout is the number of ticks without a message about the
	// running job after which the site gives up on it (0: never).
	JobTimeout int
	// Jobs are the saved states of jobs this site released values for
	// (reloaded by the caller, see Config.Jobs): a job announced again
	// after a restart is taken up where it was if its state covers every
	// release in the ledger, and refused otherwise.
	Jobs map[string]*JobState
	// BudgetSource, when set, is asked before every job is accepted
	// whether the site's budget changed since its last answer (e.g.
	// `pairfed ledger budget set` rewrote the state directory's
	// budgets.json while the site runs): a changed budget (nil: no limit)
	// replaces Budget for that job and every later one. An error is
	// logged and the budget in force is kept.
	BudgetSource func() (budget *Budget, changed bool, err error)
	// Prepare, when set, gives the records one job reads: called when a
	// job lists this site (after the budget and ledger checks pass, and
	// again for a job taken up after a restart, with the same
	// announcement), it returns the data the job's Worker uses in place of
	// Worker.Data, LinearData and Noise — e.g. the site's records mapped
	// by the feature-bounds schema the job carries (JobAnnounce.Schema).
	// An error refuses the job (protocol.Refuse) with its text: a private
	// job this site cannot prepare privately, or a job schema that
	// differs from the site's own. Worker.Data stays what Join reports.
	Prepare func(m *protocol.JobAnnounce) (*JobData, error)
}

// Writable is implemented by a LedgerStore that can tell, before a job is
// accepted, whether an entry can be written now (store.Ledger: a probe
// that also repairs an earlier failed append). A site whose ledger cannot
// be written refuses every job in its accept round — the site leaves the
// job, which goes on with the quorum — instead of accepting and aborting
// the job at its first release; it asks again at the next job, so
// freeing the disk is enough.
type Writable interface {
	Writable() error
}

// JobData is what ServiceConfig.Prepare gives one job: its records
// (Config.Data), their linear map (Config.LinearData, may be nil) and the
// noise source (Config.Noise: a source wrapped by dp.Unprivate when the
// preparation is data-dependent, so that the releases say so).
type JobData struct {
	Data, LinearData *pairwise.Dataset
	Noise            pairwise.Noise
}

// Service wraps one Worker per job. Between jobs it repeats its Join every
// Worker.JoinEvery ticks, which keeps it live at the coordinator; when a
// job lists it, it first checks the job against its budget and ledger and
// either refuses it (protocol.Refuse) or hands it to a fresh Worker.
//
// Accounting is the simple sum over jobs: a job costs its announced (ε, δ)
// once (the algorithm's plan charges each site the whole job: see
// package fedalgo), and the costs
// of different jobs add up (basic composition). A tighter accountant is
// future work. Pure state machine, like Worker; not safe for concurrent use.
type Service struct {
	cfg     ServiceConfig
	now     int
	ledger  []Release
	cur     *Worker
	curJob  string
	lastMsg int
	ended   map[string]bool
	// probedJob is the job whose announcement last probed the ledger
	// (ledgerRefusalFor), probed the probe's answer.
	probedJob, probed string
}

// NewService validates cfg and returns an idle service.
func NewService(cfg ServiceConfig) (*Service, error) {
	if err := cfg.Worker.Validate(); err != nil {
		return nil, err
	}
	if b := cfg.Budget; b != nil {
		if math.IsNaN(b.Epsilon) || b.Epsilon < 0 || math.IsNaN(b.Delta) || b.Delta < 0 {
			return nil, fmt.Errorf("worker: budget (ε, δ) = (%v, %v) must be ≥ 0", b.Epsilon, b.Delta)
		}
	}
	if cfg.JobTimeout < 0 {
		return nil, fmt.Errorf("worker: job timeout %d must be ≥ 0", cfg.JobTimeout)
	}
	return &Service{cfg: cfg, ledger: slices.Clone(cfg.Ledger), ended: map[string]bool{}}, nil
}

func (s *Service) logf(format string, args ...any) {
	s.cfg.Worker.Logf("worker "+s.cfg.Worker.Site+": "+format, args...)
}

// Ledger returns every release of this site: the reloaded ones, those of
// finished jobs and those of the running job.
func (s *Service) Ledger() []Release {
	out := slices.Clone(s.ledger)
	if s.cur != nil {
		out = append(out, s.cur.Ledger()...)
	}
	return out
}

// Spent returns the budget the ledger uses: per job the largest (ε, δ) of
// its releases, summed over jobs.
func Spent(ledger []Release) (eps, delta float64) {
	type cost struct{ e, d float64 }
	per := map[string]cost{}
	for _, r := range ledger {
		c := per[r.Job]
		per[r.Job] = cost{max(c.e, r.Epsilon), max(c.d, r.Delta)}
	}
	for _, c := range per {
		eps += c.e
		delta += c.d
	}
	return eps, delta
}

// Running returns the running job's id, or "".
func (s *Service) Running() string { return s.curJob }

func (s *Service) join() Output {
	d := s.cfg.Worker.Data
	return Output{Subject: protocol.SiteToCoordSubject(s.cfg.Worker.Federation, s.cfg.Worker.Site), Msg: &protocol.Join{Site: s.cfg.Worker.Site, Records: d.N, Dim: d.D, Instance: s.cfg.Worker.Instance}}
}

// Start returns the first Join.
func (s *Service) Start() []Output { return []Output{s.join()} }

// Algorithms that learn from sites holding one class say so
// (fedalgo.SingleClassSites: they pool per-site statistics). Every other
// algorithm forms pairs, or fits a model, within each site: a site of one
// class has no positive–negative pair and contributes noise or nothing
// (measured: AUC 0.38–0.50 with ε charged).

// oneClass reports whether every record of the site has the same label.
func oneClass(y []float64) bool {
	for _, v := range y[1:] {
		if v != y[0] {
			return false
		}
	}
	return len(y) > 0
}

// refusal returns why this site must not take part in job m, or "".
//
// What a refusal reveals: the coordinator learns that this site does not
// take part, and the reason. Budget and ledger reasons are about the
// site's spending and its disk, not its records. The single-class reason
// is one bit about the records — "this site holds one class" — which
// record-level DP does not cover (replacing a site's only positive
// record flips it); see docs/federation.md, "Sites of one class",
// for why the site reveals it only when its operator allowed one-class
// data (`pairfed worker --single-class`), and says nothing beyond it.
func (s *Service) refusal(m *protocol.JobAnnounce) string {
	if reason := s.policyRefusal(m); reason != "" {
		return reason
	}
	// Last, and once per job: the ledger probe writes (and removes) a
	// blank line, so a job refused for any other reason leaves the
	// ledger untouched, and the coordinator's repeated announcements of
	// one job do not probe again.
	return s.ledgerRefusalFor(m.Job)
}

// ledgerRefusalFor is ledgerRefusal, asked once per job id.
func (s *Service) ledgerRefusalFor(job string) string {
	if s.probedJob != job || job == "" {
		s.probedJob, s.probed = job, s.ledgerRefusal()
	}
	return s.probed
}

// policyRefusal returns why this site's policy (its label mix, its
// ledger's earlier releases of the job, its budget) refuses job m, or "".
func (s *Service) policyRefusal(m *protocol.JobAnnounce) string {
	if oneClass(s.cfg.Worker.Data.Y) && !fedalgo.LearnsFromSingleClassSites(m.Algo) {
		return fmt.Sprintf("%s needs both classes at every site and this site cannot take part (algorithms for sites of one class: %v)", m.Algo, fedalgo.SingleClassNames())
	}
	s.reloadBudget()
	for _, r := range s.ledger {
		if r.Job == m.Job {
			return fmt.Sprintf("this site already released values for job %s (before a restart): it will not release them again", m.Job)
		}
	}
	b := s.cfg.Budget
	if b == nil {
		return ""
	}
	if m.Epsilon == 0 {
		return fmt.Sprintf("job %s (%s) is not differentially private and this site has a privacy budget", m.Job, m.Algo)
	}
	e, d := Spent(s.ledger)
	// A relative slack of 1e-9 forgives float rounding of equal sums.
	if e+m.Epsilon > b.Epsilon*(1+1e-9) || d+m.Delta > b.Delta*(1+1e-9) {
		return fmt.Sprintf("privacy budget exceeded: spent (ε, δ) = (%.6g, %.6g) of budget (%.6g, %.6g), remaining (%.6g, %.6g); job asks (%.6g, %.6g): submit it with a smaller --epsilon or --delta (e.g. --delta 1e-5), or raise the site's budget (`pairfed ledger budget set`)",
			e, d, b.Epsilon, b.Delta, math.Max(0, b.Epsilon-e), math.Max(0, b.Delta-d), m.Epsilon, m.Delta)
	}
	return ""
}

// ledgerRefusal returns why the site's ledger cannot take an entry now,
// or "" (see Writable).
func (s *Service) ledgerRefusal() string {
	if w, ok := s.cfg.Worker.Store.(Writable); ok {
		if err := w.Writable(); err != nil {
			return fmt.Sprintf("this site's privacy ledger cannot be written (%v): it takes no job until a write succeeds — free space on the site's disk; it asks again at the next job", err)
		}
	}
	return ""
}

// reloadBudget replaces the budget in force by BudgetSource's when it
// changed (a budget that does not validate is logged and ignored).
func (s *Service) reloadBudget() {
	if s.cfg.BudgetSource == nil {
		return
	}
	b, changed, err := s.cfg.BudgetSource()
	switch {
	case err != nil:
		s.logf("budget not reloaded, the budget in force is kept: %v", err)
		return
	case !changed:
		return
	case b != nil && (math.IsNaN(b.Epsilon) || b.Epsilon < 0 || math.IsNaN(b.Delta) || b.Delta < 0):
		s.logf("budget not reloaded, the budget in force is kept: (ε, δ) = (%v, %v) must be ≥ 0", b.Epsilon, b.Delta)
		return
	}
	old := s.cfg.Budget
	if b == nil && old == nil || b != nil && old != nil && *b == *old {
		return
	}
	if b == nil {
		s.logf("budget reloaded: no limit")
	} else {
		s.logf("budget reloaded: (ε, δ) = (%g, %g)", b.Epsilon, b.Delta)
		b = &Budget{Epsilon: b.Epsilon, Delta: b.Delta}
	}
	s.cfg.Budget = b
}

// released reports whether the ledger holds releases of job.
func (s *Service) released(job string) bool {
	return slices.ContainsFunc(s.ledger, func(r Release) bool { return r.Job == job })
}

// Step handles one message from the coordinator; ctx cancels a local phase.
func (s *Service) Step(ctx context.Context, m protocol.Message) []Output {
	var outs []Output
	switch m := m.(type) {
	case *protocol.JobAnnounce:
		if s.cur != nil {
			if m.Job == s.curJob {
				s.lastMsg = s.now
				outs = s.cur.Step(ctx, m)
				break
			}
			if !slices.Contains(m.Sites, s.cfg.Worker.Site) {
				s.logf("ignored announcement of job %s: busy with %s", m.Job, s.curJob)
				break
			}
			// The coordinator runs one job at a time: announcing another
			// job to this site means the running one ended without this
			// site hearing it (e.g. the coordinator crashed between
			// recording the job's end and sending its result). Retire it
			// (its releases stay in the ledger) and consider the new one.
			s.logf("job %s announced while %s was running: the coordinator has moved on, retiring %s", m.Job, s.curJob, s.curJob)
			s.end()
		}
		if s.ended[m.Job] || !slices.Contains(m.Sites, s.cfg.Worker.Site) {
			return nil
		}
		if other := otherInstance(m, s.cfg.Worker.Site, s.cfg.Worker.Instance); other != "" {
			s.logf("not taking part in job %s: it was announced to instance %s of site %s, this process is instance %s — another process runs with this site's name: stop one of them", m.Job, other, s.cfg.Worker.Site, s.cfg.Worker.Instance)
			return nil
		}
		if reason := s.refusal(m); reason != "" && !s.released(m.Job) {
			return s.refuse(m, reason)
		}
		cfg, err := s.jobConfig(m)
		if err != nil {
			return s.refuse(m, err.Error())
		}
		if st := s.cfg.Jobs[m.Job]; st != nil && s.released(m.Job) && s.ledgerRefusalFor(m.Job) == "" {
			if err := resumable(st, m, s.ledger); err != nil {
				s.logf("cannot resume job %s: %v", m.Job, err)
			} else if w, err := New(cfg); err == nil {
				if err := w.resume(st, s.ledger); err != nil {
					s.logf("cannot resume job %s: %v", m.Job, err)
				} else {
					// The job's releases move from the reloaded ledger to
					// its worker (Ledger and Spent count them once).
					s.ledger = slices.DeleteFunc(s.ledger, func(r Release) bool { return r.Job == m.Job })
					s.cur, s.curJob, s.lastMsg = w, m.Job, s.now
					return []Output{w.accept()}
				}
			}
		}
		if reason := s.refusal(m); reason != "" {
			return s.refuse(m, reason)
		}
		w, err := New(cfg)
		if err != nil { // the template was validated in NewService
			s.logf("job %s: %v", m.Job, err)
			return nil
		}
		s.cur, s.curJob, s.lastMsg = w, m.Job, s.now
		outs = w.Step(ctx, m)
	case *protocol.PhaseStart, *protocol.Result, *protocol.Abort,
		*protocol.SecAggKeyList, *protocol.SecAggSharesFor, *protocol.SecAggUnmaskRequest, *protocol.SecAggCheckSigs:
		if s.cur == nil || jobOf(m) != s.curJob {
			return nil
		}
		s.lastMsg = s.now
		outs = s.cur.Step(ctx, m)
	default:
		s.logf("ignored %v: not a message for a site", m.Kind())
		return nil
	}
	s.settle()
	return outs
}

// refuse tells the coordinator that this site will not take part in m.
func (s *Service) refuse(m *protocol.JobAnnounce, reason string) []Output {
	s.logf("refusing job %s: %s", m.Job, reason)
	return []Output{{Subject: protocol.SiteToCoordSubject(s.cfg.Worker.Federation, s.cfg.Worker.Site),
		Msg: &protocol.Refuse{Job: m.Job, Site: s.cfg.Worker.Site, Reason: truncate(reason, protocol.MaxReasonLen)}}}
}

// jobConfig is the Worker configuration of job m: the template, with
// the records and noise Prepare gives for the job when it is set.
func (s *Service) jobConfig(m *protocol.JobAnnounce) (Config, error) {
	cfg := s.cfg.Worker
	if s.cfg.Prepare == nil {
		return cfg, nil
	}
	if err := m.Validate(); err != nil {
		return cfg, fmt.Errorf("invalid announcement: %w", err)
	}
	jd, err := s.cfg.Prepare(m)
	if err != nil {
		return cfg, err
	}
	if jd == nil || jd.Data == nil || jd.Noise == nil {
		return cfg, fmt.Errorf("job %s: this site prepared no data for it", m.Job)
	}
	cfg.Data, cfg.LinearData, cfg.Noise = jd.Data, jd.LinearData, jd.Noise
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func jobOf(m protocol.Message) string {
	switch m := m.(type) {
	case *protocol.PhaseStart:
		return m.Job
	case *protocol.Result:
		return m.Job
	case *protocol.Abort:
		return m.Job
	case *protocol.SecAggKeyList:
		return m.Job
	case *protocol.SecAggSharesFor:
		return m.Job
	case *protocol.SecAggUnmaskRequest:
		return m.Job
	case *protocol.SecAggCheckSigs:
		return m.Job
	}
	return ""
}

// settle retires the running job once it ended, keeping its releases.
func (s *Service) settle() {
	if s.cur == nil || !s.cur.Done() {
		return
	}
	s.end()
}

func (s *Service) end() {
	s.ledger = append(s.ledger, s.cur.Ledger()...)
	s.ended[s.curJob] = true
	s.cur, s.curJob = nil, ""
}

// Tick advances time: Joins between jobs, the running job's heartbeats,
// and the job timeout.
func (s *Service) Tick() []Output {
	s.now++
	if s.cur != nil {
		if s.cfg.JobTimeout > 0 && s.now-s.lastMsg > s.cfg.JobTimeout {
			s.logf("no word about job %s for %d ticks: giving up on it", s.curJob, s.now-s.lastMsg)
			s.end()
			return []Output{s.join()}
		}
		return s.cur.Tick()
	}
	if s.now%s.cfg.Worker.JoinEvery == 0 {
		return []Output{s.join()}
	}
	return nil
}
