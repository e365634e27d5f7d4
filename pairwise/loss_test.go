package pairwise

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// numGrad is the central finite difference of f at w.
func numGrad(f func([]float64) float64, w []float64, h float64) []float64 {
	g := make([]float64, len(w))
	for k := range w {
		old := w[k]
		w[k] = old + h
		fp := f(w)
		w[k] = old - h
		fm := f(w)
		w[k] = old
		g[k] = (fp - fm) / (2 * h)
	}
	return g
}

func TestAUCLossGradientsMatchFiniteDifferences(t *testing.T) {
	data := toyAUC(30, 5, 2, 7)
	rng := rand.New(rand.NewPCG(3, 3))
	for _, sparse := range []bool{false, true} {
		ds := data
		if sparse {
			ds = toSparse(data)
		}
		for _, name := range []string{"hinge", "square", "logistic"} {
			for _, lambda := range []float64{0, 0.3} {
				loss, _ := LossByName(TaskAUC, name)
				obj, err := NewObjective(ds, ObjectiveConfig{Loss: loss, Lambda: lambda, Constraint: "none"})
				if err != nil {
					t.Fatal(err)
				}
				checked := 0
				for trial := 0; trial < 200 && checked < 40; trial++ {
					i, j := rng.IntN(ds.N), rng.IntN(ds.N)
					w := make([]float64, ds.D)
					for k := range w {
						w[k] = rng.NormFloat64()
					}
					// Avoid the hinge's kink, where the derivative is undefined.
					if name == "hinge" && math.Abs(1-math.Abs(obj.Score(w, i, j))) < 1e-3 {
						continue
					}
					checked++
					g := make([]float64, ds.D)
					obj.AddGrad(g, w, i, j, 1)
					axpy(lambda, w, g)
					num := numGrad(func(v []float64) float64 { return obj.PairLoss(v, i, j) }, w, 1e-6)
					for k := range g {
						if math.Abs(g[k]-num[k]) > 1e-5*(1+math.Abs(num[k])) {
							t.Fatalf("%s sparse=%v λ=%v pair (%d,%d) coord %d: analytic %v, numeric %v", name, sparse, lambda, i, j, k, g[k], num[k])
						}
					}
					// Step must equal w − η(∇f + λw).
					eta := 1e-3
					w2 := append([]float64(nil), w...)
					obj.Step(w2, i, j, eta)
					for k := range w2 {
						if want := w[k] - eta*g[k]; math.Abs(w2[k]-want) > 1e-12 {
							t.Fatalf("%s: Step coord %d = %v, want %v", name, k, w2[k], want)
						}
					}
				}
				if checked < 20 {
					t.Fatalf("%s: only %d pairs checked", name, checked)
				}
			}
		}
	}
}

// The declared Lipschitz constant must bound every gradient over the domain.
func TestAUCLossLipschitzBoundsHold(t *testing.T) {
	data := toyAUC(40, 6, 2, 11)
	R := data.MaxNorm()
	rng := rand.New(rand.NewPCG(5, 5))
	for _, name := range []string{"hinge", "square", "logistic"} {
		loss, _ := LossByName(TaskAUC, name)
		B := 2.0
		obj, _ := NewObjective(data, ObjectiveConfig{Loss: loss, Radius: B})
		G := obj.Props(R).Lipschitz
		for trial := 0; trial < 2000; trial++ {
			w := make([]float64, data.D)
			for k := range w {
				w[k] = rng.NormFloat64()
			}
			obj.Project(w)
			g := make([]float64, data.D)
			obj.AddGrad(g, w, rng.IntN(data.N), rng.IntN(data.N), 1)
			if n := Norm2(g); n > G*(1+1e-12) {
				t.Fatalf("%s: ‖∇f‖ = %v exceeds declared G = %v", name, n, G)
			}
		}
	}
}

func TestLossByNameRejectsUnknown(t *testing.T) {
	if _, err := LossByName(TaskAUC, "huber"); err == nil {
		t.Fatal("want error for unknown loss")
	}
	if _, err := LossByName(TaskMetric, "square"); err == nil {
		t.Fatal("want error: square is not a metric loss")
	}
}

func TestL2BallProjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	b := L2Ball{R: 0.7}
	for trial := 0; trial < 500; trial++ {
		w := make([]float64, 6)
		for k := range w {
			w[k] = rng.NormFloat64()
		}
		p := append([]float64(nil), w...)
		b.Project(p)
		if Norm2(p) > 0.7+1e-12 {
			t.Fatalf("norm %v > radius", Norm2(p))
		}
		q := append([]float64(nil), p...)
		b.Project(q)
		for k := range q {
			if math.Abs(q[k]-p[k]) > 1e-15 {
				t.Fatal("projection not idempotent")
			}
		}
		// nearest point: no feasible v is closer to w than p.
		v := make([]float64, 6)
		for k := range v {
			v[k] = rng.NormFloat64()
		}
		b.Project(v)
		dp, dv := 0.0, 0.0
		for k := range w {
			dp += (w[k] - p[k]) * (w[k] - p[k])
			dv += (w[k] - v[k]) * (w[k] - v[k])
		}
		if dp > dv+1e-12 {
			t.Fatalf("projection not nearest: %v > %v", dp, dv)
		}
	}
}

func TestAUCMatchesBruteForceWithTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n := 2 + rng.IntN(60)
		s := make([]float64, n)
		y := make([]float64, n)
		for i := range s {
			s[i] = float64(rng.IntN(5)) // many ties
			y[i] = 1
			if rng.IntN(2) == 0 {
				y[i] = -1
			}
		}
		a, b := AUC(s, y), AUCBrute(s, y)
		if math.IsNaN(a) != math.IsNaN(b) || (!math.IsNaN(a) && math.Abs(a-b) > 1e-12) {
			t.Fatalf("AUC %v, brute %v", a, b)
		}
	}
	if got := AUC([]float64{1, 1, 1}, []float64{1, -1, -1}); got != 0.5 {
		t.Fatalf("all ties: %v, want 0.5", got)
	}
	if got := AUC([]float64{3, 2, 1}, []float64{1, 1, -1}); got != 1 {
		t.Fatalf("perfect ranking: %v", got)
	}
	if !math.IsNaN(AUC([]float64{1, 2}, []float64{1, 1})) {
		t.Fatal("one class: want NaN")
	}
}

// The fused dense step+projection must equal Step followed by Project.
func TestFusedStepProjectMatchesStepThenProject(t *testing.T) {
	data := toyAUC(60, 7, 2, 5)
	rng := rand.New(rand.NewPCG(6, 6))
	for _, name := range []string{"hinge", "square", "logistic"} {
		loss, _ := LossByName(TaskAUC, name)
		obj, _ := NewObjective(data, ObjectiveConfig{Loss: loss, Radius: 0.3})
		lo := obj.(*linearObjective)
		w1 := make([]float64, data.D)
		w2 := make([]float64, data.D)
		for step := 0; step < 500; step++ {
			i, j := rng.IntN(data.N), rng.IntN(data.N)
			c1 := lo.stepProject(w1, i, j, 0.7)
			c2 := obj.Step(w2, i, j, 0.7)
			if c2 {
				obj.Project(w2)
			}
			if c1 != c2 {
				t.Fatalf("%s step %d: changed %v vs %v", name, step, c1, c2)
			}
			for k := range w1 {
				if math.Abs(w1[k]-w2[k]) > 1e-12 {
					t.Fatalf("%s step %d coord %d: %v vs %v", name, step, k, w1[k], w2[k])
				}
				w1[k] = w2[k] // keep rounding differences from compounding
			}
		}
	}
}

// The batched AUC gradient visits only positive–negative pairs: every AUC
// loss must have zero gradient on same-label pairs, and Deriv must agree
// with Eval.
func TestAUCLossesIgnoreSameLabelPairs(t *testing.T) {
	for _, name := range []string{"hinge", "square", "logistic"} {
		l, _ := LossByName(TaskAUC, name)
		for _, h := range []float64{-3, -0.5, 0, 0.7, 4} {
			for _, y := range []float64{-1, 1} {
				if _, d := l.Eval(h, y, y); d != 0 {
					t.Fatalf("%s: ∂f/∂h = %v on a same-label pair", name, d)
				}
			}
			for _, yy := range [][2]float64{{1, -1}, {-1, 1}, {1, 1}} {
				_, want := l.Eval(h, yy[0], yy[1])
				if got := derivFunc(l)(h, yy[0], yy[1]); math.Abs(got-want) > 1e-15 {
					t.Fatalf("%s: Deriv %v, Eval %v", name, got, want)
				}
			}
		}
	}
}

// aucRanks is the rank-based AUC the merge in AUC replaced (sort all scores
// by index, count tied groups): the reference AUC must equal bit for bit.
func aucRanks(scores, y []float64) float64 {
	n := len(scores)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
		if math.IsNaN(scores[i]) {
			return math.NaN()
		}
	}
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	var pos, neg, correct, negBelow float64
	for a := 0; a < n; {
		b := a
		var p, q float64
		for b < n && scores[idx[b]] == scores[idx[a]] {
			if y[idx[b]] > 0 {
				p++
			} else {
				q++
			}
			b++
		}
		correct += p * (negBelow + q/2)
		negBelow += q
		pos += p
		neg += q
		a = b
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return correct / (pos * neg)
}

func TestAUCEqualsRankCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(3000)
		s := make([]float64, n)
		y := make([]float64, n)
		levels := 1 + rng.IntN(50)
		for i := range s {
			switch {
			case trial%2 == 0:
				s[i] = float64(rng.IntN(levels)) // ties, ±0 below
			case trial%4 == 1:
				s[i] = 1 + 1e-9*rng.NormFloat64() // equal top 32 bits: the radix sort's fix-up
			default:
				s[i] = rng.NormFloat64()
			}
			if s[i] == 0 && rng.IntN(2) == 0 {
				s[i] = math.Copysign(0, -1)
			}
		}
		checkAUCIsRankCount(t, rng, trial, s, y, 0.2, trial%7 == 0)
	}
	if !math.IsNaN(AUC([]float64{1, math.NaN(), 0}, []float64{1, -1, -1})) {
		t.Fatal("NaN score: want NaN")
	}
}

// checkAUCIsRankCount draws y (a share pos of +1), puts ±Inf at a random
// score when inf, and fails unless AUC(s, y) is aucRanks(s, y) bit for bit
// (any two NaNs equal).
func checkAUCIsRankCount(t *testing.T, rng *rand.Rand, trial int, s, y []float64, pos float64, inf bool) {
	t.Helper()
	for i := range y {
		y[i] = -1
		if rng.Float64() < pos {
			y[i] = 1
		}
	}
	if inf {
		s[rng.IntN(len(s))] = math.Inf(1 - 2*rng.IntN(2))
	}
	a, b := AUC(s, y), aucRanks(s, y)
	if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
		t.Fatalf("trial %d (n %d): AUC %v, rank count %v", trial, len(s), a, b)
	}
}

func BenchmarkAUC(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	s := make([]float64, 13330)
	y := make([]float64, len(s))
	for i := range s {
		y[i] = -1
		if rng.Float64() < 0.1 {
			y[i] = 1
			s[i] = 0.5
		}
		s[i] += rng.NormFloat64()
	}
	b.Run("ranks", func(b *testing.B) {
		for b.Loop() {
			aucRanks(s, y)
		}
	})
	b.Run("merge", func(b *testing.B) {
		for b.Loop() {
			AUC(s, y)
		}
	})
}

// Step and stepProject skip same-label pairs before reading a row; the
// result must be what evaluating the loss would give: no change (every AUC
// loss has zero gradient there at a finite score), and the usual update
// for a positive–negative pair.
func TestLinearStepSkipsSameLabelPairs(t *testing.T) {
	x := []float64{0.3, -0.2, -0.5, 0.1, 0.2, 0.4}
	y := []float64{1, 1, -1}
	for _, loss := range []Loss{AUCHinge{}, AUCSquare{}, AUCLogistic{}} {
		obj, err := NewObjective(NewDense(x, y, 2), ObjectiveConfig{Loss: loss, Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		o := obj.(*linearObjective)
		for k, step := range []func(w []float64, i, j int) bool{
			func(w []float64, i, j int) bool { return o.Step(w, i, j, 0.5) },
			func(w []float64, i, j int) bool { return o.stepProject(w, i, j, 0.5) },
		} {
			w := []float64{0.7, -0.4}
			if step(w, 0, 1) || w[0] != 0.7 || w[1] != -0.4 {
				t.Fatalf("%s: a same-label pair changed w to %v", loss.Name(), w)
			}
			_, d := loss.Eval(o.Score(w, 0, 2), y[0], y[2])
			want := []float64{0.7 - 0.5*d*(0.3-0.2), -0.4 - 0.5*d*(-0.2-0.4)}
			if k == 1 {
				o.Project(want)
			}
			if !step(w, 0, 2) || math.Abs(w[0]-want[0]) > 1e-15 || math.Abs(w[1]-want[1]) > 1e-15 {
				t.Fatalf("%s: positive–negative step gave %v, want %v", loss.Name(), w, want)
			}
		}
	}
}
