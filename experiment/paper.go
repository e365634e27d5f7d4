package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
)

// PaperSpec is [Y21a]'s experimental protocol as its authors' code runs it
// (github.com/zhenhuan-yang/simple-pairwise: utils.py, exp_cv.py,
// exp_test.py, alg/auc_fifo_hinge.py):
//
//   - the LIBSVM training file only, min-max scaled to [−1, 1] on the whole
//     file, multiclass labels binarized as lower half vs upper half (the
//     caller loads the table with data.Options{Binarize: "halves"});
//   - n_tr = ⌊0.8·n⌋; each fold trains on the first n_tr indices of its
//     training part (sklearn's RepeatedKFold, 5 splits);
//   - i_t drawn i.i.d. with replacement, paired with the previous draw;
//     same-label pairs skipped but counted in t and in the averages;
//   - constant step η/√(passes·n_tr), passes = 10; ℓ2-ball radius β;
//   - AUC at checkpoints ⌊2^{4, 4.5, 5, …}⌋ (the last replaced by
//     passes·(n_tr−1)) of the average of the iterates since the previous
//     checkpoint;
//   - (η, β) chosen from 10^{−3..2} by the mean over 5 folds × 2 repeats of
//     the per-fold maximum AUC over checkpoints — on the test folds;
//   - then 5 folds × 5 repeats with the chosen (η, β); reported: the
//     maximum over checkpoints of the mean AUC.
//
// Hyperparameters are therefore selected on test data; Run's validation
// protocol is the honest alternative.
type PaperSpec struct {
	Algo        string
	Loss        string
	Passes      int       // default 10
	Splits      int       // default 5
	CVRepeats   int       // default 2
	TestRepeats int       // default 5
	Grid        []float64 // default DefaultGrid for both η and β
	Seed        uint64
	Workers     int // parallel grid cells (default 2)
}

// PaperResult is the outcome of the paper protocol.
type PaperResult struct {
	Algo          string    `json:"algorithm"`
	Loss          string    `json:"loss"`
	Eta           float64   `json:"eta"`
	Beta          float64   `json:"beta"`
	CVAUC         float64   `json:"cv_auc"`
	AUC           float64   `json:"auc"`
	Std           float64   `json:"std"`
	Checkpoint    int       `json:"checkpoint"`
	Curve         []float64 `json:"curve"`
	Checkpoints   []int     `json:"checkpoints"`
	Runs          int       `json:"runs"`
	SecondsPerRun float64   `json:"seconds_per_run"` // training only, checkpoint evaluation excluded
	Seconds       float64   `json:"seconds"`
	// Values are the per-fold AUCs at the chosen checkpoint; NTrain and
	// NTest the records of one test-phase fold; TrainSeconds the summed
	// training time of the test-phase folds.
	Values        []float64 `json:"values"`
	NTrain, NTest int       `json:"-"`
	D             int       `json:"-"`
	TrainSeconds  float64   `json:"-"`
	PairGrads     int64     `json:"-"`
}

// PaperCheckpoints returns simple-pairwise's get_res_idx(n_iter) with
// log_res and rec_log = 0.5: ⌊2^k⌋ for k = 4, 4.5, … < log2(n_iter), the
// last entry replaced by n_iter.
func PaperCheckpoints(nIter int) []int {
	var out []int
	for k := 4.0; k < math.Log2(float64(nIter)); k += 0.5 {
		out = append(out, int(math.Pow(2, k)))
	}
	if len(out) == 0 {
		return []int{nIter}
	}
	out[len(out)-1] = nIter
	return out
}

func (p *PaperSpec) defaults() {
	if p.Passes == 0 {
		p.Passes = 10
	}
	if p.Splits == 0 {
		p.Splits = 5
	}
	if p.CVRepeats == 0 {
		p.CVRepeats = 2
	}
	if p.TestRepeats == 0 {
		p.TestRepeats = 5
	}
	if len(p.Grid) == 0 {
		p.Grid = DefaultGrid
	}
	if p.Workers <= 0 {
		p.Workers = 2
	}
	if p.Loss == "" {
		p.Loss = "hinge"
	}
}

// paperFold is one fold as a fit reads it, in contiguous storage (the
// sgd-prev loop indexes training rows by position, and each test fold is
// scored at every checkpoint: read through an index, its scattered rows
// cost cache misses — 2–6× the time of scoring contiguous rows on the
// ijcnn1 and w8a shapes, BenchmarkViewScores in pairwise/view_test.go).
type paperFold struct{ train, test *pairwise.Dataset }

// paperSplits returns RepeatedKFold splits: each split's test record
// indices (increasing). Its training part is the other records, in order,
// cut to the first nTr (paperSplit).
func paperSplits(n, splits, repeats int, rng *rand.Rand) ([][]int, error) {
	var out [][]int
	for r := 0; r < repeats; r++ {
		folds, err := data.KFold(n, splits, rng)
		if err != nil {
			return nil, err
		}
		out = append(out, folds...)
	}
	return out, nil
}

// paperSplit lays out the split with test records te in ds's own storage
// (h; see data.Holdout) and returns it: the records not in te, in order,
// cut to the first nTr, and those of te — views, not copies, valid until
// h's next Move or Restore.
func paperSplit(h *data.Holdout, ds *pairwise.Dataset, te []int, nTr int) paperFold {
	fit, test := h.Move(ds, te)
	return paperFold{fit.Slice(0, min(nTr, fit.N)), test}
}

// paperRun trains one fold and returns the AUC at every checkpoint and the
// training time excluding the checkpoint evaluations (as the authors' code
// stops its timer while it evaluates).
func paperRun(ctx context.Context, algo *pairwise.Algorithm, loss pairwise.Loss, f paperFold, passes int, eta, beta float64, seed uint64, grads *atomic.Int64) ([]float64, float64, error) {
	obj, err := pairwise.NewObjective(f.train, pairwise.ObjectiveConfig{Loss: loss, Constraint: "l2", Radius: beta})
	if err != nil {
		return nil, 0, err
	}
	var evalTime time.Duration
	nTr := f.train.N
	cps := PaperCheckpoints(passes * (nTr - 1))
	aucs := make([]float64, len(cps))
	scores := make([]float64, f.test.N)
	k := 0
	cfg := pairwise.RunConfig{
		Eta: eta, Steps: passes * nTr, Schedule: pairwise.ScaledConstant, Averaging: pairwise.AvgWindow,
		Checkpoints: cps,
		OnCheckpoint: func(t int, w []float64) {
			t0 := time.Now()
			aucs[k] = pairwise.AUC(pairwise.ScoresTo(scores, w, f.test), f.test.Y)
			k++
			evalTime += time.Since(t0)
		},
	}
	start := time.Now()
	res, err := algo.Run(ctx, obj, cfg, rand.New(rand.NewPCG(seed, 7)))
	if err != nil {
		return nil, 0, err
	}
	grads.Add(res.PairGrads)
	return aucs, (time.Since(start) - evalTime).Seconds(), nil
}

// Paper runs the protocol on a whole (unscaled) table.
func Paper(ctx context.Context, ps PaperSpec, tab *data.Table) (*PaperResult, error) {
	ps.defaults()
	algo, err := pairwise.Lookup(ps.Algo)
	if err != nil {
		return nil, err
	}
	loss, err := pairwise.LossByName(pairwise.TaskAUC, ps.Loss)
	if err != nil {
		return nil, err
	}
	if err := algo.Supports(pairwise.TaskAUC, ps.Loss); err != nil {
		return nil, err
	}
	fit := data.FitScaler
	if tab.IsSparse() && algo.ShiftInvariant {
		fit = data.FitScalerSparse // applied unshifted below: stays sparse
	}
	sc, err := fit("minmax", tab.Dataset)
	if err != nil {
		return nil, err
	}
	var ds *pairwise.Dataset
	if tab.IsSparse() && algo.ShiftInvariant {
		// Sparse stays sparse: the shift cancels in x_i − x_j, and the
		// scores move by a constant (data.Scaler.ApplyUnshifted).
		ds = sc.ApplyUnshifted(tab.Dataset)
	} else {
		ds = sc.Apply(tab.Dataset)
	}
	nTr := int(0.8 * float64(ds.N))
	rng := rand.New(rand.NewPCG(ps.Seed, 1))
	start := time.Now()
	var grads atomic.Int64 // pair gradients of every fit, selection included

	// Grid search on RepeatedKFold(5, 2): mean over folds of the per-fold
	// maximum over checkpoints (exp_cv.auc_fix_para).
	cvSplits, err := paperSplits(ds.N, ps.Splits, ps.CVRepeats, rng)
	if err != nil {
		return nil, err
	}
	type cell struct {
		eta, beta, auc float64
		best           []float64 // per fold: the maximum AUC over checkpoints
		errs           []error
	}
	cells := make([]cell, 0, len(ps.Grid)*len(ps.Grid))
	for _, e := range ps.Grid {
		for _, b := range ps.Grid {
			cells = append(cells, cell{eta: e, beta: b, best: make([]float64, len(cvSplits)), errs: make([]error, len(cvSplits))})
		}
	}
	// The splits are kept as indices into ds, and one at a time is laid
	// out in ds's storage (data.Holdout: no copy of a fold), its cells'
	// fits run on ps.Workers goroutines, and ds put back.
	// Seeds are fixed per (cell, fold) and each cell's mean is summed in
	// fold order below, so the result does not depend on the schedule.
	var h data.Holdout
	defer h.Restore()
	for fi, te := range cvSplits {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("experiment: interrupted: %w", err)
		}
		f := paperSplit(&h, ds, te, nTr)
		parallelOn(ps.Workers, len(cells), func(ci int, _ *pairwise.AUCScratch) {
			c := &cells[ci]
			if err := ctx.Err(); err != nil {
				c.errs[fi] = err
				return
			}
			aucs, _, err := paperRun(ctx, algo, loss, f, ps.Passes, c.eta, c.beta, ps.Seed+uint64(1000*ci+fi), &grads)
			if err != nil {
				c.errs[fi] = err
				return
			}
			best := math.Inf(-1)
			for _, a := range aucs {
				if a > best { // NaN (diverged) never wins, as np.max would poison
					best = a
				}
			}
			c.best[fi] = best
		})
		h.Restore()
	}
	for c := range cells {
		var sum float64
		for fi := range cvSplits {
			if err := cells[c].errs[fi]; err != nil {
				return nil, err
			}
			sum += cells[c].best[fi]
		}
		cells[c].auc = sum / float64(len(cvSplits))
	}
	bestCell := cells[0]
	bestCell.auc = math.Inf(-1)
	for _, c := range cells {
		if c.auc > bestCell.auc {
			bestCell = c
		}
	}

	// Test: RepeatedKFold(5, 5) with the chosen (η, β).
	testSplits, err := paperSplits(ds.N, ps.Splits, ps.TestRepeats, rng)
	if err != nil {
		return nil, err
	}
	var curves [][]float64
	var trainSeconds float64
	var nTrain, nTest int // of the first test fold
	for fi, te := range testSplits {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("experiment: interrupted: %w", err)
		}
		f := paperSplit(&h, ds, te, nTr) // one split at a time, in ds's storage
		if fi == 0 {
			nTrain, nTest = f.train.N, f.test.N
		}
		aucs, secs, err := paperRun(ctx, algo, loss, f, ps.Passes, bestCell.eta, bestCell.beta, ps.Seed+uint64(1_000_000+fi), &grads)
		if err != nil {
			return nil, err
		}
		curves = append(curves, aucs)
		trainSeconds += secs
	}
	perRun := trainSeconds / float64(len(testSplits))
	cps := PaperCheckpoints(ps.Passes * (nTr - 1))
	res := &PaperResult{Algo: ps.Algo, Loss: ps.Loss, Eta: bestCell.eta, Beta: bestCell.beta, CVAUC: bestCell.auc,
		Checkpoints: cps, Runs: len(testSplits), SecondsPerRun: perRun, TrainSeconds: trainSeconds,
		NTrain: nTrain, NTest: nTest, D: ds.D}
	res.AUC = math.Inf(-1)
	for k := range cps {
		col := make([]float64, len(curves))
		for r := range curves {
			col[r] = curves[r][k]
		}
		s := Summarize(col)
		res.Curve = append(res.Curve, s.Mean)
		if s.Mean > res.AUC {
			res.AUC, res.Std, res.Checkpoint, res.Values = s.Mean, s.Std, cps[k], col
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.PairGrads = grads.Load()
	if math.IsInf(res.AUC, -1) {
		return nil, fmt.Errorf("experiment: every checkpoint AUC is NaN (diverged)")
	}
	return res, nil
}
