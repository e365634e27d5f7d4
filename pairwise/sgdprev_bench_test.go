package pairwise

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// shapedAUC is a seeded dataset of n records in d dimensions with a fraction
// pos of positives (shifted along feature 0), each row in the unit ball; with
// nnz > 0 it is CSR with nnz nonzeros per row.
func shapedAUC(n, d, nnz int, pos float64, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 42))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range y {
		y[i] = -1
		if rng.Float64() < pos {
			y[i] = 1
		}
		row := x[i*d : (i+1)*d]
		if nnz > 0 {
			for _, c := range rng.Perm(d)[:nnz] {
				row[c] = rng.NormFloat64()
			}
		} else {
			for k := range row {
				row[k] = rng.NormFloat64()
			}
		}
		if y[i] > 0 {
			row[0] += 1
		}
		if s := Norm2(row); s > 1 {
			scale(1/s, row)
		}
	}
	ds := NewDense(x, y, d)
	if nnz > 0 {
		return toSparse(ds)
	}
	return ds
}

// BenchmarkPrevStep measures one sgd-prev run of b.N steps (hinge loss, unit
// ℓ2 ball, [Y21a] averaging): ns/op is ns per draw. "general" is the loop
// every algorithm shares (RunPairSGD, today's sgd-prev); "fast" is the
// specialized loop sgd-prev now runs. cpu-ns/op is CPU time per draw (run
// with GOMAXPROCS=1 on a loaded machine). ijcnn1-shape is n = 49 990, d = 22,
// 9.7 % positives; a9a-shape is n = 32 561, d = 123, 14 nonzeros, 24 %.
// The "-none" paths are the fast loop without a constraint (the C floor of
// scripts/densefloor times both).
func BenchmarkPrevStep(b *testing.B) {
	shapes := []struct {
		name string
		n, d int
		nnz  int
		pos  float64
	}{
		{"ijcnn1-shape", 49990, 22, 0, 0.097},
		{"dense-d256", 4096, 256, 0, 0.3},
		{"a9a-shape", 32561, 123, 14, 0.24},
	}
	for _, sh := range shapes {
		ds := shapedAUC(sh.n, sh.d, sh.nnz, sh.pos, 7)
		obj, err := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Radius: 1})
		if err != nil {
			b.Fatal(err)
		}
		free, err := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Constraint: "none", Radius: 1})
		if err != nil {
			b.Fatal(err)
		}
		// "window" is the paper protocol's output (AvgWindow), the others
		// the default's (AvgPaper).
		for _, path := range []string{"general", "fast", "general-window", "fast-window", "fast-none", "fast-window-none"} {
			obj := obj
			if strings.HasSuffix(path, "-none") {
				obj = free
			}
			b.Run(path+"/"+sh.name, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				cfg := RunConfig{Eta: 0.5, Steps: b.N}
				if strings.Contains(path, "-window") {
					cfg.Averaging = AvgWindow
				}
				b.ReportAllocs()
				b.ResetTimer()
				var err error
				c0 := cpuNanos()
				if strings.HasPrefix(path, "fast") {
					_, err = newPrevFast(obj, &cfg, ScaledConstant).run(context.Background(), cfg, rng, b.N, ScaledConstant)
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

// BenchmarkObjective measures F_S(w) on an ijcnn1-shaped dataset: "pairs"
// is the loop over 4·10⁶ sampled pairs reading rows (the objective `pairfed
// train` reported before), "scores" the score form EmpiricalRisk now uses
// (exact for hinge and square).
func BenchmarkObjective(b *testing.B) {
	ds := shapedAUC(49990, 22, 0, 0.097, 7)
	w := make([]float64, 22)
	for k := range w {
		w[k] = 0.1 * float64(k%5-2)
	}
	for _, loss := range []Loss{AUCHinge{}, AUCSquare{}} {
		obj, _ := NewObjective(ds, ObjectiveConfig{Loss: loss, Radius: 1})
		b.Run("pairs/"+loss.Name(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			c0, k := cpuNanos(), 0
			for b.Loop() {
				pairRisk(obj, w, 4_000_000, rng)
				k++
			}
			b.ReportMetric(float64(cpuNanos()-c0)/float64(k), "cpu-ns/op")
		})
		b.Run("scores/"+loss.Name(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			c0, k := cpuNanos(), 0
			for b.Loop() {
				EmpiricalRisk(obj, w, 4_000_000, rng)
				k++
			}
			b.ReportMetric(float64(cpuNanos()-c0)/float64(k), "cpu-ns/op")
		})
	}
}

// BenchmarkDrawIndices measures the draws of the sgd-prev loop alone
// (n = 49 990): "rand" through rand.Rand's Source interface, "pcg" from the
// concrete PCG. ns/op is ns per draw.
func BenchmarkDrawIndices(b *testing.B) {
	const n = 49990
	dst := make([]int, drawBatch)
	b.Run("rand", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		c0 := cpuNanos()
		for k := 0; k < b.N; k += drawBatch {
			drawIndices(rng, dst[:min(drawBatch, b.N-k)], n)
		}
		b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("pcg", func(b *testing.B) {
		g := pcg{1, 2}
		raw := make([]uint64, drawBatch)
		c0 := cpuNanos()
		for k := 0; k < b.N; k += drawBatch {
			g.drawIndices(dst[:min(drawBatch, b.N-k)], raw, n)
		}
		b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N), "cpu-ns/op")
	})
}
