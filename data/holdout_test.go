package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// holdoutData returns a random dense or CSR dataset of n records: values
// include −0, NaN and ±Inf (compared bit for bit), CSR rows 0 to d
// nonzeros (empty rows included), and the CSR arrays start at a nonzero
// offset, as a part of a larger dataset's arrays does.
func holdoutData(rng *rand.Rand, n, d int, sparse bool) *pairwise.Dataset {
	val := func() float64 {
		switch rng.IntN(20) {
		case 0:
			return math.Copysign(0, -1)
		case 1:
			return math.NaN()
		case 2:
			return math.Inf(1 - 2*rng.IntN(2))
		}
		return rng.NormFloat64()
	}
	ds := &pairwise.Dataset{N: n, D: d, Y: make([]float64, n)}
	for i := range ds.Y {
		ds.Y[i] = float64(2*rng.IntN(2) - 1)
	}
	if !sparse {
		ds.X = make([]float64, n*d)
		for i := range ds.X {
			ds.X[i] = val()
		}
		return ds
	}
	off := rng.IntN(3)
	ds.Ptr = []int{off}
	ds.Idx, ds.Val = make([]int32, off), make([]float64, off)
	for range n {
		for j := range d {
			if rng.IntN(3) == 0 {
				ds.Idx = append(ds.Idx, int32(j))
				ds.Val = append(ds.Val, val())
			}
		}
		ds.Ptr = append(ds.Ptr, len(ds.Idx))
	}
	return ds
}

// sameRecords reports where a and b differ as datasets: sizes, labels,
// and rows (bits of every value; CSR rows by their own entries, so the
// arrays' offsets do not matter). "" when they are the same.
func sameRecords(a, b *pairwise.Dataset) string {
	bits := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for k := range x {
			if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
				return false
			}
		}
		return true
	}
	switch {
	case a.N != b.N || a.D != b.D:
		return "sizes"
	case !bits(a.Y, b.Y):
		return "labels"
	case a.N == 0:
		return "" // Subset of no records has neither representation
	case (a.X == nil) != (b.X == nil) || (a.Ptr == nil) != (b.Ptr == nil):
		return "representation"
	case a.X != nil:
		if !bits(a.X, b.X) {
			return "rows"
		}
		return ""
	}
	for i := range a.N {
		ai, av := a.SparseRow(i)
		bi, bv := b.SparseRow(i)
		if !slices.Equal(ai, bi) || !bits(av, bv) {
			return fmt.Sprintf("row %d", i)
		}
	}
	return ""
}

// TestHoldoutIsSubset checks that Move's two parts are the records of the
// gathered copies selection used to make, in the same order, bit for bit,
// that every part is a slice of the dataset's own storage, and that Restore
// returns the dataset to its original bits — over dense and CSR data,
// random folds (empty, one record, every record), and a Holdout reused
// across folds without a Restore in between.
func TestHoldoutIsSubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var h Holdout
	for trial := range 400 {
		n, d := rng.IntN(40), 1+rng.IntN(6)
		sparse := trial%2 == 1
		ds := holdoutData(rng, n, d, sparse)
		orig := clone(ds)
		for range 3 {
			var fold []int
			switch rng.IntN(5) {
			case 0: // empty
			case 1:
				fold = make([]int, n) // every record
				for i := range fold {
					fold[i] = i
				}
			default:
				for i := range n {
					if rng.IntN(3) == 0 {
						fold = append(fold, i)
					}
				}
			}
			wantFit, wantVal := orig.Subset(Complement(n, fold)), orig.Subset(fold)
			fit, val := h.Move(ds, fold)
			if s := sameRecords(fit, wantFit); s != "" {
				t.Fatalf("trial %d (n %d, d %d, sparse %v, fold %v): fit differs from the gathered copy: %s", trial, n, d, sparse, fold, s)
			}
			if s := sameRecords(val, wantVal); s != "" {
				t.Fatalf("trial %d (n %d, d %d, sparse %v, fold %v): val differs from the gathered copy: %s", trial, n, d, sparse, fold, s)
			}
			if !sparse && (len(fit.X) > 0 && &fit.X[0] != &ds.X[0] || len(val.X) > 0 && &val.X[0] != &ds.X[fit.N*d]) {
				t.Fatalf("trial %d: a part is not a view of the dataset's rows", trial)
			}
			if sparse && (len(fit.Idx) > 0 && &fit.Idx[0] != &ds.Idx[ds.Ptr[0]] || len(val.Idx) > 0 && &val.Idx[0] != &ds.Idx[ds.Ptr[fit.N]]) {
				t.Fatalf("trial %d: a part is not a view of the dataset's entries", trial)
			}
			if rng.IntN(2) == 0 {
				h.Restore()
				if s := sameRecords(ds, orig); s != "" || !slices.Equal(ds.Ptr, orig.Ptr) {
					t.Fatalf("trial %d (n %d, d %d, sparse %v, fold %v): Restore left the dataset changed: %s", trial, n, d, sparse, fold, s)
				}
			}
		}
		h.Restore()
		h.Restore() // a second Restore does nothing
		if s := sameRecords(ds, orig); s != "" || !slices.Equal(ds.Ptr, orig.Ptr) {
			t.Fatalf("trial %d (n %d, d %d, sparse %v): Restore left the dataset changed: %s", trial, n, d, sparse, s)
		}
	}
}

// TestHoldoutRejectsBadFolds checks that a fold that is not strictly
// increasing indices in range panics with a message naming it, before
// anything moves.
func TestHoldoutRejectsBadFolds(t *testing.T) {
	for _, fold := range [][]int{{-1}, {5}, {2, 1}, {1, 1}} {
		ds := holdoutData(rand.New(rand.NewPCG(1, 1)), 5, 3, false)
		orig := clone(ds)
		func() {
			defer func() {
				r, _ := recover().(string)
				if !strings.Contains(r, "strictly increasing indices in [0, 5)") {
					t.Errorf("fold %v: panic %q, want one naming the rule", fold, r)
				}
			}()
			var h Holdout
			h.Move(ds, fold)
		}()
		if s := sameRecords(ds, orig); s != "" {
			t.Errorf("fold %v: the dataset changed: %s", fold, s)
		}
	}
}

// TestPartitionIsSubset checks that Partition's parts are the records of
// the gathered split, in the same order, bit for bit, as slices of the
// dataset's own storage that may then be written (scaled in place)
// without touching each other.
func TestPartitionIsSubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sparse := range []bool{false, true} {
		for _, n := range []int{1, 2, 7, 40} {
			ds := holdoutData(rng, n, 5, sparse)
			var fold []int
			for i := range n {
				if rng.IntN(3) == 0 {
					fold = append(fold, i)
				}
			}
			wantFit, wantVal := ds.Subset(Complement(n, fold)), ds.Subset(fold)
			fit, val := Partition(ds, fold)
			if d := sameRecords(fit, wantFit); d != "" {
				t.Fatalf("sparse %v n %d: fitting part differs from the gathered one: %s", sparse, n, d)
			}
			if d := sameRecords(val, wantVal); d != "" {
				t.Fatalf("sparse %v n %d: held-out part differs from the gathered one: %s", sparse, n, d)
			}
			if len(fold) == 0 || len(fold) == n {
				continue
			}
			// Both parts are ds's storage: writing one shows in ds, not
			// in the other.
			fit.Y[0], val.Y[0] = 5, 7
			if ds.Y[0] != 5 || ds.Y[n-len(fold)] != 7 || slices.Contains(val.Y, 5) {
				t.Fatalf("sparse %v n %d: the parts are not disjoint slices of ds (labels %v)", sparse, n, ds.Y)
			}
		}
	}
}
