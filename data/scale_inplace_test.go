package data

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// TestApplyInPlaceBitIdentical: ApplyInPlace and ApplyUnshiftedInPlace
// write over the dataset exactly the values Apply and ApplyUnshifted
// return, dense and sparse, for fitted, bounds (boxed, with a post
// factor) and "none" maps.
func TestApplyInPlaceBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	n, d := 200, 6
	dense := &pairwise.Dataset{N: n, D: d, Y: make([]float64, n), X: make([]float64, n*d)}
	for i := range n {
		dense.Y[i] = float64(1 - 2*(i%2))
		for j := range d {
			if rng.IntN(3) > 0 {
				dense.X[i*d+j] = rng.NormFloat64()*3 + float64(j)
			}
		}
	}
	sparse := clone(dense)
	sparse.X = nil
	sparse.Ptr = []int{0}
	for i := range n {
		for j, v := range dense.X[i*d : (i+1)*d] {
			if v != 0 {
				sparse.Idx = append(sparse.Idx, int32(j))
				sparse.Val = append(sparse.Val, v)
			}
		}
		sparse.Ptr = append(sparse.Ptr, len(sparse.Idx))
	}
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range d {
		lo[j], hi[j] = -2, float64(j)+1
	}
	same := func(t *testing.T, got, want *pairwise.Dataset) {
		t.Helper()
		a, b := got.X, want.X
		if got.X == nil {
			a, b = got.Val, want.Val
		}
		if len(a) != len(b) || got.IsSparse() != want.IsSparse() {
			t.Fatalf("shape differs: %d vs %d values", len(a), len(b))
		}
		for k := range a {
			if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
				t.Fatalf("value %d: %v, want %v", k, a[k], b[k])
			}
		}
	}
	for _, kind := range []string{"minmax", "standard", "bounds", "none"} {
		for _, ds := range []*pairwise.Dataset{dense, sparse} {
			var sc *Scaler
			switch kind {
			case "bounds":
				sc = NewBoundsScaler(lo, hi)
				sc.Post = 0.5
			default:
				var err error
				if sc, err = FitScaler(kind, dense); err != nil {
					t.Fatal(err)
				}
			}
			want := sc.Apply(ds)
			own := clone(ds)
			same(t, sc.ApplyInPlace(own), want)
			if kind == "minmax" || kind == "standard" {
				own = clone(ds)
				got := sc.ApplyUnshiftedInPlace(own)
				if got != own {
					t.Fatal("ApplyUnshiftedInPlace returned a copy")
				}
				same(t, got, sc.ApplyUnshifted(ds))
			}
		}
	}
}
