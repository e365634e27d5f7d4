package pairwise

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// stepUpdate writes into a what metricObjective.Step computes from p:
// a_ab = fl(fl(p_ab·k) + fl(c·v_a)·v_b), mirrored.
func stepUpdate(a, p []float64, d int, k, c float64, v []float64) {
	for i := 0; i < d; i++ {
		ci := c * v[i]
		for j := i; j < d; j++ {
			x := p[i*d+j]*k + ci*v[j]
			a[i*d+j], a[j*d+i] = x, x
		}
	}
}

func frobDiff(a, b []float64) (diff, norm float64) {
	for i := range a {
		diff += (a[i] - b[i]) * (a[i] - b[i])
		norm += b[i] * b[i]
	}
	return math.Sqrt(diff), math.Sqrt(norm)
}

// TestPSDStepMatchesProject: along random rank-one step chains (as SGD
// makes them: each step starts from the last output), ProjectStep equals
// the reference projection (dsyev, a separate projector) within
// 1e-10·max(1, ‖A‖_F) — the fast path's stated bound is ≈ 3e-11·‖A‖_F; the
// measured differences are ≈ 1e-15 — on every set, both signs of c, k < 1,
// v with a component on the last clipped eigenvector or not; and the fast
// path answers most steps (so the comparison is of the fast path). It
// fails if a branch returns a wrong point (e.g. the negative case treated
// as the positive one, or the radius scaling dropped).
func TestPSDStepMatchesProject(t *testing.T) {
	for _, kind := range []string{"psd", "frobenius-psd", "nuclear-psd"} {
		for _, d := range []int{2, 5, 20} {
			t.Run(fmt.Sprintf("%s/d=%d", kind, d), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(41, uint64(d)))
				const r = 3
				p := newPSDProjector(kind, r, d)
				ref := newPSDProjector(kind, r, d)
				w := randSym(rng, d, 1)
				p.Project(w)
				a, want := make([]float64, d*d), make([]float64, d*d)
				v := make([]float64, d)
				steps, worst := 0, 0.0
				for s := 0; s < 600; s++ {
					for i := range v {
						v[i] = rng.NormFloat64()
						if rng.IntN(4) == 0 {
							v[i] = 0
						}
					}
					if p.qOK && rng.IntN(3) == 0 {
						axpy(2*rng.NormFloat64(), p.q, v)
					}
					c := math.Exp(rng.NormFloat64()*2-1) / float64(d)
					if rng.IntN(2) == 0 {
						c = -c
					}
					k := 1.0
					if rng.IntN(5) == 0 {
						k = 0.9
					}
					stepUpdate(a, w, d, k, c, v)
					copy(want, a)
					ref.Project(want)
					before := p.fastSteps
					copy(w, a)
					p.ProjectStep(w, k, c, v)
					if p.fastSteps > before {
						steps++
					}
					diff, _ := frobDiff(w, want)
					na := math.Sqrt(dot(a, a))
					if !(diff <= 1e-10*max(1, na)) {
						t.Fatalf("step %d (c = %g, k = %g): ‖fast − reference‖ = %g, ‖A‖ = %g", s, c, k, diff, na)
					}
					worst = max(worst, diff/max(1, na))
				}
				min := 500
				if kind == "nuclear-psd" {
					min = 250 // c > 0 past the trace bound needs the spectrum
				}
				if steps < min {
					t.Fatalf("fast path answered %d of 600 steps, want ≥ %d", steps, min)
				}
				t.Logf("fast path %d/600 steps, worst ‖fast − reference‖/max(1, ‖A‖) = %.2g", steps, worst)
			})
		}
	}
}

// TestPSDStepChecksUpdate: a w that is not exactly the claimed step of the
// last output (one entry one ulp off, a wrong c, a stale last output)
// gets the general projection, bit for bit.
func TestPSDStepChecksUpdate(t *testing.T) {
	const d = 6
	rng := rand.New(rand.NewPCG(43, 44))
	for trial := 0; trial < 50; trial++ {
		p := newPSDProjector("frobenius-psd", 2, d)
		P := randSym(rng, d, 1)
		p.Project(P)
		v := make([]float64, d)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		c := -0.3
		a := make([]float64, d*d)
		stepUpdate(a, P, d, 1, c, v)
		for variant := 0; variant < 3; variant++ {
			w := append([]float64(nil), a...)
			cc := c
			switch variant {
			case 0:
				w[1] = math.Nextafter(w[1], math.Inf(1))
			case 1:
				cc = -0.31
			case 2:
				other := randSym(rng, d, 1)
				p.Project(other) // the last output is now another point
			}
			want := append([]float64(nil), w...)
			newPSDProjector("frobenius-psd", 2, d).Project(want)
			before := p.fastSteps
			p.ProjectStep(w, 1, cc, v)
			if p.fastSteps != before {
				t.Fatalf("variant %d: fast path taken for a w that is not the step", variant)
			}
			for i := range w {
				if math.Float64bits(w[i]) != math.Float64bits(want[i]) {
					t.Fatalf("variant %d: entry %d = %v, Project gives %v", variant, i, w[i], want[i])
				}
			}
			p.Project(P) // restore the last output
		}
	}
}

// TestMetricSGDStepFastMatchesGeneral: sgd-prev's loop (Step then Project)
// on a metric task with each PSD set, dense and CSR records (λ > 0, so
// the sparse step scales W and then adds the support block; and λ = 0,
// where it adds the support block only), gives the same model with the step
// fast path as with the general projection after every step, within
// 1e-10 relative, and the same KNN-3 accuracy.
func TestMetricSGDStepFastMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	n, d := 300, 8
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x[i*d+j] = rng.NormFloat64() / 3
		}
		y[i] = 1
		if x[i*d]+0.5*x[i*d+1]+0.2*rng.NormFloat64() < 0 {
			y[i] = -1
		}
	}
	dense, sparse := sparsify(rng, &Dataset{N: n, D: d, X: x, Y: y}, 0.5)
	for _, kind := range []string{"psd", "frobenius-psd", "nuclear-psd"} {
		for _, eta := range []float64{0.01, 0.3} {
			for dsi, ds := range []*Dataset{dense, sparse, sparse} {
				lambda := 0.01
				if dsi == 2 {
					lambda = 0 // the sparse step touches only the support block
				}
				var models [2][]float64
				var fast int
				for f, on := range []bool{false, true} {
					old := psdStepFast
					psdStepFast = on
					obj, err := NewObjective(ds, ObjectiveConfig{Task: TaskMetric, Loss: MetricHinge{}, Constraint: kind, Radius: 1, Lambda: lambda})
					if err != nil {
						t.Fatal(err)
					}
					w := make([]float64, d*d)
					r := rand.New(rand.NewPCG(47, 48))
					for s := 0; s < 3000; s++ {
						if obj.Step(w, r.IntN(n), r.IntN(n), eta) {
							obj.Project(w)
						}
					}
					psdStepFast = old
					models[f] = w
					fast = obj.(*metricObjective).proj.(*psdProjector).fastSteps
				}
				diff, norm := frobDiff(models[1], models[0])
				if !(diff <= 1e-10*norm) {
					t.Errorf("%s η=%g: ‖fast − general‖ = %g, ‖W‖ = %g", kind, eta, diff, norm)
				}
				if fast < 1000 {
					t.Errorf("%s η=%g: fast path answered only %d steps", kind, eta, fast)
				}
				if a, b := KNN3Accuracy(models[0], ds, ds), KNN3Accuracy(models[1], ds, ds); a != b {
					t.Errorf("%s η=%g: KNN-3 accuracy %v general, %v fast", kind, eta, a, b)
				}
			}
		}
	}
}

// BenchmarkPSDProjectStep: one SGD step's projection along a hinge-loss
// trajectory, the fast path against the general projection, at d = 20
// (synthetic metric data: the shape of scripts/metriccost).
func BenchmarkPSDProjectStep(b *testing.B) {
	for _, d := range []int{20, 50} {
		rng := rand.New(rand.NewPCG(49, uint64(d)))
		n := 1000
		x := make([]float64, n*d)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				x[i*d+j] = rng.NormFloat64() / math.Sqrt(float64(d))
			}
			y[i] = 1
			if x[i*d]+0.7*x[i*d+1]-0.5*x[i*d+2] < 0 {
				y[i] = -1
			}
		}
		ds := &Dataset{N: n, D: d, X: x, Y: y}
		for _, mode := range []string{"general", "fast"} {
			b.Run(fmt.Sprintf("%s/d=%d", mode, d), func(b *testing.B) {
				old := psdStepFast
				psdStepFast = mode == "fast"
				defer func() { psdStepFast = old }()
				obj, err := NewObjective(ds, ObjectiveConfig{Task: TaskMetric, Loss: MetricHinge{}, Constraint: "frobenius-psd", Radius: 10})
				if err != nil {
					b.Fatal(err)
				}
				w := make([]float64, d*d)
				r := rand.New(rand.NewPCG(1, 2))
				b.ResetTimer()
				for k := 0; k < b.N; k++ {
					if obj.Step(w, r.IntN(n), r.IntN(n), 0.01) {
						obj.Project(w)
					}
				}
			})
		}
	}
}

// cholLowerDot is cholLower with one dot per entry: the reference its
// four-at-a-time rows reproduce bit for bit.
func cholLowerDot(l []float64, d int) bool {
	for i := 0; i < d; i++ {
		ri := l[i*d : i*d+i+1]
		for j := 0; j <= i; j++ {
			s := ri[j] - dot(l[j*d:j*d+j], ri[:j])
			if j == i {
				if !(s > 0) || math.IsInf(s, 0) {
					return false
				}
				ri[i] = math.Sqrt(s)
			} else {
				ri[j] = s / l[j*d+j]
			}
		}
	}
	return true
}

// TestCholLowerMatchesDot: cholLower's factor is cholLowerDot's bit for
// bit (d = 1…24, positive definite, borderline and indefinite inputs), and
// both agree on whether the input is positive definite; cholSolve's
// solution is the one-dot-per-entry substitution's, bit for bit.
func TestCholLowerMatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for trial := 0; trial < 600; trial++ {
		d := 1 + trial%24
		g := randSym(rng, d, 1)
		m := make([]float64, d*d)
		shift := []float64{0.5, 1e-9, -0.05}[trial%3]
		for a := 0; a < d; a++ {
			for b := 0; b <= a; b++ {
				var s float64
				for c := 0; c < d/2+1; c++ {
					s += g[a*d+c] * g[b*d+c]
				}
				m[a*d+b] = s
			}
			m[a*d+a] += shift
		}
		got, want := slices.Clone(m), slices.Clone(m)
		okG, okW := cholLower(got, d), cholLowerDot(want, d)
		if okG != okW {
			t.Fatalf("trial %d d=%d: positive definite %v, reference %v", trial, d, okG, okW)
		}
		if !okW {
			continue
		}
		for a := 0; a < d; a++ {
			for b := 0; b <= a; b++ {
				if math.Float64bits(got[a*d+b]) != math.Float64bits(want[a*d+b]) {
					t.Fatalf("trial %d d=%d: L[%d][%d] = %v, reference %v", trial, d, a, b, got[a*d+b], want[a*d+b])
				}
			}
		}
		// The solve: cholSolve (on cholLower's buffer: it reads the mirror
		// in the upper triangle) against one dot per forward entry.
		x := make([]float64, d)
		for a := range x {
			x[a] = rng.NormFloat64()
		}
		y := slices.Clone(x)
		cholSolve(got, d, x)
		for i := 0; i < d; i++ {
			y[i] = (y[i] - dot(want[i*d:i*d+i], y[:i])) / want[i*d+i]
		}
		for i := d - 1; i >= 0; i-- {
			y[i] /= want[i*d+i]
			axpy(-y[i], want[i*d:i*d+i], y[:i])
		}
		for a := range x {
			if math.Float64bits(x[a]) != math.Float64bits(y[a]) {
				t.Fatalf("trial %d d=%d: solve[%d] = %v, reference %v", trial, d, a, x[a], y[a])
			}
		}
	}
}

// TestMatVecMatchesDot: matVec's entries are dot's, bit for bit, for
// d = 1…24 (full groups of four rows and the rest), values of wide range.
func TestMatVecMatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	for d := 1; d <= 24; d++ {
		for trial := 0; trial < 20; trial++ {
			w := make([]float64, d*d)
			x := make([]float64, d)
			for i := range w {
				w[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30))
			}
			for i := range x {
				x[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30))
			}
			y := make([]float64, d)
			matVec(w, d, x, y)
			for a := 0; a < d; a++ {
				if want := dot(w[a*d:(a+1)*d], x); math.Float64bits(y[a]) != math.Float64bits(want) {
					t.Fatalf("d=%d row %d: %v, dot %v", d, a, y[a], want)
				}
			}
		}
	}
}

// adversarialPSD returns a d×d positive semidefinite P = Q diag(λ) Qᵀ (Q a
// random orthogonal matrix) with the spectrum named by kind, a step
// direction v for it, and ψ₀ = vᵀP⁺v (+Inf when v has weight on P's null
// space): A = kP − |c|vvᵀ has a negative eigenvalue iff |c|·ψ₀/k > 1.
func adversarialPSD(rng *rand.Rand, d int, kind string) (P, v []float64, psi0 float64) {
	q := make([]float64, d*d) // rows: orthonormal vectors (Gram–Schmidt)
	for a := 0; a < d; a++ {
		row := q[a*d : (a+1)*d]
		for {
			for i := range row {
				row[i] = rng.NormFloat64()
			}
			for b := 0; b < a; b++ {
				axpy(-dot(row, q[b*d:(b+1)*d]), q[b*d:(b+1)*d], row)
			}
			if n := math.Sqrt(dot(row, row)); n > 1e-3 {
				scale(1/n, row)
				break
			}
		}
	}
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = 0.5 + rng.Float64()
	}
	v = make([]float64, d)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	switch kind {
	case "repeated": // one eigenvalue of multiplicity d−2
		for i := 2; i < d; i++ {
			lam[i] = 0.7
		}
	case "near-degenerate": // a cluster within 1e-10 of each other
		for i := range lam {
			lam[i] = 1 + 1e-10*float64(i)
		}
	case "rank-deficient": // rank d/2: v has weight on the null space
		for i := 0; i < d-d/2; i++ {
			lam[i] = 0
		}
	case "rank-one":
		for i := 1; i < d; i++ {
			lam[i] = 0
		}
	case "null-v": // v entirely in the null space: μ = −|c|‖v‖²
		for i := 0; i < d/2; i++ {
			lam[i] = 0
		}
		for i := range v {
			v[i] = 0
		}
		for i := 0; i < d/2; i++ {
			axpy(rng.NormFloat64(), q[i*d:(i+1)*d], v)
		}
	case "eigen-v": // v an eigenvector of P, its eigenvalue repeated
		for i := 1; i < d; i++ {
			lam[i] = lam[0]
		}
		copy(v, q[:d])
	case "wide": // eigenvalues from 1e-12 to 1e2, one zero
		for i := range lam {
			lam[i] = math.Pow(10, -12+14*float64(i)/float64(d-1))
		}
		lam[0] = 0
	}
	P = make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			var s float64
			for i := 0; i < d; i++ {
				s += q[i*d+a] * lam[i] * q[i*d+b]
			}
			P[a*d+b] = s
		}
	}
	for a := 0; a < d; a++ { // exactly symmetric
		for b := 0; b < a; b++ {
			P[a*d+b] = P[b*d+a]
		}
	}
	for i := 0; i < d; i++ {
		w := dot(q[i*d:(i+1)*d], v)
		switch {
		case lam[i] > 0:
			psi0 += w * w / lam[i]
		case math.Abs(w) > 1e-12:
			psi0 = math.Inf(1)
		}
	}
	return P, v, psi0
}

// TestPSDStepAdversarial: ProjectStep after a negative step (c < 0, the
// clipped case) from adversarial starting points P — a repeated
// eigenvalue, a cluster of eigenvalues 1e-10 apart, rank-deficient and
// rank-one P, v in P's null space or an eigenvector of a multiple
// eigenvalue, eigenvalues spread over 14 decades — with |c| such that
// |c|·ψ₀/k − 1 runs from 1e-9 (μ near rounding) to 10 on every other trial
// (a negative eigenvalue to clip by construction) and |c| from 1e-9 to 10
// on the others, equals the dsyev projection within
// 1e-10·max(1, ‖A‖_F) (the fast path's stated bound is ≈ 3e-11·‖A‖_F),
// with the reciprocal-pivot iteration (the default) and with the
// division-pivot reference. The reciprocal path must answer most of these
// steps itself (not through its fall-back), or the test would compare
// little of it: at least 80 % of the steps here.
func TestPSDStepAdversarial(t *testing.T) {
	kinds := []string{"random", "repeated", "near-degenerate", "rank-deficient", "rank-one", "null-v", "eigen-v", "wide"}
	for _, recip := range []bool{true, false} {
		for _, kind := range kinds {
			for _, d := range []int{3, 8, 20} {
				rng := rand.New(rand.NewPCG(51, uint64(d)))
				old := psdStepRecip
				psdStepRecip = recip
				fast, fallbacks, clipped, worst := 0, 0, 0, 0.0
				const trials = 40
				for trial := 0; trial < trials; trial++ {
					P, v, psi0 := adversarialPSD(rng, d, kind)
					k := 1.0
					if trial%3 == 0 {
						k = 0.99
					}
					c := -math.Pow(10, -9+10*rng.Float64())
					if trial%2 == 0 && !math.IsInf(psi0, 0) {
						c = -(1 - c) * k / psi0
					}
					p := newPSDProjector("frobenius-psd", 1e6, d)
					ref := newPSDProjector("frobenius-psd", 1e6, d)
					w := slices.Clone(P)
					p.Project(w)
					a := make([]float64, d*d)
					stepUpdate(a, w, d, k, c, v)
					want := slices.Clone(a)
					ref.Project(want)
					copy(w, a)
					before, fb := p.fastSteps, p.recipFallbacks
					p.ProjectStep(w, k, c, v)
					if p.fastSteps > before {
						fast++
					}
					fallbacks += p.recipFallbacks - fb
					if !slices.Equal(w, a) {
						clipped++
					}
					diff, _ := frobDiff(w, want)
					na := math.Sqrt(dot(a, a))
					if !(diff <= 1e-10*max(1, na)) {
						t.Fatalf("recip=%v %s d=%d trial %d (c = %g): ‖fast − dsyev‖ = %g, ‖A‖ = %g", recip, kind, d, trial, c, diff, na)
					}
					worst = max(worst, diff/max(1, na))
				}
				psdStepRecip = old
				if fast-fallbacks < trials*8/10 {
					t.Errorf("recip=%v %s d=%d: the fast path answered %d of %d steps (%d through the fall-back)", recip, kind, d, fast, trials, fallbacks)
				}
				if recip {
					t.Logf("%s d=%d: fast %d/%d (fall-backs %d, clipped %d), worst ‖fast − dsyev‖/max(1, ‖A‖) = %.2g", kind, d, fast, trials, fallbacks, clipped, worst)
				}
			}
		}
	}
}

// hideFused is an Objective without metricObjective's stepProject, so that
// RunPairSGD runs Step and then Project.
type hideFused struct{ Objective }

// TestMetricStepProjectMatchesStepThenProject: RunPairSGD's fused call
// (metricObjective.stepProject, which skips ProjectStep's entry-by-entry
// check of the update it made itself) gives the model, the last iterate
// and the step counts of Step followed by Project bit for bit, for each PSD
// set, dense and CSR records, λ = 0 and λ > 0, hinge and logistic losses;
// and on dense records it answers most steps through that path (else the
// comparison would be vacuous).
func TestMetricStepProjectMatchesStepThenProject(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	n, d := 200, 7
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x[i*d+j] = rng.NormFloat64() / 3
		}
		y[i] = 1
		if x[i*d]-0.6*x[i*d+2]+0.2*rng.NormFloat64() < 0 {
			y[i] = -1
		}
	}
	dense, sparse := sparsify(rng, &Dataset{N: n, D: d, X: x, Y: y}, 0.5)
	for _, kind := range []string{"psd", "frobenius-psd", "nuclear-psd"} {
		for _, loss := range []Loss{MetricHinge{}, MetricLogistic{}} {
			for _, lambda := range []float64{0, 0.01} {
				for dsi, ds := range []*Dataset{dense, sparse} {
					var res [2]*Result
					var verified int
					for f := 0; f < 2; f++ {
						obj, err := NewObjective(ds, ObjectiveConfig{Task: TaskMetric, Loss: loss, Constraint: kind, Radius: 1.5, Lambda: lambda})
						if err != nil {
							t.Fatal(err)
						}
						run := obj
						if f == 1 {
							run = hideFused{obj}
						}
						r, err := RunPairSGD(context.Background(), run, RunConfig{Eta: 0.2}, rand.New(rand.NewPCG(55, 56)), &PrevInstance{N: n}, 2000, Constant)
						if err != nil {
							t.Fatal(err)
						}
						res[f] = r
						if f == 0 {
							verified = obj.(*metricObjective).proj.(*psdProjector).verifiedSteps
						}
					}
					name := fmt.Sprintf("%s/%s/λ=%g/%s", kind, loss.Name(), lambda, []string{"dense", "csr"}[dsi])
					if !equalBits(res[0].W, res[1].W) || !equalBits(res[0].Last, res[1].Last) || res[0].PairGrads != res[1].PairGrads {
						t.Errorf("%s: fused and Step+Project runs differ", name)
					}
					if dsi == 0 && verified < 300 {
						t.Errorf("%s: the fused path answered %d steps", name, verified)
					}
				}
			}
		}
	}
}

// exactNormBelow reports whether ‖w‖_F ≤ b in exact arithmetic on the
// stored values (the squares and their sum in 2 200-bit floats: exact).
func exactNormBelow(w []float64, b float64) bool {
	sum := new(big.Float).SetPrec(2200)
	for _, x := range w {
		t := new(big.Float).SetPrec(2200).SetFloat64(x)
		sum.Add(sum, t.Mul(t, t))
	}
	bb := new(big.Float).SetPrec(2200).SetFloat64(b)
	return sum.Cmp(bb.Mul(bb, bb)) <= 0
}

// TestPSDNormBoundSkipsExactly: along step chains that cross the
// frobenius-psd radius back and forth (positive steps that rescale and
// ones that do not, clips in between), the projector that skips the norm
// sum when its carried bound allows (psdNormSkip) gives the bits of the
// one that always sums, its bound is ≥ the exact ‖last‖_F after every
// step (exact arithmetic, big.Float), and it does skip, also within 1 %
// of the radius. A bound without its rounding margin (the clip's 10⁻¹⁰ or
// the sum's 1 + 10⁻¹²) falls below the exact norm here and fails.
func TestPSDNormBoundSkipsExactly(t *testing.T) {
	defer func(old bool) { psdNormSkip = old }(psdNormSkip)
	for _, d := range []int{3, 8, 20} {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(47, uint64(d)))
			const r = 2
			p := newPSDProjector("frobenius-psd", r, d)
			ref := newPSDProjector("frobenius-psd", r, d)
			w := randSym(rng, d, 0.3)
			wr := append([]float64(nil), w...)
			p.Project(w)
			ref.Project(wr)
			v := make([]float64, d)
			var skips, nearSkips, rescales, checked int
			for s := 0; s < 3000; s++ {
				for i := range v {
					v[i] = rng.NormFloat64()
				}
				c := math.Exp(2*rng.NormFloat64()-4) / float64(d)
				if rng.IntN(2) == 0 {
					c = -c
				}
				k := 1.0
				if rng.IntN(4) == 0 {
					k = 1 - math.Exp(rng.NormFloat64()-5)
				}
				if s%500 == 499 { // shrink back inside the ball now and then
					k = 0.3
				}
				stepUpdate(w, p.last, d, k, c, v)
				stepUpdate(wr, ref.last, d, k, c, v)
				before := p.normSkips
				psdNormSkip = true
				p.ProjectStep(w, k, c, v)
				psdNormSkip = false
				ref.ProjectStep(wr, k, c, v)
				for i := range w {
					if math.Float64bits(w[i]) != math.Float64bits(wr[i]) {
						t.Fatalf("step %d (c = %g, k = %g): entry %d = %v, always summing gives %v", s, c, k, i, w[i], wr[i])
					}
				}
				if p.normSkips > before {
					skips++
					if n := math.Sqrt(dot(w, w)); n > 0.99*r {
						nearSkips++
					}
				}
				if c > 0 && !exactNormBelow(ref.last, r*(1-1e-9)) {
					rescales++
				}
				if !math.IsNaN(p.normUp) {
					checked++
					if !exactNormBelow(p.last, p.normUp) {
						t.Fatalf("step %d (c = %g, k = %g): bound %v below the exact ‖last‖_F", s, c, k, p.normUp)
					}
				}
			}
			if skips < 300 || nearSkips < 10 || rescales < 50 || checked < 1800 {
				t.Fatalf("skips %d (near the radius %d), rescaling steps %d, bounds checked %d: the chain does not exercise the bound", skips, nearSkips, rescales, checked)
			}
			t.Logf("skips %d (near the radius %d), rescaling steps %d, bounds checked %d", skips, nearSkips, rescales, checked)
		})
	}
}
