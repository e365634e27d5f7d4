package main

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/node"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/simulate"
	"github.com/pairfed/pairfed/transport"
	"github.com/urfave/cli/v2"
)

// This file holds the flags of the long-running federation processes,
// `pairfed coordinator` and `pairfed worker`, and the client `pairfed job
// submit`. The processes themselves are package node's (node.Coordinator,
// node.Worker: the state directories, the NATS connections, the clock, the
// site's records); this file checks the flags, reads the data files they
// name, and turns node.UsageError into exit status 2.

const defaultFederation = "pairfed"

func federationFlag() cli.Flag {
	return &cli.StringFlag{Name: "federation", Value: defaultFederation, Usage: "federation name (a subject token shared by the coordinator, its sites and clients)"}
}

func stderrLogf(prefix string) func(string, ...any) {
	return slogLogf(prefix) // logging.go: structured, --log-format and --log-level
}

// connectNATS dials url and waits (bounded by ctx) until the connection is
// up; retry makes the first dial retry until then (node.Connect).
func connectNATS(ctx context.Context, url, name string, retry bool, opts ...nats.Option) (*transport.NATS, error) {
	return node.Connect(ctx, url, name, retry, opts...)
}

func coordinatorCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "listen", Usage: "host:port on which to run an embedded nats-server for the sites (port 0: any free port)"},
		&cli.StringFlag{Name: "nats", Usage: "URL of an existing NATS server (instead of --listen)"},
		&cli.StringFlag{Name: "token", Usage: "--listen: the token every client must present (nats://TOKEN@host:port); beyond loopback one is generated into STATE/listen-token when not given"},
		&cli.StringFlag{Name: "site-logins", Usage: "--listen: one login per site instead of a token (`LIST` of site names, comma-separated): site S connects with --nats nats://S:PASSWORD@host:port and may use only its own subjects; job clients log in as client; the passwords are generated once into STATE/logins/"},
		federationFlag(),
		&cli.StringFlag{Name: "state", Required: true, Usage: "state directory: finished jobs (DIR/jobs/<job>.json), the privacy ledger (DIR/charges.jsonl), budgets (DIR/budgets.json), the checkpoint a restart resumes from (DIR/checkpoint.json) and the operator's admin key, which cancels any job (DIR/admin.key, made at the first start; job cancel --cancel-key @DIR/admin.key)"},
		&cli.StringFlag{Name: "test", Usage: "test file on which the coordinator scores every finished job (AUC)"},
		signKeyFlag("the model artefacts it writes to STATE/jobs"),
		&cli.StringFlag{Name: "scale", Value: "minmax", Usage: "scaling of the --test file: minmax, standard (fitted on the test file itself) or none; with --feature-bounds, the sites' public map"},
		featureBoundsFlag(),
		&cli.IntFlag{Name: "min-sites", Value: 1, Usage: "least number of live sites a job starts with, and its quorum (a job may ask more)"},
		&cli.DurationFlag{Name: "phase-timeout", Value: 10 * time.Second, Usage: "how long a phase waits for every update before aggregating a quorum (or re-broadcasting)"},
		&cli.DurationFlag{Name: "site-timeout", Value: 5 * time.Second, Usage: "silence after which a site is dropped (from the federation and its running job)"},
		&cli.IntFlag{Name: "max-queue", Value: 16, Usage: "jobs that may wait behind the running one; more are refused"},
		&cli.DurationFlag{Name: "tick", Value: 50 * time.Millisecond, Usage: "clock resolution of the run loop"},
		httpFlag(),
		secAggRosterFlag(),
	}
	return &cli.Command{
		Name:  "coordinator",
		Usage: "run the coordinator of a federation: sites join, jobs are submitted with `pairfed job submit`",
		Description: `Examples:
   pairfed coordinator --listen 127.0.0.1:4222 --state /var/lib/pairfed/coord --test test.libsvm --min-sites 2
   pairfed coordinator --nats nats://127.0.0.1:4222 --state DIR`,
		Flags:  append(append(flags, dataFlags()...), connFlags()...),
		Action: runCoordinator,
	}
}

func runCoordinator(c *cli.Context) error {
	listen, url := c.String("listen"), c.String("nats")
	if (listen == "") == (url == "") {
		return usageError{errors.New("coordinator: give exactly one of --listen HOST:PORT and --nats URL")}
	}
	natsOpts, err := coordinatorConnOptions(c, listen, url)
	if err != nil {
		return err
	}
	tick := c.Duration("tick")
	if err := checkTick("coordinator", tick); err != nil {
		return err
	}
	logf := stderrLogf("")
	// Everything the command line can get wrong is checked before the
	// state directory is touched.
	if n := c.Int("min-sites"); n < 1 {
		return usageError{fmt.Errorf("coordinator: --min-sites %d must be ≥ 1", n)}
	}
	if listen != "" {
		if err := node.CheckListen(listen); err != nil {
			return cliError(err)
		}
	}
	cfg := coordinator.ServiceConfig{
		Federation: c.String("federation"), MinSites: c.Int("min-sites"), PhaseTimeout: node.Ticks(c.Duration("phase-timeout"), tick),
		SiteTimeout: node.Ticks(c.Duration("site-timeout"), tick), MaxQueue: c.Int("max-queue"), Logf: logf,
		Now: func() int64 { return time.Now().Unix() },
	}
	if cfg.SecAggRoster, err = loadSecAggRoster(c); err != nil {
		return err
	}
	signer, err := signKeyOf(c)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	if p := c.String("test"); p != "" {
		opt, baseOpt := dataOptions(c), dataOptions(c)
		schema, _, err := loadSchema(c, &opt)
		if err != nil {
			return err
		}
		test, err := data.Load(p, opt)
		if err == nil {
			err = checkRunMemory(c, opt, test)
		}
		if err != nil {
			return err
		}
		// Scored as the sites prepare their records (node.NewEvaluator).
		if cfg.Evaluate, err = node.NewEvaluator(node.TestSet{Path: p, Options: baseOpt, Table: test, Schema: schema, Scale: c.String("scale")}, logf); err != nil {
			return cliError(err)
		}
		cfg.TestDim = test.D
	}
	var logins []string
	if v := c.String("site-logins"); v != "" {
		for _, f := range strings.Split(v, ",") {
			logins = append(logins, strings.TrimSpace(f))
		}
		if err := node.CheckSiteLogins(logins); err != nil {
			return usageError{fmt.Errorf("coordinator: %w", err)}
		}
		if listen == "" {
			return usageError{errors.New("coordinator: --site-logins configures the embedded server of --listen; with --nats the hub's own accounts decide who may connect (pairfed deploy init)")}
		}
		if c.String("token") != "" {
			return usageError{errors.New("coordinator: give --token or --site-logins, not both (the logins replace the shared token)")}
		}
	}
	co := &node.Coordinator{Listen: listen, NATS: url, Token: c.String("token"), SiteLogins: logins, NATSOptions: natsOpts, State: c.String("state"), Service: cfg,
		Tick: tick, HTTP: c.String("http"), Version: pairfedVersion(), Signer: signer, Stdout: c.App.Writer, Logf: logf}
	return cliError(co.Run(c.Context))
}

// cliError is err with a node.UsageError at its top turned into the
// command line's usageError (exit status 2), with the same text.
func cliError(err error) error {
	if u, ok := err.(*node.UsageError); ok {
		return usageError{u.Err}
	}
	return err
}

func workerCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "nats", Required: true, Usage: "URL of the federation's NATS server"},
		federationFlag(),
		&cli.StringFlag{Name: "site", Required: true, Usage: "this site's name (a subject token, unique in the federation)"},
		&cli.StringFlag{Name: "data", Required: true, Usage: "this site's training file: it never leaves the process"},
		&cli.StringFlag{Name: "state", Required: true, Usage: "state directory: the privacy ledger DIR/ledger.jsonl (write-ahead, reloaded on restart)"},
		&cli.Float64Flag{Name: "budget-epsilon", Usage: "total record-level ε this site may spend over all jobs (sum over jobs); unset: no limit"},
		&cli.Float64Flag{Name: "budget-delta", Usage: "total δ this site may spend over all jobs; unset: no limit"},
		&cli.StringFlag{Name: "scale", Usage: "scaling of this site's records: bounds (the --feature-bounds schema, per record: keeps private jobs private; default when a schema is given); without a schema and without this flag the site applies the schema each job carries (job submit --feature-bounds), refuses private jobs that carry none and min-max scales for non-private ones. Explicit opt-ins: none (raw values clipped to ‖x‖ ≤ R: private, learns little unless the records are already on a public scale) or minmax/standard fitted on this site's records (its private jobs are then reported NOT private)"},
		featureBoundsFlag(),
		&cli.Float64Flag{Name: "radius", Value: 1, Usage: "per-record clipping radius R after scaling"},
		&cli.DurationFlag{Name: "heartbeat", Value: 500 * time.Millisecond, Usage: "interval of heartbeats (and of Joins between jobs)"},
		&cli.DurationFlag{Name: "job-timeout", Value: 2 * time.Minute, Usage: "give up on a job after this long without word from the coordinator"},
		&cli.DurationFlag{Name: "tick", Value: 50 * time.Millisecond, Usage: "clock resolution of the run loop"},
		&cli.DurationFlag{Name: "update-delay", Hidden: true, Usage: "testing: hold every update back this long"},
		secAggKeyFlag(),
		secAggRosterFlag(),
		&cli.BoolFlag{Name: "single-class", Usage: "accept a training file of one class: the site then takes part in " + strings.Join(fedalgo.SingleClassNames(), ", ") + " jobs and refuses the others, which tells the coordinator it holds one class (one bit about its records, outside the DP guarantee: docs/federation.md, \"Sites of one class\")"},
		&cli.StringFlag{Name: "test-sources", Hidden: true, Usage: "testing: `SEED:INDEX` draws sampling and noise as pairfed simulate --seed SEED does for its site INDEX (reproducible, NOT private)"},
	}
	return &cli.Command{
		Name:  "worker",
		Usage: "run one site of a federation: it joins, heartbeats and serves the phases of each job",
		Description: `Example:
   pairfed worker --nats nats://127.0.0.1:4222 --site hospital-a --data a.libsvm --state /var/lib/pairfed/a --budget-epsilon 4 --budget-delta 1e-4
   (no --feature-bounds: the site maps its records with the schema each job carries; see job submit --feature-bounds)`,
		Flags:  append(append(flags, dataFlags()...), connFlags()...),
		Action: runWorker,
	}
}

func runWorker(c *cli.Context) error {
	tick := c.Duration("tick")
	if err := checkTick("worker", tick); err != nil {
		return err
	}
	site := c.String("site")
	// Everything the command line can get wrong is checked before the
	// state directory (the ledger) is touched.
	if err := protocol.ValidName("site", site); err != nil {
		return usageError{fmt.Errorf("worker: %w", err)}
	}
	if err := protocol.ValidName("federation", c.String("federation")); err != nil {
		return usageError{fmt.Errorf("worker: %w", err)}
	}
	w := &node.Worker{NATS: c.String("nats"), Federation: c.String("federation"), Site: site, State: c.String("state"), Path: c.String("data"),
		Radius: c.Float64("radius"), Heartbeat: c.Duration("heartbeat"), JobTimeout: c.Duration("job-timeout"), Tick: tick,
		UpdateDelay: c.Duration("update-delay"), Logf: stderrLogf("")}
	// A budget is a finite ε ≥ 0, as for `ledger budget set`: no cap is
	// the flag left out.
	if v := c.Float64("budget-epsilon"); c.IsSet("budget-epsilon") {
		if math.IsInf(v, 1) {
			return usageError{fmt.Errorf("worker: --budget-epsilon = +Inf is no budget: leave the flag out for no ε cap")}
		}
		if err := dp.CheckEpsilonNonNegative("--budget-epsilon", v); err != nil {
			return usageError{fmt.Errorf("worker: %w", err)}
		}
		w.BudgetEpsilon = &v
	}
	if v := c.Float64("budget-delta"); c.IsSet("budget-delta") {
		if err := dp.CheckDelta("--budget-delta", v); err != nil {
			return usageError{fmt.Errorf("worker: %w", err)}
		}
		w.BudgetDelta = &v
	}
	var err error
	if w.NATSOptions, err = connOptions(c, c.String("nats")); err != nil {
		return err
	}
	opt := dataOptions(c)
	opt.AllowOneClass = c.Bool("single-class")
	if w.Schema, w.Notes, err = loadSchema(c, &opt); err != nil {
		return err
	}
	w.Options = dataOptions(c) // before the schema: a job's schema is applied to these
	if w.Scale, err = siteScale("worker", c.String("scale"), c.IsSet("scale"), w.Schema); err != nil {
		return err
	}
	w.Table, err = data.Load(c.String("data"), opt)
	if err == nil {
		err = checkRunMemory(c, opt, w.Table)
	}
	if err != nil {
		if msg := err.Error(); !opt.AllowOneClass && (strings.Contains(msg, "only one class present") || strings.Contains(msg, "records map to")) {
			return fmt.Errorf("%w\nworker %s: a site of one class can take part in %s jobs: start it with --single-class (it then refuses the other algorithms' jobs, which tells the coordinator that it holds one class)", err, site, strings.Join(fedalgo.SingleClassNames(), ", "))
		}
		return err
	}
	if s := c.String("test-sources"); s != "" {
		if w.TestRand, w.TestNoise, err = testSources(s); err != nil {
			return usageError{err}
		}
	}
	if w.SecAggKey, w.SecAggRoster, err = loadSecAggKeys(c, site); err != nil {
		return fmt.Errorf("worker %s: %w", site, err)
	}
	return cliError(w.Run(c.Context))
}

func jobCommand() *cli.Command {
	return &cli.Command{
		Name:        "job",
		Usage:       "submit jobs to a running coordinator, list, cancel, ask their status, download their models",
		Subcommands: []*cli.Command{jobSubmitCommand(), jobListCommand(), jobStatusCommand(), jobCancelCommand(), jobModelCommand()},
	}
}

func jobSubmitCommand() *cli.Command {
	return &cli.Command{
		Name:  "submit",
		Usage: "submit one job; with --wait, wait for its end and report the result",
		Description: `Examples:
   pairfed job submit --nats nats://127.0.0.1:4222 --algo fed-avg --min-sites 3 --wait --json
   pairfed job submit --nats URL --feature-bounds schemas/diabetes.json --epsilon 1 --delta 1e-5 --min-sites 2 --wait   # the recommended private algorithm
   pairfed job submit --nats URL --algo fed-dpegd --epsilon 1 --feature-bounds schema.json --min-sites 2 --wait
   pairfed job submit --nats URL --algo fed-dp-gd-grad --epsilon 1 --feature-bounds schema.json --min-sites 2 --wait
   pairfed job submit --nats URL --algo fed-oneshot --local-algo dpegd --epsilon 1 --feature-bounds schema.json --min-sites 2 --wait

Cancel key: every submission draws a fresh secret of 32 random bytes and sends only its SHA-256 to
   the coordinator. The key (64 hex digits) is printed once the coordinator has queued the job
   ("cancel key: …", and "cancel_key" in --json), and written to FILE with --cancel-key-out FILE
   (mode 0600, before the job is sent). Only this key, or the coordinator operator's admin key,
   cancels the job (pairfed job cancel --cancel-key @FILE JOB): another party using the same client
   login cannot. Keep it secret; whoever holds it can cancel the job.

Exit status: 0 completed (or accepted, without --wait), 1 failed, 3 refused.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "nats", Required: true, Usage: "URL of the federation's NATS server"},
			federationFlag(),
			&cli.StringFlag{Name: "job", Usage: "job id (default: a random one); resubmitting a known id reports its status"},
			&cli.StringFlag{Name: "cancel-key-out", Usage: "write the job's cancel key to `FILE` (hex, mode 0600) before submitting; never overwrites a file; job cancel --cancel-key @FILE"},
			&cli.StringFlag{Name: "algo", Usage: "federated algorithm: " + fedAlgoList() + " (pairfed algos NAME describes one); required unless --epsilon is given, which picks the recommended private federated algorithm (dpalgo.RecommendFederated; site sizes are unknown at submission)"},
			&cli.StringFlag{Name: "local-algo", Usage: "fed-oneshot: the private single-site algorithm every site runs (e.g. dpegd)"},
			&cli.StringFlag{Name: "loss", Usage: "hinge, square or logistic (default: hinge for fed-avg, logistic for the private algorithms)"},
			&cli.Float64Flag{Name: "epsilon", Usage: "per-site record-level ε (private algorithms)"},
			&cli.Float64Flag{Name: "delta", Usage: "per-site δ", DefaultText: "1/(10·n) of the largest site, so ≤ 1/(10·n) at every site"},
			&cli.IntFlag{Name: "min-sites", Value: 1, Usage: "live sites the job needs to start, and its quorum"},
			&cli.IntFlag{Name: "rounds", Usage: roundsUsage, DefaultText: roundsDefault},
			&cli.Float64Flag{Name: "local-passes", Usage: localPassesUsage, DefaultText: localPassesDefault},
			&cli.Float64Flag{Name: "eta", Usage: "base step size η", DefaultText: "the algorithm's"},
			&cli.Float64Flag{Name: "param-radius", Usage: "radius B of the ℓ2 parameter ball", DefaultText: "the algorithm's"},
			&cli.Float64Flag{Name: "radius", Usage: "feature radius R the sites must have clipped to", DefaultText: "1"},
			&cli.Float64Flag{Name: "lambda", Usage: "(λ/2)‖w‖² regularization"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed recorded in the job"},
			&cli.StringFlag{Name: "task", Usage: "auc (default) or metric (a Mahalanobis metric; scored by leave-one-out KNN-3 accuracy on the coordinator's test file)"},
			&cli.StringFlag{Name: "feature-bounds", Usage: "public feature-bounds schema (JSON; see schemas/README.md) sent with the job: every site maps its records with it (a site started with a schema of its own must have the same one), and the coordinator scores with it. A private job needs one, here or at every site"},
			&cli.StringFlag{Name: "aggregation", Usage: "robust aggregation against a misbehaving site: median or trimmed-mean:β (coordinate-wise; default: the weighted mean). Post-processing: the sites' DP guarantee is unchanged"},
			calibrationFlag(),
			&cli.BoolFlag{Name: "wait", Usage: "wait until the job completed, was refused or failed"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, Usage: "give up waiting after this long"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		}, append(secAggFlags(), connFlags()...)...),
		Action: runJobSubmit,
	}
}

// submitReport is the `pairfed job submit --json` object.
type submitReport struct {
	Job       string              `json:"job"`
	Status    string              `json:"status"`
	Reason    string              `json:"reason,omitempty"`
	Algorithm string              `json:"algorithm"`
	Phases    int                 `json:"phases"`
	Sites     []string            `json:"sites"`
	Dropped   []string            `json:"dropped,omitempty"`
	Refused   []string            `json:"refused,omitempty"`
	AUC       *experiment.Summary `json:"auc,omitempty"`
	// KNN3 is a metric-learning job's leave-one-out KNN-3 accuracy on
	// the coordinator's test file (instead of auc).
	KNN3     *experiment.Summary `json:"knn3_accuracy,omitempty"`
	PhaseAUC []float64           `json:"phase_auc,omitempty"`
	NTest    int                 `json:"n_test"`
	Private  bool                `json:"private"`
	// PrivacyStatus says the same in words, with the reason when the job
	// is not private ("private: yes (…)" or "NOT private: …").
	PrivacyStatus string                `json:"privacy_status,omitempty"`
	Privacy       []protocol.SiteReport `json:"privacy,omitempty"`
	Model         []float64             `json:"model,omitempty"`
	Seconds       float64               `json:"seconds"`
	// CancelKey is the job's cancel key (hex; job cancel --cancel-key),
	// CancelKeyFile where --cancel-key-out wrote it; both omitted when
	// the key cancels nothing (the id was known under another key, or
	// the job had ended at its first reply).
	CancelKey     string `json:"cancel_key,omitempty"`
	CancelKeyFile string `json:"cancel_key_file,omitempty"`
}

func randomToken(prefix string) string {
	var b [6]byte
	_, _ = crand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func terminal(status string) bool {
	return status == protocol.StatusCompleted || status == protocol.StatusRefused || status == protocol.StatusFailed
}

func runJobSubmit(c *cli.Context) error {
	start := time.Now()
	if err := checkFedDelta(c, "job submit"); err != nil {
		return err
	}
	fed := c.String("federation")
	id := c.String("job")
	if id == "" {
		id = randomToken("job-")
	}
	keyOut := c.String("cancel-key-out")
	if keyOut != "" {
		if fi, err := os.Stat(keyOut); err == nil && fi.IsDir() {
			return usageError{fmt.Errorf("job submit: --cancel-key-out %s is a directory: give a new file name (e.g. %s)", keyOut, filepath.Join(keyOut, id+".key"))}
		}
		if fi, err := os.Stat(filepath.Dir(keyOut)); err != nil || !fi.IsDir() {
			return usageError{fmt.Errorf("job submit: --cancel-key-out %s: the directory %s does not exist: create it, or give a file in an existing directory", keyOut, filepath.Dir(keyOut))}
		}
		if _, err := os.Lstat(keyOut); err == nil {
			return usageError{fmt.Errorf("job submit: --cancel-key-out %s exists: job submit never overwrites a file (it may hold another job's key); give a new path", keyOut)}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("job submit: --cancel-key-out: %w", err)
		}
		if err := checkOutput("--cancel-key-out", keyOut); err != nil {
			return err
		}
	}
	cancelKey := make([]byte, protocol.CancelKeyLen)
	if _, err := crand.Read(cancelKey); err != nil {
		return fmt.Errorf("job submit: cancel key: %w", err)
	}
	client := randomToken("c-")
	sub := &protocol.JobSubmit{Job: id, Client: client, Algo: c.String("algo"), LocalAlgo: c.String("local-algo"), Loss: c.String("loss"), MinSites: c.Int("min-sites"),
		Rounds: c.Int("rounds"), LocalPasses: c.Float64("local-passes"), Eta: c.Float64("eta"), ParamRadius: c.Float64("param-radius"),
		FeatureRadius: c.Float64("radius"), Lambda: c.Float64("lambda"), Epsilon: c.Float64("epsilon"), Delta: c.Float64("delta"), Seed: c.Uint64("seed"),
		Aggregation: c.String("aggregation"), Task: c.String("task"), Options: secAggOptions(c), Calibration: jobCalibration(c),
		CancelHash: coordinator.CancelHash(cancelKey)}
	if !c.IsSet("algo") {
		if !c.IsSet("epsilon") {
			return usageError{fmt.Errorf("job submit: --algo is required (or give --epsilon for the recommended private algorithm)")}
		}
		job := coordinator.JobConfig{Epsilon: sub.Epsilon, Delta: sub.Delta, Loss: sub.Loss, Task: sub.Task}
		note, err := applyFedDefault(c, &job, 0, 0, 0)
		if err != nil {
			return usageError{fmt.Errorf("job submit: %w", err)}
		}
		sub.Algo, sub.LocalAlgo, sub.Loss = job.Algo, job.LocalAlgo, job.Loss
		fmt.Fprintln(c.App.ErrWriter, "pairfed: "+note)
	}
	if p := c.String("feature-bounds"); p != "" {
		text, _, err := readJobSchema(p)
		if err != nil {
			return err
		}
		sub.Schema = text
	} else if fedalgo.Private(sub.Algo) {
		fmt.Fprintf(c.App.ErrWriter, "pairfed: note: job %s is private and carries no feature-bounds schema: only sites started with --feature-bounds take it, the others refuse it (add --feature-bounds SCHEMA.json to send one; see schemas/README.md)\n", id)
	}
	if err := coordinator.CheckSubmit(fed, sub); err != nil {
		return usageError{fmt.Errorf("job submit: %w", err)}
	}
	msg, err := protocol.Encode(sub)
	if err != nil {
		return usageError{err}
	}
	natsOpts, err := connOptions(c, c.String("nats"))
	if err != nil {
		return err
	}
	if err := checkTimeout(c); err != nil {
		return err
	}
	keyHex := hex.EncodeToString(cancelKey)
	// keyKept: the coordinator queued (or started) the job under this key;
	// keyDrop: it did not (the id was known under another key, or the
	// job had ended at its first reply): the key cancels nothing.
	keyKept, keyDrop := false, false
	if keyOut != "" {
		// Written before the job is sent, so that a job the coordinator
		// queues always has its key on disk (also when its reply is
		// lost); removed again only when the key is known to cancel
		// nothing.
		if err := writeNew(keyOut, []byte(keyHex+"\n"), 0o600); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("job submit: --cancel-key-out %s cannot be written (%w): nothing was submitted; give a file in a directory this user can write", keyOut, err)
		}
		defer func() {
			if keyDrop {
				os.Remove(keyOut)
			}
		}()
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	t, err := connectNATS(cctx, c.String("nats"), "pairfed-client", false, natsOpts...)
	ccancel()
	if err != nil {
		return err
	}
	defer t.Close()
	// first handles the coordinator's first reply: the key is printed at
	// once, so that the user can cancel while --wait waits.
	first := func(st *protocol.JobStatus) {
		notTaken := strings.Contains(st.Reason, fmt.Sprintf(coordinator.CancelKeyNotTaken, id))
		keyKept = !notTaken && !terminal(st.Status)
		keyDrop = !keyKept
		switch {
		case notTaken:
			removed := ""
			if keyOut != "" {
				removed = "; " + keyOut + " is removed"
			}
			fmt.Fprintf(c.App.ErrWriter, "pairfed: note: job %s was already queued or running at the coordinator under another cancel key (an earlier submission of this id): this run's cancel key does not cancel it%s\n", id, removed)
		case !keyKept:
		case c.Bool("json") && c.Bool("wait"):
			fmt.Fprintf(c.App.ErrWriter, "pairfed: job %s is %s; its cancel key is %s (also in the JSON printed at the end): pairfed job cancel --cancel-key KEY %s\n", id, st.Status, keyHex, id)
		case !c.Bool("json"):
			fmt.Fprintf(c.App.Writer, "cancel key: %s\n", keyHex)
			use := "--cancel-key " + keyHex
			if keyOut != "" {
				use = "--cancel-key @" + keyOut
				fmt.Fprintf(c.App.Writer, "cancel key written to %s (mode 0600)\n", keyOut)
			}
			fmt.Fprintf(c.App.Writer, "only this key (or the coordinator operator's admin key) cancels job %s: pairfed job cancel %s %s; keep it secret\n", id, use, id)
		}
	}
	statuses := make(chan *protocol.JobStatus, 16)
	unsub, err := t.Subscribe(protocol.ClientSubject(fed, client), func(_ string, b []byte) {
		m, err := protocol.Decode(b)
		if err != nil {
			return
		}
		if st, ok := m.(*protocol.JobStatus); ok && st.Job == id {
			select {
			case statuses <- st:
			default:
			}
		}
	})
	if err != nil {
		return err
	}
	defer unsub()
	// Submitting a known id is idempotent: it is also how the client polls
	// (core NATS may lose a message; a lost reply is asked for again).
	var st *protocol.JobStatus
	poll := 2 * time.Second
	// Between two submissions the client only listens: a reply that the
	// job is queued or running does not trigger the next poll early.
	for st == nil || (c.Bool("wait") && !terminal(st.Status)) {
		if err := t.Publish(protocol.JobsSubject(fed), msg); err != nil {
			return err
		}
		if err := loginRefused("job submit", t); err != nil {
			return err
		}
		timer := time.NewTimer(poll)
	listen:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				if st == nil {
					// The submission may have reached the coordinator and
					// only its reply been lost: the key is not thrown away.
					kept := "its cancel key is " + keyHex
					if keyOut != "" {
						kept = "its cancel key is kept in " + keyOut
					}
					fmt.Fprintf(c.App.ErrWriter, "pairfed: note: if the coordinator queued job %s all the same, %s\n", id, kept)
					return fmt.Errorf("job submit: no answer from a coordinator of federation %s at %s within %v", fed, node.RedactedServers(c.String("nats")), c.Duration("timeout"))
				}
				return fmt.Errorf("job submit: job %s still %s after %v", id, st.Status, c.Duration("timeout"))
			case s := <-statuses:
				if st == nil {
					if s.Algo != "" && s.Algo != sub.Algo {
						// The id names another job (an earlier submission):
						// its status is not this command's job.
						keyDrop = true
						return cli.Exit(fmt.Sprintf("job submit: job %s already exists at the coordinator as a %s job (%s), not the %s job this command describes: nothing new was queued; give a new --job id (or leave --job out for a fresh one)", id, s.Algo, s.Status, sub.Algo), 1)
					}
					first(s)
					if terminal(s.Status) && s.Submitted > 0 {
						fmt.Fprintf(c.App.ErrWriter, "pairfed: note: job %s had already ended (%s) when this submission got its first answer: if it was submitted earlier (a job id is never run twice), this is that earlier job and nothing new was run; give a new --job id (or leave --job out) to run it again\n", id, s.Status)
					}
				}
				st = s
				if !c.Bool("wait") || terminal(st.Status) {
					break listen
				}
			case <-timer.C:
				break listen
			}
		}
		timer.Stop()
		poll = 5 * time.Second
	}
	rep := &submitReport{Job: st.Job, Status: st.Status, Reason: st.Reason, Algorithm: st.Algo, Phases: st.Phases, Sites: st.Sites,
		Dropped: st.Dropped, Refused: st.Refused, NTest: st.TestRecords, Privacy: st.Privacy, Model: st.Model, Seconds: time.Since(start).Seconds()}
	if keyKept {
		rep.CancelKey = keyHex
		if keyOut != "" {
			rep.CancelKeyFile = keyOut
		}
	}
	if st.TestRecords > 0 {
		if st.Metric == protocol.MetricKNN3 {
			rep.KNN3 = experiment.Summarize([]float64{st.AUC})
		} else {
			rep.AUC = experiment.Summarize([]float64{st.AUC})
		}
		rep.PhaseAUC = st.PhaseAUC
	}
	if st.Status == protocol.StatusCompleted && fedalgo.Private(st.Algo) {
		rep.Private = len(st.Privacy) > 0
		for _, p := range st.Privacy {
			rep.Private = rep.Private && p.Secure
		}
	}
	rep.PrivacyStatus = jobPrivacyStatus(st)
	if c.Bool("json") {
		if err := writeJSON(c.App.Writer, rep); err != nil {
			return err
		}
	} else {
		printSubmit(c.App.Writer, rep)
	}
	switch st.Status {
	case protocol.StatusFailed:
		return cli.Exit(fmt.Sprintf("job %s failed", id), 1)
	case protocol.StatusRefused:
		return cli.Exit(fmt.Sprintf("job %s refused", id), 3)
	}
	return nil
}

func printSubmit(w io.Writer, r *submitReport) {
	fmt.Fprintf(w, "job %s (%s): %s\n", r.Job, r.Algorithm, r.Status)
	if r.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", r.Reason)
	}
	if len(r.Sites) > 0 {
		fmt.Fprintf(w, "sites: %s\n", strings.Join(r.Sites, " "))
	}
	if len(r.Dropped) > 0 {
		fmt.Fprintf(w, "dropped during the job: %s\n", strings.Join(r.Dropped, " "))
	}
	if len(r.Refused) > 0 {
		fmt.Fprintf(w, "refused: %s\n", strings.Join(r.Refused, " "))
	}
	if r.AUC != nil {
		fmt.Fprintf(w, "test AUC: %.4f (n_test = %d), %d phases, %.3g s\n", r.AUC.Mean, r.NTest, r.Phases, r.Seconds)
	}
	if r.KNN3 != nil {
		fmt.Fprintf(w, "test KNN-3 accuracy (leave-one-out on the test file): %.4f (n_test = %d), %d phases, %.3g s\n", r.KNN3.Mean, r.NTest, r.Phases, r.Seconds)
	}
	if r.PrivacyStatus != "" {
		fmt.Fprintf(w, "job %s\n", r.PrivacyStatus)
	}
	for _, p := range r.Privacy {
		if p.Epsilon > 0 {
			// The charge (what the coordinator's ledger records for the
			// site: the certified guarantee, ≤ the request) beside the request.
			charged := ""
			if p.CertifiedEpsilon > 0 {
				charged = fmt.Sprintf(", (%.6g, %.3g) certified and charged", p.CertifiedEpsilon, p.CertifiedDelta)
			}
			fmt.Fprintf(w, "privacy %s (n = %d): record-level (ε, δ) = (%g, %.3g) requested%s, σ %s, %s\n",
				p.Site, p.Records, p.Epsilon, p.Delta, charged, fmtSigmas(p.Sigmas), privacyLine(p))
			if p.ComposedEpsilon > 0 {
				fmt.Fprintf(w, "  composed (exact Gaussian-DP, dp.Compose): ε = %.4g at δ = %.3g\n", p.ComposedEpsilon, p.Delta)
			}
		}
	}
}

// testSources parses --test-sources SEED:INDEX: the sources of site INDEX
// in `pairfed simulate --seed SEED` (simulate.SiteSources), so that a
// federation of processes can reproduce a simulation exactly.
func testSources(s string) (*rand.Rand, pairwise.Noise, error) {
	a, b, ok := strings.Cut(s, ":")
	seed, err1 := strconv.ParseUint(a, 10, 64)
	index, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || index < 0 {
		return nil, nil, fmt.Errorf("worker: --test-sources %q: want SEED:INDEX", s)
	}
	return simulate.SiteSources(false, seed, index)
}

// checkTick refuses a run-loop clock outside [1ms, 10s]: below a
// millisecond the loop only spins (a job's step budgets are counted in
// ticks, so they shrink with it and no job finishes); above 10 s every
// timeout and heartbeat is that coarse.
func checkTick(who string, tick time.Duration) error {
	if tick < time.Millisecond || tick > 10*time.Second {
		return usageError{fmt.Errorf("%s: --tick %v is outside the accepted range [1ms, 10s] (the run loop's clock; default 50ms)", who, tick)}
	}
	return nil
}
