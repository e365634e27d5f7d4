package data

import (
	"github.com/pairfed/pairfed/pairwise"
	"math/rand/v2"
	"testing"
)

// BenchmarkHoldout is one Move and Restore of a third of an ijcnn1-shaped
// training split (39 992 × 22, dense) and of an a9a-shaped one (26 049 ×
// 123, CSR, about 14 nonzeros per record): what selection does per fold and
// rung instead of gathering the fold's fitting and validation sets.
func BenchmarkHoldout(b *testing.B) {
	for _, c := range []struct {
		name   string
		n, d   int
		sparse bool
	}{{"ijcnn1-shape", 39_992, 22, false}, {"a9a-shape", 26_049, 123, true}} {
		rng := rand.New(rand.NewPCG(1, 2))
		var ds *pairwise.Dataset
		if c.sparse {
			ds = sparseShape(rng, c.n, c.d, 14)
		} else {
			ds = holdoutData(rng, c.n, c.d, false)
		}
		folds, err := StratifiedKFold(ds.Y, 3, rng)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			var h Holdout
			for i := range b.N {
				h.Move(ds, folds[i%3])
				h.Restore()
			}
		})
	}
}

// sparseShape returns n CSR records of d features with nnz nonzeros each.
func sparseShape(rng *rand.Rand, n, d, nnz int) *pairwise.Dataset {
	ds := &pairwise.Dataset{N: n, D: d, Y: make([]float64, n), Ptr: []int{0}}
	for i := range n {
		ds.Y[i] = float64(2*rng.IntN(2) - 1)
		for j := 0; j < nnz; j++ {
			ds.Idx = append(ds.Idx, int32(j*(d/nnz)))
			ds.Val = append(ds.Val, 1)
		}
		ds.Ptr = append(ds.Ptr, len(ds.Idx))
	}
	return ds
}
