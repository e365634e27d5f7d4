// Package coordinator is the coordinator of a pairfed federation: it holds
// the global model, admits sites, fixes a job's parameters, starts each
// phase by broadcasting the model, collects one update per site and
// aggregates them, and finally publishes the result.
//
// Coordinator is a pure state machine in the style of etcd raft's RawNode:
// no goroutines, clock, randomness or I/O. Input arrives through Step
// (a decoded protocol message) and Tick (one unit of abstract time); each
// returns the messages to send. Run is the thin concurrent wrapper that
// owns a transport, a ticker and one goroutine.
//
// The coordinator never sees a record: sites send their record count and
// dimension (Join) and, per phase, one model vector and its weight.
package coordinator

import (
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// JobConfig is the job the coordinator runs once enough sites joined. Zero
// values mean defaults (filled by Validate).
type JobConfig struct {
	// ID names the job (default "job-1").
	ID string
	// Algo is one of protocol.FedAlgos.
	Algo string
	// LocalAlgo is the single-site private algorithm a fed-oneshot site
	// runs (a registered private pairwise algorithm supporting AUC, e.g.
	// "dpegd", "dpgdsc", "dp-gd-grad", "dp-local-sgd"); empty otherwise.
	LocalAlgo string
	// Loss is the pairwise AUC loss: default hinge for fed-avg, logistic
	// for the private algorithms ([Y21a] Thm 10 and [X21] need an
	// L-smooth loss).
	Loss string
	// Rounds is the number of fed-avg rounds (default 10), or the number
	// T of [K22] Alg 1 iterations of fed-dp-gd-grad (default
	// pairwise.K22Steps at the smallest site, [K22] Remark 2);
	// fed-dp-local-sgd has K = ⌈log₂ n_min⌉ phases instead.
	Rounds int
	// LocalPasses is the passes over its data a fed-avg site makes per
	// round (default 1).
	LocalPasses float64
	// Eta is the base step size η. Default: 10 for fed-avg (the value
	// [Y21a]'s selection picks for sgd-prev on diabetes; no federated
	// selection yet); for fed-dp-local-sgd the η of [Y21a] Thm 10 at the
	// smallest site (pairwise.Y21aDefaultEta); for fed-dpegd the η of
	// [X21] Thm 3 at the smallest site (pairwise.DPEGDDefaultEta); for
	// fed-oneshot 0 lets every site take its algorithm's default for its
	// own n (a given η is passed to the algorithm, which checks it); for
	// fed-dp-gd-grad 1/L ([K22] Thms 2–3, as dp-gd-grad), the coordinator's
	// step.
	Eta float64
	// ParamRadius is the radius B of the ℓ2 ball W (default 100 for
	// fed-avg, 1 for fed-dp-local-sgd, as `pairfed train` uses for private
	// algorithms).
	ParamRadius float64
	// FeatureRadius is R: every site clips its records to ‖x‖ ≤ R
	// (default 1; required > 0 for private jobs).
	FeatureRadius float64
	// Lambda is the (λ/2)‖w‖² regularization (default 0).
	Lambda float64
	// Epsilon and Delta are the per-site record-level (ε, δ) of a private
	// job. Delta 0 means 1/n_max over the participants (≤ 1/n for every
	// site, the papers' default δ = 1/n at the largest site).
	Epsilon, Delta float64
	// Seed is recorded in the announcement (reproducible runs).
	Seed uint64
	// Task is "auc" (default: a linear scoring model w) or "metric" (a
	// Mahalanobis metric W ∈ S^d, d·d parameters, projected by the sites
	// onto the Frobenius ball ∩ PSD; fed-dp-gd-grad is AUC only).
	Task string
	// Aggregation is "" (weighted mean), "median" or "trimmed-mean:β"
	// (see protocol.Aggregation).
	Aggregation string
}

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
	if j.Task == protocol.TaskMetric && j.Algo == protocol.AlgoFedDPGDGrad {
		return fmt.Errorf("coordinator: %s is AUC only (the coordinator's step projects onto the ℓ2 ball, not onto PSD matrices)", j.Algo)
	}
	private := false
	switch j.Algo {
	case protocol.AlgoFedAvg:
		if j.Loss == "" {
			j.Loss = "hinge"
		}
		if j.Rounds == 0 {
			j.Rounds = 10
		}
		if j.LocalPasses == 0 {
			j.LocalPasses = 1
		}
		if j.Eta == 0 {
			j.Eta = 10
		}
		if j.ParamRadius == 0 {
			j.ParamRadius = 100
		}
		if j.Epsilon != 0 || j.Delta != 0 {
			return fmt.Errorf("coordinator: %s is not private: ε and δ do not apply", j.Algo)
		}
	case protocol.AlgoFedDPLocalSGD, protocol.AlgoFedOneShot, protocol.AlgoFedDPEGD, protocol.AlgoFedDPGDGrad:
		private = true
		if j.Loss == "" {
			j.Loss = "logistic"
		}
		if j.ParamRadius == 0 {
			j.ParamRadius = 1
		}
		if j.Algo == protocol.AlgoFedDPGDGrad {
			if j.LocalPasses != 0 {
				return fmt.Errorf("coordinator: %s is full-batch: give the number of iterations T (rounds), not local passes", j.Algo)
			}
		} else if j.Rounds != 0 || j.LocalPasses != 0 {
			switch j.Algo {
			case protocol.AlgoFedDPLocalSGD:
				return fmt.Errorf("coordinator: %s has K = ⌈log₂ n_min⌉ phases of fixed length ([Y21a] Alg 3): rounds and local passes do not apply", j.Algo)
			case protocol.AlgoFedDPEGD:
				return fmt.Errorf("coordinator: %s has k = ⌊log₂ n_min⌋ epochs of fixed length ([X21] Alg 3): rounds and local passes do not apply", j.Algo)
			default:
				return fmt.Errorf("coordinator: %s is one phase of the local algorithm: rounds and local passes do not apply", j.Algo)
			}
		}
		if !(j.Epsilon > 0) || math.IsInf(j.Epsilon, 0) {
			return fmt.Errorf("coordinator: %s needs ε > 0, got %v", j.Algo, j.Epsilon)
		}
		if !(j.Delta >= 0 && j.Delta < 1) {
			return fmt.Errorf("coordinator: δ = %v must be in [0, 1) (0: 1/n_max)", j.Delta)
		}
	default:
		return fmt.Errorf("coordinator: unknown federated algorithm %q (one of %v)", j.Algo, protocol.FedAlgos)
	}
	if err := CheckLocalAlgo(j.Algo, j.LocalAlgo, j.Task, j.Loss, j.Lambda); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if _, err := pairwise.LossByName(pairwise.Task(j.Task), j.Loss); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if j.FeatureRadius == 0 {
		j.FeatureRadius = 1
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"eta", j.Eta}, {"param radius", j.ParamRadius}, {"feature radius", j.FeatureRadius}, {"lambda", j.Lambda}, {"local passes", j.LocalPasses}} {
		if v.x < 0 || math.IsNaN(v.x) || math.IsInf(v.x, 0) {
			return fmt.Errorf("coordinator: %s = %v must be finite and ≥ 0", v.name, v.x)
		}
	}
	if private && !(j.FeatureRadius > 0) {
		return fmt.Errorf("coordinator: %s needs a feature radius R > 0", j.Algo)
	}
	if j.Algo == protocol.AlgoFedDPGDGrad {
		// The coordinator steps with η = 1/L and the sites' noise needs a
		// finite G ([K22] Thm 1): check the loss before any site joins.
		loss, _ := pairwise.LossByName(pairwise.TaskAUC, j.Loss)
		props := pairwise.K22FedProps(loss, j.FeatureRadius, j.ParamRadius, j.Lambda)
		if !props.IsSmooth() || math.IsInf(props.Lipschitz, 0) || math.IsNaN(props.Lipschitz) {
			return fmt.Errorf("coordinator: %s needs a G-Lipschitz, L-smooth loss ([K22] Alg 1), the %s loss has G = %g, L = %g; use --loss logistic", j.Algo, j.Loss, props.Lipschitz, props.Smooth)
		}
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

// CheckLocalAlgo checks fed-oneshot's local algorithm: a registered
// private pairwise algorithm that supports the task with loss (and, if it
// needs strong convexity, λ > 0). Other algorithms take none.
func CheckLocalAlgo(algo, local, task, loss string, lambda float64) error {
	if algo != protocol.AlgoFedOneShot {
		if local != "" {
			return fmt.Errorf("%s takes no local algorithm (got %q)", algo, local)
		}
		return nil
	}
	if local == "" {
		return fmt.Errorf("%s needs a local algorithm (a private single-site algorithm, e.g. dpegd)", algo)
	}
	a, err := pairwise.Lookup(local)
	if err != nil {
		return err
	}
	if !a.Private {
		return fmt.Errorf("%s: local algorithm %s is not private", algo, local)
	}
	if a.NeedsStrongConvexity && !(lambda > 0) {
		return fmt.Errorf("%s: local algorithm %s needs a strongly convex objective: give λ > 0", algo, local)
	}
	return a.Supports(pairwise.Task(task), loss)
}

// Output is a message to publish on a subject.
type Output struct {
	Subject string
	Msg     protocol.Message
}

type state int

const (
	stateJoining state = iota
	stateRunning
	stateDone
	stateAborted
)

type site struct {
	records, dim int
	participant  bool
	left         bool
	lastSeen     int // tick of the last message
	privacy      SitePrivacy
	sens         float64 // fed-dp-gd-grad: the ℓ2 sensitivity 4G/n of each release
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
	// ComposedEpsilon (fed-dp-gd-grad) is the ε at Delta that exact
	// Gaussian-DP composition (dp.Compose, method gdp) proves for the
	// site's Gaussian releases of sensitivity 4G/n, next to the paper's
	// claim Epsilon ([K22] Thm 1, moments accountant); 0 otherwise.
	ComposedEpsilon float64 `json:"composed_epsilon,omitempty"`
	// Notes say how the site's guarantee arises (fed-dp-gd-grad).
	Notes []string `json:"notes,omitempty"`
}

// Coordinator is the coordinator state machine. It is not safe for
// concurrent use: Run owns it.
type Coordinator struct {
	cfg   Config
	state state
	sites map[string]*site
	dim   int
	now   int // ticks

	job      *protocol.JobAnnounce
	phase    int
	model    []float64
	outSum   []float64 // fed-avg: Σ over rounds of the aggregated Alg 1 averages
	updates  map[string]*protocol.SiteUpdate
	waited   int // ticks in this phase
	retries  int
	result   *protocol.Result
	abortErr error
	released []PhaseRelease // aggregated updates not yet taken (TakeReleases)
}

// New returns a coordinator waiting for sites.
func New(cfg Config) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Coordinator{cfg: cfg, sites: map[string]*site{}}, nil
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
		if c.job != nil && c.job.Algo == protocol.AlgoFedDPGDGrad && len(p.Sigmas) > 0 {
			p.ComposedEpsilon, p.Notes = composeK22(p, s.sens)
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
	case *protocol.Leave:
		return c.onLeave(m)
	case *protocol.Abort:
		if c.job != nil && m.Job == c.job.Job && c.sites[m.From] != nil && c.sites[m.From].participant {
			return c.abort(fmt.Sprintf("site %s aborted: %s", m.From, m.Reason))
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
		if s.records != m.Records || s.dim != m.Dim {
			c.logf("ignored join of %s with n = %d, d = %d: already joined with n = %d, d = %d", m.Site, m.Records, m.Dim, s.records, s.dim)
			return nil
		}
		if c.state == stateRunning && s.participant && !s.left {
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
	c.sites[m.Site] = &site{records: m.Records, dim: m.Dim, lastSeen: c.now}
	c.logf("site %s joined (n = %d, d = %d); %d of %d", m.Site, m.Records, m.Dim, len(c.sites), c.cfg.MinSites)
	if len(c.sites) < c.cfg.MinSites {
		return nil
	}
	return c.startJob()
}

// startJob fixes the job's parameters from the joined sites and starts
// phase 1 from the zero model.
func (c *Coordinator) startJob() []Output {
	j := c.cfg.Job
	var names []string
	nMin, nMax := math.MaxInt, 0
	for name, s := range c.sites {
		s.participant = true
		names = append(names, name)
		nMin, nMax = min(nMin, s.records), max(nMax, s.records)
	}
	slices.Sort(names)
	a := &protocol.JobAnnounce{
		Job: j.ID, Algo: j.Algo, LocalAlgo: j.LocalAlgo, Task: j.Task, Loss: j.Loss, Params: c.dim,
		LocalPasses: j.LocalPasses, Eta: j.Eta, ParamRadius: j.ParamRadius, FeatureRadius: j.FeatureRadius,
		Lambda: j.Lambda, Seed: j.Seed, Sites: names, Aggregation: j.Aggregation,
	}
	if j.Task == protocol.TaskMetric {
		if c.dim > 1448 { // d² ≤ protocol.MaxParams = 2²¹
			return c.abort(fmt.Sprintf("a metric on d = %d features has %d parameters, over the protocol's %d", c.dim, c.dim*c.dim, protocol.MaxParams))
		}
		a.Params = c.dim * c.dim
	}
	switch j.Algo {
	case protocol.AlgoFedAvg:
		a.Phases = j.Rounds
	case protocol.AlgoFedDPLocalSGD:
		// Each site partitions its own records into K halving subsets;
		// K = ⌈log₂ n_min⌉ fits every site (pairwise.Y21aPartition).
		a.Phases = pairwise.Y21aPhases(nMin)
		if a.Phases < 1 {
			return c.abort(fmt.Sprintf("%s needs at least 2 records at every site (smallest: %d)", j.Algo, nMin))
		}
		a.Epsilon, a.Delta = j.Epsilon, j.Delta
		if a.Delta == 0 {
			a.Delta = 1 / float64(nMax)
		}
		if a.Eta == 0 {
			loss, _ := pairwise.LossByName(pairwise.Task(j.Task), j.Loss)
			a.Eta = pairwise.Y21aDefaultEta(loss, nMin, a.Params, j.FeatureRadius, j.ParamRadius, a.Epsilon, a.Delta)
		}
	case protocol.AlgoFedOneShot:
		// One release per site of its local algorithm on all its records.
		a.Phases = 1
		a.Epsilon, a.Delta = j.Epsilon, j.Delta
		if a.Delta == 0 {
			a.Delta = 1 / float64(nMax)
		}
	case protocol.AlgoFedDPGDGrad:
		// T full-gradient rounds on every site's whole data ([K22] Alg 1).
		if nMin < 2 {
			return c.abort(fmt.Sprintf("%s needs at least 2 records (a pair) at every site (smallest: %d)", j.Algo, nMin))
		}
		a.Epsilon, a.Delta = j.Epsilon, j.Delta
		if a.Delta == 0 {
			a.Delta = 1 / float64(nMax)
		}
		a.Phases = j.Rounds
		if a.Phases == 0 {
			// [K22] Remark 2's T = ⌈ln(nε/√p)⌉ at the smallest site.
			a.Phases = pairwise.K22Steps(nMin, c.dim, a.Epsilon)
		}
		loss, _ := pairwise.LossByName(pairwise.TaskAUC, j.Loss)
		props := pairwise.K22FedProps(loss, j.FeatureRadius, j.ParamRadius, j.Lambda)
		if a.Eta == 0 {
			a.Eta = 1 / props.Smooth
		}
		for _, name := range names {
			c.sites[name].sens = pairwise.K22Sensitivity(props.Lipschitz, c.sites[name].records)
		}
	case protocol.AlgoFedDPEGD:
		// Each site splits its records into k disjoint epochs;
		// k = ⌊log₂ n_min⌋ fits every site (pairwise.DPEGDPartition).
		a.Phases = pairwise.DPEGDPhases(nMin)
		if a.Phases < 1 {
			return c.abort(fmt.Sprintf("%s needs at least 2 records at every site (smallest: %d)", j.Algo, nMin))
		}
		a.Epsilon, a.Delta = j.Epsilon, j.Delta
		if a.Delta == 0 {
			a.Delta = 1 / float64(nMax)
		}
		if a.Eta == 0 {
			loss, _ := pairwise.LossByName(pairwise.Task(j.Task), j.Loss)
			a.Eta = pairwise.DPEGDDefaultEta(loss, nMin, a.Params, j.FeatureRadius, j.ParamRadius, a.Epsilon, a.Delta)
		}
	}
	if err := a.Validate(); err != nil {
		return c.abort(fmt.Sprintf("invalid job: %v", err))
	}
	c.job = a
	c.model = make([]float64, a.Params)
	if a.Algo == protocol.AlgoFedAvg {
		c.outSum = make([]float64, a.Params)
	}
	c.state = stateRunning
	for _, name := range names {
		c.sites[name].privacy = SitePrivacy{Site: name, Records: c.sites[name].records, Epsilon: a.Epsilon, Delta: a.Delta, Secure: true}
	}
	c.logf("job %s (%s) starts with %d sites, %d phases, η = %g", a.Job, a.Algo, len(names), a.Phases, a.Eta)
	return c.startPhase(1)
}

func (c *Coordinator) startPhase(k int) []Output {
	c.phase = k
	c.updates = map[string]*protocol.SiteUpdate{}
	c.waited, c.retries = 0, 0
	return c.phaseOutputs(protocol.SitesSubject(c.cfg.Federation))
}

// phaseOutputs are the announcement and the current phase's start on
// subject (sent together so that a site that missed the announcement can
// catch up).
func (c *Coordinator) phaseOutputs(subject string) []Output {
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
	case len(m.Model) != len(c.model):
		c.logf("ignored update of %s: model has %d parameters, want %d", m.Site, len(m.Model), len(c.model))
		return nil
	case protocol.PrivateFedAlgo(c.job.Algo) && (m.Epsilon != c.job.Epsilon || m.Delta != c.job.Delta):
		return c.abort(fmt.Sprintf("site %s claims (ε, δ) = (%g, %g), the job asked (%g, %g)", m.Site, m.Epsilon, m.Delta, c.job.Epsilon, c.job.Delta))
	}
	s.lastSeen = c.now
	c.updates[m.Site] = m
	if len(c.updates) == len(c.participants(true)) {
		return c.aggregate()
	}
	return nil
}

// aggregate replaces the model by the weighted mean of the received
// updates (in site order, so the result does not depend on arrival order)
// — or by their coordinate-wise median or trimmed mean when the job asks
// for robust aggregation (see combine) — and starts the next phase or
// finishes. Below, "weighted mean" stands for the job's rule.
//
// fed-avg: the next round starts from the weighted mean of the sites'
// last iterates (of Model for a site that sent none), and the result is
// the mean over rounds of the weighted means of the Models (the sites'
// [Y21a] Alg 1 averages), as Alg 1 averages over the whole run.
// fed-dp-local-sgd, fed-dpegd, fed-oneshot: the next phase starts from,
// and the result is, the weighted mean of the Models (weights: partition
// or subset size, or record count for fed-oneshot).
// fed-dp-gd-grad: the Models are the sites' noisy gradients at the current
// model; their weighted mean ḡ (weights: record counts) steps the model,
// Π_C(w − ηḡ), and the result is the last iterate, projected ([K22] Alg 1).
func (c *Coordinator) aggregate() []Output {
	names := make([]string, 0, len(c.updates))
	for name := range c.updates {
		names = append(names, name)
	}
	slices.Sort(names)
	fedAvg := c.job.Algo == protocol.AlgoFedAvg
	grad := c.job.Algo == protocol.AlgoFedDPGDGrad
	models := make([][]float64, len(names))
	lasts := make([][]float64, len(names))
	weights := make([]float64, len(names))
	for i, name := range names {
		u := c.updates[name]
		models[i], weights[i] = u.Model, u.Weight
		lasts[i] = u.Last
		if len(lasts[i]) == 0 {
			lasts[i] = u.Model
		}
		p := &c.sites[name].privacy
		if protocol.PrivateFedAlgo(c.job.Algo) {
			if len(u.Sigmas) > 0 {
				p.Sigmas = append(p.Sigmas, u.Sigmas...) // fed-oneshot: every σ of the release
			} else {
				p.Sigmas = append(p.Sigmas, u.Sigma)
			}
		}
		p.Secure = p.Secure && u.Secure
		c.released = append(c.released, PhaseRelease{Site: name, Phase: c.phase, Records: c.sites[name].records,
			Sigma: u.Sigma, Sensitivity: c.sites[name].sens, Secure: u.Secure})
	}
	rule, _ := protocol.ParseAggregation(c.job.Aggregation) // validated with the announcement
	var next, avg []float64
	switch {
	case fedAvg:
		next, avg = combine(rule, lasts, weights, false), combine(rule, models, weights, false)
	default:
		next = combine(rule, models, weights, grad)
	}
	if grad {
		pairwise.FedGradStep(c.model, next, c.job.Eta, c.job.ParamRadius)
	} else {
		c.model = next
	}
	if fedAvg {
		for i, v := range avg {
			c.outSum[i] += v
		}
	}
	if c.phase < c.job.Phases {
		return c.startPhase(c.phase + 1)
	}
	c.state = stateDone
	out := slices.Clone(c.model)
	if grad {
		pairwise.FedGradFinish(out, c.job.ParamRadius)
	}
	if fedAvg {
		for i, v := range c.outSum {
			out[i] = v / float64(c.job.Phases)
		}
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
		if len(c.sites) == 0 {
			c.dim = 0
		}
		return nil
	}
	if !s.participant || s.left {
		return nil
	}
	s.left = true
	delete(c.updates, m.Site)
	active := len(c.participants(true))
	if active == 0 || active < c.quorum() {
		return c.abort(fmt.Sprintf("%d active sites left, quorum is %d", active, c.quorum()))
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
	return len(c.participants(false))
}

// Tick advances time by one tick and handles phase timeouts.
func (c *Coordinator) Tick() []Output {
	c.now++
	if c.state != stateRunning || c.cfg.PhaseTimeout == 0 {
		return nil
	}
	c.waited++
	if c.waited < c.cfg.PhaseTimeout {
		return nil
	}
	c.waited = 0
	if q := c.quorum(); len(c.updates) >= q && len(c.updates) > 0 {
		c.logf("phase %d timed out with %d of %d updates (quorum %d): aggregating", c.phase, len(c.updates), len(c.participants(true)), q)
		return c.aggregate()
	}
	if c.retries >= c.cfg.MaxRetries {
		return c.abort(fmt.Sprintf("phase %d: %d of %d updates after %d retries", c.phase, len(c.updates), len(c.participants(true)), c.retries))
	}
	c.retries++
	c.logf("phase %d timed out with %d of %d updates: re-broadcasting (retry %d)", c.phase, len(c.updates), len(c.participants(true)), c.retries)
	return c.phaseOutputs(protocol.SitesSubject(c.cfg.Federation))
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

// composeK22 composes a fed-dp-gd-grad site's Gaussian releases (one per
// reported σ, each of ℓ2 sensitivity sens = 4G/n) at the site's δ with
// dp.Compose and returns the exact Gaussian-DP ε (0 if it does not apply)
// and notes stating both guarantees.
func composeK22(p SitePrivacy, sens float64) (float64, []string) {
	notes := []string{fmt.Sprintf("[K22] Thm 1 (moments accountant): %d adaptive full-gradient Gaussian releases of sensitivity 4G/n = %.6g with σ = 8G√(T log(1/δ))/(nε) are (ε, δ) = (%g, %.3g)-DP", len(p.Sigmas), sens, p.Epsilon, p.Delta)}
	if !(sens > 0) || !(p.Delta > 0) {
		return 0, notes
	}
	rels := make([]dp.Release, len(p.Sigmas))
	for i, s := range p.Sigmas {
		rels[i] = dp.Release{Mechanism: dp.MechanismGaussian, Sensitivity: sens, Sigma: s, Label: fmt.Sprintf("round %d", i+1)}
	}
	rep, err := dp.Compose(rels, p.Delta)
	if err != nil {
		return 0, append(notes, fmt.Sprintf("dp.Compose: %v", err))
	}
	e := rep.Method(dp.MethodGDP)
	if !e.OK || math.IsInf(e.Epsilon, 0) || math.IsNaN(e.Epsilon) {
		return 0, append(notes, "exact Gaussian-DP composition does not apply: "+e.Description)
	}
	return e.Epsilon, append(notes, fmt.Sprintf("exact Gaussian-DP composition of the same releases (dp.Compose): ε = %.6g at δ = %.3g", e.Epsilon, p.Delta))
}
