package simulate

import (
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"
)

// Spec describes a simulation. Zero values mean defaults.
type Spec struct {
	// Sites is the number of sites N (≥ 1).
	Sites int
	// Partition is "iid" (shuffled round robin), "label-skew:β"
	// (per-class Dirichlet(β) proportions over the sites) or
	// "single-class" (every site holds one class: PartitionSingleClass).
	Partition string
	// Job is the coordinator's job (algorithm, loss, η, B, R, ε, δ, rounds).
	Job coordinator.JobConfig
	// Scale is the per-site feature scaling: "bounds" (the public ranges
	// of Bounds mapped to [−1, 1], per record, the same map at every
	// site; default when Bounds is set), "none" (raw values clipped to R;
	// default for private jobs without Bounds), or "minmax"/"standard"
	// (fitted by every site on its own records: data-dependent, so a
	// private job using them is reported private: false; default minmax
	// for non-private jobs).
	Scale string
	// Bounds is a public feature-bounds schema every site applies.
	Bounds *data.Schema
	// DataDependent lists data-dependent loading decisions
	// (data.Table.DataDependent): a private job on such data is reported
	// private: false with these reasons.
	DataDependent []string
	// TestFraction is the stratified test share when no test table is
	// given (default 0.2).
	TestFraction float64
	// Runs repeats the simulation with different splits (default 1).
	Runs int
	// Seed fixes splits, partitions and (for non-private jobs) sampling.
	Seed uint64
	// NoiseSeed, when Seeded, makes private runs reproducible: seeded
	// noise and sampling, reported not private.
	NoiseSeed uint64
	Seeded    bool
	// Transport is "nats" (embedded server, default; the coordinator
	// connects to it, and the sites over one shared connection and
	// subscription per subject) or "mem".
	Transport string
	// Tick is the run loops' tick (default 20ms); PhaseTimeout is in
	// ticks (default 500: 10 s at the default tick, then re-broadcast).
	Tick         time.Duration
	PhaseTimeout int
	// Logf receives the coordinator's and workers' log lines; nil discards.
	Logf func(format string, args ...any)
	// Watch, when set, receives a snapshot of each run's coordinator from
	// its run loop (FederationConfig.Watch), and once more after the run
	// with the job's test AUC: e.g. for the --http dashboard.
	Watch func(coordinator.View)
	// TrainSize, when > 0, subsamples each run's training split to this
	// many records uniformly at random before it is partitioned.
	TrainSize int
	// OnRun, when set, is called after each run with the number of runs
	// done and Runs: progress reporting only.
	OnRun func(done, total int)
	// SecAggDropout is the fraction of the sites (the last ⌊f·K⌋) that drop
	// out of every secure aggregation round after sharing their keys: none
	// of their later round messages (masked input, consistency signature,
	// unmask shares) leaves them, so each round's unmasking removes their
	// masks, as for a site that crashed mid-round. In [0, 1); 0: none.
	SecAggDropout float64
}

// Validate fills defaults and checks the spec.
func (s *Spec) Validate() error {
	if s.Sites < 1 || s.Sites > protocol.MaxSites {
		return fmt.Errorf("simulate: sites %d outside [1, %d]", s.Sites, protocol.MaxSites)
	}
	if s.Partition == "" {
		s.Partition = "iid"
	}
	if _, _, err := ParsePartition(s.Partition); err != nil {
		return err
	}
	if s.Scale == "" {
		// Private jobs default to per-record preprocessing only: scaling
		// fitted on a site's records is not covered by the guarantee.
		switch {
		case s.Bounds != nil:
			s.Scale = "bounds"
		case fedalgo.Private(s.Job.Algo):
			s.Scale = "none"
		default:
			s.Scale = "minmax"
		}
	}
	switch s.Scale {
	case "none", "minmax", "standard":
		if s.Bounds != nil {
			return fmt.Errorf("simulate: a feature-bounds schema is given but --scale is %s: drop one (the schema implies --scale bounds)", s.Scale)
		}
	case "bounds":
		if s.Bounds == nil {
			return fmt.Errorf("simulate: --scale bounds needs a feature-bounds schema (--feature-bounds FILE)")
		}
		if u := s.Bounds.Unknown(); len(u) > 0 {
			return fmt.Errorf("simulate: %s has %d features marked unknown (e.g. feature %d): their ranges would be estimated under DP, which only `pairfed train` does so far; give them public bounds for federated runs", s.Bounds.File, len(u), u[0]+1)
		}
	default:
		return fmt.Errorf("simulate: unknown scaling %q (want bounds, none, minmax or standard)", s.Scale)
	}
	if s.TestFraction == 0 {
		s.TestFraction = 0.2
	}
	if !(s.TestFraction > 0 && s.TestFraction < 1) {
		return fmt.Errorf("simulate: test fraction %v outside (0, 1)", s.TestFraction)
	}
	if s.Runs <= 0 {
		s.Runs = 1
	}
	if s.TrainSize < 0 {
		return fmt.Errorf("simulate: train size %d must be ≥ 0", s.TrainSize)
	}
	if !(s.SecAggDropout >= 0 && s.SecAggDropout < 1) {
		return fmt.Errorf("simulate: secure aggregation dropout %v outside [0, 1)", s.SecAggDropout)
	}
	if s.Transport == "" {
		s.Transport = "nats"
	}
	if s.Transport != "nats" && s.Transport != "mem" {
		return fmt.Errorf("simulate: unknown transport %q (nats or mem)", s.Transport)
	}
	if s.Tick == 0 {
		s.Tick = 20 * time.Millisecond
	}
	if s.PhaseTimeout == 0 {
		s.PhaseTimeout = 500
	}
	if s.Logf == nil {
		s.Logf = func(string, ...any) {}
	}
	cfg := coordinator.Config{Federation: "check", Job: s.Job, MinSites: s.Sites}
	if err := cfg.Validate(); err != nil {
		return err
	}
	return nil
}

// Report is the outcome of a simulation (the `pairfed simulate --json` object).
type Report struct {
	Algorithm   string `json:"algorithm"`
	LocalAlgo   string `json:"local_algorithm,omitempty"`
	Dataset     string `json:"dataset"`
	Partition   string `json:"partition"`
	Transport   string `json:"transport"`
	Sites       int    `json:"sites"`
	SiteRecords []int  `json:"site_records"` // of the last run
	NTrain      int    `json:"n_train"`
	NTest       int    `json:"n_test"`
	D           int    `json:"d"`
	Runs        int    `json:"runs"`
	Phases      int    `json:"phases"`
	Task        string `json:"task"`
	// AUC is the test AUC of a linear model (task auc); KNN3 the test
	// KNN-3 accuracy of a metric (task metric), with the pooled training
	// records as neighbours (an evaluator outside the federation).
	AUC           *experiment.Summary `json:"auc,omitempty"`
	KNN3          *experiment.Summary `json:"knn3_accuracy,omitempty"`
	Seconds       float64             `json:"seconds"`
	Loss          string              `json:"loss"`
	Eta           float64             `json:"eta"`
	ParamRadius   float64             `json:"param_radius"`
	FeatureRadius float64             `json:"feature_radius"`
	Private       bool                `json:"private"`
	// Privacy is what each site reported in the last run (nil for a
	// non-private algorithm):
	// per-site record-level (ε, δ) and every σ it added.
	Privacy []coordinator.SitePrivacy `json:"privacy,omitempty"`
	// Neighbours states the neighbouring relation of a private job's
	// guarantee (replace-one within a site's training records, the
	// site's n public).
	Neighbours string   `json:"neighbours,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	// Diagnostics of a private job: what the guarantee does not cover
	// (the loader's exact statistics of the records), kept out of Privacy.
	Diagnostics *experiment.Diagnostics `json:"diagnostics,omitempty"`
	// Model is the last run's global model (the coordinator's final
	// model), with what a model artefact needs: `pairfed simulate
	// --out-model`. Not part of the JSON report.
	Model *FinalModel `json:"-"`
}

// AddDiagnostics moves notes into the report's diagnostics section.
func (r *Report) AddDiagnostics(notes ...string) {
	if len(notes) == 0 {
		return
	}
	if r.Diagnostics == nil {
		r.Diagnostics = &experiment.Diagnostics{Note: experiment.DiagnosticsNote}
	}
	r.Diagnostics.Data = append(r.Diagnostics.Data, notes...)
}

// FinalModel is a federated job's global model with the evaluator's
// per-record map (the one the reported AUC was computed with) and the
// sites' privacy reports.
type FinalModel struct {
	// Run is the 0-based run; W the coordinator's final model.
	Run int
	W   []float64
	Job *protocol.JobAnnounce
	// Preprocessing is Spec.PrepMap of the pooled training split.
	Preprocessing *model.Preprocessing
	// NTrain is the number of training records over all sites; Full is
	// true when they are every record of the training table.
	NTrain int
	Full   bool
	// Privacy are the sites' reports (nil: not a private job); Private
	// is the job's end-to-end verdict and Reasons what denies it.
	Privacy []coordinator.SitePrivacy
	Private bool
	Reasons []string
}

// Run executes the spec on train (split into train/test unless test is
// given).
func Run(ctx context.Context, spec Spec, train, test *data.Table) (*Report, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	rep := &Report{Algorithm: spec.Job.Algo, LocalAlgo: spec.Job.LocalAlgo, Dataset: train.Source, Partition: spec.Partition, Transport: spec.Transport,
		Sites: spec.Sites, Runs: spec.Runs, D: train.D}
	private := fedalgo.Private(spec.Job.Algo)
	var connect func(name string) (transport.Transport, error)
	switch spec.Transport {
	case "nats":
		s, err := transport.StartEmbedded()
		if err != nil {
			return nil, err
		}
		defer s.Shutdown()
		// The coordinator has a client connection of its own; the sites,
		// all in this process, share one, and one subscription per
		// subject (transport.Fanout: each site keeps its own handlers,
		// and its own subject). The server still carries every message,
		// at most once, in frames of its max_payload, but a site no
		// longer costs a connection (a handshake, the server's two
		// goroutines, the client's read loop) and a broadcast crosses the
		// server once, not once per site (at 64 sites on diabetes the
		// per-site connections and deliveries were two thirds of a
		// site's CPU: docs/results/kcost.md). A deployment's sites each
		// have their own connection; tests of that connect per site
		// (FederationConfig.Connect).
		shared, err := transport.ConnectInProcess(s, "sites")
		if err != nil {
			return nil, err
		}
		defer shared.Close()
		sites := transport.NewFanout(shared)
		connect = func(name string) (transport.Transport, error) {
			if name == "coordinator" {
				return transport.ConnectInProcess(s, name)
			}
			return sites.Connect(), nil
		}
	case "mem":
		hub := transport.NewMem()
		hctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go hub.Serve(hctx)
		connect = func(name string) (transport.Transport, error) { return hub.Connect(name), nil }
	}
	var aucs []float64
	start := time.Now()
	for r := 0; r < spec.Runs; r++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("simulate: interrupted after %d of %d runs: %w", r, spec.Runs, err)
		}
		rng := rand.New(rand.NewPCG(spec.Seed, uint64(r)))
		tr, te := train.Dataset, (*pairwise.Dataset)(nil)
		if test != nil {
			te = test.Dataset
		} else {
			split := data.StratifiedSplit
			if private {
				// Sizes from n alone: a site's n (hence its default δ
				// and σ) must not move with one record's label.
				split = experiment.PublicSizeSplit
			}
			trIdx, teIdx, err := split(train.Y, spec.TestFraction, rng)
			if err != nil {
				return nil, err
			}
			tr, te = train.Subset(trIdx), train.Subset(teIdx)
		}
		if spec.TrainSize > 0 {
			if spec.TrainSize > tr.N {
				return nil, fmt.Errorf("simulate: train size %d exceeds the %d training records", spec.TrainSize, tr.N)
			}
			tr = tr.Subset(rng.Perm(tr.N)[:spec.TrainSize])
		}
		sites, testPrep, err := Prepare(spec, tr, te, rng)
		if err != nil {
			return nil, err
		}
		fc := FederationConfig{
			Name: fmt.Sprintf("sim%d", r), Job: spec.Job, Sites: sites, Tick: spec.Tick, PhaseTimeout: spec.PhaseTimeout,
			Logf: spec.Logf, Connect: connect, Watch: spec.Watch,
		}
		fc.Job.ID = fmt.Sprintf("run-%d", r)
		if n := int(spec.SecAggDropout * float64(len(sites))); n > 0 {
			silent := map[string]bool{}
			for _, s := range sites[len(sites)-n:] {
				silent[s.Name] = true
			}
			fc.Observe = func(site string, t transport.Transport) transport.Transport {
				if silent[site] {
					return secAggDropper{t}
				}
				return t
			}
		}
		if private && !spec.Seeded {
			fc.Secure = true
		} else {
			fc.Seed = spec.Seed ^ spec.NoiseSeed ^ uint64(r)<<32
		}
		out, err := Federate(ctx, fc)
		if err != nil {
			return nil, err
		}
		if out.Job.Task == protocol.TaskMetric {
			ref, err := PrepPooled(spec, tr)
			if err != nil {
				return nil, err
			}
			aucs = append(aucs, pairwise.KNN3Accuracy(out.Result.Model, ref, testPrep))
		} else {
			aucs = append(aucs, pairwise.LinearAUC(out.Result.Model, testPrep))
		}
		if spec.Watch != nil {
			v := out.View
			for i := range v.Finished {
				v.Finished[i].AUC, v.Finished[i].TestRecords = aucs[len(aucs)-1], testPrep.N
			}
			spec.Watch(v)
		}
		rep.Phases, rep.Task = out.Job.Phases, out.Job.Task
		rep.Loss, rep.Eta, rep.ParamRadius, rep.FeatureRadius = out.Job.Loss, out.Job.Eta, out.Job.ParamRadius, out.Job.FeatureRadius
		rep.NTrain, rep.NTest = tr.N, te.N
		rep.SiteRecords = rep.SiteRecords[:0]
		for _, s := range sites {
			rep.SiteRecords = append(rep.SiteRecords, s.Data.N)
		}
		if private {
			rep.Privacy = out.Privacy
			// Scaling fitted on a site's records makes every scaled record
			// depend on the others, which the sensitivity analysis does
			// not allow: only per-record preprocessing with public
			// parameters (--scale bounds or none, clipping) keeps the
			// guarantee, and so does no data-dependent loading.
			rep.Private = spec.PublicPreprocessing()
			for _, p := range out.Privacy {
				rep.Private = rep.Private && p.Secure
			}
			// The sites' ledgers say whose noise was secure (under secure
			// aggregation the coordinator never sees a site's release).
			for _, l := range out.Ledgers {
				for _, r := range l {
					rep.Private = rep.Private && r.Secure
				}
			}
			// A site's own entry says the same: the coordinator marks a
			// secure-aggregation site's entry private because it never
			// sees the site's noise; the site's ledger knows its source.
			for i := range rep.Privacy {
				for _, r := range out.Ledgers[rep.Privacy[i].Site] {
					rep.Privacy[i].Secure = rep.Privacy[i].Secure && r.Secure
				}
			}
		}
		pm, err := spec.PrepMap(tr)
		if err != nil {
			return nil, err
		}
		rep.Model = &FinalModel{Run: r, W: out.Result.Model, Job: out.Job, Preprocessing: pm, NTrain: tr.N,
			Full: test != nil && spec.TrainSize == 0, Privacy: out.Privacy, Private: private && rep.Private}
		if private {
			rep.Model.Reasons = spec.NotPrivateReasons()
			if spec.Seeded {
				rep.Model.Reasons = append(rep.Model.Reasons, "seeded noise and sampling (--noise-seed): reproducible, NOT private")
			} else if !rep.Private && len(rep.Model.Reasons) == 0 {
				rep.Model.Reasons = append(rep.Model.Reasons, "a site or ledger reported a release with an insecure noise source")
			}
		} else {
			rep.Model.Reasons = []string{spec.Job.Algo + " is not a differentially private algorithm: the global model is a function of the sites' records"}
		}
		if spec.OnRun != nil {
			spec.OnRun(r+1, spec.Runs)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	if rep.Task == protocol.TaskMetric {
		rep.KNN3 = experiment.Summarize(aucs)
	} else {
		rep.AUC = experiment.Summarize(aucs)
	}
	if spec.Scale == "bounds" {
		how := "clipped: a private job"
		switch {
		case fedalgo.CentresPrivately(spec.Job.Algo):
			how = "multiplied by R/M, M the box's largest norm: " + spec.Job.Algo + " centres the records privately itself"
		case !fedalgo.Private(spec.Job.Algo):
			how = "clipped, as a private job's: docs/results/site-prep.md"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("every site and the evaluator apply the public %s, then bring records within ‖x‖ ≤ R = %g (%s)", spec.Bounds.Describe(), spec.Job.FeatureRadius, how))
	} else {
		rep.Notes = append(rep.Notes,
			fmt.Sprintf("each site fits %s scaling on its own training records and clips them to ‖x‖ ≤ %g; the test split is scaled with the pooled training split's scaler (an evaluator outside the federation: simulation only)", spec.Scale, spec.Job.FeatureRadius))
	}
	if private {
		rep.Notes = append(rep.Notes, fedalgo.PrivacyNote(&spec.Job))
		if n := fedalgo.SparseNote(spec.Job.Options, spec.Sites); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
		for _, r := range spec.NotPrivateReasons() {
			rep.Notes = append(rep.Notes, "NOT private end to end: "+r)
		}
		if spec.Seeded {
			rep.Notes = append(rep.Notes, "seeded noise and sampling: reproducible, NOT private")
		}
		rep.Neighbours = "replace-one: a site's guarantee is for two training sets of that site that differ in one record (its features and label); each site's n (records per site above) is public"
		if spec.Runs > 1 && len(rep.Privacy) > 0 {
			var eps, delta float64
			for _, p := range rep.Privacy {
				eps, delta = max(eps, p.Epsilon), max(delta, p.Delta)
			}
			rep.Notes = append(rep.Notes, experiment.RepeatedReleaseNote(spec.Runs, "federated models were trained on overlapping records (runs; (ε, δ) per site, the largest of the sites)", eps, delta, 0))
		}
	}
	return rep, nil
}

// Site is one site's prepared training data.
type Site struct {
	Name string
	Data *pairwise.Dataset
}

// Prepare partitions tr over spec.Sites sites and prepares every shard as
// its site would (spec.Scale fitted on the shard, clipping to R), and the
// test split with the scaler of the pooled training split.
func Prepare(spec Spec, tr, te *pairwise.Dataset, rng *rand.Rand) ([]Site, *pairwise.Dataset, error) {
	kind, beta, err := ParsePartition(spec.Partition)
	if err != nil {
		return nil, nil, err
	}
	var parts [][]int
	switch kind {
	case "iid":
		parts, err = PartitionIID(tr.N, spec.Sites, rng)
	case "single-class":
		parts, err = PartitionSingleClass(tr.Y, spec.Sites, rng)
	default:
		parts, err = PartitionLabelSkew(tr.Y, spec.Sites, beta, rng)
	}
	if err != nil {
		return nil, nil, err
	}
	prep := func(fit, apply *pairwise.Dataset) (*pairwise.Dataset, error) {
		m, err := spec.PrepMap(fit)
		if err != nil {
			return nil, err
		}
		return experiment.PrepareModelRecords(m, apply)
	}
	sites := make([]Site, len(parts))
	for s, idx := range parts {
		shard := tr.Subset(idx)
		d, err := prep(shard, shard)
		if err != nil {
			return nil, nil, fmt.Errorf("simulate: site %d: %w", s, err)
		}
		sites[s] = Site{Name: fmt.Sprintf("site-%d", s), Data: d}
	}
	testPrep, err := prep(tr, te)
	if err != nil {
		return nil, nil, err
	}
	return sites, testPrep, nil
}

// PrepPooled scales the pooled training records with their own scaler and
// clips them to R, as Prepare does to the test records: the neighbours of
// a simulation's KNN evaluation of a learned metric.
func PrepPooled(spec Spec, tr *pairwise.Dataset) (*pairwise.Dataset, error) {
	m, err := spec.PrepMap(tr)
	if err != nil {
		return nil, err
	}
	return experiment.PrepareModelRecords(m, tr)
}

// PrepMap returns the per-record map a site applies to its records, as a
// model artefact stores it (experiment.PrepareModelRecords applies it):
// experiment.SiteMap of the job's public facts — the schema's public
// per-record map (Scale "bounds"), or spec.Scale fitted on fit, then the
// clip to R (default 1). The evaluator's map — fitted on the pooled
// training split — is the one the job's model artefact holds.
func (s Spec) PrepMap(fit *pairwise.Dataset) (*model.Preprocessing, error) {
	R := s.Job.FeatureRadius
	if R == 0 {
		R = 1
	}
	f := experiment.SiteFacts{CentresPrivately: fedalgo.CentresPrivately(s.Job.Algo),
		Scale: s.Scale, Radius: R}
	if s.Scale == "bounds" {
		f.Schema = s.Bounds
	}
	return experiment.SiteMap(f, fit)
}

// PublicPreprocessing reports whether every site prepares each record
// from itself and public parameters only (NotPrivateReasons is empty).
func (s Spec) PublicPreprocessing() bool { return len(s.NotPrivateReasons()) == 0 }

// NotPrivateReasons lists what makes a private job on this spec not
// private end to end: scaling fitted on a site's records, and the
// data-dependent loading decisions of s.DataDependent.
func (s Spec) NotPrivateReasons() []string {
	var r []string
	if s.Scale != "none" && s.Scale != "bounds" {
		r = append(r, fmt.Sprintf("--scale %s is fitted on each site's own records (one record can move every scaled record of its site), which the DP guarantee does not cover; use --feature-bounds FILE (public ranges) or --scale none", s.Scale))
	}
	return append(r, s.DataDependent...)
}

// FederationConfig is one federated job over a transport.
type FederationConfig struct {
	Name  string
	Job   coordinator.JobConfig
	Sites []Site
	// Connect returns a transport endpoint for a participant.
	Connect func(name string) (transport.Transport, error)
	// Secure draws sampling from crypto/rand-seeded ChaCha8 and noise from
	// dp.NewSecureNoise (private runs); otherwise Seed seeds both.
	Secure       bool
	Seed         uint64
	Tick         time.Duration
	PhaseTimeout int
	Logf         func(format string, args ...any)
	// Observe, when set, wraps each worker's transport (tests record what
	// a site publishes).
	Observe func(site string, t transport.Transport) transport.Transport
	// Watch, when set, is called from the coordinator's run loop with a
	// snapshot (coordinator.View, with the coordinator's traffic) before
	// the loop starts and after every step and tick.
	Watch func(coordinator.View)
}

// Outcome is the result of a federated job.
type Outcome struct {
	Result  *protocol.Result
	Job     *protocol.JobAnnounce
	Privacy []coordinator.SitePrivacy
	Ledgers map[string][]worker.Release
	// View is the coordinator's final snapshot.
	View coordinator.View
}

// Federate runs a coordinator and one worker per site, each in its own
// goroutine with its own transport endpoint, until the coordinator has the
// result (then the workers are stopped).
func Federate(ctx context.Context, fc FederationConfig) (*Outcome, error) {
	if fc.Tick == 0 {
		fc.Tick = 20 * time.Millisecond
	}
	if fc.Logf == nil {
		fc.Logf = func(string, ...any) {}
	}
	// The signing keys serve secure aggregation only: a job that names
	// none of its options runs without them (a key pair is a scalar
	// multiplication per site, and every site checks the whole roster).
	var roster map[string]ed25519.PublicKey
	var signers map[string]ed25519.PrivateKey
	var err error
	if asksSecAgg(fc.Job.Options) {
		if roster, signers, err = SecAggRoster(fc.Sites, fc.Secure, fc.Seed); err != nil {
			return nil, err
		}
	}
	coord, err := coordinator.New(coordinator.Config{Federation: fc.Name, Job: fc.Job, MinSites: len(fc.Sites),
		PhaseTimeout: fc.PhaseTimeout, Logf: fc.Logf, SecAggRoster: roster})
	if err != nil {
		return nil, err
	}
	ct, err := fc.Connect("coordinator")
	if err != nil {
		return nil, err
	}
	defer ct.Close()
	var opt coordinator.RunOptions
	var counted *transport.Counter
	view := func(c *coordinator.Coordinator) coordinator.View {
		v := c.View()
		v.TickSeconds = fc.Tick.Seconds()
		if counted != nil {
			tr := counted.Traffic()
			v.Traffic = &tr
		}
		return v
	}
	if fc.Watch != nil {
		counted = transport.Count(ct)
		ct = counted
		opt.Observe = func(c *coordinator.Coordinator) { fc.Watch(view(c)) }
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The sites share one broadcast memo: the K copies of an
	// announcement or the result they receive are the same bytes, decoded
	// and validated once (worker.BroadcastMemo: the key is the whole
	// encoding, so no site takes another's word for anything).
	broadcasts := new(worker.BroadcastMemo)
	workers := make([]*worker.Worker, len(fc.Sites))
	for i, s := range fc.Sites {
		cfg := worker.Config{Federation: fc.Name, Site: s.Name, Data: s.Data, Logf: fc.Logf, SecAggKey: signers[s.Name], SecAggRoster: roster,
			Broadcasts: broadcasts}
		if cfg.Rand, cfg.Noise, err = SiteSources(fc.Secure, fc.Seed, i); err != nil {
			return nil, err
		}
		w, err := worker.New(cfg)
		if err != nil {
			return nil, err
		}
		workers[i] = w
	}

	type coordDone struct {
		res *protocol.Result
		err error
	}
	cdone := make(chan coordDone, 1)
	// The sites start once the coordinator listens: a Join that arrives
	// before RunWith subscribes is lost, and its site (the goroutine
	// started last, which the scheduler runs first) retried it only at
	// its next tick, with every other site then joining again too, and
	// the coordinator answering each such Join with the announcement.
	// RunWith calls Observe once after subscribing, before its loop.
	listening := make(chan struct{})
	observe, first := opt.Observe, true
	opt.Observe = func(c *coordinator.Coordinator) {
		if first {
			first = false
			close(listening)
		}
		if observe != nil {
			observe(c)
		}
	}
	go func() {
		res, err := coordinator.RunWith(ctx, coord, ct, fc.Tick, opt)
		cdone <- coordDone{res, err}
	}()
	select {
	case <-listening:
	case cd := <-cdone: // RunWith failed before its loop
		if cd.err == nil {
			cd.err = fmt.Errorf("simulate: the coordinator stopped before it listened")
		}
		return nil, cd.err
	}

	var wg sync.WaitGroup
	werrs := make(chan error, len(workers))
	for i, w := range workers {
		t, err := fc.Connect(fc.Sites[i].Name)
		if err != nil {
			return nil, err
		}
		if fc.Observe != nil {
			t = fc.Observe(fc.Sites[i].Name, t)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer t.Close()
			if _, err := worker.Run(ctx, w, t, fc.Tick); err != nil && !errors.Is(err, context.Canceled) {
				werrs <- err
			}
		}()
	}
	var cd coordDone
	select {
	case cd = <-cdone:
	case err := <-werrs:
		cancel()
		<-cdone
		wg.Wait()
		return nil, err
	}
	// Give workers a moment to receive the result, then stop them.
	wctx, wcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer wcancel()
	go func() { <-wctx.Done(); cancel() }()
	wg.Wait()
	if cd.err != nil {
		// A site's own failure is the cause of a job the coordinator then
		// aborted: report it whichever of the two ended first (the sites'
		// AbortedErrors only repeat the coordinator's reason).
		close(werrs)
		for err := range werrs {
			if _, aborted := errors.AsType[*worker.AbortedError](err); !aborted {
				return nil, err
			}
		}
		return nil, cd.err
	}
	out := &Outcome{Result: cd.res, Job: coord.Job(), Privacy: coord.Privacy(), Ledgers: map[string][]worker.Release{}, View: view(coord)}
	for i, w := range workers {
		out.Ledgers[fc.Sites[i].Name] = w.Ledger()
	}
	return out, nil
}

// asksSecAgg reports whether options name any secure aggregation option
// (a valid request or not: the coordinator and the sites judge it, with
// the keys at hand).
func asksSecAgg(options protocol.Options) bool {
	for _, o := range options {
		if fedalgo.IsSecAggOption(o.Name) {
			return true
		}
	}
	return false
}

// SecAggRoster issues every site its long-term secure aggregation
// signing key in-process (the sites and the coordinator of a simulation
// share a process; a deployment issues them with pairfed deploy init):
// from crypto/rand when secure, else derived from seed. It returns the
// roster (public keys by site) and the private keys.
func SecAggRoster(sites []Site, secure bool, seed uint64) (map[string]ed25519.PublicKey, map[string]ed25519.PrivateKey, error) {
	pub, priv := map[string]ed25519.PublicKey{}, map[string]ed25519.PrivateKey{}
	rng := rand.NewChaCha8([32]byte{'s', 'e', 'c', 'a', 'g', 'g', byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24),
		byte(seed >> 32), byte(seed >> 40), byte(seed >> 48), byte(seed >> 56)})
	for _, s := range sites {
		b := make([]byte, ed25519.SeedSize)
		if secure {
			if _, err := crand.Read(b); err != nil {
				return nil, nil, fmt.Errorf("simulate: signing key: %w", err)
			}
		} else {
			rng.Read(b)
		}
		k := ed25519.NewKeyFromSeed(b)
		priv[s.Name], pub[s.Name] = k, k.Public().(ed25519.PublicKey)
	}
	return pub, priv, nil
}

// SiteSources returns the sampling and noise sources of site i: secret
// (dp.SecretSources: ChaCha8 keyed from crypto/rand, dp.NewSecureNoise) when secure, else
// derived from seed (reproducible, not private).
func SiteSources(secure bool, seed uint64, i int) (*rand.Rand, pairwise.Noise, error) {
	if secure {
		return dp.SecretSources()
	}
	return rand.New(rand.NewPCG(seed, uint64(i)+1)), dp.NewSeededNoise(seed ^ (uint64(i)+1)*0x9e3779b97f4a7c15), nil
}

// ParsePartition parses "iid", "single-class" or "label-skew:β" (β > 0).
func ParsePartition(s string) (kind string, beta float64, err error) {
	if s == "iid" || s == "single-class" {
		return s, 0, nil
	}
	if b, ok := strings.CutPrefix(s, "label-skew:"); ok {
		beta, err := strconv.ParseFloat(b, 64)
		if err != nil || !(beta > 0) || math.IsInf(beta, 0) {
			return "", 0, fmt.Errorf("simulate: label-skew needs a concentration β > 0, got %q", b)
		}
		return "label-skew", beta, nil
	}
	return "", 0, fmt.Errorf("simulate: unknown partition %q (iid, single-class or label-skew:β)", s)
}

// PartitionIID shuffles 0..n−1 and deals the records to the sites in turn
// (shuffled round robin): sizes differ by at most one. Every site needs at
// least 2 records.
func PartitionIID(n, sites int, rng *rand.Rand) ([][]int, error) {
	if n < 2*sites {
		return nil, fmt.Errorf("simulate: %d records cannot give %d sites 2 records each", n, sites)
	}
	out := make([][]int, sites)
	for k, i := range rng.Perm(n) {
		out[k%sites] = append(out[k%sites], i)
	}
	return out, nil
}

// PartitionSingleClass gives every site records of one class only: the
// sites are split between the two classes in proportion to the class
// sizes — K₊ = round(K·n₊/n) sites hold positives, clamped to [1, K − 1]
// so that each class has a site (ties of the rounding go up) — and each
// class's shuffled members are dealt to its sites in turn (shuffled round
// robin: sizes within a class differ by at most one). Sites 0 … K₊ − 1
// hold the positives, the others the negatives. It needs K ≥ 2 and at
// least 2 records per site.
func PartitionSingleClass(y []float64, sites int, rng *rand.Rand) ([][]int, error) {
	if sites < 2 {
		return nil, fmt.Errorf("simulate: single-class needs at least 2 sites (one per class), got %d", sites)
	}
	var pos, neg []int
	for i, v := range y {
		if v > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	kPos := int(math.Floor(float64(sites)*float64(len(pos))/float64(len(y)) + 0.5))
	kPos = min(max(kPos, 1), sites-1)
	out := make([][]int, sites)
	for c, class := range [][]int{pos, neg} {
		first, k := 0, kPos
		if c == 1 {
			first, k = kPos, sites-kPos
		}
		if len(class) < 2*k {
			return nil, fmt.Errorf("simulate: single-class: %d records of one class cannot give its %d sites 2 records each: use fewer sites", len(class), k)
		}
		for j, p := range rng.Perm(len(class)) {
			out[first+j%k] = append(out[first+j%k], class[p])
		}
	}
	return out, nil
}

// PartitionLabelSkew gives each site a Dirichlet(β)-distributed share of
// every class: for each class, proportions p ~ Dir(β, …, β) over the sites
// (independent Gamma(β, 1) draws, normalized) split its shuffled members.
// Small β concentrates each class on few sites. Draws are repeated (up to
// 100 times) until every site has at least 2 records.
func PartitionLabelSkew(y []float64, sites int, beta float64, rng *rand.Rand) ([][]int, error) {
	if !(beta > 0) {
		return nil, fmt.Errorf("simulate: Dirichlet concentration β = %v must be > 0", beta)
	}
	var pos, neg []int
	for i, v := range y {
		if v > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	for try := 0; try < 100; try++ {
		out := make([][]int, sites)
		for _, class := range [][]int{pos, neg} {
			members := append([]int(nil), class...)
			rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
			p := make([]float64, sites)
			var sum float64
			for s := range p {
				p[s] = gamma(beta, rng)
				sum += p[s]
			}
			var cum float64
			lo := 0
			for s := range p {
				cum += p[s] / sum
				hi := int(math.Round(cum * float64(len(members))))
				if s == sites-1 {
					hi = len(members)
				}
				hi = max(hi, lo)
				out[s] = append(out[s], members[lo:hi]...)
				lo = hi
			}
		}
		ok := true
		for _, o := range out {
			ok = ok && len(o) >= 2
		}
		if ok {
			return out, nil
		}
	}
	return nil, fmt.Errorf("simulate: label-skew:%g left a site with fewer than 2 records in 100 draws: use fewer sites or a larger β", beta)
}

// gamma draws Gamma(a, 1) by Marsaglia & Tsang (2000); for a < 1 it uses
// Gamma(a+1)·U^{1/a}.
func gamma(a float64, rng *rand.Rand) float64 {
	if a < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gamma(a+1, rng) * math.Pow(u, 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// secAggDropper is a site's transport that drops out of every secure
// aggregation round after sharing its keys (Spec.SecAggDropout).
type secAggDropper struct{ transport.Transport }

func (d secAggDropper) Publish(subject string, b []byte) error {
	if m, err := protocol.Decode(b); err == nil {
		switch m.(type) {
		case *protocol.SecAggMasked, *protocol.SecAggCheck, *protocol.SecAggUnmask:
			return nil
		}
	}
	return d.Transport.Publish(subject, b)
}
