package experiment

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
)

// simple-pairwise get_res_idx(6140) with rec_log = 0.5:
// (2 ** np.arange(4, log2(6140), .5)).astype(int), last entry = 6140.
func TestPaperCheckpointsMatchAuthorsCode(t *testing.T) {
	got := PaperCheckpoints(6140)
	want := []int{16, 22, 32, 45, 64, 90, 128, 181, 256, 362, 512, 724, 1024, 1448, 2048, 2896, 4096, 6140}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("checkpoint %d: got %d want %d (all: %v)", i, got[i], want[i], got)
		}
	}
}

func loadBundled(t *testing.T, name string) *data.Table {
	t.Helper()
	tab, err := data.Load("../datasets/"+name, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// The honest protocol on diabetes with fixed hyperparameters: the AUC of
// sgd-prev must be well above chance. [Y21a] Table 1 reports .831 ± .030;
// 3 runs with a fixed seed must land within 3σ/√3 + 0.02 of it (0.02 for the
// different split protocol).
func TestRunSGDPrevOnDiabetes(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	rep, err := Run(context.Background(), Spec{Algo: "sgd-prev", Eta: 10, ParamRadius: 100, Runs: 3, Folds: 5, Seed: 1}, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.AUC.Values) != 15 {
		t.Fatalf("want 15 evaluations (3 runs × 5 folds), got %d", len(rep.AUC.Values))
	}
	if math.Abs(rep.AUC.Mean-0.831) > 3*0.030/math.Sqrt(15)+0.02 {
		t.Fatalf("AUC %.4f too far from the paper's .831", rep.AUC.Mean)
	}
	if rep.Private || rep.PairSteps <= 0 || rep.NTrain+rep.NTest != tab.N {
		t.Fatalf("bad report %+v", rep)
	}
}

// Selection must only see the training split: with a test table given, the
// selected η must not change when the test labels are flipped.
func TestSelectionNeverSeesTest(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	idx := make([]int, 200)
	for i := range idx {
		idx[i] = i
	}
	train := &data.Table{Dataset: tab.Subset(idx), Source: "train"}
	rest := make([]int, tab.N-200)
	for i := range rest {
		rest[i] = 200 + i
	}
	test := &data.Table{Dataset: tab.Subset(rest), Source: "test"}
	flipped := &data.Table{Dataset: tab.Subset(rest), Source: "flipped"}
	for i := range flipped.Y {
		flipped.Y[i] = -flipped.Y[i]
	}
	spec := Spec{Algo: "sgd-prev", Runs: 1, Seed: 3, Grid: []float64{0.01, 1, 100}}
	a, err := Run(context.Background(), spec, train, test)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), spec, train, flipped)
	if err != nil {
		t.Fatal(err)
	}
	if a.Eta[0] != b.Eta[0] || a.ParamRadius[0] != b.ParamRadius[0] {
		t.Fatalf("selection depends on test labels: %v/%v vs %v/%v", a.Eta, a.ParamRadius, b.Eta, b.ParamRadius)
	}
	if math.Abs(a.AUC.Mean+b.AUC.Mean-1) > 1e-9 {
		t.Fatalf("flipping test labels should give 1 − AUC: %v, %v", a.AUC.Mean, b.AUC.Mean)
	}
}

func TestSpecValidateRejects(t *testing.T) {
	bad := []Spec{
		{Algo: "nope"},
		{Algo: "spauc", Loss: "hinge"},
		{Algo: "giga"}, // needs λ
		{Algo: "sgd-prev", Eta: -1},
		{Algo: "sgd-prev", FeatureRadius: math.NaN()},
		{Algo: "sgd-prev", Task: pairwise.TaskMetric, Loss: "square"},
		{Algo: "sgd-prev", TestFraction: 1.5},
	}
	for _, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
}

// Metric learning on the bundled messidor file produces a valid accuracy and
// clipping keeps every record within R (checked through the report path).
func TestRunMetricLearning(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	rep, err := Run(context.Background(), Spec{Task: pairwise.TaskMetric, Algo: "sgd-prev", Loss: "logistic", Eta: 1, ParamRadius: 10,
		FeatureRadius: 1, Runs: 2, TrainSize: 128, Seed: 2}, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 65% is the majority-class rate of diabetes: a learned metric must beat
	// it clearly on average ([X21] Table 2 non-private: 71.4% at n = 128).
	if rep.KNN3 == nil || rep.KNN3.Mean < 0.68 {
		t.Fatalf("KNN-3 accuracy %+v", rep.KNN3)
	}
}

// A private evaluation with several runs releases several models of the same
// records: the report must say each model's guarantee is per model.
func TestPrivateRunsWarnAboutComposition(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	rep, err := Run(context.Background(), Spec{Algo: "dpegd", Loss: "logistic", Epsilon: 1, FeatureRadius: 1, Runs: 2, Seed: 1,
		Seeded: true, NoiseSeed: 3}, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range rep.Notes {
		found = found || strings.Contains(n, "2 models were trained on overlapping records")
	}
	if !found || rep.Private {
		t.Fatalf("notes %q, private %v (seeded noise must not be private)", rep.Notes, rep.Private)
	}
}

// Successive halving's budget: 6×6 cells on 3 folds at T/9, the best 12 at
// T/3 and the best 4 at T (sgd-prev, 10 passes: T_k = ⌈10·n_k⌉ on fitting
// fold k), so the selection's pair steps are exactly that sum; with 5
// passes (5/9 < 1 pass) every cell gets the whole T. And an algorithm
// without a pass budget is never halved.
func TestSelectionHalvingBudget(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	algo, _ := pairwise.Lookup("sgd-prev")
	// diabetes' full search (36 cells × 3 folds × ⌈10·512⌉ steps) is
	// below the threshold: lower it for the test, and check it holds.
	{
		spec := Spec{Algo: "sgd-prev", Seed: 1}
		_ = spec.Validate()
		_, _, steps, err := selectParams(context.Background(), spec, algo, tab.Dataset, rand.New(rand.NewPCG(1, 0)))
		if err != nil {
			t.Fatal(err)
		}
		want := flatSelectionSteps(tab, 10)
		if want >= halvingMinSteps || steps != want {
			t.Fatalf("below the threshold: %d pair steps, want the full %d", steps, want)
		}
	}
	defer func(v int64) { halvingMinSteps = v }(halvingMinSteps)
	halvingMinSteps = 0
	for _, passes := range []float64{0, 5} {
		spec := Spec{Algo: "sgd-prev", Seed: 1, Passes: passes}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 0))
		_, _, steps, err := selectParams(context.Background(), spec, algo, tab.Dataset, rng)
		if err != nil {
			t.Fatal(err)
		}
		folds, _ := data.StratifiedKFold(tab.Y, 3, rand.New(rand.NewPCG(1, 0)))
		var want int64
		for _, f := range folds {
			n := float64(tab.N - len(f))
			if passes == 0 {
				want += 36*int64(math.Ceil(10.0/9*n)) + 12*int64(math.Ceil(10.0/3*n)) + 4*int64(math.Ceil(10*n))
			} else {
				want += 36 * int64(math.Ceil(passes*n))
			}
		}
		if steps != want {
			t.Fatalf("passes %v: selection ran %d pair steps, want %d", passes, steps, want)
		}
	}
	// The same budget without halving is 36 cells at T: 3× the default's.
	flat := *algo
	flat.Passes = 0
	spec := Spec{Algo: "sgd-prev", Seed: 1}
	_ = spec.Validate()
	_, _, steps, err := selectParams(context.Background(), spec, &flat, tab.Dataset, rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if want := flatSelectionSteps(tab, 10); steps != want {
		t.Fatalf("no pass budget: %d pair steps, want %d", steps, want)
	}
}

// flatSelectionSteps is the pair steps of selection without halving: the
// 36 cells of the grid at ⌈passes·n⌉ steps on each of the 3 seeded
// stratified folds' training parts.
func flatSelectionSteps(tab *data.Table, passes float64) int64 {
	folds, _ := data.StratifiedKFold(tab.Y, 3, rand.New(rand.NewPCG(1, 0)))
	var want int64
	for _, f := range folds {
		want += 36 * int64(math.Ceil(passes*float64(tab.N-len(f))))
	}
	return want
}

// Sparse data is scaled without its shift and stays sparse for a
// shift-invariant algorithm: the models see the same differences up to
// rounding, so selection picks the same cell and the AUC agrees with the
// dense run's to rounding (a hinge decision would have to fall within
// ~1e-15 of its threshold to flip; none does on this seed). A private run
// (clipping needs the shift) still densifies.
func TestSparseStaysSparseThroughScaling(t *testing.T) {
	dense, err := data.Load("../datasets/diabetes", data.Options{Representation: data.Dense})
	if err != nil {
		t.Fatal(err)
	}
	sparse, err := data.Load("../datasets/diabetes", data.Options{Representation: data.Sparse})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Algo: "sgd-prev", Seed: 4, Runs: 2}
	a, err := Run(context.Background(), spec, dense, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), spec, sparse, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.Notes, unshiftedNote) || slices.Contains(a.Notes, unshiftedNote) {
		t.Fatalf("notes: dense %q, sparse %q", a.Notes, b.Notes)
	}
	if !slices.Equal(a.Eta, b.Eta) || !slices.Equal(a.ParamRadius, b.ParamRadius) {
		t.Fatalf("selection differs: dense %v/%v, sparse %v/%v", a.Eta, a.ParamRadius, b.Eta, b.ParamRadius)
	}
	for k := range a.AUC.Values {
		if d := math.Abs(a.AUC.Values[k] - b.AUC.Values[k]); d > 1e-9 {
			t.Fatalf("run %d: dense AUC %v, sparse %v", k, a.AUC.Values[k], b.AUC.Values[k])
		}
	}
	// With clipping the shift matters: prepare applies the full map.
	tr := sparse.Subset([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	for _, s := range []Spec{{Algo: "sgd-prev", Scale: "minmax", FeatureRadius: 1}, {Algo: "olp", Scale: "minmax"}, {Algo: "sgd-prev", Scale: "none"}} {
		if _, _, pre, err := prepare(s, tr, tr, false, nil); err != nil || pre.Unshifted {
			t.Fatalf("%+v: unshifted %v, err %v", s, pre != nil && pre.Unshifted, err)
		}
	}
}

// sameDataset reports whether a and b hold the same sizes, labels, rows
// and CSR structure (the data are finite: == on values is bit equality up
// to the sign of zero).
func sameDataset(a, b *pairwise.Dataset) bool {
	return a.N == b.N && a.D == b.D && slices.Equal(a.Y, b.Y) && slices.Equal(a.X, b.X) &&
		slices.Equal(a.Ptr, b.Ptr) && slices.Equal(a.Idx, b.Idx) && slices.Equal(a.Val, b.Val)
}

// errAfter is a context whose Err reports Canceled from its limit-th call
// on: selection stopped part way, wherever its fits and loops check.
type errAfter struct {
	context.Context
	calls, limit atomic.Int64
}

func (c *errAfter) Err() error {
	if c.calls.Add(1) >= c.limit.Load() {
		return context.Canceled
	}
	return nil
}

// Selection lays each fold out in the training set's own storage
// (data.Holdout) and must leave it as it found it, bit for bit: after a
// whole selection, dense and CSR, with successive halving's three rungs,
// and after one stopped part way by its context.
func TestSelectionRestoresTrainingSet(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	dense := tab.Dataset
	sparse := &pairwise.Dataset{N: dense.N, D: dense.D, Y: dense.Y, Ptr: []int{0}}
	for i := range dense.N {
		for j, v := range dense.Row(i) {
			if v != 0 {
				sparse.Idx = append(sparse.Idx, int32(j))
				sparse.Val = append(sparse.Val, v)
			}
		}
		sparse.Ptr = append(sparse.Ptr, len(sparse.Idx))
	}
	defer func(v int64) { halvingMinSteps = v }(halvingMinSteps)
	halvingMinSteps = 0
	algo, _ := pairwise.Lookup("sgd-prev")
	for _, ds := range []*pairwise.Dataset{dense, sparse} {
		var total int64                               // the checks of a whole selection
		for _, limit := range []int64{0, 1, -2, -1} { // 0: never stopped; −m: total/m
			tr := ds.All().Gather() // a copy
			spec := Spec{Algo: "sgd-prev", Seed: 1, Passes: 2}
			if err := spec.Validate(); err != nil {
				t.Fatal(err)
			}
			ctx := &errAfter{Context: context.Background()}
			ctx.limit.Store(math.MaxInt64)
			if limit < 0 {
				limit = total / -limit
			}
			if limit > 0 {
				ctx.limit.Store(limit)
			}
			_, _, _, err := selectParams(ctx, spec, algo, tr, rand.New(rand.NewPCG(1, 0)))
			if (limit > 0) != errors.Is(err, context.Canceled) {
				t.Fatalf("sparse %v, stopped after %d checks: error %v", ds.IsSparse(), limit, err)
			}
			if limit == 0 {
				total = ctx.calls.Load()
			}
			if !sameDataset(tr, ds) {
				t.Errorf("sparse %v, stopped after %d checks: selection left the training set changed", ds.IsSparse(), limit)
			}
		}
	}
}
