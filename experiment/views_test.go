package experiment

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
)

// paperWithCopies is the paper protocol as it ran before folds were views:
// every fold's training and test records copied (Subset), the grid searched
// cell by cell on one goroutine. It returns the selection score, the chosen
// (η, β) and the test phase's per-fold AUC curves.
func paperWithCopies(t *testing.T, ps PaperSpec, tab *data.Table) (cvAUC, eta, beta float64, curves [][]float64) {
	t.Helper()
	ps.defaults()
	ctx := context.Background()
	algo, err := pairwise.Lookup(ps.Algo)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := pairwise.LossByName(pairwise.TaskAUC, ps.Loss)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := data.FitScaler("minmax", tab.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	ds := sc.Apply(tab.Dataset)
	if tab.IsSparse() && algo.ShiftInvariant {
		ds = sc.ApplyUnshifted(tab.Dataset)
	}
	nTr := int(0.8 * float64(ds.N))
	copied := func(te []int) paperFold {
		tr := data.Complement(ds.N, te)
		return paperFold{ds.Subset(tr[:min(nTr, len(tr))]), ds.Subset(te)}
	}
	rng := rand.New(rand.NewPCG(ps.Seed, 1))
	var grads atomic.Int64
	cv, err := paperSplits(ds.N, ps.Splits, ps.CVRepeats, rng)
	if err != nil {
		t.Fatal(err)
	}
	cvAUC = math.Inf(-1)
	c := 0
	for _, e := range ps.Grid {
		for _, b := range ps.Grid {
			var sum float64
			for fi, sp := range cv {
				aucs, _, err := paperRun(ctx, algo, loss, copied(sp), ps.Passes, e, b, ps.Seed+uint64(1000*c+fi), &grads)
				if err != nil {
					t.Fatal(err)
				}
				best := math.Inf(-1)
				for _, a := range aucs {
					if a > best {
						best = a
					}
				}
				sum += best
			}
			if m := sum / float64(len(cv)); m > cvAUC {
				cvAUC, eta, beta = m, e, b
			}
			c++
		}
	}
	test, err := paperSplits(ds.N, ps.Splits, ps.TestRepeats, rng)
	if err != nil {
		t.Fatal(err)
	}
	for fi, sp := range test {
		aucs, _, err := paperRun(ctx, algo, loss, copied(sp), ps.Passes, eta, beta, ps.Seed+uint64(1_000_000+fi), &grads)
		if err != nil {
			t.Fatal(err)
		}
		curves = append(curves, aucs)
	}
	return cvAUC, eta, beta, curves
}

// TestPaperIndexedFoldsMatchCopies: the paper protocol with its splits
// kept as indices (each fold laid out in the scaled data's own storage by
// data.Holdout, a fold's fits on 1 to 3 workers) selects the same cell with
// the same score and gives the same AUC curve, bit for bit, as the protocol
// run on a copy of every fold made up front — dense and sparse storage.
func TestPaperIndexedFoldsMatchCopies(t *testing.T) {
	for _, rep := range []string{data.Dense, data.Sparse} {
		tab, err := data.Load("../datasets/diabetes", data.Options{Representation: rep})
		if err != nil {
			t.Fatal(err)
		}
		ps := PaperSpec{Algo: "sgd-prev", Passes: 2, CVRepeats: 1, TestRepeats: 1, Grid: []float64{0.1, 1, 10}, Seed: 3}
		cvAUC, eta, beta, curves := paperWithCopies(t, ps, tab)
		mean := make([]float64, len(curves[0]))
		for k := range mean {
			col := make([]float64, len(curves))
			for r := range curves {
				col[r] = curves[r][k]
			}
			mean[k] = Summarize(col).Mean
		}
		for _, workers := range []int{1, 2, 3} {
			ps.Workers = workers
			res, err := Paper(context.Background(), ps, tab)
			if err != nil {
				t.Fatal(err)
			}
			if res.CVAUC != cvAUC || res.Eta != eta || res.Beta != beta {
				t.Errorf("%s, %d workers: selected (η, β) = (%v, %v) at %v; with copies (%v, %v) at %v", rep, workers, res.Eta, res.Beta, res.CVAUC, eta, beta, cvAUC)
			}
			if !slices.Equal(res.Curve, mean) {
				t.Errorf("%s, %d workers: AUC curve %v, with copies %v", rep, workers, res.Curve, mean)
			}
		}
	}
}

// TestOuterSplitsAreViews: the honest protocol's evaluation splits read the
// loaded table through indices (no copy), and its k folds partition it.
func TestOuterSplitsAreViews(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	splits, err := outerSplits(Spec{Folds: 4}, tab, nil, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, tab.N)
	for k, sp := range splits {
		if sp.train.Data != tab.Dataset || sp.test.Data != tab.Dataset {
			t.Fatalf("fold %d is not a view of the loaded table", k)
		}
		if sp.train.Len()+sp.test.Len() != tab.N {
			t.Fatalf("fold %d: %d + %d records of %d", k, sp.train.Len(), sp.test.Len(), tab.N)
		}
		for _, i := range sp.test.Rows {
			seen[i]++
		}
		in := map[int]bool{}
		for _, i := range sp.test.Rows {
			in[i] = true
		}
		for _, i := range sp.train.Rows {
			if in[i] {
				t.Fatalf("fold %d: record %d in both parts", k, i)
			}
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("record %d is in %d test folds, want 1", i, c)
		}
	}
	one, err := outerSplits(Spec{TestFraction: 0.2}, tab, nil, rand.New(rand.NewPCG(1, 1)))
	if err != nil || len(one) != 1 || one[0].train.Data != tab.Dataset || one[0].test.Data != tab.Dataset {
		t.Fatalf("holdout split is not a view of the table (err %v)", err)
	}
}

// TestPaperStopsPartWay: the paper protocol stopped by its context at any
// point — before the first split, inside the selection's splits or in the
// test phase — returns the context's error (its splits laid out in place
// are put back by the same paths; TestSelectionRestoresTrainingSet checks
// the restoring on data the caller sees).
func TestPaperStopsPartWay(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	ps := PaperSpec{Algo: "sgd-prev", Passes: 2, CVRepeats: 1, TestRepeats: 1, Grid: []float64{0.1, 1}, Seed: 3}
	ctx := &errAfter{Context: context.Background()}
	ctx.limit.Store(math.MaxInt64)
	if _, err := Paper(ctx, ps, tab); err != nil {
		t.Fatal(err)
	}
	total := ctx.calls.Load()
	for _, limit := range []int64{1, total / 3, total / 2, total - 1} {
		ctx := &errAfter{Context: context.Background()}
		ctx.limit.Store(limit)
		if _, err := Paper(ctx, ps, tab); !errors.Is(err, context.Canceled) {
			t.Errorf("stopped at check %d of %d: error %v, want context.Canceled", limit, total, err)
		}
	}
}
