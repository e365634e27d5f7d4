package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/pairfed/pairfed/dp"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/simulate"
	"github.com/urfave/cli/v2"
)

func simulateCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "data", Required: true, Usage: "training file (LIBSVM, CSV, dense or ARFF), split over the sites"},
		&cli.StringFlag{Name: "test", Usage: "test file (default: a stratified split of --data)"},
		testFractionFlag("share of --data held out for testing when --test is absent"),
		&cli.IntFlag{Name: "sites", Value: 4, Usage: "number of sites N"},
		&cli.StringFlag{Name: "task", Value: "auc", Usage: "auc (linear scoring model, test AUC) or metric (Mahalanobis metric W ∈ S^d, projected onto the Frobenius ball ∩ PSD; test KNN-3 accuracy with the pooled training records as neighbours); fed-dp-gd-grad is auc only"},
		&cli.StringFlag{Name: "partition", Value: "iid", Usage: "iid (shuffled round robin), label-skew:β (Dirichlet(β) class proportions per site) or single-class (each site holds one class; sites split between the classes in proportion to their sizes, at least one each)"},
		&cli.StringFlag{Name: "algo", Usage: "federated algorithm: " + fedAlgoList() + " (pairfed algos NAME describes one)", DefaultText: "fed-avg, or with --epsilon the recommended private federated algorithm (printed with the reason)"},
		&cli.StringFlag{Name: "local-algo", Usage: "fed-oneshot: the private single-site algorithm every site runs (e.g. dpegd, dpgdsc, dp-gd-grad, dp-local-sgd)"},
		&cli.StringFlag{Name: "loss", Usage: "hinge, square or logistic (default: hinge for fed-avg, logistic for the private algorithms)"},
		&cli.Float64Flag{Name: "epsilon", Usage: "per-site record-level ε (private algorithms)"},
		&cli.Float64Flag{Name: "delta", Usage: "per-site δ", DefaultText: "1/(10·n) of the largest site, so ≤ 1/(10·n) at every site"},
		&cli.Float64Flag{Name: "eta", Usage: "base step size η", DefaultText: "the algorithm's: 10 for fed-avg; [Y21a] Thm 10 / [X21] Thm 3 at the smallest site for fed-dp-local-sgd / fed-dpegd; 1/L for fed-dp-gd-grad; the local algorithm's at each site for fed-oneshot"},
		&cli.Float64Flag{Name: "param-radius", Usage: "radius B of the ℓ2 parameter ball", DefaultText: "100 for fed-avg; 1 for the private algorithms, 8 for fed-dp-pair-sgd's auc task (its logistic scale S), fed-dp-pair-sgd's metric task's from its sites' sizes"},
		&cli.Float64Flag{Name: "radius", Value: 1, Usage: "per-record clipping radius R after per-site scaling"},
		&cli.Float64Flag{Name: "lambda", Usage: "(λ/2)‖w‖² regularization (e.g. fed-oneshot --local-algo dpgdsc needs λ > 0)"},
		&cli.IntFlag{Name: "rounds", Usage: roundsUsage, DefaultText: roundsDefault},
		&cli.Float64Flag{Name: "local-passes", Usage: localPassesUsage, DefaultText: localPassesDefault},
		&cli.StringFlag{Name: "scale", Usage: "per-site scaling: bounds (the --feature-bounds schema, per record, the same at every site), none, or minmax/standard fitted by each site on its own records (a private job is then NOT private end to end). Default: bounds with a schema, else none for private jobs, else minmax"},
		featureBoundsFlag(),
		&cli.IntFlag{Name: "runs", Value: 1, Usage: "repetitions (different splits)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed (splits, partitions, fed-avg sampling)"},
		&cli.Uint64Flag{Name: "noise-seed", Usage: "seed privacy noise and sampling: reproducible but NOT private"},
		&cli.StringFlag{Name: "transport", Value: "nats", Usage: "nats (embedded in-process server) or mem"},
		&cli.BoolFlag{Name: "verbose", Usage: "log the coordinator's and workers' events to stderr"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		noProgressFlag(),
		httpFlag(),
		holdFlag(),
	}
	return withUsageErrors(&cli.Command{
		Name:  "simulate",
		Usage: "run a whole federation (coordinator + N sites over an embedded NATS server) in one process",
		Description: `Examples:
   pairfed simulate --data datasets/diabetes --sites 4 --algo fed-avg
   pairfed simulate --data datasets/diabetes --feature-bounds schemas/diabetes.json --sites 4 --partition label-skew:0.5 --algo fed-dp-local-sgd --epsilon 1
   pairfed simulate --data datasets/diabetes --feature-bounds schemas/diabetes.json --sites 4 --algo fed-dpegd --epsilon 1
   pairfed simulate --data datasets/diabetes --feature-bounds schemas/diabetes.json --sites 4 --algo fed-dp-gd-grad --epsilon 1
   pairfed simulate --data datasets/diabetes --feature-bounds schemas/diabetes.json --sites 4 --algo fed-oneshot --local-algo dpegd --epsilon 1
   pairfed simulate --data datasets/diabetes --feature-bounds schemas/diabetes.json --sites 4 --partition single-class --algo fed-dp-ssp --epsilon 1
   pairfed simulate --data datasets/diabetes --feature-bounds schemas/diabetes.json --sites 4 --algo fed-dp-pair-sgd --epsilon 1`,
		Flags: append(append(append(flags, calibrationFlag(), outModelFlag(simulateModelNote), signKeyFlag("the model file of --out-model"),
			&cli.Float64Flag{Name: "secagg-dropout", Usage: "secure aggregation: the fraction of the sites (the last ⌊f·N⌋) that drop out of every round after sharing their keys (a crash mid-round: the unmasking removes their masks); in [0, 1)"}),
			secAggFlags()...), dataFlags()...),
		Action: runSimulate,
	})
}

func runSimulate(c *cli.Context) error {
	if err := checkFedDelta(c, "simulate"); err != nil {
		return err
	}
	if err := checkModelOutput(c); err != nil {
		return err
	}
	spec := simulate.Spec{
		Sites: c.Int("sites"), Partition: c.String("partition"), Scale: c.String("scale"),
		TestFraction: c.Float64("test-fraction"), Runs: c.Int("runs"), Seed: c.Uint64("seed"),
		NoiseSeed: c.Uint64("noise-seed"), Seeded: c.IsSet("noise-seed"), Transport: c.String("transport"),
		SecAggDropout: c.Float64("secagg-dropout"),
		Job: coordinator.JobConfig{
			Algo: c.String("algo"), LocalAlgo: c.String("local-algo"), Loss: c.String("loss"), Epsilon: c.Float64("epsilon"), Delta: c.Float64("delta"), Task: c.String("task"),
			Eta: c.Float64("eta"), ParamRadius: c.Float64("param-radius"), FeatureRadius: c.Float64("radius"),
			Lambda: c.Float64("lambda"), Rounds: c.Int("rounds"), LocalPasses: c.Float64("local-passes"), Seed: c.Uint64("seed"),
			Options: secAggOptions(c), Calibration: jobCalibration(c),
		},
	}
	if c.IsSet("secagg-dropout") && !c.Bool("secure-aggregation") {
		return fmt.Errorf("--secagg-dropout %v without --secure-aggregation: the dropout is of secure aggregation rounds; add --secure-aggregation or drop the flag", c.Float64("secagg-dropout"))
	}
	// Probe 6 (issue 28): an explicit 0 was read as "the default" (a
	// threshold of ⌊2N/3⌋+1, a timeout of 50 ticks) without a word.
	for _, f := range []struct{ name, want string }{{"secagg-threshold", "t in [2, N] (the survivors a round needs)"}, {"secagg-timeout", "a number of ticks ≥ 1"}} {
		if c.IsSet(f.name) && c.Int(f.name) == 0 {
			return usageError{fmt.Errorf("simulate: --%s 0 is not a valid value: give %s, or leave it out for the default", f.name, f.want)}
		}
	}
	// Probe 6 (issue 28): a dropout leaving fewer sites than the threshold
	// aborted every round, reported as "secagg: too few surviving sites: 2
	// masked inputs, … threshold 4", with no fix.
	if f := c.Float64("secagg-dropout"); c.Bool("secure-aggregation") && f > 0 && f < 1 && c.Int("sites") >= 2 {
		k := c.Int("sites")
		drop := int(f * float64(k))
		t, from := secagg.DefaultThreshold(k), fmt.Sprintf("the default ⌊2N/3⌋+1 of N = %d sites", k)
		if c.IsSet("secagg-threshold") && c.Int("secagg-threshold") > 0 {
			t, from = c.Int("secagg-threshold"), "--secagg-threshold"
		}
		if k-drop < t {
			return usageError{fmt.Errorf("simulate: --secagg-dropout %v drops ⌊%v·%d⌋ = %d of the %d sites from every round, leaving %d, fewer than the threshold t = %d (%s): every round would abort with nothing released; keep at least t sites (--secagg-dropout < %.3g) or lower --secagg-threshold to at most %d", f, f, k, drop, k, k-drop, t, from, float64(k-t+1)/float64(k), k-drop)}
		}
	}
	if c.Bool("verbose") {
		spec.Logf = stderrLogf("")
	}
	if c.Int("runs") < 1 {
		return usageError{fmt.Errorf("simulate: --runs %d must be ≥ 1", c.Int("runs"))}
	}
	// The sites always clip (R = 0 is not "no clipping" in a federation:
	// the job would default to R = 1), and private jobs need R > 0.
	if R := c.Float64("radius"); !(R > 0) || math.IsInf(R, 0) {
		return usageError{fmt.Errorf("simulate: --radius %v must be finite and > 0 (every site clips its records to ‖x‖ ≤ R)", R)}
	}
	if err := checkRadius(c); err != nil {
		return err
	}
	opt := dataOptions(c)
	schema, schemaNotes, err := loadSchema(c, &opt)
	if err != nil {
		return err
	}
	// The schema is known before the first Validate: an explicit
	// --scale bounds with --feature-bounds was refused as lacking it.
	spec.Bounds = schema
	var train, test *data.Table
	var recNote string
	if !c.IsSet("algo") {
		spec.Job.Algo = "fed-avg" // the non-private default
		if c.IsSet("epsilon") {
			if train, test, err = loadTrainTestSchema(c, opt, schema); err != nil {
				return err
			}
			nSite := experiment.TrainRecords(experiment.Spec{TestFraction: spec.TestFraction, TrainSize: spec.TrainSize}, train.N, test != nil) / spec.Sites
			if recNote, err = applyFedDefault(c, &spec.Job, spec.Sites, nSite, train.D); err != nil {
				return usageError{err}
			}
		}
	}
	if err := spec.Validate(); err != nil {
		return usageError{err}
	}
	if err := checkSimulateScale(c, spec.Job.Algo, schema); err != nil {
		return err
	}
	web, err := simulateHTTP(c, &spec)
	if err != nil {
		return err
	}
	defer web.close()
	if train == nil {
		if train, test, err = loadTrainTestSchema(c, opt, schema); err != nil {
			return err
		}
	}
	if schema != nil {
		// The schema travels with the job (JobAnnounce.Schema), as with
		// `job submit --feature-bounds`.
		text, _, err := readJobSchema(c.String("feature-bounds"))
		if err != nil {
			return err
		}
		spec.Job.Schema = text
		spec.Bounds = schema
		if !c.IsSet("scale") {
			spec.Scale = "" // the first Validate's default, before the schema was read
		}
		if err := spec.Validate(); err != nil {
			return usageError{err}
		}
	}
	train.Notes = append(schemaNotes, train.Notes...)
	spec.DataDependent = train.DataDependent
	if err := checkMetricSize(c.String("task"), opt, train.D); err != nil {
		return err
	}
	// Probe 4 (issue 28): fed-avg on single-class sites reported AUC
	// 0.5000 without a word, and --noise-seed on a non-private algorithm
	// looked ignored.
	var flagNotes []string
	if spec.Partition == "single-class" && !fedalgo.LearnsFromSingleClassSites(spec.Job.Algo) {
		w := fmt.Sprintf("--partition single-class with %s: it pairs or fits within each site and cannot learn from sites that hold one class (expect an AUC near 0.5); algorithms for sites of one class: %s",
			spec.Job.Algo, strings.Join(fedalgo.SingleClassNames(), ", "))
		fmt.Fprintf(c.App.ErrWriter, "pairfed: warning: %s\n", w)
		flagNotes = append(flagNotes, w)
	}
	if c.IsSet("noise-seed") && !fedalgo.Private(spec.Job.Algo) {
		flagNotes = append(flagNotes, fmt.Sprintf("--noise-seed %d: %s is not private and adds no privacy noise; the seed only changes its sampling (as --seed does)", c.Uint64("noise-seed"), spec.Job.Algo))
	}
	if h := secAggHint(spec); h != "" {
		flagNotes = append(flagNotes, h)
	}
	bar := startProgress(c, "simulate", spec.Runs)
	defer bar.Finish()
	spec.OnRun = bar.OnRun()
	rep, err := simulate.Run(c.Context, spec, train, test)
	if err != nil {
		return err
	}
	defer web.finish(c.Context) // after the report is printed: --hold
	bar.Finish()
	if len(rep.Privacy) > 0 {
		// The loader's notes state exact statistics of the records
		// (class counts, density): not covered by the guarantee.
		rep.AddDiagnostics(train.Notes...)
	} else {
		rep.Notes = append(rep.Notes, train.Notes...)
	}
	if fedalgo.Private(spec.Job.Algo) && spec.Scale == "none" {
		rep.Notes = append(rep.Notes, rawScaleNote(spec.Job.FeatureRadius))
	}
	if recNote != "" {
		rep.Notes = append([]string{recNote}, rep.Notes...)
	}
	rep.Notes = append(flagNotes, rep.Notes...)
	for _, p := range rep.Privacy {
		if w := pairwise.DeltaWarning(p.Delta, p.Records); w != "" {
			fmt.Fprintf(c.App.ErrWriter, "pairfed: warning: %s: %s\n", p.Site, w)
		}
	}
	if p := c.String("out-model"); p != "" {
		if err := writeSimulateModel(c, p, opt, train, spec, rep); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	printSimulation(c.App.Writer, rep)
	return nil
}

func printSimulation(w io.Writer, r *simulate.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	score, name := r.AUC, "AUC"
	if r.KNN3 != nil {
		score, name = r.KNN3, "KNN-3 acc"
	}
	fmt.Fprintf(tw, "algorithm\tsites\tpartition\tn_train\tn_test\td\tphases\truns\t%s\tseconds\tprivate\n", name)
	fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%.4f ± %.4f\t%.3g\t%v\n", r.Algorithm, r.Sites, r.Partition, r.NTrain, r.NTest, r.D,
		r.Phases, len(score.Values), score.Mean, score.Std, r.Seconds, r.Private)
	tw.Flush()
	if r.LocalAlgo != "" {
		fmt.Fprintf(w, "local algorithm: %s\n", r.LocalAlgo)
	}
	fmt.Fprintf(w, "loss: %s   η: %g   B: %g   R: %g   records per site: %v   transport: %s\n", r.Loss, r.Eta, r.ParamRadius, r.FeatureRadius, r.SiteRecords, r.Transport)
	fmt.Fprintln(w, simulationPrivacy(r))
	for _, p := range r.Privacy {
		site := "private: yes (secure noise)"
		if !p.Secure {
			site = "NOT private: seeded noise"
		}
		fmt.Fprintf(w, "privacy %s (n = %d): record-level (ε, δ) = (%g, %.3g), σ %s, %s\n", p.Site, p.Records, p.Epsilon, p.Delta, fmtSigmas(p.Sigmas), site)
		if p.CertifiedEpsilon > 0 {
			fmt.Fprintf(w, "  certified by the exact accountant and charged (site ledger): (ε, δ) = (%.6g, %.3g)\n", p.CertifiedEpsilon, p.CertifiedDelta)
		}
		if p.ComposedEpsilon > 0 {
			fmt.Fprintf(w, "  composed (exact Gaussian-DP, dp.Compose): ε = %.4g at δ = %.3g\n", p.ComposedEpsilon, p.Delta)
		}
	}
	if r.Neighbours != "" {
		fmt.Fprintf(w, "neighbouring relation: %s\n", r.Neighbours)
	}
	stewardSummary(w, r)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	printDiagnostics(w, r.Diagnostics)
}

// simulationPrivacy is the run's privacy line: "private: yes (…)" or
// "NOT private: <reasons>" (the reasons are the report's notes).
func simulationPrivacy(r *simulate.Report) string {
	switch {
	case len(r.Privacy) == 0:
		return fmt.Sprintf("NOT private: %s adds no noise (a non-private baseline)", r.Algorithm)
	case r.Private:
		return "private: yes (secure noise at every site, public per-record preprocessing)"
	}
	var why []string
	for _, n := range r.Notes {
		if n == "seeded noise and sampling: reproducible, NOT private" {
			why = append(why, "seeded noise and sampling (--noise-seed: reproducible)")
		} else if rest, ok := strings.CutPrefix(n, "NOT private end to end: "); ok {
			why = append(why, rest)
		}
	}
	if len(why) == 0 {
		why = append(why, "a site's noise was not secure")
	}
	return "NOT private: " + strings.Join(why, "; ")
}

// checkSimulateScale refuses a private simulation whose records have no
// public scale (no schema and no explicit --scale), naming the fix. The
// explicit opt-ins are reported: --scale none by a warning note (private,
// but raw values clipped to ‖x‖ ≤ R lose most features), --scale
// minmax|standard by "NOT private: …" (fitted on each site's records).
// Per-site DP ranges are not an option here: see sitedata.go.
func checkSimulateScale(c *cli.Context, algo string, schema *data.Schema) error {
	if !fedalgo.Private(algo) || schema != nil {
		return nil
	}
	if !c.IsSet("scale") {
		return usageError{fmt.Errorf("simulate: %s is private, but the records have no public scale: give --feature-bounds SCHEMA.json (a public schema; see schemas/README.md — schemas/diabetes.json for datasets/diabetes). Explicit opt-ins: --scale none (raw values clipped to ‖x‖ ≤ R: private, but learns little unless the records are already on a public scale) or --scale minmax (fitted on each site's records: NOT private)", algo)}
	}
	return nil
}

// checkFedDelta refuses an explicit --delta 0 for a federated job: in a
// job δ = 0 stands for the default 1/(10·n) of the largest site, while
// `pairfed train --delta 0` asks for pure ε-DP — so a user who gives 0
// must not silently get a δ > 0 (no federated algorithm releases with
// pure ε-DP: their noise is Gaussian).
func checkFedDelta(c *cli.Context, who string) error {
	if c.IsSet("delta") && c.Float64("delta") == 0 {
		return usageError{fmt.Errorf("%s: --delta = 0 asks for pure ε-DP, which no federated algorithm gives (their noise is Gaussian, δ > 0): omit --delta for the default 1/(10·n) of the largest site, or give a δ in (0, 1)", who)}
	}
	return nil
}

// secAggHint is the note of a private federated job of K ≥ 2 sites that
// runs without secure aggregation although its algorithm could sum its
// releases under it (the job validates with it): what each choice costs,
// in noise and in trust, so that the better model is one flag away and the
// weaker trust assumption is never taken silently. "" otherwise.
func secAggHint(spec simulate.Spec) string {
	if spec.Sites < 2 || !fedalgo.Private(spec.Job.Algo) || fedalgo.SecAggRequested(spec.Job.Options) {
		return ""
	}
	s := spec
	s.Job.Options = protocol.OptionsOf(map[string]float64{fedalgo.OptSecAgg: 1})
	if s.Validate() != nil {
		return ""
	}
	return fmt.Sprintf("each site's noise protects its own release here, so the sum of the %d sites' releases carries √%d = %.3g× the noise of one central release; --secure-aggregation would sum them under masks (the coordinator sees only the total) with one central release's noise when no site drops — the same ε per site against the coordinator, but assuming that fewer than its threshold of sites collude with it (--secagg-colluders counts those a consortium must allow for; docs/federation.md, Secure aggregation)",
		spec.Sites, spec.Sites, math.Sqrt(float64(spec.Sites)))
}

// rawScaleNote is the note of a private run on --scale none (an explicit
// opt-in: private, but raw values clipped to ‖x‖ ≤ R).
func rawScaleNote(R float64) string {
	return fmt.Sprintf("warning: --scale none (explicit opt-in): the records are used on their raw scale and clipped to ‖x‖ ≤ %g — private, but a feature far beyond ±R (an age of 62) dominates or is clipped away; give --feature-bounds SCHEMA.json (schemas/README.md)", R)
}

// applyFedDefault fills job's algorithm (and the local algorithm and loss
// when not given) by dpalgo.RecommendFederated among the registered
// private federated algorithms, for sites of nSite records (0: unknown) and
// d features (0: unknown), and returns the note that says which and why.
func applyFedDefault(c *cli.Context, job *coordinator.JobConfig, sites, nSite, d int) (string, error) {
	if err := dp.CheckEpsilon("--epsilon", job.Epsilon); err != nil {
		return "", err
	}
	var names []string
	for _, n := range fedalgo.Names() {
		if fedalgo.Private(n) {
			names = append(names, n)
		}
	}
	loss := ""
	if c.IsSet("loss") {
		loss = job.Loss
	}
	delta := job.Delta
	if !(delta > 0) && nSite > 0 {
		delta = dp.DefaultDelta(nSite) // the δ each site will ask for
	}
	if !(delta > 0) {
		delta = 1e-6 // only enters the single-site rule, which needs n; unused when n is unknown
	}
	task := pairwise.Task(job.Task)
	if task == "" {
		task = pairwise.TaskAUC
	}
	// The summed noise over one central release's: √K plain, ≈ 1 under
	// secure aggregation (removable copies) — from the job's options.
	r, err := dpalgo.RecommendFederated(task, names, sites, nSite, d, job.Epsilon, delta, loss, fedalgo.SumNoiseFactor(job.Options, sites))
	if err != nil {
		return "", err
	}
	job.Algo = r.Algo
	if !c.IsSet("local-algo") {
		job.LocalAlgo = r.LocalAlgo
	}
	if !c.IsSet("loss") {
		job.Loss = r.Loss
	}
	return fmt.Sprintf("algorithm %s chosen by the default rule: %s", r.Algo, r.Reason), nil
}

// stewardSummary states the job's guarantee in plain words for the people
// who answer for a site's data: what is protected, against whom, how much,
// and what is not covered.
func stewardSummary(w io.Writer, r *simulate.Report) {
	if len(r.Privacy) == 0 {
		fmt.Fprintln(w, "privacy summary: NOT private — this algorithm adds no noise; the released model may reveal individual records")
		return
	}
	maxEps, maxDelta := 0.0, 0.0
	for _, p := range r.Privacy {
		maxEps, maxDelta = max(maxEps, p.Epsilon), max(maxDelta, p.Delta)
	}
	if !r.Private {
		fmt.Fprintf(w, "privacy summary: NOT private end to end (see the warning and notes above); the noise was calibrated for (ε, δ) = (%g, %.2g) per site\n", maxEps, maxDelta)
		return
	}
	fmt.Fprintf(w, "privacy summary: every site's records are protected by record-level differential privacy, (ε, δ) = (%g, %.2g) per site for the whole job:\n", maxEps, maxDelta)
	fmt.Fprintf(w, "  the probability of anything the coordinator, the other sites or anyone holding the final model can observe changes by at most\n")
	fmt.Fprintf(w, "  a factor e^ε = %.3g (plus δ) when any one record — one patient — of a site is replaced by another. Each site added its noise\n", math.Exp(maxEps))
	fmt.Fprintf(w, "  before anything left it and recorded the spend in its own ledger first. Not covered: the test AUC printed here (computed on\n")
	fmt.Fprintf(w, "  held-out data by the evaluator), and records repeated across sites (a person in two sites' data is protected at each site separately).\n")
}
