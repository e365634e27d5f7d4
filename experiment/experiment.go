// Package experiment runs training protocols over the pairwise core: data
// preparation fitted on training folds only, hyperparameter selection,
// repeated runs and evaluation. It is what `pairfed train` and the
// reproduction scripts call; it does no file I/O itself (callers pass
// loaded tables).
package experiment

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

// DefaultGrid is the step-size and radius grid 10^{−3..2} of [Y21a]'s
// experiments (simple-pairwise exp_cv.py: 10.**np.arange(−3, 3)).
var DefaultGrid = []float64{1e-3, 1e-2, 1e-1, 1, 10, 100}

// Spec describes a training job.
type Spec struct {
	Task       pairwise.Task
	Algo       string
	Loss       string
	Lambda     float64
	Constraint string // "" = task default
	// Eta is the base step size η; 0 selects it on a validation split.
	Eta float64
	// ParamRadius is the radius B of the parameter set; 0 selects it on
	// the validation split together with η.
	ParamRadius float64
	// FeatureRadius is R: each record is clipped to ‖x‖ ≤ R after scaling;
	// 0 disables clipping (non-private runs only).
	FeatureRadius float64
	// Scale is the feature scaling of each training split (the test split
	// gets the same map):
	//   - "bounds": the public ranges of Bounds mapped to [−1, 1] and
	//     clipped to it, per record (no privacy spent);
	//   - "private": per-feature ranges estimated with
	//     dp.EstimateRanges from RangeShare of (ε, δ), charged and reported
	//     (Privacy.Preprocessing), then the same per-record map; the
	//     algorithm runs at the rest of the budget;
	//   - "none": the raw values (only clipped to R);
	//   - "minmax", "standard": fitted on the training split — data-
	//     dependent, so a private run using them is reported private: false.
	// Default: "bounds" when Bounds is set, else "private" for private
	// algorithms and "minmax" for the others.
	Scale string
	// Bounds is a public feature-bounds schema (--feature-bounds).
	Bounds *data.Schema `json:"-"`
	// BoundsNorm is how records scaled by public or private bounds (Scale
	// "bounds" or "private") are brought within ‖x‖ ≤ R: "clip" (the ℓ2
	// clipping to R that every record gets) or "divide" (multiply by R/M,
	// data.Scaler.Divide, so the norm bound holds by construction and the
	// map stays linear). Default: the rule of a federated site
	// (experiment.BoundsNorm) — divide for an algorithm that centres
	// privately when R > 0, clip for every other, private or not.
	BoundsNorm string
	// RangeShare is the share of ε and δ that Scale "private" spends on
	// the feature ranges (0: dp.DefaultRangeShare).
	RangeShare float64
	// RefineBounds (--refine-bounds, Scale "bounds", a private algorithm):
	// "on" — the numeric features the schema bounds get their ranges
	// estimated under DP too (data.Schema.Refined), each estimate clamped
	// into its public range, the public range where none is found;
	// charged like an unknown feature's (RangeShare); "auto" — the same
	// when RefineDetects says the estimate can work at n, d and the
	// budget; "" or "off" — the public ranges as they are.
	RefineBounds string
	Passes       float64
	Steps        int
	// Runs is the number of repetitions (outer splits); Folds > 1 uses
	// k-fold evaluation (Runs repeats of it); otherwise a stratified
	// TestFraction split, or the given test table.
	Runs         int
	Folds        int
	TestFraction float64
	Seed         uint64
	// TrainSize, when > 0, subsamples each training split to this many
	// records uniformly at random ([X21]'s experiments vary n this way).
	TrainSize int
	// Epsilon and Delta are the privacy request of a private algorithm:
	// record-level (ε, δ)-DP; DeltaSet false means δ = 1/n_train, as in the
	// papers. Delta = 0 (set) asks for the pure ε-DP variant.
	Epsilon  float64
	Delta    float64
	DeltaSet bool
	// Calibration is how private algorithms choose σ: exact (default) or
	// paper (the printed formula, refused unless certified).
	Calibration pairwise.Calibration
	// NoiseSeed, when Seeded, draws privacy noise from a seeded source:
	// reproducible, and reported as private: false.
	NoiseSeed uint64
	Seeded    bool
	// NoiseScale, when not 0 or 1, multiplies every σ/b the algorithm asks
	// for: a what-if experiment (e.g. a paper's code's smaller constants),
	// reported as private: false.
	NoiseScale float64
	// Grid is the η/B grid for selection (default DefaultGrid).
	Grid []float64
	// SelectionFolds is the number of stratified folds of each training
	// split used to select η and B (default 3).
	SelectionFolds int
	// Tune runs private selection among TuneCandidates (default
	// DefaultTuneCandidates) instead of one algorithm, within the whole
	// (Epsilon, Delta) (see tune.go).
	Tune           bool
	TuneCandidates []string
	// noiseCoords, when set, counts the Gaussian noise coordinates fit
	// draws (for the discrete-noise term of the exact composition with
	// private ranges, Preprocessing.finish).
	noiseCoords *int64
	// OnRun, when set, is called after each evaluation (one per run, or
	// one per fold with Folds > 1) with the number done and the total:
	// progress reporting only, it does not change the results.
	OnRun func(done, total int) `json:"-"`
	// OnModel, when set, receives every model Run evaluates (one per run,
	// or per fold), with its preprocessing map and privacy statement: the
	// hook of `pairfed train --out-model` (see FittedModel). It does not
	// change the results.
	OnModel func(*FittedModel) `json:"-"`
	// Consume, when set, hands the records of the tables given to Run over
	// to its last evaluation (the last run's last fold, without
	// TrainSize): its split is laid out in the table's own storage
	// (data.Partition) and scaled there, so that training holds the
	// records once rather than the table and a scaled copy of each split.
	// The same records in the same order, the same results bit for bit;
	// but the tables' records are then split and scaled (their N, D,
	// notes and other metadata unchanged): the caller must not read them
	// again. `pairfed train` sets it; a caller that runs several specs on
	// one table must not.
	Consume bool `json:"-"`
}

// Validate fills defaults and checks the spec.
func (s *Spec) Validate() error {
	if s.Task == "" {
		s.Task = pairwise.TaskAUC
	}
	if s.Loss == "" {
		s.Loss = "hinge"
	}
	if _, err := pairwise.LossByName(s.Task, s.Loss); err != nil {
		return err
	}
	if s.Tune {
		if s.Task != pairwise.TaskAUC {
			return fmt.Errorf("experiment: --tune selects among AUC mechanisms only (task %s)", s.Task)
		}
		if _, err := tuneCandidates(s.TuneCandidates, 0); err != nil {
			return err
		}
		if s.Algo == "" {
			s.Algo = "dp-ssp-mean" // validated as the private representative; tune picks per run
		}
		if s.Steps != 0 || s.Passes != 0 || s.Eta != 0 {
			return fmt.Errorf("experiment: --tune takes every candidate's steps and step size from its rule: --steps, --passes and --eta do not apply")
		}
		if s.DeltaSet && s.Delta == 0 {
			return fmt.Errorf("experiment: --tune's candidates are Gaussian mechanisms: %w", dp.CheckDeltaPositive("--delta", s.Delta))
		}
	}
	a, err := pairwise.Lookup(s.Algo)
	if err != nil {
		return err
	}
	if err := a.Supports(s.Task, s.Loss); err != nil {
		return err
	}
	if err := s.Calibration.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if a.Private {
		if err := dp.CheckEpsilon("--epsilon", s.Epsilon); err != nil {
			return fmt.Errorf("experiment: %s is private: %w (--delta is optional, default 1/(10·n))", s.Algo, err)
		}
		if s.DeltaSet {
			if err := dp.CheckDelta("--delta", s.Delta); err != nil {
				return fmt.Errorf("experiment: %w", err)
			}
		}
		if err := dp.CheckNoiseScale("--noise-scale", s.NoiseScale); err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		if !(s.FeatureRadius > 0) {
			return fmt.Errorf("experiment: %s is private and needs per-record clipping: --radius R > 0 (R bounds the sensitivity)", s.Algo)
		}
	} else if s.Epsilon != 0 || s.DeltaSet {
		return fmt.Errorf("experiment: %s is not private, so --epsilon/--delta do not apply (private algorithms: see `pairfed algos`)", s.Algo)
	}
	if a.NeedsStrongConvexity && !(s.Lambda > 0) {
		return fmt.Errorf("experiment: %s needs an α-strongly convex objective: pass --lambda > 0 (e.g. 1e-3 as in [H20])", s.Algo)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"eta", s.Eta}, {"param radius", s.ParamRadius}, {"radius", s.FeatureRadius}, {"lambda", s.Lambda}, {"passes", s.Passes}} {
		if v.x < 0 || math.IsNaN(v.x) || math.IsInf(v.x, 0) {
			return fmt.Errorf("experiment: %s = %v must be finite and ≥ 0", v.name, v.x)
		}
	}
	if s.Runs < 0 || s.Folds < 0 || s.Folds == 1 || s.TrainSize < 0 || s.Steps < 0 {
		return fmt.Errorf("experiment: runs (%d), train size (%d) and steps (%d) must be ≥ 0, folds (%d) 0 or ≥ 2", s.Runs, s.TrainSize, s.Steps, s.Folds)
	}
	if s.Runs == 0 {
		s.Runs = 1
	}
	if s.Scale == "" {
		// The private default keeps the guarantee end to end: public
		// bounds when given, else bounds estimated under DP and charged.
		// A scaler fitted on the private records is not covered.
		switch {
		case s.Bounds != nil:
			s.Scale = "bounds"
		case a.Private:
			s.Scale = "private"
		default:
			s.Scale = "minmax"
		}
	}
	switch s.Scale {
	case "none", "minmax", "standard":
	case "bounds":
		if s.Bounds == nil {
			return fmt.Errorf("experiment: --scale bounds needs a feature-bounds schema (--feature-bounds FILE)")
		}
	case "private":
		if !a.Private {
			return fmt.Errorf("experiment: --scale private estimates feature ranges under differential privacy, for private algorithms; %s is not private (use minmax, standard or --feature-bounds)", s.Algo)
		}
	default:
		return fmt.Errorf("experiment: unknown scaling %q (want bounds, private, none, minmax or standard)", s.Scale)
	}
	if s.Bounds != nil && s.Scale != "bounds" {
		return fmt.Errorf("experiment: a feature-bounds schema is given but --scale is %s: drop one (the schema implies --scale bounds)", s.Scale)
	}
	switch s.BoundsNorm {
	case "":
		// One rule with a federated site's records (BoundsNorm, SiteMap):
		// clip, private or not; divide only for an algorithm that centres
		// privately (dp-lda clips around the data's released centre itself
		// and needs the linear map). Private algorithms clip because the
		// noise is calibrated to R, so records that fill the ball carry
		// more signal per unit of noise (ijcnn1, n = 5000, dp-gd-grad:
		// 0.745 clip vs 0.641 divide at ε = 5; level on diabetes;
		// docs/privacy.md, "Preprocessing that keeps the guarantee").
		// Non-private ones clip too since a measurement of both maps
		// (docs/results/site-prep.md, "Single-site pairfed train");
		// --bounds-norm divide stays an explicit choice.
		s.BoundsNorm = NormClip
		if s.Scale == "bounds" || s.Scale == "private" {
			s.BoundsNorm = BoundsNorm(a.CentresPrivately, s.FeatureRadius)
		}
	case "clip":
	case "divide":
		if s.Scale != "bounds" && s.Scale != "private" {
			return fmt.Errorf("experiment: --bounds-norm divide applies to --scale bounds or private, not %s", s.Scale)
		}
		if !(s.FeatureRadius > 0) {
			return fmt.Errorf("experiment: --bounds-norm divide needs --radius R > 0")
		}
	default:
		return fmt.Errorf("experiment: unknown --bounds-norm %q (want clip or divide)", s.BoundsNorm)
	}
	if s.RangeShare != 0 {
		if s.Scale != "private" && !(s.Scale == "bounds" && s.Bounds != nil && (len(s.Bounds.Unknown()) > 0 || s.RefineBounds == "on" || s.RefineBounds == "auto")) {
			return fmt.Errorf("experiment: --range-share applies to DP feature ranges only (--scale private, a schema with unknown features, or --refine-bounds on|auto), not --scale %s", s.Scale)
		}
		if !(s.RangeShare > 0 && s.RangeShare < 1) {
			return fmt.Errorf("experiment: --range-share %v must be in (0, 1), e.g. 0.1 for 10 %% of ε and δ", s.RangeShare)
		}
	}
	switch s.RefineBounds {
	case "", "off":
	case "on", "auto":
		if s.Scale != "bounds" || s.Bounds == nil {
			return fmt.Errorf("experiment: --refine-bounds %s refines a --feature-bounds schema's ranges under DP: it needs --feature-bounds (and --scale bounds), not --scale %s", s.RefineBounds, s.Scale)
		}
	default:
		return fmt.Errorf("experiment: --refine-bounds %q: want auto (refine when the estimate can work), on or off", s.RefineBounds)
	}
	if s.TestFraction == 0 {
		s.TestFraction = 0.2
	}
	if s.TestFraction <= 0 || s.TestFraction >= 1 {
		return fmt.Errorf("experiment: test fraction %v must be in (0, 1)", s.TestFraction)
	}
	if s.SelectionFolds == 0 {
		s.SelectionFolds = 3
	}
	if s.SelectionFolds < 2 {
		return fmt.Errorf("experiment: selection folds %d must be ≥ 2", s.SelectionFolds)
	}
	if len(s.Grid) == 0 {
		s.Grid = DefaultGrid
	}
	return nil
}

// Summary is a mean and (population) standard deviation over runs.
type Summary struct {
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	Values []float64 `json:"values"`
}

// Summarize returns the mean and standard deviation of v.
func Summarize(v []float64) *Summary {
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return &Summary{Mean: m, Std: math.Sqrt(s / float64(len(v))), Values: v}
}

// Report is the outcome of a training job (the `pairfed train --json` object).
type Report struct {
	Algorithm          string    `json:"algorithm"`
	Dataset            string    `json:"dataset"`
	Task               string    `json:"task"`
	Loss               string    `json:"loss"`
	Protocol           string    `json:"protocol"`
	NTrain             int       `json:"n_train"`
	NTest              int       `json:"n_test"`
	D                  int       `json:"d"`
	Runs               int       `json:"runs"`
	AUC                *Summary  `json:"auc,omitempty"`
	KNN3               *Summary  `json:"knn3_accuracy,omitempty"`
	Objective          float64   `json:"objective"`
	ObjectiveExact     bool      `json:"objective_exact"`
	Seconds            float64   `json:"seconds"`
	SecondsPerRun      float64   `json:"seconds_per_run"`
	PairSteps          int64     `json:"pair_steps"`
	PairStepsPerSecond float64   `json:"pair_steps_per_second"`
	Private            bool      `json:"private"`
	Eta                []float64 `json:"eta"`
	ParamRadius        []float64 `json:"param_radius"`
	FeatureRadius      float64   `json:"feature_radius"`
	Lambda             float64   `json:"lambda"`
	Notes              []string  `json:"notes,omitempty"`
	// Warnings are problems of the request that did not stop the run,
	// such as δ > 1/n_train (`pairfed train` prints them on stderr).
	Warnings []string `json:"warnings,omitempty"`
	// Recommended is the default rule's choice and reason when the
	// algorithm was not named (dpalgo.RecommendPrivate).
	Recommended *dpalgo.Recommendation `json:"recommended,omitempty"`
	// Tune is, per run, what --tune's private selection did.
	Tune []*TuneReport `json:"tune,omitempty"`
	// Privacy is the privacy statement of the (last) private run: model,
	// ε, δ, mechanism, accountant, the derived G, L, α and every σ.
	Privacy *Privacy `json:"privacy,omitempty"`
	// WallSeconds is the whole job's elapsed time (selection, training,
	// evaluation); TrainSeconds the algorithm's time in the reported fits
	// only (selection and evaluation excluded). Both for every protocol.
	WallSeconds  float64 `json:"wall_seconds"`
	TrainSeconds float64 `json:"train_seconds"`
	// Paper holds what only the paper protocol has (its selection score,
	// chosen checkpoint and AUC curve).
	Paper *PaperDetails `json:"paper,omitempty"`
	// Diagnostics of a private run: what the guarantee does not cover
	// (exact statistics of the records, --tune's K), kept out of Privacy.
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`
}

// DiagnosticsNote heads every diagnostics section.
const DiagnosticsNote = "diagnostics (not covered by the privacy guarantee): exact facts about the records or the mechanism's internal randomness, for the evaluator of this experiment; a deployment would not publish them"

// Diagnostics are the parts of a private run's output that its (ε, δ)
// does not cover: the loader's exact statistics of the records (class
// counts, density) and, per --tune selection, the number of runs K
// (Papernot & Steinke's theorem covers the chosen run's output only).
type Diagnostics struct {
	Note string `json:"note"`
	// TuneRuns is K of each --tune selection.
	TuneRuns []int `json:"tune_runs,omitempty"`
	// Data are the loader's notes (exact class counts, density, …).
	Data []string `json:"data,omitempty"`
}

// AddDiagnostics moves notes into the report's diagnostics section
// (created if needed).
func (r *Report) AddDiagnostics(notes ...string) {
	if len(notes) == 0 {
		return
	}
	if r.Diagnostics == nil {
		r.Diagnostics = &Diagnostics{Note: DiagnosticsNote}
	}
	r.Diagnostics.Data = append(r.Diagnostics.Data, notes...)
}

// maxObjectivePairs bounds the exact empirical objective where it needs the
// pair loop (metric task) or its n₊n₋ score terms (logistic AUC loss): above
// it the objective is a Monte Carlo estimate over this many uniform pairs.
// The hinge and square AUC objectives are exact at any n (pairwise/risk.go).
const maxObjectivePairs = 4_000_000

// split is one train/test evaluation: views of the one stored table (no
// copy until the split is prepared, which gathers and scales it).
type split struct{ train, test pairwise.View }

// Run executes the spec on train (and test, when given: then every run uses
// it and the runs differ only in the algorithm's randomness and selection).
func Run(ctx context.Context, spec Spec, train, test *data.Table) (*Report, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	algo, _ := pairwise.Lookup(spec.Algo)
	name := spec.Algo
	if spec.Tune {
		name = "tune"
	}
	rep := &Report{Algorithm: name, Dataset: train.Source, Task: string(spec.Task), Loss: spec.Loss,
		Protocol: "validation", Runs: spec.Runs, D: train.D, Private: algo.Private,
		FeatureRadius: spec.FeatureRadius, Lambda: spec.Lambda}
	var scores, objectives []float64
	start := time.Now()
	var steps int64
	var trainTime time.Duration // the reported fits only
	noEta := false              // a private algorithm without one constant η (a schedule, a one-shot release)
	perRun := 1
	if test == nil && spec.Folds > 1 {
		perRun = spec.Folds
	}
	total := spec.Runs * perRun
	for r := 0; r < spec.Runs; r++ {
		// Every long loop checks its context: Ctrl-C stops a run of any
		// length between two fits (and inside one: algorithms check ctx).
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("experiment: interrupted after %d of %d runs: %w", r, spec.Runs, err)
		}
		rng := rand.New(rand.NewPCG(spec.Seed, uint64(r)))
		splits, err := outerSplits(spec, train, test, rng)
		if err != nil {
			return nil, err
		}
		for fold, sp := range splits {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("experiment: interrupted: %w", err)
			}
			if spec.TrainSize > 0 {
				if spec.TrainSize > sp.train.Len() {
					return nil, fmt.Errorf("experiment: --train-size %d exceeds the %d training records", spec.TrainSize, sp.train.Len())
				}
				sp.train = sp.train.Sub(rng.Perm(sp.train.Len())[:spec.TrainSize])
			}
			if err := CheckDelta(spec, sp.train.Len()); err != nil {
				return nil, err
			}
			// The split's records are gathered here, read by prepare and
			// dropped: what training and evaluation keep is prepare's
			// scaled copy.
			// A split with rows is a fresh gather: prepare scales it in
			// place; one without (the whole table) is the caller's —
			// unless it was handed over (Consume) and this is its last
			// use: then the split is laid out in the table itself.
			var trData, teData *pairwise.Dataset
			ownTr, ownTe := sp.train.Rows != nil, sp.test.Rows != nil
			consume := spec.Consume && spec.TrainSize == 0 && r == spec.Runs-1 && fold == len(splits)-1
			if consume {
				trData, teData, ownTr, ownTe = consumeSplit(sp)
			} else {
				trData, teData = sp.train.Dataset(), sp.test.Dataset()
			}
			tr, te, pre, err := prepareOwned(spec, trData, teData, ownTr, ownTe, algo.Private || spec.Tune, rng)
			if err != nil {
				return nil, err
			}
			if consume {
				splits[fold] = split{} // the split's index lists: not needed past here
				// The records are now held once, split and scaled in
				// place; what laying them out took (the fold's copy
				// while it moved, the label lists of the split) is
				// garbage. Collected and given back here, before
				// selection and training allocate theirs, it does not
				// add to the process's peak.
				debug.FreeOSMemory()
			}
			if pre.Unshifted && !slices.Contains(rep.Notes, unshiftedNote) {
				rep.Notes = append(rep.Notes, unshiftedNote)
			}
			fspec := spec
			if pre.Ranges != nil {
				// The algorithm gets what the range release left.
				fspec.Epsilon, fspec.Delta, fspec.DeltaSet = pre.TrainEpsilon, pre.TrainDelta, true
			}
			eta, B := spec.Eta, spec.ParamRadius
			if spec.Tune {
				// Private selection sees the training split only.
				// (fspec: a DP range release, if any, took its share of
				// the budget first.)
				res, trep, err := tune(ctx, fspec, tr, rng)
				if err != nil {
					return nil, err
				}
				rep.Tune = append(rep.Tune, trep)
				if rep.Diagnostics == nil {
					rep.Diagnostics = &Diagnostics{Note: DiagnosticsNote}
				}
				rep.Diagnostics.TuneRuns = append(rep.Diagnostics.TuneRuns, trep.Runs)
				if err := pre.finish(spec, res.Privacy, train.DataDependent, 0); err != nil {
					return nil, err
				}
				rep.Privacy = &Privacy{PrivacyReport: res.Privacy, Preprocessing: pre, Neighbours: neighbours(tr.N)}
				rep.Private = res.Privacy.Private && pre.Private
				steps += res.PairGrads
				scores = append(scores, evaluate(spec.Task, res.W, tr, te))
				loss, _ := pairwise.LossByName(spec.Task, spec.Loss)
				obj, err := pairwise.NewObjective(tr, pairwise.ObjectiveConfig{Task: spec.Task, Loss: loss, Lambda: spec.Lambda, Constraint: "none"})
				if err != nil {
					return nil, err
				}
				risk, _ := pairwise.EmpiricalRisk(obj, res.W, maxObjectivePairs, rng)
				objectives = append(objectives, risk)
				rep.Eta, rep.ParamRadius = append(rep.Eta, 0), append(rep.ParamRadius, 0)
				rep.NTrain, rep.NTest = tr.N, te.N
				if spec.OnModel != nil {
					spec.OnModel(&FittedModel{Run: r, Fold: fold, W: res.W, Algorithm: trep.Chosen, NTrain: tr.N, Full: test != nil && spec.TrainSize == 0,
						Preprocessing: pre.model, Privacy: rep.Privacy, Private: rep.Private})
				}
				if spec.OnRun != nil {
					spec.OnRun(len(scores), total)
				}
				continue
			}
			if algo.Private {
				// Tuning on the private data would itself leak: private
				// algorithms take η (and T) from their theorems unless given,
				// and the papers' parameter set radius 1 unless given.
				if B == 0 {
					B = 1
					if algo.ParamRadius != nil {
						loss, _ := pairwise.LossByName(spec.Task, spec.Loss)
						delta := requestDelta(fspec, tr.N) // the δ the algorithm will run at
						p := tr.D
						if spec.Task == pairwise.TaskMetric {
							p = tr.D * tr.D
						}
						B = algo.ParamRadius(tr.N, p, spec.Epsilon, delta, spec.FeatureRadius, spec.Task, loss)
					}
				}
			} else if eta == 0 || B == 0 {
				var selSteps int64
				eta, B, selSteps, err = selectParams(ctx, spec, algo, tr, rng)
				if err != nil {
					return nil, err
				}
				steps += selSteps
				if consume {
					// The selection's fold buffer and scoring scratch
					// are garbage now: given back before the final fit
					// and its evaluation allocate theirs (as above).
					debug.FreeOSMemory()
				}
			}
			fitStart := time.Now()
			var coords int64
			fspec.noiseCoords = &coords
			res, obj, err := fit(ctx, fspec, algo, tr, eta, B, rng)
			if err != nil {
				return nil, err
			}
			trainTime += time.Since(fitStart)
			if res.Privacy != nil {
				acc, err := account(res.Privacy)
				if err != nil && acc == nil {
					return nil, err
				}
				if err := pre.finish(spec, res.Privacy, train.DataDependent, coords); err != nil {
					return nil, err
				}
				rep.Privacy = &Privacy{PrivacyReport: res.Privacy, Accounting: acc, Preprocessing: pre, Neighbours: neighbours(tr.N)}
				// Only per-record preprocessing with public (or DP-charged)
				// parameters keeps the guarantee end to end: a scaler fitted
				// on the training records, mean imputation or a label rule
				// read off the records makes a record's prepared form
				// depend on the others, which the sensitivity analyses do
				// not allow.
				rep.Private = res.Privacy.Private && pre.Private
				if w := pairwise.DeltaWarning(pre.TotalDelta, tr.N); w != "" && !slices.Contains(rep.Warnings, w) {
					rep.Warnings = append(rep.Warnings, w)
				}
				for _, n := range res.Privacy.Notes { // e.g. [H20] Algs 1–4 that never train (T₁ ≥ n)
					if w, ok := strings.CutPrefix(n, "WARNING: "); ok && !slices.Contains(rep.Warnings, w) {
						rep.Warnings = append(rep.Warnings, w)
					}
				}
			}
			steps += res.PairGrads
			scores = append(scores, evaluate(spec.Task, res.W, tr, te))
			risk, _ := pairwise.EmpiricalRisk(obj, res.W, maxObjectivePairs, rng)
			objectives = append(objectives, risk)
			if algo.Private { // report the η the algorithm used, not the request's 0
				if v, ok := usedEta(res.Privacy); ok {
					eta = v
				} else {
					noEta = true
				}
			}
			rep.Eta = append(rep.Eta, eta)
			rep.ParamRadius = append(rep.ParamRadius, B)
			rep.NTrain, rep.NTest = tr.N, te.N
			rep.ObjectiveExact = pairwise.RiskExact(obj, maxObjectivePairs)
			if spec.OnModel != nil {
				fm := &FittedModel{Run: r, Fold: fold, W: res.W, Algorithm: spec.Algo, Eta: eta, ParamRadius: B, NTrain: tr.N,
					Full: test != nil && spec.TrainSize == 0, Preprocessing: pre.model}
				if res.Privacy != nil {
					fm.Privacy, fm.Private = rep.Privacy, rep.Private
				}
				spec.OnModel(fm)
			}
			if spec.OnRun != nil {
				spec.OnRun(len(scores), total)
			}
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.SecondsPerRun = rep.Seconds / float64(len(scores))
	rep.WallSeconds, rep.TrainSeconds = rep.Seconds, trainTime.Seconds()
	rep.PairSteps = steps
	if rep.Seconds > 0 {
		rep.PairStepsPerSecond = float64(steps) / rep.Seconds
	}
	if spec.Task == pairwise.TaskAUC {
		rep.AUC = Summarize(scores)
	} else {
		rep.KNN3 = Summarize(scores)
	}
	rep.Objective = Summarize(objectives).Mean
	if noEta {
		rep.Eta = nil // JSON null: no single η to report (the privacy notes give the schedule)
	}
	if rep.Privacy != nil && len(scores) > 1 {
		rep.Notes = append(rep.Notes, RepeatedReleaseNote(len(scores), "models were trained on overlapping records (runs × folds)", rep.Privacy.Preprocessing.TotalEpsilon, rep.Privacy.Preprocessing.TotalDelta, rep.Privacy.Preprocessing.TotalMu))
	}
	if rep.Privacy != nil {
		rep.AddDiagnostics("the objective (the released model's empirical risk on the training records) and the test AUC are exact statistics of the records, computed for evaluation: not covered")
		pre := rep.Privacy.Preprocessing
		rep.Notes = append(rep.Notes, pre.Note)
		for _, r := range pre.Reasons {
			rep.Notes = append(rep.Notes, "NOT private end to end: "+r)
		}
	} else if spec.Scale == "bounds" {
		rep.Notes = append(rep.Notes, spec.Bounds.Describe()+normNote(spec))
	}
	return rep, nil
}

// outerSplits returns the evaluation splits of one run.
func outerSplits(spec Spec, train, test *data.Table, rng *rand.Rand) ([]split, error) {
	if test != nil {
		return []split{{train.All(), test.All()}}, nil
	}
	if spec.Folds > 1 {
		// Stratified k-fold deals the shuffled classes to the folds in
		// turn, continuing across classes: fold f has ⌊n/k⌋ + [f < n mod k]
		// records whatever the labels, so private runs keep it (the
		// training sizes are functions of n).
		folds, err := data.StratifiedKFold(train.Y, spec.Folds, rng)
		if err != nil {
			return nil, err
		}
		out := make([]split, len(folds))
		for k, f := range folds {
			out[k] = split{train.View(data.Complement(train.N, f)), train.View(f)}
		}
		return out, nil
	}
	var tr, te []int
	var err error
	if private(spec) {
		tr, te, err = PublicSizeSplit(train.Y, spec.TestFraction, rng)
	} else {
		tr, te, err = data.StratifiedSplit(train.Y, spec.TestFraction, rng)
	}
	if err != nil {
		return nil, err
	}
	return []split{{train.View(tr), train.View(te)}}, nil
}

// consumeSplit returns the datasets of sp laid out in its tables' own
// storage, and whether each may be scaled there (Spec.Consume): a split of
// one table by a test set and its complement (the outer split, a k-fold's
// fold) is data.Partition's layout of the table, whose parts are the rows
// Gather would copy, in the same order; whole tables are returned as they
// are. Any other view (not expected) is gathered as without Consume.
func consumeSplit(sp split) (train, test *pairwise.Dataset, ownTrain, ownTest bool) {
	switch {
	case sp.train.Rows == nil && sp.test.Rows == nil && sp.train.Data != sp.test.Data: // a --test table
		return sp.train.Data, sp.test.Data, true, true
	case sp.train.Data == sp.test.Data && complementary(sp.train.Rows, sp.test.Rows, sp.test.Data.N):
		train, test = data.Partition(sp.test.Data, sp.test.Rows)
		return train, test, true, true
	}
	return sp.train.Dataset(), sp.test.Dataset(), sp.train.Rows != nil, sp.test.Rows != nil
}

// complementary reports whether a and b are strictly increasing indices
// that together list 0 … n−1 once each (b is then data.Partition's fold
// and a its complement, in order).
func complementary(a, b []int, n int) bool {
	if a == nil || b == nil || len(a)+len(b) != n {
		return false
	}
	i, j := 0, 0
	for k := range n {
		switch {
		case i < len(a) && a[i] == k:
			i++
		case j < len(b) && b[j] == k:
			j++
		default:
			return false
		}
	}
	return true
}

// private reports whether spec runs a private algorithm (or --tune).
func private(spec Spec) bool {
	if spec.Tune {
		return true
	}
	a, err := pairwise.Lookup(spec.Algo)
	return err == nil && a.Private
}

// PublicSizeSplit is the train/test split of private runs: stratified, but
// its sizes are functions of n alone, so that n_train — which sets the
// default δ = 1/(10·n_train), hence σ — is public and does not move when a
// label is flipped (data.StratifiedSplit rounds per class: 614 training
// records of diabetes become 615 after one flip). Exactly
// k = round(f·n) (clamped to [1, n−1]) records go to the test split: the
// records are listed class by class (labels in increasing order), each
// class in a uniformly random order, and position i of the list goes to
// the test split iff ⌊(i+1)k/n⌋ > ⌊ik/n⌋ (systematic sampling: exactly k
// positions, every class gets its share of k within one record). The
// guarantee is stated for the training split as the dataset (replace-one
// of a record within it, n_train public); which records land in it
// depends on the labels, as in any stratified split, not its size.
func PublicSizeSplit(y []float64, f float64, rng *rand.Rand) (train, test []int, err error) {
	n := len(y)
	if !(f > 0 && f < 1) {
		return nil, nil, fmt.Errorf("experiment: test fraction %v outside (0, 1)", f)
	}
	if n < 2 {
		return nil, nil, fmt.Errorf("experiment: cannot split %d records", n)
	}
	for i, v := range y {
		if math.IsNaN(v) {
			return nil, nil, fmt.Errorf("experiment: label %d is NaN", i)
		}
	}
	k := min(max(int(math.Round(f*float64(n))), 1), n-1)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(y[a], y[b]) })
	for lo := 0; lo < n; {
		hi := lo
		for hi < n && y[order[hi]] == y[order[lo]] {
			hi++
		}
		cls := order[lo:hi]
		rng.Shuffle(len(cls), func(i, j int) { cls[i], cls[j] = cls[j], cls[i] })
		lo = hi
	}
	train, test = make([]int, 0, n-k), make([]int, 0, k) // exactly k positions go to test
	for i, r := range order {
		if (i+1)*k/n > i*k/n {
			test = append(test, r)
		} else {
			train = append(train, r)
		}
	}
	slices.Sort(train)
	slices.Sort(test)
	return train, test, nil
}

// CheckDelta refuses a private run (a private algorithm or --tune) whose δ
// is ≥ 1/n for its n training records (n public: the training split's
// size, TrainRecords): a mechanism that
// publishes one random record verbatim is (0, 1/n)-DP, so such a δ
// certifies nothing. Seeded or rescaled noise (what-if runs reported
// private: false) keep the warning instead.
func CheckDelta(spec Spec, n int) error {
	if !private(spec) || !spec.DeltaSet || spec.Seeded || (spec.NoiseScale != 0 && spec.NoiseScale != 1) || n < 1 {
		return nil
	}
	if bound := 1 / float64(n); spec.Delta >= bound {
		return fmt.Errorf("experiment: --delta %g is ≥ 1/n = %.3g for the n = %d training records: a mechanism that publishes one random record verbatim is (0, 1/n)-DP, so this δ protects nothing; use --delta below 1/n, e.g. the default 1/(10·n) = %.3g (omit --delta)", spec.Delta, bound, n, dp.DefaultDelta(n))
	}
	return nil
}

// neighbours states the neighbouring relation of a private run's
// guarantee over n training records.
func neighbours(n int) string {
	return fmt.Sprintf("replace-one: two training splits are neighbours when they differ in one record (its features and label); n = %d training records, public (the split's size is a function of the table's size only)", n)
}

// RepeatedReleaseNote states the total cost of releasing n models that
// are each (ε, δ)-DP on overlapping records: (n·ε, n·δ) by basic
// composition, and, when each is μ-GDP (mu > 0), μ·√n-GDP exactly.
func RepeatedReleaseNote(n int, what string, eps, delta, mu float64) string {
	s := fmt.Sprintf("%d %s: each is (ε, δ) = (%g, %.3g)-DP as stated, but releasing all %d costs up to (ε, δ) = (%.4g, %.3g) by basic composition (n·ε, n·δ)", n, what, eps, delta, n, float64(n)*eps, float64(n)*delta)
	if mu > 0 {
		s += fmt.Sprintf(", or μ·√n = %.4g-GDP by exact Gaussian-DP composition of their Gaussian parts (the secure sampler's discrete-noise δ terms add up)", mu*math.Sqrt(float64(n)))
	}
	return s + " — publish one"
}

// prepare scales train and test with the map of spec.Scale (fitted, public
// or privately estimated on train only) and clips every record to the
// feature radius R. It returns the statement of what was done, with the
// budget left to the algorithm when ranges were estimated privately.
func prepare(spec Spec, train, test *pairwise.Dataset, private bool, rng *rand.Rand) (*pairwise.Dataset, *pairwise.Dataset, *Preprocessing, error) {
	return prepareOwned(spec, train, test, false, false, private, rng)
}

// prepareOwned is prepare that scales train (ownTrain) and test (ownTest)
// in place, over their own storage, when the caller owns them and needs
// them unscaled no more: one matrix fewer, the same values.
func prepareOwned(spec Spec, train, test *pairwise.Dataset, ownTrain, ownTest, private bool, rng *rand.Rand) (*pairwise.Dataset, *pairwise.Dataset, *Preprocessing, error) {
	pre := &Preprocessing{Scale: spec.Scale}
	// The map is recorded as a model artefact stores it (model.Preprocessing)
	// and the scaler built from that record (ModelScaler), so that a
	// written model prepares records exactly as here.
	mp := &model.Preprocessing{Scale: spec.Scale, Norm: spec.BoundsNorm, Radius: spec.FeatureRadius}
	var sc *data.Scaler
	var err error
	switch spec.Scale {
	case "bounds":
		if (spec.RefineBounds == "on" || spec.RefineBounds == "auto") && private {
			eff, err := spec.Bounds.Refined()
			if err != nil {
				return nil, nil, nil, fmt.Errorf("experiment: --refine-bounds: %w", err)
			}
			use := len(eff.Unknown()) > len(spec.Bounds.Unknown()) // something to refine
			if use && spec.RefineBounds == "auto" {
				if use, pre.RefineWhy, err = RefineDetects(spec, train.N, len(eff.Unknown())); err != nil {
					return nil, nil, nil, err
				}
			}
			if use {
				eff.File = spec.Bounds.File
				spec.Bounds = eff
				pre.Refined = true
			}
		}
		mp.Schema = spec.Bounds
		if u := spec.Bounds.Unknown(); len(u) > 0 {
			// Features no public document bounds: estimated under DP
			// (charged) for a private algorithm, fitted (min, max) on the
			// training split otherwise.
			var lo, hi []float64
			source := "fitted"
			if private {
				for _, j := range u {
					pre.unknownNames = append(pre.unknownNames, fmt.Sprint(j+1))
				}
				r, err := privateRanges(spec, train, u, rng, pre)
				if err != nil {
					return nil, nil, nil, err
				}
				wlo, whi := spec.Bounds.Within()
				lo, hi = refineRanges(r, wlo, whi, pre)
				source = "dp"
			} else {
				lo, hi = columnMinMax(train, u)
				wlo, whi := spec.Bounds.Within()
				for k := range lo {
					if !math.IsNaN(wlo[k]) {
						lo[k], hi[k] = math.Max(lo[k], wlo[k]), math.Min(hi[k], whi[k])
						if !(hi[k] > lo[k]) {
							lo[k], hi[k] = wlo[k], whi[k]
						}
					}
				}
			}
			mp.Ranges = &model.Ranges{Source: source, Features: u, Lo: lo, Hi: hi}
		}
	case "private":
		r, err := privateRanges(spec, train, nil, rng, pre)
		if err != nil {
			return nil, nil, nil, err
		}
		mp.Ranges = &model.Ranges{Source: "dp", Lo: r.Lo, Hi: r.Hi}
	case "minmax", "standard":
		// sparse data with d > 1000 are fitted sparse; the map is then
		// applied unshifted or refused by CheckApply below
		fitted, err := data.FitScalerSparse(spec.Scale, train)
		if err != nil {
			return nil, nil, nil, err
		}
		mp.Fitted = &model.Fitted{Kind: fitted.Kind, Shift: fitted.Shift, Scale: fitted.Scale}
	}
	if sc, err = ModelScaler(mp, train.D); err != nil {
		return nil, nil, nil, err
	}
	if spec.Scale == "bounds" {
		if err := sc.CheckApply(train); err != nil {
			return nil, nil, nil, fmt.Errorf("experiment: %s: %w", spec.Bounds.File, err)
		}
	}
	if unshifted(spec, sc, train) {
		// Sparse data stays sparse: the shift, the same vector for every
		// record, cancels in every difference the algorithm reads, and
		// nothing is clipped (data.Scaler.ApplyUnshifted).
		pre.Unshifted, mp.Unshifted = true, true
	} else if spec.Scale != "bounds" {
		// a fitted map of sparse data with d > 1000 (data.FitScaler fits
		// it sparse) that must be applied with its shift would densify
		if err := sc.CheckApply(train); err != nil {
			return nil, nil, nil, fmt.Errorf("experiment: %w", err)
		}
	}
	tr, err := applyMap(sc, pre.Unshifted, spec.FeatureRadius, train, ownTrain)
	if err != nil {
		return nil, nil, nil, err
	}
	te, err := applyMap(sc, pre.Unshifted, spec.FeatureRadius, test, ownTest)
	if err != nil {
		return nil, nil, nil, err
	}
	pre.model = mp
	return tr, te, pre, nil
}

// columnMinMax returns the minimum and maximum of the columns cols of ds
// (a non-private run's range for a schema's unknown features); a constant
// column gets [v − 1, v + 1].
func columnMinMax(ds *pairwise.Dataset, cols []int) (lo, hi []float64) {
	lo, hi = make([]float64, len(cols)), make([]float64, len(cols))
	row := make([]float64, ds.D)
	for i := 0; i < ds.N; i++ {
		ds.DenseRowTo(row, i)
		for k, j := range cols {
			if i == 0 || row[j] < lo[k] {
				lo[k] = row[j]
			}
			if i == 0 || row[j] > hi[k] {
				hi[k] = row[j]
			}
		}
	}
	for k := range lo {
		if !(lo[k] < hi[k]) || math.IsInf(1/(hi[k]/2-lo[k]/2), 0) {
			lo[k], hi[k] = lo[k]-1, hi[k]+1
		}
	}
	return lo, hi
}

const unshiftedNote = "sparse data scaled without its shift (the shift cancels in every x_i − x_j the algorithm reads; scores move by a constant): kept sparse"

// unshifted reports whether prepare scales train without the shift of sc:
// sparse data, a fitted affine map (minmax or standard), no clipping (the
// norms would need the shift) and a shift-invariant algorithm.
func unshifted(spec Spec, sc *data.Scaler, train *pairwise.Dataset) bool {
	if !train.IsSparse() || (sc.Kind != "minmax" && sc.Kind != "standard") || spec.FeatureRadius > 0 || spec.Tune {
		return false
	}
	a, err := pairwise.Lookup(spec.Algo)
	return err == nil && a.ShiftInvariant
}

// requestDelta is the δ a private run asks for on n training records: the
// given one, or the default.
func requestDelta(spec Spec, n int) float64 {
	if spec.DeltaSet {
		return spec.Delta
	}
	return dp.DefaultDelta(n)
}

// fit trains one model.
func fit(ctx context.Context, spec Spec, algo *pairwise.Algorithm, tr *pairwise.Dataset, eta, B float64, rng *rand.Rand) (*pairwise.Result, pairwise.Objective, error) {
	loss, _ := pairwise.LossByName(spec.Task, spec.Loss)
	obj, err := pairwise.NewObjective(tr, pairwise.ObjectiveConfig{Task: spec.Task, Loss: loss, Lambda: spec.Lambda, Constraint: spec.Constraint, Radius: B})
	if err != nil {
		return nil, nil, err
	}
	cfg := pairwise.RunConfig{Eta: eta, Passes: spec.Passes, Steps: spec.Steps}
	if algo.Private {
		delta := requestDelta(spec, tr.N)
		var noise pairwise.Noise
		if spec.Seeded {
			noise = dp.NewSeededNoise(spec.NoiseSeed ^ rng.Uint64())
		} else {
			// The sensitivity bounds of the sampling-based algorithms
			// ([Y21a], [Y21b]) hold on a high-probability event over the
			// drawn indices, so the sampling randomness must be secret too
			// (dp.SecretSources says why).
			var err error
			if rng, noise, err = dp.SecretSources(); err != nil {
				return nil, nil, fmt.Errorf("experiment: %w", err)
			}
		}
		if spec.NoiseScale != 0 && spec.NoiseScale != 1 {
			noise = dp.ScaleNoise(noise, spec.NoiseScale)
		}
		if spec.noiseCoords != nil {
			noise = countingNoise{noise, spec.noiseCoords}
		}
		cfg.Privacy = &pairwise.Privacy{Epsilon: spec.Epsilon, Delta: delta, FeatureRadius: spec.FeatureRadius, Noise: noise, Calibration: spec.Calibration}
	}
	res, err := algo.Run(ctx, obj, cfg, rng)
	if err != nil {
		return nil, nil, err
	}
	// Accounting enforced: a private run must be certified within its
	// request (the algorithms refuse before any noise otherwise; this is
	// the backstop).
	if p := res.Privacy; p != nil && p.Private && (p.CertifiedEpsilon > p.Epsilon || p.CertifiedDelta > p.Delta) {
		return nil, nil, fmt.Errorf("experiment: %s certified (ε, δ) = (%g, %g) exceeds the request (%g, %g)", algo.Name, p.CertifiedEpsilon, p.CertifiedDelta, p.Epsilon, p.Delta)
	}
	return res, obj, nil
}

// countingNoise counts the coordinates of every Gaussian draw (the
// discrete-noise term of dp.CertifyWithRanges needs the number drawn); the
// noise itself is n's.
type countingNoise struct {
	dp.Noise
	n *int64
}

func (c countingNoise) AddGaussian(dst []float64, sigma float64) {
	*c.n += int64(len(dst))
	c.Noise.AddGaussian(dst, sigma)
}

// evaluate scores a model on test: AUC for ranking, KNN-3 accuracy (with the
// training records as neighbours) for metric learning.
func evaluate(task pairwise.Task, w []float64, train, test *pairwise.Dataset) float64 {
	if task == pairwise.TaskMetric {
		return pairwise.KNN3Accuracy(w, train, test)
	}
	return pairwise.LinearAUC(w, test)
}

// evalBatch is how many models of one fold selectParams scores per pass
// over the fold's validation records (pairwise.ScoresManyTo): their score
// arrays (8 × 8 bytes per record) stay within a core's cache on the
// validation folds of the bundled data.
const evalBatch = 8

// parallel runs f(0), …, f(n−1) on up to GOMAXPROCS goroutines, each with
// its own AUC buffers, and returns when all are done.
func parallel(n int, f func(i int, sc *pairwise.AUCScratch)) {
	parallelOn(runtime.GOMAXPROCS(0), n, f)
}

// parallelOn is parallel on up to workers goroutines.
func parallelOn(workers, n int, f func(i int, sc *pairwise.AUCScratch)) {
	parallelPool(workers, n, nil, f)
}

// scratchPool keeps AUC buffers from one parallel call to the next: the
// selection scores every fold's models in its own call, and fresh buffers
// of the validation fold's size at each would be garbage the collector
// lets the heap grow by.
type scratchPool struct {
	mu   sync.Mutex
	free []*pairwise.AUCScratch
}

func (p *scratchPool) get() *pairwise.AUCScratch {
	if p == nil {
		return new(pairwise.AUCScratch)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := len(p.free); k > 0 {
		sc := p.free[k-1]
		p.free = p.free[:k-1]
		return sc
	}
	return new(pairwise.AUCScratch)
}

func (p *scratchPool) put(sc *pairwise.AUCScratch) {
	if p != nil {
		p.mu.Lock()
		p.free = append(p.free, sc)
		p.mu.Unlock()
	}
}

// parallelPool is parallelOn taking its buffers from pool (nil: fresh).
func parallelPool(workers, n int, pool *scratchPool, f func(i int, sc *pairwise.AUCScratch)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := pool.get()
			defer pool.put(sc)
			for i := range next {
				f(i, sc)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// halvingMinSteps is the smallest full-search budget (pair steps) that
// selectParams searches by successive halving: 10⁷, about 0.1 s of sgd-prev.
var halvingMinSteps int64 = 10_000_000

// selectParams picks (η, B) from the grid by stratified k-fold
// cross-validation (spec.SelectionFolds, default 3) on the training split
// only — the honest protocol: the test split is never seen. Parameters
// already fixed in spec are kept. The score of a cell is its mean
// validation AUC (or KNN-3 accuracy); the first best cell wins ties.
//
// For offline stochastic algorithms (pairwise.Algorithm.Passes > 0) the
// grid is searched by successive halving (Jamieson & Talwalkar 2016, rate
// 3; halving): every cell is fitted on every fold at a ninth of the
// budget T (steps, or passes over the fitting fold), the best third at a
// third of it, the best third of those at the whole T, and the best cell
// of that last rung wins. A cell's rank at each rung is its mean score
// over the folds, as in the full search. This costs 36/9 + 12/3 + 4 = 12
// full-budget cells of the default 6×6 grid instead of 36. It is used
// only when the full search would cost at least halvingMinSteps pair steps
// (below that it takes well under a second, and small samples rank cells
// too noisily at a ninth of the budget), the smallest rung still makes at
// least one pass over the fitting folds (T/9 ≥ n_fit) and the grid has
// more than 3 cells; otherwise every cell gets the full budget. (ijcnn1, 10 runs: the same
// plateau of cells wins, mean test AUC within its run-to-run deviation;
// see docs/speed.md.)
func selectParams(ctx context.Context, spec Spec, algo *pairwise.Algorithm, tr *pairwise.Dataset, rng *rand.Rand) (eta, radius float64, steps int64, err error) {
	folds, err := data.StratifiedKFold(tr.Y, spec.SelectionFolds, rng)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("experiment: selection folds: %w", err)
	}
	minFit := tr.N
	for _, f := range folds {
		minFit = min(minFit, tr.N-len(f))
	}
	// A fold's fitting and validation sets are views of tr's storage: h
	// moves the fold's records to tr's end while its fits run, and puts
	// them back (before selectParams returns, whatever happens). They are
	// the records, in the same order, of gathered copies of the fold's
	// complement and of the fold (data.Holdout), without k·n records of
	// copies.
	var h data.Holdout
	defer h.Restore()
	var scratch scratchPool // the AUC buffers of every fold's scoring
	etas, radii := spec.Grid, spec.Grid
	if spec.Eta > 0 {
		etas = []float64{spec.Eta}
	}
	if spec.ParamRadius > 0 {
		radii = []float64{spec.ParamRadius}
	}
	type cell struct {
		e, B  float64
		idx   int      // position in the grid
		seeds []uint64 // one per fold, drawn in grid order
		score float64
	}
	var cells []*cell
	for _, e := range etas {
		for _, B := range radii {
			c := &cell{e: e, B: B, idx: len(cells), seeds: make([]uint64, len(folds))}
			for k := range c.seeds {
				c.seeds[k] = rng.Uint64()
			}
			cells = append(cells, c)
		}
	}
	// The rungs' budgets, smallest first: a spec whose fits run T/9, T/3
	// and T steps (the last is spec itself).
	rungs := []Spec{spec}
	var full int64 // the full search's pair steps
	for _, f := range folds {
		T := int64(spec.Steps)
		if T == 0 {
			p := spec.Passes
			if p == 0 {
				p = algo.Passes
			}
			T = int64(math.Ceil(p * float64(tr.N-len(f))))
		}
		full += int64(len(cells)) * T
	}
	if p := algo.Passes; p > 0 && len(cells) > 3 && full >= halvingMinSteps {
		for _, div := range []float64{3, 9} {
			r := spec
			if spec.Steps > 0 {
				r.Steps = int(math.Ceil(float64(spec.Steps) / div))
				if float64(spec.Steps)/div < float64(minFit) {
					break
				}
			} else {
				if spec.Passes > 0 {
					p = spec.Passes
				}
				if r.Passes = p / div; r.Passes < 1 {
					break
				}
			}
			rungs = append([]Spec{r}, rungs...)
		}
		if len(rungs) < 3 {
			rungs = rungs[len(rungs)-1:] // halving only with all three rungs
		}
	}
	// The fits of a rung on one fold are independent: run them on up to
	// GOMAXPROCS goroutines, a fold at a time (its records laid out by h).
	// Seeds are fixed per (cell, fold) and the scores summed in fold order,
	// so the selected cell is the one a serial loop picks.
	type job struct {
		c     *cell
		f     int
		w     []float64 // the fitted model
		score float64
		steps int64
		err   error
	}
	for r, rs := range rungs {
		var jobs []*job
		for _, c := range cells {
			for k := range folds {
				jobs = append(jobs, &job{c: c, f: k})
			}
		}
		stream := uint64(len(rungs) - 1 - r) // the full-budget rung draws stream 0
		for k, f := range folds {
			fitSet, val := h.Move(tr, f)
			var fj []*job
			for _, j := range jobs {
				if j.f == k {
					fj = append(fj, j)
				}
			}
			parallel(len(fj), func(i int, sc *pairwise.AUCScratch) {
				j := fj[i]
				if err := ctx.Err(); err != nil {
					j.err = fmt.Errorf("experiment: selection interrupted: %w", err)
					return
				}
				res, _, err := fit(ctx, rs, algo, fitSet, j.c.e, j.c.B, rand.New(rand.NewPCG(j.c.seeds[k], stream)))
				if err != nil {
					j.err = err
					return
				}
				j.steps, j.w = res.PairGrads, res.W
				if spec.Task == pairwise.TaskMetric {
					j.score = evaluate(spec.Task, res.W, fitSet, val)
				}
			})
			if spec.Task != pairwise.TaskMetric {
				// The AUCs of the fold's models, evalBatch models per
				// pass over its validation records (the same values as
				// one LinearAUC per model, bit for bit).
				var batches [][]*job
				var b []*job
				for _, j := range fj {
					if j.err == nil {
						if b = append(b, j); len(b) == evalBatch {
							batches, b = append(batches, b), nil
						}
					}
				}
				if len(b) > 0 {
					batches = append(batches, b)
				}
				parallelPool(runtime.GOMAXPROCS(0), len(batches), &scratch, func(i int, sc *pairwise.AUCScratch) {
					b := batches[i]
					ws := make([][]float64, len(b))
					for k, j := range b {
						ws[k] = j.w
					}
					aucs := sc.LinearAUCsTo(make([]float64, len(b)), ws, val)
					for k, j := range b {
						j.score = aucs[k]
					}
				})
			}
			for _, j := range fj {
				j.w = nil // scored: the rung's other folds need only its score
			}
			h.Restore()
		}
		for c := range cells {
			var score float64
			for _, j := range jobs[c*len(folds) : (c+1)*len(folds)] {
				if j.err != nil {
					return 0, 0, 0, j.err
				}
				steps += j.steps
				score += j.score
			}
			cells[c].score = score / float64(len(folds))
			if math.IsNaN(cells[c].score) { // diverged: never wins
				cells[c].score = math.Inf(-1)
			}
		}
		// Rank by mean score, grid order among equals (first best wins).
		slices.SortFunc(cells, func(a, b *cell) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.idx, b.idx))
		})
		if r < len(rungs)-1 {
			cells = cells[:(len(cells)+2)/3]
		}
	}
	if math.IsInf(cells[0].score, -1) {
		return etas[0], radii[0], steps, nil // every cell diverged: today's rule kept the first
	}
	return cells[0].e, cells[0].B, steps, nil
}
