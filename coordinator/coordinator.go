package coordinator

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/secagg/round"
)

// JobConfig is the job the coordinator runs once enough sites joined: the
// algorithm and its parameters (see fedalgo.Spec). Zero values mean the
// algorithm's defaults (filled by Validate).
type JobConfig = fedalgo.Spec

// Config configures a Coordinator.
type Config struct {
	// Federation names the federation (a subject token).
	Federation string
	Job        JobConfig
	// MinSites is the number of joined sites that starts the job (≥ 1).
	MinSites int
	// PhaseTimeout is the number of ticks a phase may wait for updates
	// before the coordinator acts: aggregate if Quorum updates arrived,
	// else re-broadcast the phase (sites reply idempotently). 0 waits
	// forever.
	PhaseTimeout int
	// Quorum is the number of updates that may be aggregated after a
	// timeout (default: every participant, i.e. timeouts only retry).
	Quorum int
	// MaxRetries is the number of re-broadcasts of one phase before the
	// job is aborted (default 3).
	MaxRetries int
	// Logf receives one line per notable event (duplicates, stale updates,
	// timeouts). nil discards.
	Logf func(format string, args ...any)
	// SecAggRoster is every site's long-term Ed25519 public key, by name:
	// a job with secure aggregation (secagg's active variant) needs one
	// for each participant — the round checks the sites' signed keys and
	// consistency signatures with it (the sites check them again). Without
	// it such a job is refused before it is announced.
	SecAggRoster map[string]ed25519.PublicKey
}

// Validate fills defaults and checks the configuration.
func (c *Config) Validate() error {
	if err := protocol.ValidName("federation", c.Federation); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	j := &c.Job
	if j.ID == "" {
		j.ID = "job-1"
	}
	if err := protocol.ValidName("job", j.ID); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if _, err := protocol.ParseAggregation(j.Aggregation); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	switch j.Task {
	case "":
		j.Task = protocol.TaskAUC
	case protocol.TaskAUC, protocol.TaskMetric:
	default:
		return fmt.Errorf("coordinator: unknown task %q (want auc or metric)", j.Task)
	}
	if j.FeatureRadius == 0 {
		j.FeatureRadius = 1
	}
	// The algorithm's defaults and its own validator.
	algo, err := fedalgo.Configure(j)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	// Bounded numbers (protocol.CheckJobNumbers states the rule): no job
	// spec may overflow a site's arithmetic or its noise calibration.
	if err := protocol.CheckJobNumbers(j.LocalPasses, j.Eta, j.ParamRadius, j.FeatureRadius, j.Lambda, j.Epsilon, j.Delta); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if _, err := pairwise.LossByName(pairwise.Task(j.Task), j.Loss); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if algo.Private() && !(j.FeatureRadius > 0) {
		return fmt.Errorf("coordinator: %s needs a feature radius R > 0", j.Algo)
	}
	if j.Rounds < 0 || j.Rounds > protocol.MaxPhases {
		return fmt.Errorf("coordinator: rounds %d outside [1, %d]", j.Rounds, protocol.MaxPhases)
	}
	if c.MinSites < 1 || c.MinSites > protocol.MaxSites {
		return fmt.Errorf("coordinator: min sites %d outside [1, %d]", c.MinSites, protocol.MaxSites)
	}
	if c.PhaseTimeout < 0 || c.Quorum < 0 || c.MaxRetries < 0 {
		return fmt.Errorf("coordinator: phase timeout (%d), quorum (%d) and max retries (%d) must be ≥ 0", c.PhaseTimeout, c.Quorum, c.MaxRetries)
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 3
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return nil
}

// Output is a message to publish on a subject.
type Output struct {
	Subject string
	Msg     protocol.Message
}

type state int

const (
	stateJoining state = iota
	// stateAccepting: the job is announced and the coordinator collects
	// every participant's Accept or Refuse before any phase starts.
	stateAccepting
	stateRunning
	stateDone
	stateAborted
)

type site struct {
	records, dim int
	participant  bool
	accepted     bool // answered the announcement with Accept
	instance     string
	left         bool
	lastSeen     int // tick of the last message
	privacy      SitePrivacy
	sens         float64 // the ℓ2 sensitivity of each release, when the plan states it
	// certified is the plan's certified (ε, δ) for all the site's
	// releases when the plan states it (the reservation), else zero.
	certified fedalgo.Guarantee
}

// SitePrivacy is what a site reported about its releases.
type SitePrivacy struct {
	Site    string    `json:"site"`
	Records int       `json:"records"`
	Epsilon float64   `json:"epsilon"`
	Delta   float64   `json:"delta"`
	Sigmas  []float64 `json:"sigmas"`
	// Secure is true when every release used a secure noise source.
	Secure bool `json:"private"`
	// ComposedEpsilon is the ε at Delta that the algorithm's exact
	// accountant (fedalgo.Accountant, e.g. dp.Compose) proves for the
	// site's releases, next to the paper's claim Epsilon; 0 when the
	// algorithm has none.
	ComposedEpsilon float64 `json:"composed_epsilon,omitempty"`
	// Notes say how the site's guarantee arises (from the accountant).
	Notes []string `json:"notes,omitempty"`
	// CertifiedEpsilon and CertifiedDelta are what the site's updates
	// certify for its releases (the largest stated: all of them), which
	// both ledgers charge; ≤ (Epsilon, Delta), the request. 0 when no
	// update stated one (secure aggregation: the request is charged).
	CertifiedEpsilon float64 `json:"certified_epsilon,omitempty"`
	CertifiedDelta   float64 `json:"certified_delta,omitempty"`
}

// Coordinator is the coordinator state machine. It is not safe for
// concurrent use: Run owns it.
type Coordinator struct {
	cfg   Config
	state state
	sites map[string]*site
	// nPart caches numParticipants(false) and (true) while nPartOK. Every
	// change to sites or to a site's participant or left flag clears
	// nPartOK (sitesChanged).
	nPart   [2]int
	nPartOK bool
	dim     int
	now     int // ticks

	algo fedalgo.Algorithm
	// job is the announced job. It is never modified once announced
	// (the run loops' publish remembers its encoding by pointer): a
	// change replaces it with a changed copy.
	job      *protocol.JobAnnounce
	comb     fedalgo.Combiner // the algorithm's half of the running job
	phase    int
	model    []float64
	updates  map[string]*protocol.SiteUpdate
	waited   int // ticks in this phase
	retries  int
	result   *protocol.Result
	abortErr error
	released []PhaseRelease // aggregated updates not yet taken (TakeReleases)

	// Secure aggregation (a job with the option secagg = 1 of an
	// algorithm that releases sums, fedalgo.SumReleaser): the job's
	// parameters, its DDG, and the current phase's round (nil between
	// rounds).
	sec *fedalgo.SecAgg
	ddg *dp.DDG
	// secFloors are the job's secure aggregation floors and noise copies
	// (fedalgo.SecAgg.Floors, a pure function of the job's K, t, κ and
	// degree, computed at its start): the sparse variant's ℓ and w for
	// every round, and how many of a site's copies its revealed seed
	// removes.
	secFloors fedalgo.Floors
	round     *round.Server
	// unmaskAsked: some round of the job reached its unmasking step
	// (round.Server.UnmaskAsked); excluded: the sites dropped from a round
	// because others refused their shares or proven to have dealt
	// inconsistent shares, and those whose unmask answers were ignored,
	// with why.
	unmaskAsked bool
	excluded    map[string]string
	// restored: the job was resumed from a checkpoint; an earlier process
	// may have unmasked a round it did not live to record, so the job's
	// reservation is never returned (NothingReleased).
	restored bool
}

// New returns a coordinator waiting for sites.
func New(cfg Config) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	algo, err := fedalgo.Lookup(cfg.Job.Algo)
	if err != nil { // validated; defensive
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	return &Coordinator{cfg: cfg, algo: algo, sites: map[string]*site{}}, nil
}

func (c *Coordinator) logf(format string, args ...any) { c.cfg.Logf("coordinator: "+format, args...) }

// Done reports whether the job finished or was aborted.
func (c *Coordinator) Done() bool { return c.state == stateDone || c.state == stateAborted }

// Result returns the final model message once the job is done, else nil.
func (c *Coordinator) Result() *protocol.Result { return c.result }

// Err returns why the job was aborted, or nil.
func (c *Coordinator) Err() error { return c.abortErr }

// Job returns the announced job, or nil before it started.
func (c *Coordinator) Job() *protocol.JobAnnounce { return c.job }

// Phase returns the current phase (0 before the job starts).
func (c *Coordinator) Phase() int { return c.phase }

// Privacy returns what each participant reported, sorted by site.
func (c *Coordinator) Privacy() []SitePrivacy {
	var out []SitePrivacy
	for _, name := range c.participants(false) {
		s := c.sites[name]
		p := s.privacy
		p.Sigmas = slices.Clone(p.Sigmas)
		// Under secure aggregation a σ is one site's share of the sum's
		// noise: the Gaussian accountant of a site's own release does not
		// apply (the guarantee is round.Charge's, in the sites' ledgers).
		if acct, ok := c.algo.(fedalgo.Accountant); ok && c.job != nil && c.sec == nil && len(p.Sigmas) > 0 {
			p.ComposedEpsilon, p.Notes = acct.Account(p.Sigmas, s.sens, p.Epsilon, p.Delta)
		}
		out = append(out, p)
	}
	return out
}

// Active returns the participants that have not left, sorted.
func (c *Coordinator) Active() []string { return c.participants(true) }

// Dropped returns the participants that left during the job, sorted.
func (c *Coordinator) Dropped() []string {
	var out []string
	for _, name := range c.participants(false) {
		if c.sites[name].left {
			out = append(out, name)
		}
	}
	return out
}

// participants returns the participating sites in sorted order; active
// excludes sites that left.
func (c *Coordinator) participants(active bool) []string {
	var out []string
	for name, s := range c.sites {
		if s.participant && !(active && s.left) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// numParticipants is len(c.participants(active)) without building and
// sorting the list (it is asked on every update: O(K log K) each made a
// phase of K sites O(K² log K)).
func (c *Coordinator) numParticipants(active bool) int {
	if !c.nPartOK {
		// Counted again only after a change (sitesChanged): asked on
		// every update, the count made a phase of K sites O(K²).
		c.nPart = [2]int{}
		for _, s := range c.sites {
			if s.participant {
				c.nPart[0]++
				if !s.left {
					c.nPart[1]++
				}
			}
		}
		c.nPartOK = true
	}
	if active {
		return c.nPart[1]
	}
	return c.nPart[0]
}

// sitesChanged must follow every change to c.sites or to a site's
// participant or left flag.
func (c *Coordinator) sitesChanged() { c.nPartOK = false }

func (c *Coordinator) broadcast(m protocol.Message) Output {
	return Output{Subject: protocol.SitesSubject(c.cfg.Federation), Msg: m}
}

// Step processes one received message and returns the messages to send.
func (c *Coordinator) Step(m protocol.Message) []Output {
	if c.Done() {
		return nil
	}
	switch m := m.(type) {
	case *protocol.Join:
		return c.onJoin(m)
	case *protocol.Heartbeat:
		if s := c.sites[m.Site]; s != nil {
			s.lastSeen = c.now
		}
	case *protocol.SiteUpdate:
		return c.onUpdate(m)
	case *protocol.Accept:
		return c.onAccept(m)
	case *protocol.Leave:
		return c.onLeave(m)
	case *protocol.SecAggKeys, *protocol.SecAggShares, *protocol.SecAggMasked, *protocol.SecAggUnmask, *protocol.SecAggCheck:
		return c.onSecAgg(m)
	case *protocol.Abort:
		if c.job != nil && m.Job == c.job.Job && c.sites[m.From] != nil && c.sites[m.From].participant {
			// One site giving up (its disk, its own check of what it was
			// sent, a peer it caught cheating) costs that site, not the
			// job: it leaves like a site that said Leave, and the job
			// goes on with the others while the quorum holds. Aborting
			// the whole job here would let any one member end every
			// job after the honest sites were charged. A coordinator
			// lie seen by every site still ends the job: each site
			// aborts on its own and the quorum falls.
			return c.onLeave(&protocol.Leave{Site: m.From, Reason: "aborted the job: " + m.Reason})
		}
		c.logf("ignored abort of job %s from %s", m.Job, m.From)
	default:
		c.logf("ignored %v: not a message for the coordinator", m.Kind())
	}
	return nil
}

func (c *Coordinator) onJoin(m *protocol.Join) []Output {
	if s, ok := c.sites[m.Site]; ok {
		s.lastSeen = c.now
		if m.Instance != s.instance && s.records == m.Records && s.dim == m.Dim {
			// A restarted site (its service admitted the new instance):
			// the job is announced to it from now on.
			s.instance = m.Instance
			if c.job != nil {
				if i := slices.Index(c.job.Sites, m.Site); i >= 0 && i < len(c.job.Instances) {
					j := *c.job // a copy: announced messages are never modified
					j.Instances = slices.Clone(j.Instances)
					j.Instances[i] = m.Instance
					c.job = &j
				}
			}
		}
		if s.records != m.Records || s.dim != m.Dim {
			c.logf("ignored join of %s with n = %d, d = %d: already joined with n = %d, d = %d", m.Site, m.Records, m.Dim, s.records, s.dim)
			return nil
		}
		if (c.state == stateRunning || c.state == stateAccepting) && s.participant && !s.left {
			// The site missed the announcement (or restarted): repeat the
			// job and the current phase to it alone. Replies are idempotent.
			return c.phaseOutputs(protocol.SiteSubject(c.cfg.Federation, m.Site))
		}
		return nil
	}
	if c.state != stateJoining {
		c.logf("ignored join of %s: job %s already running", m.Site, c.job.Job)
		return nil
	}
	if c.dim != 0 && m.Dim != c.dim {
		c.logf("ignored join of %s: dimension %d differs from the federation's %d", m.Site, m.Dim, c.dim)
		return nil
	}
	c.dim = m.Dim
	c.sites[m.Site] = &site{records: m.Records, dim: m.Dim, lastSeen: c.now, instance: m.Instance}
	c.sitesChanged()
	c.logf("site %s joined (n = %d, d = %d); %d of %d", m.Site, m.Records, m.Dim, len(c.sites), c.cfg.MinSites)
	if len(c.sites) < c.cfg.MinSites {
		return nil
	}
	return c.startJob()
}

// readmit takes back into the running job a participant that left it
// (dropped as silent, or it sent Leave) and joins again with the same
// records: e.g. its worker restarted and resumes the job from its saved
// state (worker/resume.go). It counts among the active sites again (a
// phase waits for its update; a secure round that started without it
// goes on without it, the next one includes it) and is sent the job and
// the current phase. Nothing for a site that is active, never took part,
// or a job that is not running.
func (c *Coordinator) readmit(m *protocol.Join) []Output {
	s := c.sites[m.Site]
	if s == nil || !s.participant || !s.left || s.records != m.Records || s.dim != m.Dim ||
		(c.state != stateRunning && c.state != stateAccepting) {
		return nil
	}
	s.left = false
	c.sitesChanged()
	c.logf("site %s is back (instance %s): it takes part in job %s again from phase %d", m.Site, m.Instance, c.job.Job, c.phase)
	return c.onJoin(m)
}

// startJob fixes the job's parameters from the joined sites (the
// algorithm's plan) and starts phase 1 from the zero model.
func (c *Coordinator) startJob() []Output {
	j := c.cfg.Job
	var names []string
	for name, s := range c.sites {
		s.participant = true
		c.sitesChanged()
		names = append(names, name)
	}
	slices.Sort(names)
	a := &protocol.JobAnnounce{
		Job: j.ID, Algo: j.Algo, LocalAlgo: j.LocalAlgo, Task: j.Task, Loss: j.Loss, Params: c.dim,
		LocalPasses: j.LocalPasses, Eta: j.Eta, ParamRadius: j.ParamRadius, FeatureRadius: j.FeatureRadius,
		Lambda: j.Lambda, Seed: j.Seed, Sites: names, Aggregation: j.Aggregation, Options: slices.Clone(j.Options),
		Calibration: j.Calibration, Schema: j.Schema,
	}
	if j.Task == protocol.TaskMetric {
		if c.dim > 1448 { // d² ≤ protocol.MaxParams = 2²¹
			return c.abort(fmt.Sprintf("a metric on d = %d features has %d parameters, over the protocol's %d", c.dim, c.dim*c.dim, protocol.MaxParams))
		}
		a.Params = c.dim * c.dim
	}
	infos := make([]fedalgo.SiteInfo, len(names))
	for i, name := range names {
		infos[i] = fedalgo.SiteInfo{Name: name, Records: c.sites[name].records}
	}
	var plan *fedalgo.Plan
	err := guard(func() (err error) { plan, err = c.algo.Plan(&j, infos, a.Params); return err })
	if err == nil && plan == nil {
		err = fmt.Errorf("%s returned no plan", j.Algo)
	}
	if err != nil {
		return c.abort(err.Error())
	}
	a.Phases, a.Eta, a.Epsilon, a.Delta = plan.Phases, plan.Eta, plan.Epsilon, plan.Delta
	if plan.ParamRadius > 0 {
		a.ParamRadius = plan.ParamRadius
	}
	secDim := 0
	if fedalgo.SecAggRequested(j.Options) {
		// Secure aggregation: the DDG is calibrated for this plan and
		// these participants, and its parameters travel in the options.
		err := guard(func() (err error) {
			if a.Options, err = fedalgo.PlanSecAgg(c.algo, &j, infos, a.Params, plan); err != nil {
				return err
			}
			secDim, _, _, err = c.algo.(fedalgo.SumReleaser).SumShape(&j, infos, a.Params)
			return err
		})
		if err != nil {
			return c.abort(err.Error())
		}
	}
	for i, name := range names {
		if in := c.sites[name].instance; in != "" {
			if a.Instances == nil {
				a.Instances = make([]string, len(names))
			}
			a.Instances[i] = in
		}
	}
	for _, name := range names {
		c.sites[name].sens = plan.Sensitivity[name]
		c.sites[name].certified = plan.Certified[name]
	}
	if err := a.Validate(); err != nil {
		return c.abort(fmt.Sprintf("invalid job: %v", err))
	}
	sec, err := fedalgo.SecAggOf(a)
	if err != nil {
		return c.abort(err.Error())
	}
	if sec != nil {
		fl, err := sec.Floors(len(names))
		if err != nil {
			return c.abort(err.Error())
		}
		if c.ddg, err = sec.DDG(secDim, len(names), fl.Copies); err != nil {
			return c.abort(err.Error())
		}
		c.secFloors = fl
		if missing := rosterMisses(c.cfg.SecAggRoster, names); len(missing) > 0 {
			return c.abort(fmt.Sprintf("secure aggregation: the coordinator's roster has no signing key for %v (--secagg-roster, from pairfed deploy init)", missing))
		}
		c.sec = sec
	}
	var comb fedalgo.Combiner
	err = guard(func() (err error) { comb, err = c.algo.NewCombiner(a, nil); return err })
	if err != nil {
		return c.abort(err.Error())
	}
	c.job, c.comb = a, comb
	c.model = make([]float64, a.Params)
	c.state = stateRunning
	for _, name := range names {
		c.sites[name].privacy = SitePrivacy{Site: name, Records: c.sites[name].records, Epsilon: a.Epsilon, Delta: a.Delta, Secure: true}
	}
	c.logf("job %s (%s) announced to %d sites, %d phases, η = %g: waiting for every site to accept", a.Job, a.Algo, len(names), a.Phases, a.Eta)
	// The accept round: no phase starts (so nothing is released, nor
	// charged in either ledger) before every participant accepted the job
	// or refused it; a job refused by too many sites charges no one.
	c.state = stateAccepting
	c.waited, c.retries = 0, 0
	return []Output{c.broadcast(c.job)}
}

// onAccept records a participant's acceptance and starts phase 1 once
// every active participant accepted.
func (c *Coordinator) onAccept(m *protocol.Accept) []Output {
	s := c.sites[m.Site]
	switch {
	case c.job == nil || m.Job != c.job.Job:
		c.logf("ignored accept of job %s from %s: not the announced job", m.Job, m.Site)
		return nil
	case s == nil || !s.participant || s.left:
		c.logf("ignored accept of job %s from %s: not an active participant", m.Job, m.Site)
		return nil
	case c.state != stateAccepting:
		return nil // a repeated accept (catch-up): the job already runs
	}
	s.lastSeen = c.now
	s.accepted = true
	return c.maybeBegin()
}

// Accepted reports whether the job's phases started: every active
// participant accepted it (the caller reserves their charges then).
func (c *Coordinator) Accepted() bool { return c.state == stateRunning || c.state == stateDone }

// maybeBegin starts phase 1 once every active participant accepted.
func (c *Coordinator) maybeBegin() []Output {
	// Asked on every accept: look for a silent participant without
	// building the sorted list (that made the accept round of K sites
	// O(K² log K)).
	for _, s := range c.sites {
		if s.participant && !s.left && !s.accepted {
			return nil
		}
	}
	active := c.participants(true)
	c.state = stateRunning
	c.logf("job %s (%s) starts with %d sites, %d phases, η = %g (accepted by %v)", c.job.Job, c.job.Algo, len(active), c.job.Phases, c.job.Eta, active)
	return c.startPhase(1)
}

func (c *Coordinator) startPhase(k int) []Output {
	c.phase = k
	c.updates = map[string]*protocol.SiteUpdate{}
	c.waited, c.retries = 0, 0
	var outs []Output
	if c.sec != nil {
		// The phase's release is a secure aggregation round over the
		// announced participants (their ids are their places in the
		// announcement), awaiting only the active ones: a site that left
		// or was dropped is not waited for (each of its steps cost the
		// round's whole step timeout, every phase: issue 28, finding 16).
		// Fewer active sites than the threshold cannot unmask a sum: the
		// job aborts now, with nothing released, instead of after the
		// round's timeouts.
		t := c.sec.Threshold
		if t == 0 {
			t = secagg.DefaultThreshold(len(c.job.Sites))
		}
		if active := c.numParticipants(true); active < t {
			return c.abort(fmt.Sprintf("phase %d: %d active sites, below the secure aggregation threshold %d: no sum can be unmasked", k, active, t))
		}
		fl := c.secFloors // computed once, at the job's start
		p := round.Params{Federation: c.cfg.Federation, Job: c.job.Job, Phase: k, Sites: c.job.Sites,
			Threshold: c.sec.Threshold, Degree: c.sec.Degree, Local: fl.Local, Withheld: fl.Withheld, Bits: c.ddg.Bits, Dim: c.ddg.D, Roster: c.cfg.SecAggRoster}
		srv, err := round.NewServer(p, round.StepTimeout(c.sec.Timeout, len(c.job.Sites)))
		if err != nil {
			return c.abort(fmt.Sprintf("phase %d: %v", k, err))
		}
		c.round = srv
		for _, name := range c.Dropped() {
			o, res, err := srv.Forget(name)
			if outs = append(outs, c.roundOutputs(o, res, err)...); c.Done() {
				return outs
			}
		}
	}
	return append(c.phaseOutputs(protocol.SitesSubject(c.cfg.Federation)), outs...)
}

// rosterMisses returns the sites the secure aggregation roster has no key for.
func rosterMisses(roster map[string]ed25519.PublicKey, sites []string) []string {
	var out []string
	for _, s := range sites {
		if _, ok := roster[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// onSecAgg feeds a site's secure aggregation message (its sender checked
// by the transport loop, protocol.CheckSender) to the phase's round.
func (c *Coordinator) onSecAgg(m protocol.Message) []Output {
	from, _ := protocol.Sender(m)
	s := c.sites[from]
	switch {
	case c.state != stateRunning || c.round == nil:
		c.logf("ignored %v from %s: no secure aggregation round running", m.Kind(), from)
		return nil
	case s == nil || !s.participant || s.left:
		c.logf("ignored %v from %s: not an active participant", m.Kind(), from)
		return nil
	}
	s.lastSeen = c.now
	outs, res, err := c.round.Deliver(from, m)
	if mi, ok := m.(*protocol.SecAggMasked); ok && errors.Is(err, secagg.ErrExcluded) {
		// A refusal of peers' shares without a valid proof (secagg/dleq.go):
		// the masked input is refused, its sender leaves the round as a
		// dropout — named here, the accused stay in.
		c.exclude(from, fmt.Sprintf("%s's masked input refused in phase %d's secure aggregation round: its refusal of %s's shares carries no valid proof (%v)",
			from, c.phase, c.siteNames(mi.Rejected), err))
	}
	return c.roundOutputs(outs, res, err)
}

// siteNames are the job's sites of the wire ids ids (an id outside the
// job is written as a number).
func (c *Coordinator) siteNames(ids []uint32) string {
	var names []string
	for _, id := range ids {
		if id >= 1 && int(id) <= len(c.job.Sites) {
			names = append(names, c.job.Sites[id-1])
		} else {
			names = append(names, fmt.Sprintf("site id %d", id))
		}
	}
	return strings.Join(names, ", ")
}

// NothingReleased reports whether, for a job run with secure aggregation,
// nothing derived from the sites' data has reached the coordinator: no
// round of the job reached its unmasking step. The coordinator then holds
// only public numbers (record counts), keys, encrypted shares and masked
// vectors: each masked vector is its input plus a pseudo-random self mask
// whose seed only seed shares reveal, and no site sends one before the
// unmasking step. Such a job's reservation can be returned when it
// aborts (Service.finish). False for a job resumed from a checkpoint (an
// earlier process may have unmasked a round it did not live to record),
// past phase 1, or without secure aggregation
// (its sites' updates are releases) and once any round unmasked.
func (c *Coordinator) NothingReleased() bool {
	return c.sec != nil && c.job != nil && !c.restored && c.phase <= 1 && !c.unmaskAsked && (c.round == nil || !c.round.UnmaskAsked())
}

// Excluded returns the sites dropped from a secure aggregation round
// because other sites refused their shares or because they were proven to
// have dealt inconsistent shares or to have accused a peer falsely, the
// sites whose masked input was refused because their refusal of peers'
// shares carried no valid proof, and the sites whose unmask answers were
// ignored (a share not matching its dealer's signed commitment), sorted,
// and a sentence per site saying where, why and by whom.
func (c *Coordinator) Excluded() ([]string, []string) {
	names := slices.Sorted(maps.Keys(c.excluded))
	var why []string
	for _, n := range names {
		why = append(why, c.excluded[n])
	}
	return names, why
}

// roundOutputs routes a round's messages, takes its result, or aborts the
// job when the round aborted (fewer than t survivors: nothing was
// unmasked, so nothing was released).
func (c *Coordinator) roundOutputs(outs []round.Outgoing, res *secagg.Result, err error) []Output {
	if c.round != nil && c.round.UnmaskAsked() {
		c.unmaskAsked = true
	}
	if err != nil {
		if c.round.Done() && res == nil {
			what := "nothing unmasked"
			if c.round.UnmaskAsked() {
				what = "after its unmask request (the sites' charges stay)"
			}
			c.round = nil
			return c.abort(fmt.Sprintf("phase %d: secure aggregation aborted, %s: %v", c.phase, what, err))
		}
		// The message is rejected, but it may have closed the step (a
		// rogue advertisement, or an unmask answer ignored, that was the
		// last one awaited): the step's messages — or the round's sum —
		// still go out.
		c.logf("secure aggregation: message rejected: %v", err)
	}
	var o []Output
	for _, g := range outs {
		subj := protocol.SitesSubject(c.cfg.Federation)
		if g.To != "" {
			subj = protocol.SiteSubject(c.cfg.Federation, g.To)
		}
		o = append(o, Output{Subject: subj, Msg: g.Msg})
	}
	if res != nil {
		o = append(o, c.aggregateSum(res)...)
	}
	return o
}

// aggregateSum decodes the round's sum and hands it to the combiner's sum
// path with the included sites (in announcement order).
func (c *Coordinator) aggregateSum(res *secagg.Result) []Output {
	c.round = nil
	// Removable noise copies (dp/ddg_removable.go): each included site
	// that revealed its seed — it does so only when the survivor set it
	// signed holds every participant — had Removable() of its Copies
	// draws from it; rebuild and subtract them. What stays is what the
	// sites' guarantee counts ((K − κ)·keep ≥ (t − κ)·m honest copies).
	copiesLeft := map[uint32]int{}
	removed := 0
	for _, id := range res.Included {
		copiesLeft[id] = c.secFloors.Copies
		if r := res.Revealed[id]; len(r) == secagg.RevealLen && c.secFloors.Removable() > 0 {
			if err := c.ddg.Remove(res.Sum, c.secFloors.Removable(), dp.RemovableNoise(dp.RemovableSeed(r))); err != nil {
				return c.abort(fmt.Sprintf("phase %d: removing %s's revealed noise copies: %v", c.phase, c.job.Sites[id-1], err))
			}
			copiesLeft[id] = c.secFloors.Keep
			removed++
		}
	}
	sum := make([]float64, c.ddg.Params().Dim)
	if err := c.ddg.Decode(sum, res.Sum); err != nil {
		return c.abort(fmt.Sprintf("phase %d: decoding the secure sum: %v", c.phase, err))
	}
	// The phase's weight (fedalgo.SumWeighted): the sites multiplied their
	// vectors by it; the sum and its noise are divided by it below.
	wt, err := fedalgo.SumWeight(c.algo, c.job.Phases, c.phase)
	if err != nil {
		return c.abort(fmt.Sprintf("phase %d: %v", c.phase, err))
	}
	for id, by := range res.Excluded {
		var names []string
		for _, a := range by {
			names = append(names, c.job.Sites[a-1])
		}
		name := c.job.Sites[id-1]
		if c.excluded == nil {
			c.excluded = map[string]string{}
		}
		why := fmt.Sprintf("%s excluded from phase %d's secure aggregation round: its share ciphertexts were refused by %s", name, c.phase, strings.Join(names, ", "))
		c.logf("%s", why)
		if old, ok := c.excluded[name]; ok {
			why = old + "; " + why
		}
		c.excluded[name] = why
	}
	// Shares that decrypt but are inconsistent (secagg/commit.go): a
	// survivor proven to have dealt seed shares off its signed commitments
	// is out of the sum; a responder whose unmask shares did not match
	// their dealers' commitments was not used (its own input stays in).
	for _, id := range res.Cheated {
		c.exclude(c.job.Sites[id-1], fmt.Sprintf("%s expelled from phase %d's secure aggregation round: its seed shares are inconsistent with its signed commitments (a proof every survivor checked)", c.job.Sites[id-1], c.phase))
	}
	// A proven false accusation (secagg/dleq.go): the accuser is out of
	// the sum, the accused stay in.
	for _, id := range slices.Sorted(maps.Keys(res.FalseAccusers)) {
		var names []string
		for _, d := range res.FalseAccusers[id] {
			names = append(names, c.job.Sites[d-1])
		}
		c.exclude(c.job.Sites[id-1], fmt.Sprintf("%s expelled from phase %d's secure aggregation round: it falsely accused %s (the pair key it revealed, with a valid proof, opens shares that match their signed commitments)",
			c.job.Sites[id-1], c.phase, strings.Join(names, ", ")))
	}
	for _, id := range slices.Sorted(maps.Keys(res.Ignored)) {
		g := res.Ignored[id]
		step := "unmask"
		if g.Expel {
			step = "expel"
		}
		c.exclude(c.job.Sites[id-1], fmt.Sprintf("%s's %s answer ignored in phase %d's secure aggregation round: its share of %s's %s does not match %s's signed commitment (its input stays in the sum)",
			c.job.Sites[id-1], step, c.phase, c.job.Sites[g.Dealer-1], g.Of, c.job.Sites[g.Dealer-1]))
	}
	var infos []fedalgo.SiteInfo
	copies := 0
	for _, id := range res.Included {
		name := c.job.Sites[id-1]
		s := c.sites[name]
		infos = append(infos, fedalgo.SiteInfo{Name: name, Records: s.records})
		// The site's noise left in the sum: its kept copies when it
		// revealed the others' seed, all of them otherwise.
		sig := c.sec.SiteSigma(copiesLeft[id]) / wt
		copies += copiesLeft[id]
		s.privacy.Sigmas = append(s.privacy.Sigmas, sig)
		c.released = append(c.released, PhaseRelease{Site: name, Phase: c.phase, Records: s.records,
			Sigma: sig, Sensitivity: c.sec.Sens, Secure: s.privacy.Secure})
	}
	sc, ok := c.comb.(fedalgo.SumCombiner)
	if !ok {
		return c.abort(fmt.Sprintf("%s has no sum path for secure aggregation", c.job.Algo))
	}
	sigma := fedalgo.UnweightSum(sum, c.sec.CopySigma()*math.Sqrt(float64(copies)), wt)
	c.logf("phase %d: secure sum of %d sites (%d dropped after sharing keys; %d revealed their removable noise copies)", c.phase, len(res.Included), len(res.Dropped), removed)
	if err := guard(func() error { c.model = sc.CombineSum(c.model, sum, infos, sigma); return nil }); err != nil {
		return c.abort(fmt.Sprintf("phase %d: %v", c.phase, err))
	}
	return c.advance()
}

// exclude names site among the sites excluded from a round (Excluded),
// with why, appended to an earlier reason.
func (c *Coordinator) exclude(site, why string) {
	c.logf("%s", why)
	if c.excluded == nil {
		c.excluded = map[string]string{}
	}
	if old, ok := c.excluded[site]; ok {
		why = old + "; " + why
	}
	c.excluded[site] = why
}

// phaseOutputs are the announcement and the current phase's start on
// subject (sent together so that a site that missed the announcement can
// catch up).
func (c *Coordinator) phaseOutputs(subject string) []Output {
	if c.state == stateAccepting {
		return []Output{{Subject: subject, Msg: c.job}}
	}
	return []Output{
		{Subject: subject, Msg: c.job},
		{Subject: subject, Msg: &protocol.PhaseStart{Job: c.job.Job, Phase: c.phase, Model: slices.Clone(c.model)}},
	}
}

func (c *Coordinator) onUpdate(m *protocol.SiteUpdate) []Output {
	s := c.sites[m.Site]
	switch {
	case c.state != stateRunning || m.Job != c.job.Job:
		c.logf("ignored update of %s for job %s phase %d: no such running job", m.Site, m.Job, m.Phase)
		return nil
	case s == nil || !s.participant:
		c.logf("ignored update from %s: not a participant of %s", m.Site, m.Job)
		return nil
	case s.left:
		c.logf("ignored update from %s: it left", m.Site)
		return nil
	case m.Phase < c.phase:
		c.logf("ignored stale update of %s for phase %d (now %d)", m.Site, m.Phase, c.phase)
		return nil
	case m.Phase > c.phase:
		c.logf("ignored update of %s for future phase %d (now %d)", m.Site, m.Phase, c.phase)
		return nil
	case c.updates[m.Site] != nil:
		c.logf("ignored duplicate update of %s for phase %d", m.Site, m.Phase)
		return nil
	case len(m.Model) != fedalgo.UpdateLen(c.comb, len(c.model)):
		c.logf("ignored update of %s: it has %d values, want %d", m.Site, len(m.Model), fedalgo.UpdateLen(c.comb, len(c.model)))
		return nil
	case c.algo.Private() && !(m.Epsilon > 0 && m.Epsilon <= c.job.Epsilon && m.Delta >= 0 && m.Delta <= c.job.Delta):
		// A site states the certified (ε, δ) of its releases so far,
		// which is within the request (fedalgo: charged as certified).
		return c.abort(fmt.Sprintf("site %s claims (ε, δ) = (%g, %g), not within the job's (%g, %g)", m.Site, m.Epsilon, m.Delta, c.job.Epsilon, c.job.Delta))
	}
	s.lastSeen = c.now
	c.updates[m.Site] = m
	if len(c.updates) == c.numParticipants(true) {
		return c.aggregate()
	}
	return nil
}

// aggregate hands the received updates, in site order (so the result
// does not depend on arrival order), to the algorithm's combiner, which
// returns the next model under the job's aggregation rule (the weighted
// mean, or the coordinate-wise median or trimmed mean: see
// fedalgo.Aggregate), and starts the next phase or finishes with the
// combiner's final model. It records each site's release first.
func (c *Coordinator) aggregate() []Output {
	names := make([]string, 0, len(c.updates))
	for name := range c.updates {
		names = append(names, name)
	}
	slices.Sort(names)
	ups := make([]*protocol.SiteUpdate, len(names))
	for i, name := range names {
		u := c.updates[name]
		ups[i] = u
		p := &c.sites[name].privacy
		if c.algo.Private() {
			if len(u.Sigmas) > 0 {
				p.Sigmas = append(p.Sigmas, u.Sigmas...) // every σ of the release
			} else {
				p.Sigmas = append(p.Sigmas, u.Sigma)
			}
		}
		p.Secure = p.Secure && u.Secure
		if c.algo.Private() {
			p.CertifiedEpsilon, p.CertifiedDelta = max(p.CertifiedEpsilon, u.Epsilon), max(p.CertifiedDelta, u.Delta)
		}
		c.released = append(c.released, PhaseRelease{Site: name, Phase: c.phase, Records: c.sites[name].records,
			Sigma: u.Sigma, Sensitivity: c.sites[name].sens, Secure: u.Secure, Epsilon: u.Epsilon, Delta: u.Delta})
	}
	rule, _ := protocol.ParseAggregation(c.job.Aggregation) // validated with the announcement
	if err := guard(func() error { c.model = c.comb.Combine(c.model, ups, rule); return nil }); err != nil {
		return c.abort(fmt.Sprintf("phase %d: %v", c.phase, err))
	}
	return c.advance()
}

// advance checks the combined model and starts the next phase or finishes
// with the combiner's final model.
func (c *Coordinator) advance() []Output {
	if err := protocol.CheckModel(c.model); err != nil {
		return c.abort(fmt.Sprintf("phase %d: the combined model cannot be broadcast (%v)", c.phase, err))
	}
	if c.phase < c.job.Phases {
		return c.startPhase(c.phase + 1)
	}
	c.state = stateDone
	var out []float64
	if err := guard(func() error { out = c.comb.Final(c.model); return nil }); err != nil {
		return c.abort(fmt.Sprintf("final model: %v", err))
	}
	c.result = &protocol.Result{Job: c.job.Job, Phases: c.job.Phases, Model: out, Sites: c.participants(false)}
	c.logf("job %s done after %d phases", c.job.Job, c.job.Phases)
	return []Output{c.broadcast(c.result)}
}

func (c *Coordinator) onLeave(m *protocol.Leave) []Output {
	s := c.sites[m.Site]
	if s == nil {
		return nil
	}
	c.logf("site %s left: %s", m.Site, m.Reason)
	if c.state == stateJoining {
		delete(c.sites, m.Site)
		c.sitesChanged()
		if len(c.sites) == 0 {
			c.dim = 0
		}
		return nil
	}
	if !s.participant || s.left {
		return nil
	}
	s.left = true
	c.sitesChanged()
	delete(c.updates, m.Site)
	active := c.numParticipants(true)
	if active == 0 || active < c.quorum() {
		return c.abort(fmt.Sprintf("%d active sites left, quorum is %d", active, c.quorum()))
	}
	if c.state == stateAccepting {
		return c.maybeBegin()
	}
	if c.sec != nil {
		if c.round == nil {
			return nil
		}
		// The round stops waiting for the site (a step it was the last
		// awaited answer of closes now).
		outs, res, err := c.round.Forget(m.Site)
		return c.roundOutputs(outs, res, err)
	}
	if len(c.updates) == active {
		return c.aggregate()
	}
	return nil
}

func (c *Coordinator) quorum() int {
	if c.cfg.Quorum > 0 {
		return c.cfg.Quorum
	}
	return c.numParticipants(false)
}

// Tick advances time by one tick and handles phase timeouts.
func (c *Coordinator) Tick() []Output {
	c.now++
	if c.state == stateRunning && c.round != nil {
		// A secure aggregation round keeps its own step timeouts.
		outs, res, err := c.round.Tick()
		return c.roundOutputs(outs, res, err)
	}
	if (c.state != stateRunning && c.state != stateAccepting) || c.cfg.PhaseTimeout == 0 {
		return nil
	}
	c.waited++
	if c.waited < c.cfg.PhaseTimeout {
		return nil
	}
	c.waited = 0
	if c.state == stateAccepting {
		return c.acceptTimeout()
	}
	if q := c.quorum(); len(c.updates) >= q && len(c.updates) > 0 {
		c.logf("phase %d timed out with %d of %d updates (quorum %d): aggregating", c.phase, len(c.updates), c.numParticipants(true), q)
		return c.aggregate()
	}
	if c.retries >= c.cfg.MaxRetries {
		return c.abort(fmt.Sprintf("phase %d: %d of %d updates after %d retries", c.phase, len(c.updates), c.numParticipants(true), c.retries))
	}
	c.retries++
	c.logf("phase %d timed out with %d of %d updates: re-broadcasting (retry %d)", c.phase, len(c.updates), c.numParticipants(true), c.retries)
	return c.phaseOutputs(protocol.SitesSubject(c.cfg.Federation))
}

// acceptTimeout: the accept round timed out. With a quorum of
// acceptances the silent sites are dropped and phase 1 starts; otherwise
// the announcement is repeated, up to MaxRetries times.
func (c *Coordinator) acceptTimeout() []Output {
	var accepted, silent []string
	for _, name := range c.participants(true) {
		if c.sites[name].accepted {
			accepted = append(accepted, name)
		} else {
			silent = append(silent, name)
		}
	}
	if q := c.quorum(); len(accepted) >= q && len(accepted) > 0 {
		c.logf("job %s: %v did not accept in time: starting with %v (quorum %d)", c.job.Job, silent, accepted, q)
		for _, name := range silent {
			c.sites[name].left = true
			c.sitesChanged()
		}
		return c.maybeBegin()
	}
	if c.retries >= c.cfg.MaxRetries {
		return c.abort(fmt.Sprintf("%d of %d sites accepted the job after %d retries (quorum %d); silent: %v", len(accepted), len(accepted)+len(silent), c.retries, c.quorum(), silent))
	}
	c.retries++
	c.logf("job %s: %d of %d sites accepted: repeating the announcement (retry %d)", c.job.Job, len(accepted), len(accepted)+len(silent), c.retries)
	return []Output{c.broadcast(c.job)}
}

func (c *Coordinator) abort(reason string) []Output {
	c.state = stateAborted
	c.abortErr = fmt.Errorf("coordinator: job aborted: %s", reason)
	c.logf("abort: %s", reason)
	job := c.cfg.Job.ID
	return []Output{c.broadcast(&protocol.Abort{Job: job, From: protocol.CoordinatorName, Reason: truncate(reason, protocol.MaxReasonLen)})}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// guard runs algorithm code (plan, combination, final model), turning a
// panic into an error: a bug or a hostile update must not crash the
// coordinator; the job is aborted with the reason instead.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in the algorithm (recovered): %v", r)
		}
	}()
	return f()
}
