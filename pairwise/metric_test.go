package pairwise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randDense returns n records of dimension d with N(0, s²) features and
// alternating-ish random labels.
func randDense(rng *rand.Rand, n, d int, s float64) *Dataset {
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range x {
		x[i] = s * rng.NormFloat64()
	}
	for i := range y {
		y[i] = 1
		if rng.IntN(2) == 0 {
			y[i] = -1
		}
	}
	return NewDense(x, y, d)
}

// sparsify returns s in CSR form after zeroing each feature with probability
// pZero (the dense copy is modified the same way, and returned too).
func sparsify(rng *rand.Rand, s *Dataset, pZero float64) (dense, sparse *Dataset) {
	dense = &Dataset{N: s.N, D: s.D, Y: append([]float64(nil), s.Y...), X: append([]float64(nil), s.X...)}
	sparse = &Dataset{N: s.N, D: s.D, Y: dense.Y, Ptr: make([]int, s.N+1)}
	for i := 0; i < s.N; i++ {
		for a := 0; a < s.D; a++ {
			if rng.Float64() < pZero {
				dense.X[i*s.D+a] = 0
				continue
			}
			sparse.Idx = append(sparse.Idx, int32(a))
			sparse.Val = append(sparse.Val, dense.X[i*s.D+a])
		}
		sparse.Ptr[i+1] = len(sparse.Idx)
	}
	return dense, sparse
}

// randSym returns a random symmetric d×d matrix with N(0, s²) entries.
func randSym(rng *rand.Rand, d int, s float64) []float64 {
	w := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			v := s * rng.NormFloat64()
			w[a*d+b], w[b*d+a] = v, v
		}
	}
	return w
}

func isSymmetric(w []float64, d int) bool {
	for a := 0; a < d; a++ {
		for b := 0; b < a; b++ {
			if w[a*d+b] != w[b*d+a] {
				return false
			}
		}
	}
	return true
}

// naiveScore is (x_i − x_j)ᵀW(x_i − x_j) by the definition.
func naiveScore(s *Dataset, w []float64, i, j int) float64 {
	d := s.D
	xi := s.DenseRowTo(make([]float64, d), i)
	xj := s.DenseRowTo(make([]float64, d), j)
	var h float64
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			h += (xi[a] - xj[a]) * w[a*d+b] * (xi[b] - xj[b])
		}
	}
	return h
}

func mustMetricObjective(t testing.TB, s *Dataset, loss Loss, lambda float64) Objective {
	t.Helper()
	obj, err := NewObjective(s, ObjectiveConfig{Loss: loss, Lambda: lambda, Constraint: "frobenius-psd", Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestMetricObjectiveBasics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := randDense(rng, 5, 4, 1)
	obj := mustMetricObjective(t, s, MetricLogistic{}, 0.1)
	if obj.Task() != TaskMetric || obj.NumParams() != 16 || obj.Lambda() != 0.1 || obj.Data() != s {
		t.Fatalf("task %s, params %d, λ %v", obj.Task(), obj.NumParams(), obj.Lambda())
	}
	if obj.Constraint().Name() != "frobenius-psd" || obj.Constraint().Radius() != 1 {
		t.Fatalf("constraint %s radius %v", obj.Constraint().Name(), obj.Constraint().Radius())
	}
	// Props: G = 4R² + λB, L = 4R⁴ + λ, α = λ.
	p := obj.Props(2)
	if p.Lipschitz != 16+0.1 || p.Smooth != 64+0.1 || p.StrongConvexity != 0.1 || !p.Convex {
		t.Fatalf("Props(2) = %+v", p)
	}
	// W = 0 is feasible and has zero score.
	w := make([]float64, 16)
	if h := obj.Score(w, 0, 1); h != 0 {
		t.Fatalf("score at W = 0: %v", h)
	}
	// PairLoss includes (λ/2)‖W‖².
	w = randSym(rng, 4, 1)
	f, _ := MetricLogistic{}.Eval(naiveScore(s, w, 1, 3), s.Y[1], s.Y[3])
	if got, want := obj.PairLoss(w, 1, 3), f+0.05*dot(w, w); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Fatalf("PairLoss = %v, want %v", got, want)
	}
}

func TestMetricScoreDenseSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dense, sparse := sparsify(rng, randDense(rng, 8, 7, 1), 0.5)
	od := mustMetricObjective(t, dense, MetricHinge{}, 0)
	os := mustMetricObjective(t, sparse, MetricHinge{}, 0)
	w := randSym(rng, 7, 1)
	for i := 0; i < dense.N; i++ {
		for j := 0; j < dense.N; j++ {
			want := naiveScore(dense, w, i, j)
			for name, o := range map[string]Objective{"dense": od, "sparse": os} {
				if got := o.Score(w, i, j); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Errorf("%s Score(%d,%d) = %v, want %v", name, i, j, got, want)
				}
			}
		}
	}
}

// TestMetricGradFD checks AddGrad + λW against central finite differences of
// PairLoss in every single entry W_ab (W treated as a general matrix), for
// both losses, with and without λ, on dense and sparse data.
func TestMetricGradFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d = 5
	dense, sparse := sparsify(rng, randDense(rng, 7, d, 0.6), 0.3)
	const h = 1e-6
	checked := 0
	for _, loss := range []Loss{MetricHinge{}, MetricLogistic{}} {
		for _, lambda := range []float64{0, 0.3} {
			for _, data := range []*Dataset{dense, sparse} {
				obj := mustMetricObjective(t, data, loss, lambda)
				for trial := 0; trial < 4; trial++ {
					w := randSym(rng, d, 0.4)
					i, j := rng.IntN(data.N), rng.IntN(data.N)
					if i == j {
						continue
					}
					if _, ok := loss.(MetricHinge); ok {
						// Stay away from the kink 1 + τh = 0.
						if m := 1 + tau(data.Y[i], data.Y[j])*obj.Score(w, i, j); math.Abs(m) < 1e-3 {
							continue
						}
					}
					g := make([]float64, d*d)
					for k := range g {
						g[k] = 0.25 // AddGrad must add, not overwrite
					}
					obj.AddGrad(g, w, i, j, 2)
					for k := range g {
						g[k] = (g[k]-0.25)/2 + lambda*w[k]
					}
					if !isSymmetric(g, d) {
						t.Fatalf("%s: gradient not symmetric", loss.Name())
					}
					for k := range w {
						orig := w[k]
						w[k] = orig + h
						fp := obj.PairLoss(w, i, j)
						w[k] = orig - h
						fm := obj.PairLoss(w, i, j)
						w[k] = orig
						fd := (fp - fm) / (2 * h)
						if math.Abs(fd-g[k]) > 1e-6*(1+math.Abs(g[k])) {
							t.Errorf("%s λ=%v sparse=%v pair (%d,%d) entry %d: grad %v, finite difference %v",
								loss.Name(), lambda, data.IsSparse(), i, j, k, g[k], fd)
						}
					}
					checked++
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d gradient checks ran", checked)
	}
}

// TestMetricStep checks Step(w, η) = w − η(∇f + λw), exact symmetry of the
// result, the reported change, and dense/sparse agreement.
func TestMetricStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const d = 6
	dense, sparse := sparsify(rng, randDense(rng, 9, d, 1), 0.4)
	for _, loss := range []Loss{MetricHinge{}, MetricLogistic{}} {
		for _, lambda := range []float64{0, 0.2} {
			od := mustMetricObjective(t, dense, loss, lambda)
			os := mustMetricObjective(t, sparse, loss, lambda)
			for trial := 0; trial < 30; trial++ {
				w := randSym(rng, d, 0.3)
				i, j := rng.IntN(dense.N), rng.IntN(dense.N)
				eta := []float64{1e-7, 1e-3, 0.5}[trial%3]
				g := make([]float64, d*d)
				active := od.AddGrad(g, w, i, j, 1)
				want := make([]float64, d*d)
				for k := range w {
					want[k] = w[k] - eta*(g[k]+lambda*w[k])
				}
				for name, o := range map[string]Objective{"dense": od, "sparse": os} {
					got := append([]float64(nil), w...)
					changed := o.Step(got, i, j, eta)
					if changed != (active || lambda != 0) {
						t.Errorf("%s %s: Step reported %v, gradient active %v, λ %v", name, loss.Name(), changed, active, lambda)
					}
					if !isSymmetric(got, d) {
						t.Fatalf("%s %s: Step broke symmetry", name, loss.Name())
					}
					for k := range got {
						if math.Abs(got[k]-want[k]) > 1e-13*(1+math.Abs(want[k])) {
							t.Fatalf("%s %s λ=%v η=%v: W[%d] = %v, want %v", name, loss.Name(), lambda, eta, k, got[k], want[k])
						}
					}
				}
			}
		}
	}
}

// TestMetricStepInactive: a hinge pair with margin ≤ 0 and λ = 0 leaves W
// untouched and reports no change.
func TestMetricStepInactive(t *testing.T) {
	x := []float64{0, 0, 3, 0}
	s := NewDense(x, []float64{1, -1}, 2)
	obj := mustMetricObjective(t, s, MetricHinge{}, 0)
	w := []float64{1, 0, 0, 1} // h = 9, τ = −1: 1 − 9 < 0
	if obj.Step(w, 0, 1, 0.1) {
		t.Fatal("Step reported a change for an inactive hinge")
	}
	if w[0] != 1 || w[1] != 0 || w[2] != 0 || w[3] != 1 {
		t.Fatalf("W changed: %v", w)
	}
	if obj.AddGrad(make([]float64, 4), w, 0, 1, 1) {
		t.Fatal("AddGrad reported a non-zero gradient for an inactive hinge")
	}
}

func TestMetricStepNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dense, sparse := sparsify(rng, randDense(rng, 20, 19, 1), 0.5)
	for _, data := range []*Dataset{dense, sparse} {
		obj := mustMetricObjective(t, data, MetricLogistic{}, 0.01)
		w := randSym(rng, 19, 0.1)
		g := make([]float64, len(w))
		k := 0
		allocs := testing.AllocsPerRun(200, func() {
			i, j := k%data.N, (k*7+3)%data.N
			obj.Step(w, i, j, 1e-3)
			obj.AddGrad(g, w, i, j, 1)
			obj.PairLoss(w, i, j)
			k++
		})
		if allocs != 0 {
			t.Errorf("sparse=%v: %v allocations per Step+AddGrad+PairLoss", data.IsSparse(), allocs)
		}
	}
}

func BenchmarkMetricStep(b *testing.B) {
	for _, d := range []int{8, 19, 64} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(11, uint64(d)))
			data := randDense(rng, 256, d, 1)
			obj, err := NewObjective(data, ObjectiveConfig{Loss: MetricLogistic{}, Lambda: 0.01, Radius: 1})
			if err != nil {
				b.Fatal(err)
			}
			w := randSym(rng, d, 0.01)
			b.ReportAllocs()
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				obj.Step(w, k&255, (k*97+13)&255, 1e-4)
			}
		})
	}
}
