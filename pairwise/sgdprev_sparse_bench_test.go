package pairwise

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sparseUniform is a seeded CSR dataset of n records in d dimensions with
// nnz nonzeros per row at uniform random columns (values N(0, 1), the
// positives shifted by 1 on column 0's value when present), rows scaled
// to the unit ball: the shape scripts/sparsefloor's C program generates.
func sparseUniform(n, d, nnz int, pos float64, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 5))
	ds := &Dataset{N: n, D: d, Y: make([]float64, n), Ptr: make([]int, n+1),
		Idx: make([]int32, 0, n*nnz), Val: make([]float64, 0, n*nnz)}
	seen := make(map[int32]bool, nnz)
	cols := make([]int32, 0, nnz)
	for i := range n {
		ds.Y[i] = -1
		if rng.Float64() < pos {
			ds.Y[i] = 1
		}
		clear(seen)
		cols = cols[:0]
		for len(cols) < nnz {
			c := int32(rng.IntN(d))
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
		sortInt32(cols)
		lo := len(ds.Val)
		var s float64
		for _, c := range cols {
			v := rng.NormFloat64()
			if ds.Y[i] > 0 && c%2 == 0 {
				v += 0.5 // a signal on the even columns
			}
			ds.Idx = append(ds.Idx, c)
			ds.Val = append(ds.Val, v)
			s += v * v
		}
		if s > 1 {
			f := 1 / math.Sqrt(s)
			for k := lo; k < len(ds.Val); k++ {
				ds.Val[k] *= f
			}
		}
		ds.Ptr[i+1] = len(ds.Idx)
	}
	return ds
}

func sortInt32(a []int32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// BenchmarkPrevSparseStep measures sgd-prev on sparse data with 12
// nonzeros per row (n = 10⁵ or 10⁴, 30 % positives, hinge loss, unit ℓ2 ball or
// none) at d = 10³, 10⁴, 10⁵ (and n = 10⁴, whose rows stay in cache): ns/op and cpu-ns/op are per draw. "general"
// is RunPairSGD (the reference, O(d) per update), "fast" the loop sgd-prev
// runs (the lazy O(nnz) loop at these shapes, sgdprev_sparse.go), for the
// default output (paper) and the paper protocol's (window). Compare with
// the C floor: sh scripts/sparsefloor.sh.
func BenchmarkPrevSparseStep(b *testing.B) {
	for _, sh := range []struct{ n, d int }{{100000, 1000}, {100000, 10000}, {100000, 100000}, {10000, 10000}, {10000, 100000}} {
		n, d := sh.n, sh.d
		ds := sparseUniform(n, d, 12, 0.3, 7)
		for _, con := range []string{"l2", "none"} {
			obj, err := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Constraint: con, Radius: 1})
			if err != nil {
				b.Fatal(err)
			}
			for _, path := range []string{"general", "fast"} {
				for _, avg := range []Averaging{AvgPaper, AvgWindow} {
					b.Run(fmt.Sprintf("%s/%s/%s/n=%d/d=%d", path, avg, con, n, d), func(b *testing.B) {
						rng := rand.New(rand.NewPCG(1, 2))
						cfg := RunConfig{Eta: 0.5, Steps: b.N, Averaging: avg}
						b.ReportAllocs()
						b.ResetTimer()
						var err error
						c0 := cpuNanos()
						if path == "fast" {
							_, err = RunPrevSGD(context.Background(), obj, cfg, rng, b.N, ScaledConstant)
						} else {
							_, err = RunPairSGD(context.Background(), obj, cfg, rng, &PrevInstance{N: ds.N}, b.N, ScaledConstant)
						}
						if err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N), "cpu-ns/op")
					})
				}
			}
		}
	}
}
