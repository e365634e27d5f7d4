package coordinator

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// View is a read-only snapshot of a Coordinator or a Service: what a status
// page, /metrics or a test needs to see, and nothing it could change. It
// shares no memory with the state machine (every slice is a copy), so the
// run loop can build one in its Observe hook and publish it to other
// goroutines (e.g. through an atomic.Pointer) while it goes on stepping.
//
// Times are in ticks, the state machines' only clock; the publisher may set
// TickSeconds to convert them.
type View struct {
	Federation string `json:"federation"`
	// Kind is "coordinator" (one job, Coordinator) or "service" (submitted
	// jobs, Service).
	Kind string `json:"kind"`
	// Tick is the state machine's time in ticks.
	Tick int `json:"tick"`
	// TickSeconds is the length of a tick in seconds, when the publisher
	// knows it (0 otherwise).
	TickSeconds float64 `json:"tick_seconds,omitempty"`
	// Sites are the sites online, sorted by name: for a Coordinator the
	// joined sites that have not left; for a Service its live members.
	Sites []SiteView `json:"sites"`
	// Running is the running job, or nil.
	Running *JobView `json:"running"`
	// Queued are the jobs waiting, in the order they will start.
	Queued []JobView `json:"queued"`
	// Finished are the jobs that ended (completed, failed or refused),
	// sorted by job id.
	Finished []JobView `json:"finished"`
	// Privacy is what every site has spent so far, sorted by site (see
	// SiteSpend for what the state machine can know). ApplyLedger replaces
	// it with a ledger's figures, which may also carry budgets.
	Privacy []SiteSpend `json:"privacy"`
	// Traffic counts the coordinator's messages and bytes, when the
	// publisher wraps its transport in transport.Count; nil otherwise.
	Traffic *transport.Traffic `json:"traffic,omitempty"`
	// StorageError is why the coordinator cannot write its state
	// directory (Service.SetStorageError): while set it runs no job.
	StorageError string `json:"storage_error,omitempty"`
}

// SiteView is one site online.
type SiteView struct {
	Site    string `json:"site"`
	Records int    `json:"records"`
	Dim     int    `json:"dim"`
	// LastSeen is the tick of the site's last message; Silent the ticks
	// since then.
	LastSeen int `json:"last_seen_tick"`
	Silent   int `json:"silent_ticks"`
	// Job is the running job the site takes part in, or "".
	Job string `json:"job,omitempty"`
}

// JobView is one job, queued, running or finished.
type JobView struct {
	Job       string `json:"job"`
	Algo      string `json:"algorithm"`
	LocalAlgo string `json:"local_algorithm,omitempty"`
	// Status is one of protocol.Status*.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Phase is the phase being run (running jobs; 0 before the job
	// started), PhasesDone the phases aggregated so far, Phases the job's
	// total (0 until the job is announced; a finished job's phases).
	Phase      int `json:"phase"`
	PhasesDone int `json:"phases_done"`
	Phases     int `json:"phases"`
	// Updates are the updates received in the running phase, of
	// len(Sites) active participants.
	Updates int `json:"updates"`
	// MinSites is the least number of live sites a queued job needs.
	MinSites int      `json:"min_sites,omitempty"`
	Sites    []string `json:"sites"`
	Dropped  []string `json:"dropped,omitempty"`
	Refused  []string `json:"refused,omitempty"`
	// Epsilon and Delta are the job's per-site record-level guarantee
	// (private jobs, once announced or finished).
	Epsilon float64 `json:"epsilon,omitempty"`
	Delta   float64 `json:"delta,omitempty"`
	// CertifiedEpsilon and CertifiedDelta are the most the coordinator's
	// ledger charged any site for a finished job (the certified guarantee,
	// ≤ Epsilon and Delta: protocol.SiteReport.CertifiedEpsilon); 0 when
	// the status states none.
	CertifiedEpsilon float64 `json:"certified_epsilon,omitempty"`
	CertifiedDelta   float64 `json:"certified_delta,omitempty"`
	// AUC is the test AUC of a completed job's model when the publisher
	// scored it (Service: ServiceConfig.Evaluate), on TestRecords records.
	AUC         float64 `json:"auc,omitempty"`
	TestRecords int     `json:"n_test,omitempty"`
	// Metric is "knn3" when AUC holds a metric job's KNN-3 accuracy.
	Metric string `json:"metric,omitempty"`
	// PrivacyStatus says whether a completed job is private, in words:
	// "private: yes (…)" or "NOT private: <reason>" (PrivacyStatus).
	PrivacyStatus string `json:"privacy_status,omitempty"`
}

// PrivacyStatus says whether a completed job is private: its algorithm
// adds noise and every site reported its releases private (secure noise,
// public preprocessing), or why not. "" for a job that did not complete.
func PrivacyStatus(st *protocol.JobStatus) string {
	switch {
	case st.Status != protocol.StatusCompleted:
		return ""
	case !fedalgo.Private(st.Algo):
		return fmt.Sprintf("NOT private: %s adds no noise (a non-private baseline; the model may reveal individual records)", st.Algo)
	case len(st.Privacy) == 0:
		return "NOT private: no site reported its releases"
	}
	var bad []string
	for _, p := range st.Privacy {
		if !p.Secure {
			bad = append(bad, p.Site)
		}
	}
	if len(bad) == 0 {
		return "private: yes (every site: secure noise, public per-record preprocessing, charged in its ledger before release)"
	}
	return fmt.Sprintf("NOT private: site(s) %s reported not-private releases (an explicit opt-in there: seeded noise, --scale minmax|standard fitted on its records, or data-dependent loading; its log names it)", strings.Join(bad, ", "))
}

// Progress is the share of the job's phases aggregated, in [0, 1] (0
// while the number of phases is unknown).
func (j JobView) Progress() float64 {
	if j.Phases <= 0 {
		return 0
	}
	return min(1, float64(j.PhasesDone)/float64(j.Phases))
}

// SiteSpend is the privacy a site has spent so far, and its budget when
// known.
//
// A Service's figures are its ledger's (Service.Ledger composed by Spent:
// a job is charged to every participant when it starts, the maximum
// within a job, the sum across jobs), with the budgets of
// ServiceConfig.Budgets. A one-job Coordinator keeps no ledger: it charges
// a site the job's whole per-site (ε, δ) from the first release of it it
// holds (an update received or aggregated), as worker.Spent charges its
// own ledger, and knows no budget. ApplyLedger puts another ledger's
// figures in their place. The budget fields are nil when unknown.
type SiteSpend struct {
	Site    string  `json:"site"`
	Epsilon float64 `json:"epsilon_spent"`
	Delta   float64 `json:"delta_spent"`
	// Jobs counts the jobs charged, NonPrivate those among them that were
	// not differentially private (no finite ε: charged nothing).
	Jobs       int `json:"jobs"`
	NonPrivate int `json:"non_private_jobs,omitempty"`
	// BudgetEpsilon, BudgetDelta: the site's total budget; Remaining*:
	// what is left of it (never below 0). nil: unknown or unlimited.
	BudgetEpsilon    *float64 `json:"epsilon_budget,omitempty"`
	BudgetDelta      *float64 `json:"delta_budget,omitempty"`
	RemainingEpsilon *float64 `json:"epsilon_remaining,omitempty"`
	RemainingDelta   *float64 `json:"delta_remaining,omitempty"`
}

// WithBudget returns s with the budget (ε, δ) and what remains of it set
// (an infinite component stays nil: unlimited).
func (s SiteSpend) WithBudget(eps, delta float64) SiteSpend {
	if !math.IsInf(eps, 1) {
		s.BudgetEpsilon, s.RemainingEpsilon = ptr(eps), ptr(math.Max(0, eps-s.Epsilon))
	}
	if !math.IsInf(delta, 1) {
		s.BudgetDelta, s.RemainingDelta = ptr(delta), ptr(math.Max(0, delta-s.Delta))
	}
	return s
}

// ApplyLedger replaces the view's privacy figures by a ledger's: every
// site of ledger takes its entry from there (budgets included); sites the
// ledger does not know keep the state machine's figures. The result is
// sorted by site. ledger is copied.
func (v *View) ApplyLedger(ledger []SiteSpend) {
	by := map[string]SiteSpend{}
	for _, s := range v.Privacy {
		by[s.Site] = s
	}
	for _, s := range ledger {
		by[s.Site] = s.clone()
	}
	v.Privacy = sortedSpends(by)
}

// Clone returns a deep copy of v.
func (v View) Clone() View {
	out := v
	out.Sites = slices.Clone(v.Sites)
	if v.Running != nil {
		r := v.Running.clone()
		out.Running = &r
	}
	out.Queued = cloneJobs(v.Queued)
	out.Finished = cloneJobs(v.Finished)
	out.Privacy = make([]SiteSpend, len(v.Privacy))
	for i, s := range v.Privacy {
		out.Privacy[i] = s.clone()
	}
	if v.Traffic != nil {
		t := *v.Traffic
		out.Traffic = &t
	}
	return out
}

func cloneJobs(js []JobView) []JobView {
	out := make([]JobView, len(js))
	for i, j := range js {
		out[i] = j.clone()
	}
	return out
}

func (j JobView) clone() JobView {
	j.Sites, j.Dropped, j.Refused = slices.Clone(j.Sites), slices.Clone(j.Dropped), slices.Clone(j.Refused)
	if j.Sites == nil {
		j.Sites = []string{}
	}
	return j
}

func (s SiteSpend) clone() SiteSpend {
	for _, p := range []**float64{&s.BudgetEpsilon, &s.BudgetDelta, &s.RemainingEpsilon, &s.RemainingDelta} {
		if *p != nil {
			*p = ptr(**p)
		}
	}
	return s
}

func ptr(x float64) *float64 { return &x }

func sortedSpends(by map[string]SiteSpend) []SiteSpend {
	out := make([]SiteSpend, 0, len(by))
	for _, s := range by {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b SiteSpend) int { return strings.Compare(a.Site, b.Site) })
	return out
}

// View returns a snapshot of the coordinator (see View). Its one job is
// Queued while it waits for sites, Running from its announcement, and
// Finished once it completed or was aborted.
func (c *Coordinator) View() View {
	v := View{Federation: c.cfg.Federation, Kind: "coordinator", Tick: c.now,
		Sites: []SiteView{}, Queued: []JobView{}, Finished: []JobView{}, Privacy: []SiteSpend{}}
	job := c.jobView()
	for _, name := range sortedKeys(c.sites) {
		s := c.sites[name]
		if s.left {
			continue
		}
		sv := SiteView{Site: name, Records: s.records, Dim: s.dim, LastSeen: s.lastSeen, Silent: c.now - s.lastSeen}
		if s.participant && !c.Done() {
			sv.Job = job.Job
		}
		v.Sites = append(v.Sites, sv)
	}
	switch {
	case c.Done():
		v.Finished = append(v.Finished, job)
	case c.state == stateJoining:
		v.Queued = append(v.Queued, job)
	default:
		v.Running = &job
	}
	by := map[string]SiteSpend{}
	c.addSpend(by)
	v.Privacy = sortedSpends(by)
	return v
}

// jobView describes the coordinator's job.
func (c *Coordinator) jobView() JobView {
	j := JobView{Job: c.cfg.Job.ID, Algo: c.cfg.Job.Algo, LocalAlgo: c.cfg.Job.LocalAlgo, MinSites: c.cfg.MinSites,
		Sites: c.participants(true)}
	if j.Sites == nil {
		j.Sites = []string{}
	}
	for _, name := range c.participants(false) {
		if c.sites[name].left {
			j.Dropped = append(j.Dropped, name)
		}
	}
	if c.job != nil {
		j.Phases, j.Epsilon, j.Delta = c.job.Phases, c.job.Epsilon, c.job.Delta
	}
	switch c.state {
	case stateJoining:
		j.Status = protocol.StatusQueued
		j.Reason = "waiting for sites"
		if c.cfg.MinSites > 1 {
			j.Reason = "waiting for " + strconv.Itoa(c.cfg.MinSites) + " sites"
		}
	case stateAccepting:
		accepted := 0
		for _, name := range c.participants(true) {
			if c.sites[name].accepted {
				accepted++
			}
		}
		j.Status = protocol.StatusRunning
		j.Reason = "accept round: " + strconv.Itoa(accepted) + " of " + strconv.Itoa(c.numParticipants(true)) + " sites accepted; no phase starts before all answer"
	case stateRunning:
		j.Status, j.Phase, j.PhasesDone, j.Updates = protocol.StatusRunning, c.phase, c.phase-1, len(c.updates)
	case stateDone:
		j.Status, j.Phase, j.PhasesDone = protocol.StatusCompleted, c.phase, c.phase
	case stateAborted:
		j.Status, j.Phase, j.PhasesDone = protocol.StatusFailed, c.phase, max(0, c.phase-1)
		if c.abortErr != nil {
			j.Reason = c.abortErr.Error()
		}
	}
	return j
}

// addSpend charges, into by, every participant of a private job that has
// released something: the job's (ε, δ) once.
func (c *Coordinator) addSpend(by map[string]SiteSpend) {
	if c.job == nil || !fedalgo.Private(c.job.Algo) {
		return
	}
	for _, name := range c.participants(false) {
		s := c.sites[name]
		if len(s.privacy.Sigmas) == 0 && c.updates[name] == nil {
			continue
		}
		sp := by[name]
		sp.Site = name
		sp.Epsilon += c.job.Epsilon
		sp.Delta += c.job.Delta
		sp.Jobs++
		by[name] = sp
	}
}

// View returns a snapshot of the service (see View): its live sites, the
// running job with its phase, the queue, every finished job it knows
// (reloaded ones included) and its ledger per site with the budgets.
func (s *Service) View() View {
	v := View{Federation: s.cfg.Federation, Kind: "service", Tick: s.now,
		Sites: []SiteView{}, Queued: []JobView{}, Finished: []JobView{}, Privacy: []SiteSpend{}}
	if s.storeErr != nil {
		v.StorageError = s.storeErr.Error()
	}
	running := s.Running()
	for _, name := range sortedKeys(s.members) {
		m := s.members[name]
		sv := SiteView{Site: name, Records: m.records, Dim: m.dim, LastSeen: m.lastSeen, Silent: s.now - m.lastSeen}
		if s.participates(name) {
			sv.Job = running
		}
		v.Sites = append(v.Sites, sv)
	}
	if s.inner != nil {
		j := s.inner.jobView()
		// The inner coordinator's job config is the submission's.
		j.MinSites = s.cur.min
		j.Refused = nil
		for _, name := range sortedKeys(s.refused) {
			j.Refused = append(j.Refused, name)
			j.Dropped = slices.DeleteFunc(j.Dropped, func(d string) bool { return d == name })
		}
		v.Running = &j
	}
	for _, q := range s.queue {
		j := JobView{Job: q.submit.Job, Algo: q.job.Algo, LocalAlgo: q.job.LocalAlgo, Status: protocol.StatusQueued,
			MinSites: q.min, Sites: []string{}, Epsilon: q.job.Epsilon, Delta: q.job.Delta}
		if st := s.status[q.submit.Job]; st != nil {
			j.Reason = st.Reason
		}
		v.Queued = append(v.Queued, j)
	}
	for _, id := range sortedKeys(s.status) {
		st := s.status[id]
		switch st.Status {
		case protocol.StatusCompleted, protocol.StatusFailed, protocol.StatusRefused:
		default:
			continue
		}
		j := JobView{Job: st.Job, Algo: st.Algo, Status: st.Status, Reason: st.Reason, Phases: st.Phases,
			Sites: slices.Clone(st.Sites), Dropped: slices.Clone(st.Dropped), Refused: slices.Clone(st.Refused),
			AUC: st.AUC, TestRecords: st.TestRecords, Metric: st.Metric, PrivacyStatus: PrivacyStatus(st)}
		if j.Sites == nil {
			j.Sites = []string{}
		}
		if st.Status == protocol.StatusCompleted {
			j.Phase, j.PhasesDone = st.Phases, st.Phases
		}
		for _, p := range st.Privacy {
			j.Epsilon, j.Delta = max(j.Epsilon, p.Epsilon), max(j.Delta, p.Delta)
			j.CertifiedEpsilon, j.CertifiedDelta = max(j.CertifiedEpsilon, p.CertifiedEpsilon), max(j.CertifiedDelta, p.CertifiedDelta)
		}
		v.Finished = append(v.Finished, j)
	}
	by := map[string]SiteSpend{}
	for _, sp := range Spent(s.charges) {
		by[sp.Site] = SiteSpend{Site: sp.Site, Epsilon: sp.Epsilon, Delta: sp.Delta, Jobs: sp.Jobs, NonPrivate: sp.NonPrivate}
	}
	for site, b := range s.cfg.Budgets {
		sp := by[site]
		sp.Site = site
		by[site] = sp.WithBudget(b.Epsilon, b.Delta)
	}
	v.Privacy = sortedSpends(by)
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
