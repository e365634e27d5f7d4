// Package sweep runs experiment grids — algorithms × privacy budgets ε
// (and training-set sizes n) with repeats — over the single-machine
// (experiment.Run) and federated (simulate.Run) paths, and writes the
// results as a CSV file, a Markdown table and PNG plots. It is what
// `pairfed experiment sweep` calls.
//
// A sweep has up to two grids. The ε grid runs every private algorithm at
// every ε on all training records; a non-private algorithm does not depend
// on ε, so it runs once (its rows carry ε = inf) and is drawn as a
// horizontal reference line. The size grid, when sizes are given, runs
// every algorithm at each training-set size n (each run's training split
// subsampled to n records) at one ε (the largest, unless given).
//
// Results are deterministic for a fixed seed when the noise is seeded too
// (Config.Seeded); such rows are labelled private = false, since a seeded
// noise source is not a differential-privacy mechanism.
package sweep

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/simulate"
)

// Grid names: the value of Row.Sweep.
const (
	GridEpsilon = "epsilon"
	GridSize    = "size"
)

// Config describes a sweep. Zero values mean defaults.
type Config struct {
	// Train is the data; Test, when set, is the test table of every run
	// (otherwise each run draws a stratified TestFraction split of Train).
	Train, Test *data.Table
	// Task is auc (default) or metric (metric learning, scored by KNN-3
	// accuracy; single-machine algorithms only).
	Task pairwise.Task
	// Algos are registered single-machine algorithms (`pairfed algos`) or
	// federated ones (fedalgo.Names(), which need Sites > 0).
	Algos []string
	// Epsilons are the privacy budgets of the ε grid (needed when any
	// algorithm is private).
	Epsilons []float64
	// Sizes, when given, add the size grid: training-set sizes n.
	Sizes []int
	// SizeEpsilon is the ε of the size grid (default: the largest of
	// Epsilons).
	SizeEpsilon float64
	// Runs is the number of repeats per cell (default 1); Seed fixes the
	// splits and the sampling of non-private algorithms.
	Runs int
	Seed uint64
	// Seeded draws the privacy noise (and private sampling) from sources
	// seeded by Seed: reproducible, and reported private = false.
	Seeded bool
	// Calibration of the private algorithms' noise: exact (default) or
	// paper.
	Calibration pairwise.Calibration
	// Loss is the loss of every algorithm; "" picks per algorithm: hinge
	// (else square) for non-private AUC algorithms, logistic for private
	// ones and for metric learning; federated jobs take the coordinator's
	// default.
	Loss string
	// Lambda is the (λ/2)‖w‖² regularization of every algorithm when
	// LambdaSet; otherwise algorithms that need strong convexity get
	// 1e-3 (AUC) or 1e-2 (metric), as in [X21] §5, and the others 0.
	Lambda    float64
	LambdaSet bool
	// Delta is δ of the private algorithms when DeltaSet (default 1/(10·n), dp.DefaultDelta:
	// n_train single-machine, the largest site's n federated).
	Delta    float64
	DeltaSet bool
	// Eta and ParamRadius, when > 0, fix η and the parameter radius B of
	// the non-private single-machine algorithms (otherwise selected by
	// cross-validation on each training split); private algorithms take
	// η from their theorems and B = 1 (experiment.Run's defaults).
	Eta, ParamRadius float64
	// FeatureRadius is R, the per-record clipping radius (default 1).
	// Unless FeatureRadiusSet, the non-private single-machine algorithms
	// are not clipped (experiment.DefaultFeatureRadius): clipping serves
	// only a privacy proof and otherwise costs accuracy.
	FeatureRadius    float64
	FeatureRadiusSet bool
	// Scale is the feature scaling; "" takes each path's default (minmax
	// for non-private algorithms; for private ones DP feature ranges in
	// single-site runs and none in federated ones, since the guarantee
	// does not cover scaling fitted on the private records).
	Scale string
	// Bounds is a public feature-bounds schema for every path (the
	// default scaling when set; see experiment.Spec.Bounds).
	Bounds *data.Schema
	// TestFraction is the test share when Test is nil (default 0.2).
	TestFraction float64
	// Sites > 0 enables the federated algorithms, run by simulate.Run over
	// Sites sites with the given Partition (default iid) and Transport
	// (default nats); LocalAlgo is fed-oneshot's single-site algorithm.
	Sites     int
	Partition string
	Transport string
	LocalAlgo string
	// OnRun, when set, is called after every run of the whole sweep with
	// the number done and the total (progress reporting only).
	OnRun func(done, total int)
}

// Row is one cell of a grid: an algorithm at one ε and one n, summarized
// over its runs.
type Row struct {
	Sweep     string  // GridEpsilon or GridSize
	Algorithm string  // "fed-oneshot/dpegd" for fed-oneshot with its local algorithm
	Sites     int     // 0: single machine
	Task      string  // auc or metric
	Metric    string  // auc or knn3
	Loss      string  // the loss used
	Lambda    float64 // the regularization used
	// Epsilon is the privacy budget; +Inf for a non-private algorithm.
	Epsilon float64
	// Delta is the δ the private runs used (0 for non-private rows).
	Delta float64
	// N is the number of training records per run (all of each run's
	// training split in the ε grid, or the subsample size).
	N int
	// Values are the per-run scores; Mean and Std (population) summarize
	// them.
	Values    []float64
	Mean, Std float64
	// Private is the run's end-to-end label: false for non-private
	// algorithms, seeded noise and data-fitted scaling.
	Private bool
	// NotPrivateBecause says why a private algorithm's row is not private
	// ("" when Private or for non-private algorithms).
	NotPrivateBecause string
}

// NonPrivate reports whether the row is a non-private algorithm (ε = ∞).
func (r Row) NonPrivate() bool { return math.IsInf(r.Epsilon, 1) }

// Result is the outcome of a sweep.
type Result struct {
	Dataset     string // base name of the training file
	TestSet     string // "stratified 20% split of each run" or the test file's base name
	Task        string
	Metric      string // auc or knn3
	D           int
	Runs        int
	Seed        uint64
	Seeded      bool
	Sites       int
	Partition   string
	Epsilons    []float64
	Sizes       []int
	SizeEpsilon float64
	Rows        []Row
	Notes       []string
}

// cell is one unit of work: an algorithm at one ε and size.
type cell struct {
	grid  string
	algo  string
	fed   bool
	eps   float64 // +Inf for non-private
	n     int     // 0: all training records
	label string
	exp   experiment.Spec
	sim   simulate.Spec
}

func (c *cell) runs() int {
	if c.fed {
		return c.sim.Runs
	}
	return c.exp.Runs
}

// isFed reports whether name is a federated algorithm.
func isFed(name string) bool { return slices.Contains(fedalgo.Names(), name) }

// defaults fills the zero values of cfg and checks it.
func (cfg *Config) defaults() error {
	if cfg.Train == nil {
		return fmt.Errorf("sweep: no training data")
	}
	if cfg.Task == "" {
		cfg.Task = pairwise.TaskAUC
	}
	if cfg.Task != pairwise.TaskAUC && cfg.Task != pairwise.TaskMetric {
		return fmt.Errorf("sweep: unknown task %q (auc or metric)", cfg.Task)
	}
	if len(cfg.Algos) == 0 {
		return fmt.Errorf("sweep: no algorithms: give --algos a,b,c")
	}
	seen := map[string]bool{}
	for _, a := range cfg.Algos {
		if seen[a] {
			return fmt.Errorf("sweep: algorithm %s listed twice", a)
		}
		seen[a] = true
	}
	for _, e := range cfg.Epsilons {
		if err := dp.CheckEpsilon("--epsilons: ε", e); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(cfg.Epsilons)))) != len(cfg.Epsilons) {
		return fmt.Errorf("sweep: an ε is listed twice in %v", cfg.Epsilons)
	}
	for _, n := range cfg.Sizes {
		if n < 2 {
			return fmt.Errorf("sweep: size %d must be ≥ 2", n)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(cfg.Sizes)))) != len(cfg.Sizes) {
		return fmt.Errorf("sweep: a size is listed twice in %v", cfg.Sizes)
	}
	if err := dp.CheckEpsilonNonNegative("--size-epsilon", cfg.SizeEpsilon); err != nil {
		return fmt.Errorf("sweep: %w; 0 means the largest of --epsilons", err)
	}
	if cfg.SizeEpsilon == 0 && len(cfg.Epsilons) > 0 {
		cfg.SizeEpsilon = slices.Max(cfg.Epsilons)
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if cfg.FeatureRadius == 0 {
		cfg.FeatureRadius = 1
	}
	if cfg.TestFraction == 0 {
		cfg.TestFraction = 0.2
	}
	if cfg.Sites < 0 {
		return fmt.Errorf("sweep: sites %d must be ≥ 0", cfg.Sites)
	}
	if cfg.Partition == "" {
		cfg.Partition = "iid"
	}
	if cfg.Transport == "" {
		cfg.Transport = "nats"
	}
	return nil
}

// plan validates cfg and lists the cells in run order: the ε grid (per
// algorithm, every ε; once for a non-private algorithm), then the size grid.
func plan(cfg Config) ([]*cell, error) {
	nTrain, err := trainRecords(cfg)
	if err != nil {
		return nil, err
	}
	var cells []*cell
	add := func(grid, algo string, eps float64, n int) error {
		c, err := newCell(cfg, grid, algo, eps, n)
		if err != nil {
			return err
		}
		if n > nTrain {
			return fmt.Errorf("sweep: size %d exceeds the %d training records of each run", n, nTrain)
		}
		cells = append(cells, c)
		return nil
	}
	for _, algo := range cfg.Algos {
		private, err := isPrivate(algo)
		if err != nil {
			return nil, err
		}
		if !private {
			if err := add(GridEpsilon, algo, math.Inf(1), 0); err != nil {
				return nil, err
			}
			continue
		}
		if len(cfg.Epsilons) == 0 {
			return nil, fmt.Errorf("sweep: %s is private: give --epsilons", algo)
		}
		for _, e := range cfg.Epsilons {
			if err := add(GridEpsilon, algo, e, 0); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range cfg.Sizes {
		for _, algo := range cfg.Algos {
			private, _ := isPrivate(algo)
			eps := math.Inf(1)
			if private {
				eps = cfg.SizeEpsilon
			}
			if err := add(GridSize, algo, eps, n); err != nil {
				return nil, err
			}
		}
	}
	return cells, nil
}

// trainRecords is the number of training records of each run.
func trainRecords(cfg Config) (int, error) {
	if cfg.Test != nil {
		return cfg.Train.N, nil
	}
	// Stratified split sizes depend only on the class counts.
	tr, _, err := data.StratifiedSplit(cfg.Train.Y, cfg.TestFraction, rand.New(rand.NewPCG(0, 0)))
	return len(tr), err
}

func isPrivate(algo string) (bool, error) {
	if isFed(algo) {
		return fedalgo.Private(algo), nil
	}
	a, err := pairwise.Lookup(algo)
	if err != nil {
		return false, err
	}
	return a.Private, nil
}

// newCell builds and validates the spec of one cell.
func newCell(cfg Config, grid, algo string, eps float64, n int) (*cell, error) {
	c := &cell{grid: grid, algo: algo, eps: eps, n: n, label: algo, fed: isFed(algo)}
	private := !math.IsInf(eps, 1)
	e := eps
	if !private {
		e = 0
	}
	if c.fed {
		if cfg.Sites == 0 {
			return nil, fmt.Errorf("sweep: %s is federated: give --sites N", algo)
		}
		job := coordinator.JobConfig{Algo: algo, Loss: cfg.Loss, Epsilon: e, FeatureRadius: cfg.FeatureRadius, Seed: cfg.Seed, Task: string(cfg.Task)}
		if private && cfg.Calibration == pairwise.CalibrationPaper {
			// The job's calibration (JobAnnounce.Calibration); refused by
			// the job's validation for an algorithm without a printed σ.
			job.Calibration = string(cfg.Calibration)
		}
		if private && cfg.DeltaSet {
			job.Delta = cfg.Delta
			if cfg.Delta == 0 {
				return nil, fmt.Errorf("sweep: %s is federated: %w; leave --delta out for the federated default 1/(10·n_max)", algo, dp.CheckDeltaPositive("--delta", cfg.Delta))
			}
		}
		lambdaOf := ""
		if fedalgo.TakesLocalAlgo(algo) {
			if cfg.LocalAlgo == "" {
				return nil, fmt.Errorf("sweep: %s needs --local-algo (a private single-site algorithm, e.g. dpegd)", algo)
			}
			job.LocalAlgo = cfg.LocalAlgo
			c.label = algo + "/" + cfg.LocalAlgo
			lambdaOf = cfg.LocalAlgo
		}
		job.Lambda = lambda(cfg, lambdaOf)
		c.sim = simulate.Spec{Sites: cfg.Sites, Partition: cfg.Partition, Job: job, Scale: cfg.Scale, Bounds: cfg.Bounds,
			TestFraction: cfg.TestFraction, Runs: cfg.Runs, Seed: cfg.Seed, NoiseSeed: cfg.Seed, Seeded: cfg.Seeded,
			Transport: cfg.Transport, TrainSize: n}
		if cfg.Train != nil {
			c.sim.DataDependent = cfg.Train.DataDependent
		}
		if n > 0 && n < 2*cfg.Sites {
			return nil, fmt.Errorf("sweep: size %d cannot give %d sites 2 records each", n, cfg.Sites)
		}
		if err := c.sim.Validate(); err != nil {
			return nil, fmt.Errorf("sweep: %s: %w", c.label, err)
		}
		return c, nil
	}
	a, err := pairwise.Lookup(algo)
	if err != nil {
		return nil, err
	}
	c.exp = experiment.Spec{Task: cfg.Task, Algo: algo, Loss: chooseLoss(a, cfg.Task, cfg.Loss), Lambda: lambda(cfg, algo),
		FeatureRadius: cfg.FeatureRadius, Scale: cfg.Scale, Bounds: cfg.Bounds, Runs: cfg.Runs, TestFraction: cfg.TestFraction,
		Seed: cfg.Seed, TrainSize: n, Epsilon: e, Calibration: cfg.Calibration}
	if !private {
		c.exp.Eta, c.exp.ParamRadius = cfg.Eta, cfg.ParamRadius
		if !cfg.FeatureRadiusSet {
			c.exp.FeatureRadius = experiment.DefaultFeatureRadius(algo)
		}
	}
	if private {
		c.exp.Delta, c.exp.DeltaSet = cfg.Delta, cfg.DeltaSet
		c.exp.NoiseSeed, c.exp.Seeded = cfg.Seed, cfg.Seeded
	}
	if err := c.exp.Validate(); err != nil {
		return nil, fmt.Errorf("sweep: %s: %w", algo, err)
	}
	return c, nil
}

// chooseLoss returns the given loss, or the first supported of the
// algorithm's preferred losses: hinge, square, logistic for non-private
// AUC algorithms (the papers' non-private experiments); logistic, square,
// hinge for private ones and for metric learning (the smooth losses their
// proofs need).
func chooseLoss(a *pairwise.Algorithm, task pairwise.Task, given string) string {
	if given != "" {
		return given
	}
	prefs := []string{"hinge", "square", "logistic"}
	if a.Private || task == pairwise.TaskMetric {
		prefs = []string{"logistic", "square", "hinge"}
	}
	for _, l := range prefs {
		if _, err := pairwise.LossByName(task, l); err == nil && a.Supports(task, l) == nil {
			return l
		}
	}
	return prefs[0]
}

// lambda is the regularization of algo (see Config.Lambda).
func lambda(cfg Config, algo string) float64 {
	if cfg.LambdaSet {
		return cfg.Lambda
	}
	if a, err := pairwise.Lookup(algo); err == nil && a.NeedsStrongConvexity {
		if cfg.Task == pairwise.TaskMetric {
			return 1e-2
		}
		return 1e-3
	}
	return 0
}

// Validate checks cfg (and every cell's spec) without running anything,
// and returns the total number of runs.
func Validate(cfg Config) (runs int, err error) {
	if err := cfg.defaults(); err != nil {
		return 0, err
	}
	cells, err := plan(cfg)
	if err != nil {
		return 0, err
	}
	for _, c := range cells {
		runs += c.runs()
	}
	return runs, nil
}

// Run executes the sweep.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	cells, err := plan(cfg)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, c := range cells {
		total += c.runs()
	}
	res := &Result{Dataset: filepath.Base(cfg.Train.Source), Task: string(cfg.Task), Metric: metricName(cfg.Task),
		D: cfg.Train.D, Runs: cfg.Runs, Seed: cfg.Seed, Seeded: cfg.Seeded, Partition: cfg.Partition,
		Epsilons: cfg.Epsilons, Sizes: cfg.Sizes, SizeEpsilon: cfg.SizeEpsilon}
	res.TestSet = fmt.Sprintf("a stratified %g%% split of each run", 100*cfg.TestFraction)
	if cfg.Test != nil {
		res.TestSet = filepath.Base(cfg.Test.Source)
	}
	done := 0
	for _, c := range cells {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sweep: interrupted after %d of %d runs: %w", done, total, err)
		}
		offset := done
		onRun := func(d, _ int) {
			if cfg.OnRun != nil {
				cfg.OnRun(offset+d, total)
			}
		}
		row := Row{Sweep: c.grid, Algorithm: c.label, Task: string(cfg.Task), Metric: res.Metric, Epsilon: c.eps, N: c.n}
		if c.fed {
			spec := c.sim
			spec.OnRun = onRun
			rep, err := simulate.Run(ctx, spec, cfg.Train, cfg.Test)
			if err != nil {
				return nil, fmt.Errorf("sweep: %s at ε = %s: %w", c.label, fmtEps(c.eps), err)
			}
			res.Sites = cfg.Sites
			score := rep.AUC
			if score == nil {
				score = rep.KNN3
			}
			row.Sites, row.Loss, row.Lambda, row.Values = rep.Sites, rep.Loss, spec.Job.Lambda, score.Values
			row.Private = rep.Private
			if len(rep.Privacy) > 0 {
				row.Delta = rep.Privacy[0].Delta
			}
			if row.N == 0 {
				row.N = rep.NTrain
			}
			if !row.NonPrivate() && !row.Private {
				row.NotPrivateBecause = notPrivateBecause(cfg.Seeded, spec.Scale)
			}
		} else {
			spec := c.exp
			spec.OnRun = onRun
			rep, err := experiment.Run(ctx, spec, cfg.Train, cfg.Test)
			if err != nil {
				return nil, fmt.Errorf("sweep: %s at ε = %s: %w", c.label, fmtEps(c.eps), err)
			}
			s := rep.AUC
			if s == nil {
				s = rep.KNN3
			}
			row.Loss, row.Lambda, row.Values, row.Private, row.N = spec.Loss, spec.Lambda, s.Values, rep.Private, rep.NTrain
			if rep.Privacy != nil {
				row.Delta = rep.Privacy.Delta
				if pre := rep.Privacy.Preprocessing; pre != nil {
					row.Delta = pre.TotalDelta // ranges + algorithm: the request
				}
			}
			if !row.NonPrivate() && !row.Private {
				row.NotPrivateBecause = notPrivateBecause(cfg.Seeded, spec.Scale)
			}
		}
		sum := experiment.Summarize(row.Values)
		row.Mean, row.Std = sum.Mean, sum.Std
		res.Rows = append(res.Rows, row)
		done += c.runs()
	}
	res.Notes = notes(cfg, res)
	return res, nil
}

// notPrivateBecause says why a private algorithm's row is not private.
func notPrivateBecause(seeded bool, scale string) string {
	switch {
	case seeded:
		return "seeded noise"
	case scale == "minmax" || scale == "standard":
		return scale + " scaling fitted on the private records"
	}
	return "see the run's privacy report"
}

func notes(cfg Config, res *Result) []string {
	var out []string
	var private, fed bool
	for _, r := range res.Rows {
		private = private || !r.NonPrivate()
		fed = fed || r.Sites > 0
	}
	if private && cfg.Seeded {
		out = append(out, "the privacy noise came from a seeded source: the sweep is reproducible, and its private algorithms are therefore NOT private (private = false)")
	}
	if private && cfg.Runs > 1 {
		out = append(out, "each private cell trains one model per run on overlapping records: each model is (ε, δ)-DP as stated, releasing all of them composes")
	}
	if fed {
		out = append(out, fmt.Sprintf("federated rows: %d sites, %s partition; ε and δ are per site and record-level, n is the training records of all sites together", cfg.Sites, cfg.Partition))
	}
	out = append(out, "non-private algorithms do not depend on ε: they run once per repeat (ε = inf) and are drawn as horizontal reference lines")
	return out
}

func metricName(t pairwise.Task) string {
	if t == pairwise.TaskMetric {
		return "knn3"
	}
	return "auc"
}

// MetricLabel is the human name of the metric ("AUC", "KNN-3 accuracy").
func (r *Result) MetricLabel() string {
	if r.Metric == "knn3" {
		return "KNN-3 accuracy"
	}
	return "AUC"
}

// rowsOf returns the rows of grid, grouped by algorithm in first-seen order.
func (r *Result) rowsOf(grid string) (algos []string, by map[string][]Row) {
	by = map[string][]Row{}
	for _, row := range r.Rows {
		if row.Sweep != grid {
			continue
		}
		if _, ok := by[row.Algorithm]; !ok {
			algos = append(algos, row.Algorithm)
		}
		by[row.Algorithm] = append(by[row.Algorithm], row)
	}
	return algos, by
}

func fmtEps(e float64) string {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return fmtG(e)
}

// fmtG is the shortest decimal that reads back as x (strconv's shortest
// representation: the same on every platform).
func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
