package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/urfave/cli/v2"
)

func trainCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "data", Required: true, Usage: "training file (LIBSVM, CSV, dense or ARFF)"},
		&cli.StringFlag{Name: "test", Usage: "test file (default: a stratified split of --data)"},
		testFractionFlag("share of --data held out for testing when --test and --folds are absent"),
		&cli.IntFlag{Name: "folds", Usage: "k-fold evaluation (each of --runs repeats all k folds)"},
		&cli.StringFlag{Name: "task", Value: "auc", Usage: "auc (bipartite ranking) or metric (Mahalanobis metric learning)"},
		&cli.StringFlag{Name: "algo", Usage: "algorithm (pairfed algos lists them)", DefaultText: "sgd-prev, or with --epsilon the recommended private algorithm for the task, n, d, ε and δ (dpalgo.RecommendPrivate), printed with the reason"},
		&cli.StringFlag{Name: "loss", Value: "hinge", Usage: "hinge, square or logistic"},
		&cli.Float64Flag{Name: "radius", Usage: radiusUsage, DefaultText: radiusDefault},
		&cli.Float64Flag{Name: "param-radius", Usage: "radius B of the parameter set (0: chosen with η on a validation split)"},
		&cli.StringFlag{Name: "constraint", Usage: "parameter set: l2 or none (auc); frobenius-psd, nuclear-psd, psd (metric)"},
		&cli.Float64Flag{Name: "lambda", Usage: "L2 regularization (λ/2)‖w‖²: the strong convexity α = λ"},
		&cli.Float64Flag{Name: "eta", Usage: "base step size η (0: chosen on a validation split over 10^-3..10^2)"},
		&cli.Float64Flag{Name: "passes", Usage: "passes over the data", DefaultText: "the algorithm's"},
		&cli.IntFlag{Name: "steps", Usage: "iterations T (overrides --passes)"},
		&cli.IntFlag{Name: "runs", Value: 1, Usage: "repetitions"},
		&cli.IntFlag{Name: "train-size", Usage: "subsample each training split to n records (0: all)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed (splits, sampling)"},
		&cli.StringFlag{Name: "scale", Usage: "feature scaling: bounds (the --feature-bounds schema, per record), private (feature ranges estimated under DP from --range-share of the budget), none (raw values, clipped), or minmax/standard (fitted on the training split: a private run is then NOT private end to end). Default: bounds with a schema, else private for private algorithms, else minmax"},
		featureBoundsFlag(),
		&cli.StringFlag{Name: "bounds-norm", Usage: "with --scale bounds or private: clip (records mapped to the box are clipped to ‖x‖ ≤ R; the default, private or not, as at a federated site) or divide (multiplied by R/M, M the box's largest norm, so ‖x‖ ≤ R by construction and the map stays linear; the default only for algorithms that centre privately, such as dp-lda)"},
		&cli.StringFlag{Name: "refine-bounds", Value: "off", Usage: "with --feature-bounds and a private algorithm: narrow the numeric features' public ranges to ranges estimated under DP (from --range-share of the budget; each clamped into its public range, which is kept where none is found) — on, off, or auto: when n/4 ≥ τ + 2σ of that release. Read off the populous bins only: it helps where public bounds are loose (UCI spam: 0.83 → 0.97 AUC at ε = 1) and can clip informative tails (ijcnn1 at ε = 0.1: −0.05); see docs/results/extdata.md"},
		&cli.Float64Flag{Name: "range-share", DefaultText: "0.1", Usage: "--scale private, a schema's unknown features or --refine-bounds: share of the budget spent on the DP feature ranges: of μ² when the algorithm is Gaussian-DP (dp-ssp, dp-ssp-mean, dp-gd, dp-gd-grad; exact composition), else of ε and δ (basic composition); the algorithm runs at the rest"},
		&cli.StringFlag{Name: "protocol", Value: "validation", Usage: "validation (honest: select on a split of the training data) or paper ([Y21a]'s code: selects on test folds)"},
		&cli.Float64Flag{Name: "epsilon", Usage: "privacy budget ε of a private algorithm (record-level (ε, δ)-DP)"},
		&cli.Float64Flag{Name: "delta", Usage: "δ of a private algorithm (0 given: pure ε-DP where the paper has a Laplace variant)", DefaultText: "1/(10·n_train)"},
		&cli.Uint64Flag{Name: "noise-seed", Usage: "draw privacy noise from a seeded source: reproducible but NOT private (reported private: false)"},
		&cli.Float64Flag{Name: "noise-scale", Usage: "what-if only: multiply every σ by this factor (the run is then reported NOT private)"},
		&cli.BoolFlag{Name: "tune", Usage: "private selection among candidate mechanisms (Papernot & Steinke 2022, geometric repetitions): each run trains a random candidate on 80% of the training split and scores it by a noisy AUC count on the other 20%; the whole selection is (ε, δ)-DP as printed"},
		&cli.StringSliceFlag{Name: "tune-candidates", Usage: "--tune candidates (default dp-lda,dp-ssp-mean,dp-gd; dp-ssp on request; exactly Gaussian-DP mechanisms only)"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		calibrationFlag(),
		noProgressFlag(),
		outModelFlag(trainModelNote),
		negativeClassesFlag(),
		signKeyFlag("the model file of --out-model"),
	}
	return withUsageErrors(&cli.Command{
		Name:  "train",
		Usage: "train and evaluate one algorithm on one machine",
		Description: `Examples:
   pairfed train --data datasets/diabetes --algo sgd-prev --runs 5
   pairfed train --data datasets/messidor_features.arff --task metric --algo pgd --loss logistic
   pairfed train --data datasets/diabetes --protocol paper --algo sgd-prev`,
		Flags:  append(flags, dataFlags()...),
		Action: runTrain,
	})
}

func runTrain(c *cli.Context) error {
	opt := dataOptions(c)
	if c.String("protocol") == "paper" {
		if c.IsSet("out-model") {
			return usageError{fmt.Errorf("train: --out-model needs --protocol validation (the paper protocol selects on test folds: its models are not for release)")}
		}
		return runPaper(c, opt)
	}
	if p := c.String("protocol"); p != "validation" {
		return usageError{fmt.Errorf("unknown --protocol %q (validation or paper)", p)}
	}
	if err := checkModelOutput(c); err != nil {
		return err
	}
	neg, err := parseNegativeClasses(c.String("negative-classes"))
	if err != nil {
		return usageError{fmt.Errorf("train: %w", err)}
	}
	if c.IsSet("negative-classes") && neg == nil {
		// Probe 5 (issue 28): --negative-classes "" (an unset variable)
		// declared nothing, and the model was written without a label set.
		return usageError{fmt.Errorf("train: --negative-classes %q lists no label (an empty value: an unset variable?): give the negative labels, e.g. --negative-classes no, or drop the flag", c.String("negative-classes"))}
	}
	algo := c.String("algo")
	if algo == "" && !c.IsSet("epsilon") && !c.Bool("tune") {
		algo = "sgd-prev" // the non-private default
	}
	spec := experiment.Spec{
		Task: pairwise.Task(c.String("task")), Algo: algo, Loss: c.String("loss"),
		Lambda: c.Float64("lambda"), Constraint: c.String("constraint"), Eta: c.Float64("eta"),
		ParamRadius: c.Float64("param-radius"), FeatureRadius: featureRadius(c, c.String("algo")), Scale: c.String("scale"),
		Passes: c.Float64("passes"), Steps: c.Int("steps"), Runs: c.Int("runs"), Folds: c.Int("folds"),
		TestFraction: c.Float64("test-fraction"), Seed: c.Uint64("seed"), TrainSize: c.Int("train-size"),
		Epsilon: c.Float64("epsilon"), Delta: c.Float64("delta"), DeltaSet: c.IsSet("delta"),
		NoiseSeed: c.Uint64("noise-seed"), Seeded: c.IsSet("noise-seed"), NoiseScale: c.Float64("noise-scale"),
		Calibration: pairwise.Calibration(c.String("calibration")),
		RangeShare:  c.Float64("range-share"), BoundsNorm: c.String("bounds-norm"),
		Tune: c.Bool("tune"), TuneCandidates: c.StringSlice("tune-candidates"),
		// The tables' records are read by Run only: its last evaluation
		// splits and scales them in place (one copy fewer). What is
		// read after Run is metadata (N, D, names, notes).
		Consume: true,
	}
	if err := checkRadius(c); err != nil {
		return err
	}
	if c.IsSet("range-share") && spec.RangeShare == 0 {
		return usageError{fmt.Errorf("train: --range-share 0 would spend nothing on the DP feature ranges; give a share in (0, 1), e.g. 0.1 (the default), or leave the flag out")}
	}
	if c.IsSet("tune-candidates") && !spec.Tune {
		return usageError{fmt.Errorf("train: --tune-candidates %s names the candidates of --tune's private selection, which is off; add --tune (or drop --tune-candidates)", strings.Join(spec.TuneCandidates, ","))}
	}
	if spec.Tune && algo != "" {
		return usageError{fmt.Errorf("train: --tune selects the algorithm itself: drop --algo %s (or name candidates with --tune-candidates)", algo)}
	}
	schema, schemaNotes, err := loadSchema(c, &opt)
	if err != nil {
		return err
	}
	spec.Bounds = schema
	spec.RefineBounds = c.String("refine-bounds")
	if c.Int("runs") < 1 {
		return usageError{fmt.Errorf("train: --runs %d must be ≥ 1", c.Int("runs"))}
	}
	var rec *dpalgo.Recommendation
	var train, test *data.Table
	if spec.Algo == "" && !spec.Tune {
		// --epsilon without --algo: the recommended private algorithm,
		// from the public shape of the job only (n after the split, d).
		if train, test, err = loadTrainTestSchema(c, opt, schema); err != nil {
			return err
		}
		loss := ""
		if c.IsSet("loss") {
			loss = spec.Loss
		}
		r, err := experiment.Recommend(spec, train.N, train.D, test != nil, loss)
		if err != nil {
			return usageError{err}
		}
		rec, spec.Algo, spec.Loss = &r, r.Algo, r.Loss
	}
	if !c.IsSet("radius") {
		// The default R depends on whether the algorithm is private, which
		// the default rule or --tune (private candidates only) decided.
		spec.FeatureRadius = experiment.DefaultFeatureRadius(spec.Algo)
		if spec.Tune {
			spec.FeatureRadius = 1
		}
	}
	if err := spec.Validate(); err != nil {
		return usageError{err}
	}
	if a, err := pairwise.Lookup(spec.Algo); c.IsSet("refine-bounds") && spec.RefineBounds == "on" && (spec.Tune || err != nil || !a.Private) {
		return usageError{fmt.Errorf("train: --refine-bounds on refines the schema's ranges for a private algorithm, and --algo %s is not one (a non-private run reads the records anyway); drop the flag", spec.Algo)}
	}
	if train == nil {
		if train, test, err = loadTrainTestSchema(c, opt, schema); err != nil {
			return err
		}
	}
	if err := checkTrainClasses(train, "--data", neg); err != nil {
		return err
	}
	if err := checkTrainClasses(test, "--test", neg); err != nil {
		return err
	}
	train.Notes = append(schemaNotes, train.Notes...)
	tightenGC(tableBytes(train) + tableBytes(test)) // the records are read: garbage from here on is the run's
	if err := experiment.CheckDelta(spec, experiment.TrainRecords(spec, train.N, test != nil)); err != nil {
		return usageError{err}
	}
	if err := checkMetricSize(c.String("task"), opt, train.D); err != nil {
		return err
	}
	if a, err := pairwise.Lookup(spec.Algo); err == nil {
		if w := trainCostWarning(spec, a.Private, train, test); w != "" {
			fmt.Fprintln(c.App.ErrWriter, "pairfed: warning:", w)
		}
	}
	total := spec.Runs
	if test == nil && spec.Folds > 1 {
		total *= spec.Folds
	}
	bar := startProgress(c, "train", total)
	defer bar.Finish()
	spec.OnRun = bar.OnRun()
	var fitted *experiment.FittedModel
	if c.String("out-model") != "" {
		spec.OnModel = func(fm *experiment.FittedModel) { fitted = fm } // the last one is written
	}
	rep, err := experiment.Run(c.Context, spec, train, test)
	if err != nil {
		return err
	}
	bar.Finish()
	if rep.Privacy != nil {
		// The loader's notes state exact statistics of the records
		// (class counts, density): not covered by the guarantee.
		rep.AddDiagnostics(train.Notes...)
	} else {
		rep.Notes = append(rep.Notes, train.Notes...)
	}
	if rec != nil {
		rep.Recommended = rec
		rep.Notes = append([]string{fmt.Sprintf("algorithm %s (%s loss) chosen by the default rule: %s", rec.Algo, rec.Loss, rec.Reason)}, rep.Notes...)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(c.App.ErrWriter, "pairfed: warning:", w)
	}
	if p := c.String("out-model"); p != "" {
		if err := writeTrainModel(c, p, opt, train, spec, rep, fitted, total); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	printReport(c.App.Writer, rep)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printReport(w io.Writer, r *experiment.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	metric, s := "AUC", r.AUC
	if r.KNN3 != nil {
		metric, s = "KNN-3 acc", r.KNN3
	}
	fmt.Fprintf(tw, "algorithm\tloss\tn_train\tn_test\td\truns\t%s\tobjective\ts/run\tpair-steps/s\tprivate\n", metric)
	fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.4f ± %.4f\t%.4g\t%.3g\t%.3g\t%v\n", r.Algorithm, r.Loss, r.NTrain, r.NTest, r.D,
		len(s.Values), s.Mean, s.Std, r.Objective, r.SecondsPerRun, r.PairStepsPerSecond, r.Private)
	tw.Flush()
	for i, t := range r.Tune {
		fmt.Fprintf(w, "tune run %d: chose %s among %v (K ~ Geometric, E[K] = %.3g); per run μ = %.4g (candidate at ε = %.4g, δ = %.3g on %d records; score σ = %.4g on %d records)\n",
			i+1, t.Chosen, t.Candidates, t.ExpectedRuns, t.PerRunMu, t.PerRunEpsilon, t.PerRunDelta, t.NFit, t.ScoreSigma, t.NValidation)
	}
	eta := fmtList(r.Eta)
	if len(r.Eta) == 0 {
		eta = "— (a step schedule or a one-shot release: see the privacy notes)"
	}
	fmt.Fprintf(w, "η: %s   B: %s   R: %g   λ: %g   (%s protocol)\n", eta, fmtList(r.ParamRadius), r.FeatureRadius, r.Lambda, r.Protocol)
	fmt.Fprintf(w, "time: wall %.3g s (selection, training, evaluation), algorithm %.3g s (the reported fits)\n", r.WallSeconds, r.TrainSeconds)
	if p := r.Privacy; p != nil {
		fmt.Fprintf(w, "privacy: %s with ε = %g, δ = %.3g; %s noise (%s); G = %g, L = %g, α = %g, R = %g; %d releases, σ %s\n",
			p.Model, p.Epsilon, p.Delta, p.Mechanism, p.Noise, p.G, p.L, p.Alpha, p.R, p.Releases, fmtSigmas(p.Sigmas))
		fmt.Fprintf(w, "         %s; %s\n", p.Formula, p.Accountant)
		if p.Neighbours != "" {
			fmt.Fprintf(w, "         neighbouring relation: %s\n", p.Neighbours)
		}
		paper := "the paper's σ " + fmtSigmas(p.PaperSigmas)
		if len(p.PaperSigmas) == 0 {
			paper = "no printed σ (pairfed's own mechanism)"
		}
		fmt.Fprintf(w, "         calibration %s: certified (ε, δ) = (%.6g, %.3g) by the exact accountant (requested (%g, %.3g)); %s\n",
			p.Calibration, p.CertifiedEpsilon, p.CertifiedDelta, p.Epsilon, p.Delta, paper)
		if pre := p.Preprocessing; pre != nil && pre.Ranges != nil {
			if pre.Composition == "gdp" {
				fmt.Fprintf(w, "         + feature ranges: gaussian noise, μ = %.4g-GDP; whole run μ = %.4g (exact Gaussian-DP composition), certified (%.4g, %.3g)\n", pre.Ranges.Mu, pre.TotalMu, pre.TotalEpsilon, pre.TotalDelta)
			} else {
				fmt.Fprintf(w, "         + feature ranges: %s noise, (ε, δ) = (%.4g, %.3g); whole run (%.4g, %.3g) by basic composition\n", pre.Ranges.Mechanism, pre.Ranges.Epsilon, pre.Ranges.Delta, pre.TotalEpsilon, pre.TotalDelta)
			}
		}
		if a := r.Privacy.Accounting; a != nil {
			var parts []string
			for _, m := range a.Methods {
				if m.OK {
					parts = append(parts, fmt.Sprintf("%s %.4g", m.Method, m.Epsilon))
				}
			}
			fmt.Fprintf(w, "         accountants at δ = %.3g, ε by method: %s\n", a.Delta, strings.Join(parts, ", "))
		}
		if !p.Private {
			fmt.Fprintln(w, "WARNING: the noise came from a seeded source: this run is reproducible but NOT private")
		}
		for _, n := range p.Notes {
			fmt.Fprintln(w, "privacy note:", n)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	printDiagnostics(w, r.Diagnostics)
}

// printDiagnostics prints a private run's diagnostics section, apart from
// its privacy statement and labelled as not covered.
func printDiagnostics(w io.Writer, d *experiment.Diagnostics) {
	if d == nil {
		return
	}
	fmt.Fprintln(w, "---", d.Note)
	for i, k := range d.TuneRuns {
		fmt.Fprintf(w, "  tune run %d: K = %d runs drawn\n", i+1, k)
	}
	for _, n := range d.Data {
		fmt.Fprintln(w, "  data:", n)
	}
}

func fmtSigmas(v []float64) string {
	if len(v) <= 4 {
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("[%.4g %.4g … %.4g] (%d values)", v[0], v[1], v[len(v)-1], len(v))
}

func fmtList(v []float64) string {
	seen := map[float64]int{}
	var order []float64
	for _, x := range v {
		if seen[x] == 0 {
			order = append(order, x)
		}
		seen[x]++
	}
	parts := make([]string, len(order))
	for i, x := range order {
		parts[i] = fmt.Sprintf("%g", x)
		if len(order) > 1 {
			parts[i] += fmt.Sprintf("×%d", seen[x])
		}
	}
	return strings.Join(parts, ", ")
}

func runPaper(c *cli.Context, opt data.Options) error {
	if err := refuseFlags(c, "paper", paperIgnores); err != nil {
		return err
	}
	if opt.Binarize == "" && opt.PositiveClasses == "" {
		opt.Binarize = "halves"
	}
	tab, err := data.Load(c.String("data"), opt)
	if err != nil {
		return err
	}
	if err := checkRunMemory(c, opt, tab); err != nil {
		return err
	}
	passes := int(c.Float64("passes"))
	res, err := experiment.Paper(c.Context, experiment.PaperSpec{Algo: cmp.Or(c.String("algo"), "sgd-prev"), Loss: c.String("loss"), Passes: passes, Seed: c.Uint64("seed")}, tab)
	if err != nil {
		return err
	}
	rep := experiment.PaperReport(res, tab.Source)
	rep.Notes = append(rep.Notes, tab.Notes...)
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	printReport(c.App.Writer, rep)
	return nil
}
