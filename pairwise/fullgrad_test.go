package pairwise

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pairLoopGradient is the definition: the O(n²) loop over ordered pairs.
func pairLoopGradient(obj Objective, w []float64) []float64 {
	n := obj.Data().N
	g := make([]float64, obj.NumParams())
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				obj.AddGrad(g, w, i, j, 1/float64(n*(n-1)))
			}
		}
	}
	axpy(obj.Lambda(), w, g)
	return g
}

func TestFullGradientFastPathsMatchPairLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	data := toyAUC(40, 5, 2, 3)
	for _, task := range []Task{TaskAUC, TaskMetric} {
		for _, name := range []string{"hinge", "square", "logistic"} {
			loss, err := LossByName(task, name)
			if err != nil {
				continue
			}
			for _, ds := range []*Dataset{data, toSparse(data)} {
				obj, err := NewObjective(ds, ObjectiveConfig{Loss: loss, Lambda: 0.1, Constraint: "none"})
				if err != nil {
					t.Fatal(err)
				}
				w := make([]float64, obj.NumParams())
				for k := range w {
					w[k] = rng.NormFloat64()
				}
				if task == TaskMetric { // symmetric W
					d := ds.D
					for a := 0; a < d; a++ {
						for b := 0; b < a; b++ {
							w[a*d+b] = w[b*d+a]
						}
					}
				}
				got := make([]float64, len(w))
				FullGradient(obj, w, got)
				want := pairLoopGradient(obj, w)
				for k := range got {
					if math.Abs(got[k]-want[k]) > 1e-10*(1+math.Abs(want[k])) {
						t.Fatalf("%s/%s sparse=%v coord %d: fast %v, loop %v", task, name, ds.IsSparse(), k, got[k], want[k])
					}
				}
			}
		}
	}
}

// BenchmarkFullGradientLinear measures one exact full gradient (n = 256,
// d = 8, logistic): the inner loop of pgd, dpgdsc, dpgdc, dpgdc2, dpegd.
func BenchmarkFullGradientLinear(b *testing.B) {
	data := toyAUC(256, 8, 2, 9)
	obj, _ := NewObjective(data, ObjectiveConfig{Loss: AUCLogistic{}, Radius: 1})
	w := make([]float64, 8)
	w[0] = 0.3
	g := make([]float64, 8)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		FullGradient(obj, w, g)
	}
}
