package experiment

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// BenchCase is one `pairfed bench` measurement.
type BenchCase struct {
	Name               string  `json:"name"`
	Algorithm          string  `json:"algorithm"`
	Averaging          string  `json:"averaging"` // the output rule: paper (the default) or window (the paper protocol's)
	N                  int     `json:"n"`
	D                  int     `json:"d"`
	PositiveShare      float64 `json:"positive_share"`
	Sparse             bool    `json:"sparse"`
	NNZPerRecord       float64 `json:"nnz_per_record"`
	Steps              int     `json:"steps"`
	NsPerStep          float64 `json:"ns_per_step"`
	PairStepsPerSecond float64 `json:"pair_steps_per_second"`
	AllocsPerStep      float64 `json:"allocs_per_step"`
	BytesPerStep       float64 `json:"bytes_per_step"`
}

// SyntheticAUC returns a seeded dataset of n records in d dimensions, a
// share pos of them positive, whose positives are shifted along feature 0,
// with every record clipped to ‖x‖ ≤ 1. With nnz > 0 each record has nnz
// nonzeros (CSR).
func SyntheticAUC(n, d, nnz int, pos float64, seed uint64) *pairwise.Dataset {
	rng := rand.New(rand.NewPCG(seed, 42))
	y := make([]float64, n)
	for i := range y {
		y[i] = -1
		if rng.Float64() < pos {
			y[i] = 1
		}
	}
	if nnz <= 0 {
		x := make([]float64, n*d)
		for i := 0; i < n; i++ {
			row := x[i*d : (i+1)*d]
			for k := range row {
				row[k] = rng.NormFloat64()
			}
			if y[i] > 0 {
				row[0] += 1
			}
			if s := pairwise.Norm2(row); s > 1 {
				for k := range row {
					row[k] /= s
				}
			}
		}
		return pairwise.NewDense(x, y, d)
	}
	ds := &pairwise.Dataset{N: n, D: d, Y: y, Ptr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		cols := rng.Perm(d)[:nnz]
		if y[i] > 0 {
			cols[0] = 0
		}
		sortInts(cols)
		v := 1 / math.Sqrt(float64(nnz))
		for _, c := range cols {
			ds.Idx = append(ds.Idx, int32(c))
			ds.Val = append(ds.Val, v)
		}
		ds.Ptr[i+1] = len(ds.Idx)
	}
	return ds
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// StepBenchmark returns a benchmark of algo's per-step cost: one Run of
// b.N iterations on ds with the hinge loss, a unit ℓ2 ball and the output
// rule avg — so per-run setup is amortized and allocations per step show
// whether the inner loop allocates.
func StepBenchmark(algo string, ds *pairwise.Dataset, avg pairwise.Averaging) func(b *testing.B) {
	return func(b *testing.B) {
		a, err := pairwise.Lookup(algo)
		if err != nil {
			b.Fatal(err)
		}
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCHinge{}, Radius: 1})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		b.ReportAllocs()
		b.ResetTimer()
		if _, err := a.Run(context.Background(), obj, pairwise.RunConfig{Eta: 0.5, Steps: b.N, Averaging: avg}, rng); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchCases are the cases of `pairfed bench` and of the pairwise step
// benchmarks, the shapes of BenchmarkPrevStep in package pairwise:
// sgd-prev on ijcnn1's shape (n = 49 990, dense d = 22, 9.7 % positive),
// dense d = 256 (n = 4096, 30 %), and a9a's shape (n = 32 561, d = 123, 14
// nonzeros per record, 24 %), with the default output rule (the paper's
// averaging); and ijcnn1's shape again with the window average the paper
// protocol's fits output. The share of positives matters: only draws that
// pair a positive with a negative do work (2p(1 − p) of them).
func BenchCases() []struct {
	Name string
	N, D int
	NNZ  int
	Pos  float64
	Avg  pairwise.Averaging
} {
	return []struct {
		Name string
		N, D int
		NNZ  int
		Pos  float64
		Avg  pairwise.Averaging
	}{
		{"sgd-prev/ijcnn1-shape-d22", 49990, 22, 0, 0.097, pairwise.AvgPaper},
		{"sgd-prev/dense-d256", 4096, 256, 0, 0.3, pairwise.AvgPaper},
		{"sgd-prev/a9a-shape-d123-nnz14", 32561, 123, 14, 0.24, pairwise.AvgPaper},
		{"sgd-prev/ijcnn1-shape-d22/window", 49990, 22, 0, 0.097, pairwise.AvgWindow},
	}
}

// Bench runs the step benchmarks with testing.Benchmark.
func Bench() []BenchCase {
	var out []BenchCase
	for _, c := range BenchCases() {
		ds := SyntheticAUC(c.N, c.D, c.NNZ, c.Pos, 7)
		r := testing.Benchmark(StepBenchmark("sgd-prev", ds, c.Avg))
		ns := float64(r.T.Nanoseconds()) / float64(r.N)
		bc := BenchCase{Name: c.Name, Algorithm: "sgd-prev", Averaging: string(c.Avg), N: c.N, D: c.D, PositiveShare: c.Pos, Sparse: c.NNZ > 0, Steps: r.N, NsPerStep: ns,
			PairStepsPerSecond: 1e9 / ns, AllocsPerStep: float64(r.MemAllocs) / float64(r.N), BytesPerStep: float64(r.MemBytes) / float64(r.N)}
		if c.NNZ > 0 {
			bc.NNZPerRecord = float64(c.NNZ)
		}
		out = append(out, bc)
	}
	return out
}
