package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/sweep"
	"github.com/urfave/cli/v2"
)

func experimentCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "data", Required: true, Usage: "training file (LIBSVM, CSV, dense or ARFF)"},
		&cli.StringFlag{Name: "test", Usage: "test file (default: a stratified split of --data in every run)"},
		testFractionFlag("share of --data held out for testing when --test is absent"),
		&cli.StringFlag{Name: "task", Value: "auc", Usage: "auc (scored by AUC) or metric (metric learning, scored by KNN-3 accuracy)"},
		&cli.StringFlag{Name: "algos", Required: true, Usage: "comma-separated algorithms (pairfed algos lists them; the federated ones, " + fedAlgoList() + ", with --sites)"},
		&cli.StringFlag{Name: "epsilons", Usage: "comma-separated privacy budgets ε of the private algorithms, e.g. 0.2,0.5,1,2"},
		&cli.StringFlag{Name: "sizes", Usage: "comma-separated training-set sizes n: adds the AUC-vs-n grid (each run's training split subsampled to n)"},
		&cli.Float64Flag{Name: "size-epsilon", Usage: "ε of the private algorithms in the size grid", DefaultText: "the largest of --epsilons"},
		&cli.IntFlag{Name: "sites", Usage: "number of sites of the federated algorithms (fed-*), simulated in this process"},
		&cli.StringFlag{Name: "partition", Value: "iid", Usage: "federated partition: iid, label-skew:β or single-class (each site holds one class; the algorithms that learn from such sites: " + strings.Join(fedalgo.SingleClassNames(), ", ") + ")"},
		&cli.StringFlag{Name: "local-algo", Usage: "fed-oneshot: the private single-site algorithm every site runs"},
		&cli.StringFlag{Name: "transport", Value: "nats", Usage: "federated transport: nats (embedded server) or mem"},
		&cli.IntFlag{Name: "runs", Value: 3, Usage: "repeats per cell (algorithm × ε × n)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the splits and sampling; given explicitly, it also seeds the privacy noise: the sweep is then reproducible and its private rows are reported NOT private"},
		&cli.StringFlag{Name: "loss", Usage: "loss of every algorithm (default per algorithm: hinge for non-private AUC, logistic for private ones and metric learning)"},
		&cli.Float64Flag{Name: "lambda", Usage: "(λ/2)‖w‖² for every algorithm", DefaultText: "1e-3 (auc) / 1e-2 (metric) for algorithms that need strong convexity, else 0"},
		&cli.Float64Flag{Name: "delta", Usage: "δ of the private algorithms", DefaultText: "1/(10·n)"},
		&cli.Float64Flag{Name: "eta", Usage: "fix η of the non-private single-machine algorithms", DefaultText: "selected by 3-fold CV on each training split, with --param-radius"},
		&cli.Float64Flag{Name: "param-radius", Usage: "fix the parameter radius B of the non-private single-machine algorithms", DefaultText: "selected with η"},
		&cli.Float64Flag{Name: "radius", Usage: "per-record L2 clipping radius R", DefaultText: "1 for private and federated algorithms; no clipping for the non-private single-machine ones, where it would only cost accuracy"},
		&cli.StringFlag{Name: "scale", Usage: "feature scaling: bounds (--feature-bounds), private (DP ranges, single-site private algorithms), none, minmax or standard (default: bounds with a schema, else minmax for non-private algorithms, private for single-site private ones and none for federated private ones)"},
		featureBoundsFlag(),
		&cli.StringFlag{Name: "out", Required: true, Usage: "output directory: results.csv, results.md and the PNG plots"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object (the rows and the files written) instead of the Markdown table"},
		calibrationFlag(),
		noProgressFlag(),
	}
	return &cli.Command{
		Name:  "experiment",
		Usage: "experiment grids with reports",
		Subcommands: []*cli.Command{{
			Name:  "sweep",
			Usage: "run algorithms × ε (× n) with repeats; write a CSV, a Markdown table and PNG plots",
			Description: `Examples:
   pairfed experiment sweep --data datasets/diabetes --algos sgd-prev,dpegd,dp-local-sgd --epsilons 0.2,0.5,1,2 --runs 5 --out sweep-out
   pairfed experiment sweep --data datasets/diabetes --algos fed-avg,fed-dp-local-sgd,fed-dpegd --sites 4 --epsilons 0.5,1,2 --out fed-out
   pairfed experiment sweep --data datasets/diabetes --algos pgd,dpegd --epsilons 1 --sizes 64,128,256 --seed 7 --out n-out

Non-private algorithms run once per repeat (ε = inf) and are drawn as
horizontal reference lines. With an explicit --seed the privacy noise is
seeded: the outputs are reproducible and the private rows say private = false.`,
			Flags:  append(flags, dataFlags()...),
			Action: runSweep,
		}},
	}
}

func runSweep(c *cli.Context) error {
	cfg := sweep.Config{
		Task: pairwise.Task(c.String("task")), SizeEpsilon: c.Float64("size-epsilon"), Runs: c.Int("runs"),
		Seed: c.Uint64("seed"), Seeded: c.IsSet("seed"), Loss: c.String("loss"),
		Lambda: c.Float64("lambda"), LambdaSet: c.IsSet("lambda"), Delta: c.Float64("delta"), DeltaSet: c.IsSet("delta"),
		Eta: c.Float64("eta"), ParamRadius: c.Float64("param-radius"), FeatureRadius: c.Float64("radius"), FeatureRadiusSet: c.IsSet("radius"), Scale: c.String("scale"), TestFraction: c.Float64("test-fraction"),
		Sites: c.Int("sites"), Partition: c.String("partition"), Transport: c.String("transport"), LocalAlgo: c.String("local-algo"),
		Calibration: pairwise.Calibration(c.String("calibration")),
	}
	var err error
	if cfg.Algos, err = parseList(c.String("algos"), func(s string) (string, error) { return s, nil }); err != nil {
		return usageError{fmt.Errorf("--algos: %w", err)}
	}
	if cfg.Epsilons, err = parseList(c.String("epsilons"), parseEpsilon); err != nil {
		return usageError{fmt.Errorf("--epsilons: %w", err)}
	}
	if cfg.Sizes, err = parseList(c.String("sizes"), strconv.Atoi); err != nil {
		return usageError{fmt.Errorf("--sizes: %w", err)}
	}
	if cfg.Runs < 1 {
		return usageError{fmt.Errorf("--runs %d must be ≥ 1", cfg.Runs)}
	}
	if err := checkOutputDir("--out", c.String("out")); err != nil {
		return err
	}
	opt := dataOptions(c)
	schema, schemaNotes, err := loadSchema(c, &opt)
	if err != nil {
		return err
	}
	train, test, err := loadTrainTestSchema(c, opt, schema)
	if err != nil {
		return err
	}
	train.Notes = append(schemaNotes, train.Notes...)
	cfg.Train, cfg.Test, cfg.Bounds = train, test, schema
	var res0Notes []string
	total, err := sweep.Validate(cfg)
	if err != nil {
		return usageError{err}
	}
	// Probe 6 (issue 28): simulate warns of an algorithm that cannot learn
	// from single-class sites (probe 4); the sweep reported their AUC of
	// 0.5 without a word.
	if cfg.Partition == "single-class" {
		for _, a := range cfg.Algos {
			if slices.Contains(fedalgo.Names(), a) && !fedalgo.LearnsFromSingleClassSites(a) {
				w := fmt.Sprintf("--partition single-class with %s: it pairs or fits within each site and cannot learn from sites that hold one class (expect an AUC near 0.5); algorithms for sites of one class: %s",
					a, strings.Join(fedalgo.SingleClassNames(), ", "))
				fmt.Fprintf(c.App.ErrWriter, "pairfed: warning: %s\n", w)
				res0Notes = append(res0Notes, w)
			}
		}
	}
	bar := startProgress(c, "sweep", total)
	defer bar.Finish()
	cfg.OnRun = bar.OnRun()
	res, err := sweep.Run(c.Context, cfg)
	if err != nil {
		return err
	}
	res.Notes = append(append(res.Notes, res0Notes...), train.Notes...)
	files, err := res.WriteDir(c.String("out"))
	if err != nil {
		return err
	}
	bar.Finish()
	if c.Bool("json") {
		return writeJSON(c.App.Writer, sweepJSON(res, files))
	}
	if err := res.WriteMarkdown(c.App.Writer); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "\nwrote %s\n", strings.Join(files, ", "))
	return nil
}

// parseList splits a comma-separated list (empty: nil) and parses each item.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []T
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("empty item in %q", s)
		}
		v, err := parse(f)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseEpsilon(s string) (float64, error) {
	e, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if err := dp.CheckEpsilon("ε", e); err != nil {
		return 0, err
	}
	return e, nil
}

// sweepRowJSON is a row of `experiment sweep --json`: epsilon and delta
// are null for non-private algorithms.
type sweepRowJSON struct {
	Sweep     string    `json:"sweep"`
	Algorithm string    `json:"algorithm"`
	Sites     int       `json:"sites"`
	Task      string    `json:"task"`
	Metric    string    `json:"metric"`
	Loss      string    `json:"loss"`
	Lambda    float64   `json:"lambda"`
	Epsilon   *float64  `json:"epsilon"`
	Delta     *float64  `json:"delta"`
	N         int       `json:"n"`
	Count     int       `json:"count"`
	Mean      float64   `json:"mean"`
	Std       float64   `json:"std"`
	Values    []float64 `json:"values"`
	Private   bool      `json:"private"`
}

func sweepJSON(r *sweep.Result, files []string) any {
	rows := make([]sweepRowJSON, len(r.Rows))
	for i, row := range r.Rows {
		rows[i] = sweepRowJSON{Sweep: row.Sweep, Algorithm: row.Algorithm, Sites: row.Sites, Task: row.Task, Metric: row.Metric,
			Loss: row.Loss, Lambda: row.Lambda, N: row.N, Count: len(row.Values), Mean: row.Mean, Std: row.Std,
			Values: row.Values, Private: row.Private}
		if !row.NonPrivate() {
			e, d := row.Epsilon, row.Delta
			rows[i].Epsilon, rows[i].Delta = &e, &d
		}
	}
	return map[string]any{"dataset": r.Dataset, "task": r.Task, "metric": r.Metric, "runs": r.Runs, "seed": r.Seed,
		"seeded": r.Seeded, "rows": rows, "files": files, "notes": r.Notes}
}
