package pairwise

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestKNNSortedMatchesScan: the sorted scan predicts exactly what the
// index-order scan does — random and integer-valued data (many exactly
// tied distances, so the (distance, index) order and the strict pruning
// test matter), full-rank, rank-deficient and zero metrics, k = 1…5,
// leave-one-out and train/test; d up to 23 and up to 300 training records
// (blocks of sixteen, a partial last one).
func TestKNNSortedMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for trial := 0; trial < 90; trial++ {
		d := 1 + rng.IntN(6)
		nTr, nTe := 1+rng.IntN(120), 1+rng.IntN(60)
		if trial >= 60 {
			// Several blocks of sixteen, a partial last block, and
			// coordinate counts past the kernel's checks every four.
			d, nTr = 7+rng.IntN(17), 1+rng.IntN(300)
		}
		integer := trial%2 == 0
		mk := func(n int) *Dataset {
			x := make([]float64, n*d)
			y := make([]float64, n)
			for i := range x {
				x[i] = rng.NormFloat64()
				if integer {
					x[i] = float64(rng.IntN(3))
				}
			}
			for i := range y {
				y[i] = float64(2*rng.IntN(2) - 1)
			}
			return &Dataset{N: n, D: d, X: x, Y: y}
		}
		train, test := mk(nTr), mk(nTe)
		W := make([]float64, d*d)
		switch trial % 3 {
		case 0: // identity
			for a := 0; a < d; a++ {
				W[a*d+a] = 1
			}
		case 1: // rank one or two PSD
			for r := 0; r < 1+trial%2; r++ {
				v := make([]float64, d)
				for a := range v {
					v[a] = rng.NormFloat64()
				}
				for a := 0; a < d; a++ {
					for b := 0; b < d; b++ {
						W[a*d+b] += v[a] * v[b]
					}
				}
			}
		case 2:
			if trial%5 == 0 {
				break // W = 0: every distance ties
			}
			g := randSym(rng, d, 1)
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					for c := 0; c < d; c++ {
						W[a*d+b] += g[a*d+c] * g[b*d+c]
					}
				}
			}
		}
		for k := 1; k <= 5; k++ {
			for _, loo := range []bool{false, true} {
				te := test
				if loo {
					if train.N < 2 {
						continue
					}
					te = train
				}
				kk := k
				if loo {
					kk = min(k, train.N-1)
				}
				var got, want [2][]float64
				for f, sorted := range []bool{false, true} {
					old := knnSortedScan
					knnSortedScan = sorted
					p := make([]float64, te.N)
					knnPredict(p, W, train, te.All(), kk, loo)
					knnSortedScan = old
					got[f] = p
				}
				want = got
				for i := range want[0] {
					if want[0][i] != got[1][i] {
						t.Fatalf("trial %d k=%d loo=%v: record %d: scan %v, sorted %v", trial, kk, loo, i, want[0][i], got[1][i])
					}
				}
			}
		}
	}
}

// BenchmarkKNN3Sorted: KNN-3 accuracy of a learned-looking metric (three
// informative directions, the rest small) on d = 20 synthetic records,
// the index-order scan against the sorted scan.
func BenchmarkKNN3Sorted(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		rng := rand.New(rand.NewPCG(53, uint64(n)))
		const d = 20
		mk := func(n int) *Dataset {
			x := make([]float64, n*d)
			y := make([]float64, n)
			for i := 0; i < n; i++ {
				for a := 0; a < d; a++ {
					x[i*d+a] = rng.NormFloat64()
				}
				y[i] = 1
				if x[i*d]+0.7*x[i*d+1]-0.5*x[i*d+2]+0.7*rng.NormFloat64() < 0 {
					y[i] = -1
				}
			}
			return &Dataset{N: n, D: d, X: x, Y: y}
		}
		train, test := mk(n), mk(n/4)
		W := make([]float64, d*d)
		for a := 0; a < d; a++ {
			W[a*d+a] = 0.05
		}
		W[0], W[d+1], W[2*d+2] = 1, 0.7, 0.5
		for _, mode := range []string{"scan", "sorted"} {
			b.Run(fmt.Sprintf("%s/n=%d", mode, n), func(b *testing.B) {
				old := knnSortedScan
				knnSortedScan = mode == "sorted"
				defer func() { knnSortedScan = old }()
				for i := 0; i < b.N; i++ {
					KNN3Accuracy(W, train, test)
				}
			})
		}
	}
}
