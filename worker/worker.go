package worker

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"time"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg/round"
)

// Config configures a Worker.
type Config struct {
	// Federation and Site name the federation and this site (subject tokens).
	Federation, Site string
	// Instance identifies this process among any others started with the
	// same Site (a random token; "" disables the check): it travels in
	// Join and Accept, and a job announced to another instance of this
	// site is not taken.
	Instance string
	// Data is the site's training set, already scaled and clipped by the
	// caller (see cmd/pairfed simulate: min-max fitted on this site's own
	// records, then ‖x‖ ≤ R). It is only read, and never sent.
	Data *pairwise.Dataset
	// LinearData, when set, is the same records by the schema's linear
	// map (bounds multiplied by R/√d, norms ≤ R by construction, no
	// clipping): jobs of algorithms that centre privately
	// (fedalgo.CentresPrivately) read it instead of Data.
	LinearData *pairwise.Dataset
	// Noise draws the privacy noise of private jobs: dp.NewSecureNoise()
	// for a private run; a seeded source makes the run reproducible and
	// the site reports its updates as not secure (not private).
	Noise pairwise.Noise
	// Rand draws the sampled indices and the partition. For private jobs
	// it must be secret (seeded from crypto/rand), since [Y21a]'s
	// sensitivity bound holds on a high-probability event over the draws.
	Rand *rand.Rand
	// JoinEvery is the number of ticks between Join retries until an
	// announcement lists this site (default 1).
	JoinEvery int
	// HeartbeatEvery, when > 0, sends a Heartbeat every that many ticks
	// while a job runs.
	HeartbeatEvery int
	// Store, when set, is the durable ledger: every release is appended
	// to it before the update leaves the state machine (write-ahead). If
	// Append fails the update is not released and the worker aborts.
	Store LedgerStore
	// Jobs, when set, keeps each private job's partition and released
	// updates (JobState) after every release, so that a restarted site can
	// take the job up again (ServiceConfig.Jobs).
	Jobs JobStore
	// Logf receives one line per notable event; nil discards.
	Logf func(format string, args ...any)
	// SecAggKey is this site's long-term Ed25519 signing key for secure
	// aggregation, and SecAggRoster every site's public key by name (this
	// site's among them): the active variant of secagg (the default)
	// signs this site's round keys and its view of the survivors with it,
	// and checks every other site's signatures against the roster, so a
	// lying coordinator is detected (secagg/doc.go). Both are required to
	// take part in a job with secure aggregation; pairfed deploy init
	// issues them (--secagg-key, --secagg-roster).
	SecAggKey    ed25519.PrivateKey
	SecAggRoster map[string]ed25519.PublicKey
	// Broadcasts, when set, is the memo Run decodes announcements and
	// results with (nil: one of its own). The sites of one process may
	// share one (a simulation's K sites receive the same bytes): each
	// broadcast is then decoded and validated once for all of them
	// instead of once per site (BroadcastMemo says why that trusts no
	// peer).
	Broadcasts *BroadcastMemo
}

// LedgerStore persists ledger entries. Append must return only once the
// entry is durable (e.g. written and fsynced).
type LedgerStore interface {
	Append(Release) error
}

// Validate fills defaults and checks the configuration.
func (c *Config) Validate() error {
	if err := protocol.ValidName("federation", c.Federation); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if err := protocol.ValidName("site", c.Site); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if c.Instance != "" {
		if err := protocol.ValidName("instance", c.Instance); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	if c.Data == nil {
		return fmt.Errorf("worker: site %s has no data", c.Site)
	}
	if err := c.Data.Validate(); err != nil {
		return fmt.Errorf("worker: site %s: %w", c.Site, err)
	}
	if c.Data.D > protocol.MaxParams {
		return fmt.Errorf("worker: site %s: dimension %d exceeds the protocol's %d parameters: %w", c.Site, c.Data.D, protocol.MaxParams, protocol.ErrTooLarge)
	}
	if c.Rand == nil {
		return fmt.Errorf("worker: site %s has no random source", c.Site)
	}
	if c.JoinEvery < 0 || c.HeartbeatEvery < 0 {
		return fmt.Errorf("worker: join (%d) and heartbeat (%d) intervals must be ≥ 0", c.JoinEvery, c.HeartbeatEvery)
	}
	if c.JoinEvery == 0 {
		c.JoinEvery = 1
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if err := c.validSecAggKeys(); err != nil {
		return err
	}
	return nil
}

// Output is a message to publish on a subject.
type Output struct {
	Subject string
	Msg     protocol.Message
}

// Release is one entry of the site's privacy ledger: a value this site
// released, with the guarantee it claims for the records it used.
type Release struct {
	Job     string  `json:"job"`
	Phase   int     `json:"phase"`
	Records int     `json:"records"` // records the release depends on (the phase's partition)
	Sigma   float64 `json:"sigma"`
	// Sigmas lists every σ of a release with several noisy steps (e.g. a
	// local algorithm's report); Sigma is its first.
	Sigmas []float64 `json:"sigmas,omitempty"`
	// Sensitivity is the ℓ2 sensitivity of a Gaussian release when the
	// algorithm states it, for composing the ledger with dp.Compose;
	// omitted otherwise.
	Sensitivity float64 `json:"sensitivity,omitempty"`
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
	Secure      bool    `json:"secure"`
	// Mechanism is the noise ("gaussian", "laplace", …); Time is set by
	// the durable store when the entry is written (before the release).
	Mechanism string    `json:"mechanism,omitempty"`
	Time      time.Time `json:"time,omitzero"`

	// SampleRate and Steps: a release of Steps Poisson-subsampled Gaussian
	// steps at rate SampleRate, each with noise Sigma; omitted otherwise.
	SampleRate float64 `json:"sample_rate,omitempty"`
	Steps      int     `json:"steps,omitempty"`
	// SecAgg is set for a release summed by secure aggregation: the
	// guarantees round.Charge computed (Epsilon is not below either).
	SecAgg *SecAggCharge `json:"secagg,omitempty"`
}

// SecAggCharge is the guarantee of a secure aggregation release at the
// threshold floor: ε against the coordinator alone, and against the
// coordinator with Colluders sites; and the site's local-only guarantee.
type SecAggCharge struct {
	Threshold   int     `json:"threshold"`
	Colluders   int     `json:"colluders"`
	Coordinator float64 `json:"epsilon_coordinator"`
	Collusion   float64 `json:"epsilon_collusion"`
	// Local is ε of this site's own noise share alone (n = 1 share): what
	// holds if the coordinator and every other site collude, whatever the
	// threshold (round.Guarantee.Local; math.MaxFloat64 when above 100).
	// Optional: ledgers written before it was recorded have none (0).
	Local float64 `json:"epsilon_local,omitempty"`
	// Degree, Floor and CollusionFloor, with the sparse variant (SecAgg+:
	// fedalgo's secagg-degree), are its expected degree and the numbers of
	// honest noise shares the two guarantees count (secagg.SparseFloor);
	// with removable noise copies, the numbers of honest copies
	// (fedalgo.SecAgg.Floors); t and t − κ otherwise, and then omitted.
	Degree         int `json:"degree,omitempty"`
	Floor          int `json:"floor,omitempty"`
	CollusionFloor int `json:"collusion_floor,omitempty"`
	// Copies and Keep, when some of the site's noise was removable
	// (dp/ddg_removable.go): it added Copies draws of σ = Sigma/√Copies,
	// Keep of them from its secure source; the others' seed went to the
	// coordinator only if every site was in the sum. Omitted otherwise.
	Copies int `json:"copies,omitempty"`
	Keep   int `json:"keep,omitempty"`
	// Note, on an entry that repeats a charged release (same job, phase
	// and guarantee: the charge stays), records how its round ended
	// without an unmasked sum — e.g. the site detected a lying
	// coordinator at the consistency check and sent no unmask share
	// (secure.go, onSecAgg). On the charge itself it names the peers the
	// site refused in the round (their share ciphertexts did not
	// authenticate) and excluded from its masks.
	Note string `json:"note,omitempty"`
}

// Worker is the site state machine. It is not safe for concurrent use.
type Worker struct {
	cfg Config
	now int

	job       *protocol.JobAnnounce
	excluded  bool
	obj       pairwise.Objective
	site      fedalgo.Site                 // the algorithm's half of the job
	sent      map[int]*protocol.SiteUpdate // released updates by phase
	startOf   map[int][]float64            // the start model of each released phase
	ledger    []Release
	hbSeq     uint64
	phaseSeen bool // a PhaseStart of the job arrived (it was accepted)
	// Secure aggregation (secure.go): the job's parameters, the phases
	// whose round started (charged) and the running round.
	sec        *fedalgo.SecAgg // as fedalgo.SiteSecAgg checked it: Δ and δ_f the site's own
	secDim     int             // the site's vector length (fedalgo.SumReleaser.SiteSumShape)
	secFloors  fedalgo.Floors  // ℓ, w and the floors of honest shares, from the job's public K, t, κ and degree (secSetup)
	secStarted map[int]bool
	// secPending is the charge of the running secure round, written just
	// before its masked vector leaves (worker/secure.go).
	secPending *Release
	round      *round.Site
	result     *protocol.Result
	err        error
	// decoded is the announcement Run is handing to Step, which came
	// through protocol.Decode (validated in full there): setup does not
	// validate it a second time. Nil outside Run's call of Step.
	decoded *protocol.JobAnnounce
}

// New returns a worker that has not joined yet (call Start).
func New(cfg Config) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Worker{cfg: cfg, sent: map[int]*protocol.SiteUpdate{}, startOf: map[int][]float64{}, secStarted: map[int]bool{}}, nil
}

func (w *Worker) logf(format string, args ...any) {
	w.cfg.Logf("worker "+w.cfg.Site+": "+format, args...)
}

func (w *Worker) toCoord(m protocol.Message) Output {
	return Output{Subject: protocol.SiteToCoordSubject(w.cfg.Federation, w.cfg.Site), Msg: m}
}

func (w *Worker) join() Output {
	return w.toCoord(&protocol.Join{Site: w.cfg.Site, Records: w.cfg.Data.N, Dim: w.cfg.Data.D, Instance: w.cfg.Instance})
}

// Start returns the first Join.
func (w *Worker) Start() []Output { return []Output{w.join()} }

// Done reports whether the job ended (result or abort).
func (w *Worker) Done() bool { return w.result != nil || w.err != nil }

// Result returns the final model once received.
func (w *Worker) Result() *protocol.Result { return w.result }

// Err returns why the job ended without a result.
func (w *Worker) Err() error { return w.err }

// Ledger returns the site's releases so far.
func (w *Worker) Ledger() []Release { return slices.Clone(w.ledger) }

// Tick advances time: Join retries before a job includes this site,
// heartbeats during one.
func (w *Worker) Tick() []Output {
	w.now++
	switch {
	case w.Done() || w.excluded:
		return nil
	case w.job == nil:
		if w.now%w.cfg.JoinEvery == 0 {
			return []Output{w.join()}
		}
	case w.cfg.HeartbeatEvery > 0 && w.now%w.cfg.HeartbeatEvery == 0:
		w.hbSeq++
		return []Output{w.toCoord(&protocol.Heartbeat{Site: w.cfg.Site, Seq: w.hbSeq})}
	}
	return nil
}

// Step handles one message from the coordinator. The local phase runs
// inside Step (ctx cancels it). When the worker gives up on the job it
// tells the coordinator (Abort) and Err reports why.
//
// No message makes Step panic out: a panic in the algorithm's code (a job
// spec that slipped past every check, or a bug) is recovered here, at the
// job boundary, and ends this job like any other error — logged, the
// coordinator told (Abort), nothing released — while the site stays up
// for the next job.
func (w *Worker) Step(ctx context.Context, m protocol.Message) (outs []Output) {
	if w.Done() {
		return nil
	}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		job := jobOf(m)
		if a, ok := m.(*protocol.JobAnnounce); ok {
			job = a.Job
		}
		w.err = fmt.Errorf("worker %s: job %s: internal error (recovered): %v", w.cfg.Site, job, r)
		w.logf("job %s: internal error handling %v, job abandoned, nothing released: %v\n%s", job, m.Kind(), r, debug.Stack())
		outs = nil
		if protocol.ValidName("job", job) == nil {
			outs = []Output{w.toCoord(&protocol.Abort{Job: job, From: w.cfg.Site, Reason: truncate(fmt.Sprintf("site internal error: %v", r), protocol.MaxReasonLen)})}
		}
	}()
	switch m := m.(type) {
	case *protocol.JobAnnounce:
		return w.onAnnounce(m)
	case *protocol.PhaseStart:
		return w.onPhase(ctx, m)
	case *protocol.SecAggKeyList, *protocol.SecAggSharesFor, *protocol.SecAggUnmaskRequest, *protocol.SecAggCheckSigs, *protocol.SecAggExpel:
		return w.onSecAgg(m)
	case *protocol.Result:
		if w.job != nil && m.Job == w.job.Job {
			w.result = m
			w.logf("job %s done", m.Job)
		}
	case *protocol.Abort:
		if w.job == nil || m.Job == w.job.Job {
			w.err = &AbortedError{msg: fmt.Sprintf("worker %s: job %s aborted by %s: %s", w.cfg.Site, m.Job, m.From, m.Reason)}
			w.logf("job %s aborted by %s: %s", m.Job, m.From, m.Reason)
		}
	default:
		w.logf("ignored %v: not a message for a site", m.Kind())
	}
	return nil
}

func (w *Worker) onAnnounce(m *protocol.JobAnnounce) []Output {
	if w.job != nil {
		if m.Job != w.job.Job {
			w.logf("ignored announcement of job %s: busy with %s", m.Job, w.job.Job)
			return nil
		}
		// A repeated announcement while no phase has come yet (the
		// coordinator's accept round retries, or a catch-up): accept
		// again, idempotently. Once a phase came, the job was accepted:
		// the announcement that travels with every phase needs no answer.
		if w.phaseSeen {
			return nil
		}
		return []Output{w.accept()}
	}
	if !slices.Contains(m.Sites, w.cfg.Site) {
		w.excluded = true
		w.logf("not a participant of job %s", m.Job)
		return nil
	}
	if other := otherInstance(m, w.cfg.Site, w.cfg.Instance); other != "" {
		w.excluded = true
		w.logf("not taking part in job %s: it was announced to instance %s of site %s, this process is instance %s — another process runs with this site's name: stop one of them", m.Job, other, w.cfg.Site, w.cfg.Instance)
		return nil
	}
	err := w.setup(m)
	if n := w.cfg.Data.N; err == nil && m.Epsilon > 0 && w.cfg.Noise.Secure() && n > 0 && m.Delta >= 1/float64(n) {
		// δ ≥ 1/n protects nothing: publishing one random record verbatim
		// is (0, 1/n)-DP. A private site takes no such job (a seeded,
		// not-private run only warns below).
		err = fmt.Errorf("job %s asks δ = %g ≥ 1/n = %.3g for this site's n = %d records: such a δ allows releasing a record in the clear; submit the job with δ below 1/n (the default is 1/(10·n) of the largest site)", m.Job, m.Delta, 1/float64(n), n)
	}
	if err != nil {
		w.err = fmt.Errorf("worker %s: %w", w.cfg.Site, err)
		w.logf("refusing job %s: %v", m.Job, err)
		return []Output{w.toCoord(&protocol.Abort{Job: m.Job, From: w.cfg.Site, Reason: truncate(err.Error(), protocol.MaxReasonLen)})}
	}
	w.job = m
	w.logf("joined job %s (%s, %d phases)", m.Job, m.Algo, m.Phases)
	if m.Epsilon > 0 {
		if warn := pairwise.DeltaWarning(m.Delta, w.cfg.Data.N); warn != "" {
			w.logf("warning: job %s: %s", m.Job, warn)
		}
	}
	return []Output{w.accept()}
}

// otherInstance returns the instance job m was announced to for site when
// it is not instance (another process runs under the site's name), or "".
func otherInstance(m *protocol.JobAnnounce, site, instance string) string {
	i := slices.Index(m.Sites, site)
	if i < 0 || i >= len(m.Instances) || m.Instances[i] == "" || instance == "" || m.Instances[i] == instance {
		return ""
	}
	return m.Instances[i]
}

// accept is this site's acceptance of its job (the coordinator starts no
// phase before every participant answered).
func (w *Worker) accept() Output {
	return w.toCoord(&protocol.Accept{Job: w.job.Job, Site: w.cfg.Site, Instance: w.cfg.Instance})
}

// setup checks that this site can run the job and prepares its objective
// and the algorithm's half of the job (e.g. its partition).
//
// Zero trust in the coordinator: every number of the announcement that
// sets this site's noise, sensitivity, clipping or accounting is either
// computed here from the site's own data and the job's public parameters
// or checked against what the site computes (secSetup under secure
// aggregation), and a job that fails is refused naming the field. The
// announcement is validated here too (it may not have come through a
// validating decoder), and a private job must state ε > 0, R > 0 (this
// site's records checked against it: every sensitivity bound assumes
// ‖x‖ ≤ R) and B > 0. (The one announcement Run decoded with
// protocol.Decode, which validates, is not validated twice.)
func (w *Worker) setup(m *protocol.JobAnnounce) error {
	if m != w.decoded || m == nil {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("invalid announcement: %w", err)
		}
	}
	if fedalgo.Private(m.Algo) {
		if err := checkPrivateJob(m); err != nil {
			return err
		}
	}
	task := pairwise.Task(m.Task)
	d := w.cfg.Data.D
	switch {
	case task == pairwise.TaskAUC && m.Params != d:
		return fmt.Errorf("job %s has %d parameters, this site's data has d = %d", m.Job, m.Params, d)
	case task == pairwise.TaskMetric && m.Params != d*d:
		return fmt.Errorf("job %s learns a metric of %d parameters, this site's data has d = %d (d² = %d)", m.Job, m.Params, d, d*d)
	case task != pairwise.TaskAUC && task != pairwise.TaskMetric:
		return fmt.Errorf("unknown task %q", m.Task)
	}
	loss, err := pairwise.LossByName(task, m.Loss)
	if err != nil {
		return err
	}
	// The parameter set: the ℓ2 ball (AUC) or the Frobenius ball ∩ PSD
	// (metric), of radius B; the coordinator's averages stay in it
	// (convex).
	constraint := "l2"
	if task == pairwise.TaskMetric {
		constraint = "frobenius-psd"
	}
	ds := w.cfg.Data
	if w.cfg.LinearData != nil && fedalgo.CentresPrivately(m.Algo) {
		ds = w.cfg.LinearData
	}
	obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: task, Loss: loss, Lambda: m.Lambda, Constraint: constraint, Radius: m.ParamRadius})
	if err != nil {
		return err
	}
	if m.FeatureRadius > 0 {
		if err := pairwise.CheckRadius(ds, m.FeatureRadius); err != nil {
			return fmt.Errorf("job %s: feature_radius R = %v does not bound this site's records (%w): every sensitivity bound of the job assumes ‖x‖ ≤ R", m.Job, m.FeatureRadius, err)
		}
	}
	algo, err := fedalgo.Lookup(m.Algo)
	if err != nil {
		return err
	}
	site, err := algo.NewSite(m, fedalgo.SiteEnv{Data: ds, Obj: obj, Noise: w.cfg.Noise, Rand: w.cfg.Rand})
	if err != nil {
		return err
	}
	if err := w.secSetup(m, site, ds.N); err != nil {
		return err
	}
	if err := w.secKeysFor(m); err != nil {
		return err
	}
	w.site = site
	w.obj = obj
	return nil
}

// checkPrivateJob refuses a private algorithm's announcement without the
// numbers its noise is calibrated with: ε = 0 (no privacy), R = 0 (no
// bound on the records), B = 0 (no bound on the parameters).
func checkPrivateJob(m *protocol.JobAnnounce) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"epsilon", m.Epsilon}, {"feature_radius", m.FeatureRadius}, {"param_radius", m.ParamRadius}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("job %s of private algorithm %s announces %s = %v: it must be finite and > 0 (the site's noise is calibrated with it)", m.Job, m.Algo, f.name, f.v)
		}
	}
	return nil
}

func (w *Worker) onPhase(ctx context.Context, m *protocol.PhaseStart) []Output {
	switch {
	case w.job == nil || m.Job != w.job.Job:
		if !w.excluded {
			w.logf("ignored phase %d of job %s: not announced to this site", m.Phase, m.Job)
		}
		return nil
	case m.Phase > w.job.Phases:
		w.logf("ignored phase %d of job %s: it has %d phases", m.Phase, m.Job, w.job.Phases)
		return nil
	case len(m.Model) != w.obj.NumParams():
		w.logf("ignored phase %d: model has %d parameters, want %d", m.Phase, len(m.Model), w.obj.NumParams())
		return nil
	}
	w.phaseSeen = true
	if w.sec != nil {
		return w.secPhase(ctx, m)
	}
	if u := w.sent[m.Phase]; u != nil {
		// Released once: repeat the same value (no new noise, no new cost).
		// A different start model cannot be honoured without a second
		// release of the same records.
		if !slices.Equal(m.Model, w.startOf[m.Phase]) {
			w.logf("phase %d restarted with a different model: refused (already released once); repeating the released update", m.Phase)
		}
		return []Output{w.toCoord(u)}
	}
	u, rel, err := w.runPhase(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down (the run loop sends Leave), or the phase was
			// abandoned because the coordinator gave up on the job or
			// moved on (the message that said so follows). Nothing was
			// released or charged.
			w.logf("phase %d of job %s abandoned: %v", m.Phase, m.Job, ctx.Err())
			return nil
		}
		w.err = fmt.Errorf("worker %s: phase %d: %w", w.cfg.Site, m.Phase, err)
		w.logf("phase %d failed: %v", m.Phase, err)
		return []Output{w.toCoord(&protocol.Abort{Job: m.Job, From: w.cfg.Site, Reason: truncate(err.Error(), protocol.MaxReasonLen)})}
	}
	// Charge before release: the ledger entry exists (durably, with a
	// Store) before the update leaves this state machine.
	if rel != nil {
		w.ledger = append(w.ledger, *rel)
		if w.cfg.Store != nil {
			if err := w.cfg.Store.Append(*rel); err != nil {
				w.err = fmt.Errorf("worker %s: phase %d: ledger: %w", w.cfg.Site, m.Phase, err)
				w.logf("phase %d not released: ledger write failed: %v; leaving the job", m.Phase, err)
				// The site leaves (it cannot release anything), the job
				// goes on with the quorum: a full disk costs this site,
				// not the job. Nothing was released.
				return []Output{w.toCoord(&protocol.Leave{Site: w.cfg.Site, Reason: "site ledger write failed", Instance: w.cfg.Instance})}
			}
		}
	}
	w.sent[m.Phase] = u
	w.startOf[m.Phase] = slices.Clone(m.Model)
	if rel != nil && w.cfg.Jobs != nil {
		if err := w.cfg.Jobs.SaveJob(w.state()); err != nil {
			// The release is charged but cannot be repeated after a
			// restart: the site will refuse the job then. Release now.
			w.logf("phase %d: saving the job state failed (a restart will refuse this job): %v", m.Phase, err)
		}
	}
	return []Output{w.toCoord(u)}
}

// runPhase computes this site's update for phase m.Phase with the
// algorithm's half of the job, and the ledger entry of its release.
func (w *Worker) runPhase(ctx context.Context, m *protocol.PhaseStart) (*protocol.SiteUpdate, *Release, error) {
	j := w.job
	u, r, err := w.site.Step(ctx, m.Phase, m.Model)
	if err != nil {
		return nil, nil, err
	}
	u.Job, u.Phase, u.Site = j.Job, m.Phase, w.cfg.Site
	// Finite outputs: an update the protocol would refuse (a NaN or
	// infinite value, e.g. from a diverging step) is not released, and
	// not charged; the job ends with the reason.
	if err := u.Validate(); err != nil {
		return nil, nil, fmt.Errorf("the phase produced an update that cannot be released (%v): the job's η = %g, B = %g or λ = %g are likely too large for this data", err, j.Eta, j.ParamRadius, j.Lambda)
	}
	if r == nil {
		return u, nil, nil
	}
	rel := &Release{Job: j.Job, Phase: m.Phase, Records: r.Records, Mechanism: r.Mechanism, Sigma: r.Sigma, Sigmas: r.Sigmas,
		Sensitivity: r.Sensitivity, Epsilon: r.Epsilon, Delta: r.Delta, Secure: r.Secure,
		SampleRate: r.SampleRate, Steps: r.Steps}
	return u, rel, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// AbortedError is a worker's error when the job was aborted by another
// party (the coordinator): the consequence of a failure elsewhere, not a
// failure of this site. Its text is the worker's log line.
type AbortedError struct{ msg string }

func (e *AbortedError) Error() string { return e.msg }
