package pairwise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// eigvals returns the eigenvalues of the symmetric part of w (ascending),
// computed independently with mat.EigenSym.
func eigvals(t testing.TB, w []float64, d int) []float64 {
	t.Helper()
	s := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			s.SetSym(a, b, 0.5*(w[a*d+b]+w[b*d+a]))
		}
	}
	var e mat.EigenSym
	if !e.Factorize(s, false) {
		t.Fatal("EigenSym failed")
	}
	return e.Values(nil)
}

func frob(w []float64) float64 { return math.Sqrt(dot(w, w)) }

func frobDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		e := a[i] - b[i]
		s += e * e
	}
	return math.Sqrt(s)
}

func trace(w []float64, d int) float64 {
	var s float64
	for a := 0; a < d; a++ {
		s += w[a*d+a]
	}
	return s
}

func randMat(rng *rand.Rand, d int, s float64) []float64 {
	w := make([]float64, d*d)
	for i := range w {
		w[i] = s * rng.NormFloat64()
	}
	return w
}

type projCase struct {
	kind string
	r    float64
}

var projCases = []projCase{
	{"psd", 0}, {"frobenius-psd", 0.5}, {"frobenius-psd", 3}, {"nuclear-psd", 0.5}, {"nuclear-psd", 3},
}

func project(p Projector, w []float64) []float64 {
	out := append([]float64(nil), w...)
	p.Project(out)
	return out
}

// checkFeasible fails unless w is exactly symmetric, PSD (min eigenvalue
// ≥ −1e-10) and within the set's radius (Frobenius, and trace for nuclear).
func checkFeasible(t *testing.T, c projCase, w []float64, d int) {
	t.Helper()
	if !isSymmetric(w, d) {
		t.Fatalf("%s: projection not exactly symmetric", c.kind)
	}
	ev := eigvals(t, w, d)
	if ev[0] < -1e-10 {
		t.Fatalf("%s: min eigenvalue %v", c.kind, ev[0])
	}
	switch c.kind {
	case "frobenius-psd":
		if n := frob(w); n > c.r*(1+1e-12) {
			t.Fatalf("%s r=%v: ‖Π(W)‖_F = %v", c.kind, c.r, n)
		}
	case "nuclear-psd":
		if tr := trace(w, d); tr > c.r+1e-10 {
			t.Fatalf("%s r=%v: tr Π(W) = %v", c.kind, c.r, tr)
		}
		if n := frob(w); n > c.r*(1+1e-12) {
			t.Fatalf("%s r=%v: ‖Π(W)‖_F = %v > r", c.kind, c.r, n)
		}
	}
}

// TestPSDProjectProperties checks, on random (non-symmetric) matrices:
// feasibility, idempotence, that Π(W) is no farther from W than any of many
// feasible points V, and the variational inequality ⟨W − Π(W), V − Π(W)⟩ ≤ 0
// that characterizes the projection onto a convex set.
func TestPSDProjectProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range projCases {
		for _, d := range []int{1, 2, 5, 19} {
			p := newPSDProjector(c.kind, c.r, d)
			want := c.r
			if c.kind == "psd" {
				want = math.Inf(1)
			}
			if got := p.Radius(); got != want {
				t.Fatalf("%s radius %v, want %v", c.kind, got, want)
			}
			for trial := 0; trial < 20; trial++ {
				w := randMat(rng, d, []float64{0.05, 1, 5}[trial%3])
				pw := project(p, w)
				checkFeasible(t, c, pw, d)
				if e := frobDist(project(p, pw), pw); e > 1e-12*(1+frob(pw)) {
					t.Fatalf("%s d=%d: not idempotent, ‖Π(Π(W)) − Π(W)‖ = %v", c.kind, d, e)
				}
				best := frobDist(w, pw)
				for v := 0; v < 30; v++ {
					// Feasible V: projections of random matrices, their
					// shrinkings and convex combinations with Π(W).
					V := project(p, randMat(rng, d, []float64{0.1, 1, 10}[v%3]))
					switch v % 4 {
					case 1:
						scale(rng.Float64(), V)
					case 2:
						th := rng.Float64()
						for k := range V {
							V[k] = th*V[k] + (1-th)*pw[k]
						}
					}
					if dv := frobDist(w, V); best > dv+1e-9 {
						t.Fatalf("%s d=%d: ‖W − Π(W)‖ = %v > ‖W − V‖ = %v for a feasible V", c.kind, d, best, dv)
					}
					var vi float64
					for k := range V {
						vi += (w[k] - pw[k]) * (V[k] - pw[k])
					}
					if vi > 1e-9 {
						t.Fatalf("%s d=%d: ⟨W − Π(W), V − Π(W)⟩ = %v > 0", c.kind, d, vi)
					}
				}
			}
		}
	}
}

// TestPSDProjectSymmetrizes: Π(W) = Π((W + Wᵀ)/2).
func TestPSDProjectSymmetrizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const d = 6
	for _, c := range projCases {
		p := newPSDProjector(c.kind, c.r, d)
		w := randMat(rng, d, 1)
		s := make([]float64, d*d)
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				s[a*d+b] = 0.5 * (w[a*d+b] + w[b*d+a])
			}
		}
		if e := frobDist(project(p, w), project(p, s)); e > 1e-13 {
			t.Fatalf("%s: Π(W) and Π(sym W) differ by %v", c.kind, e)
		}
	}
}

// TestPSDProjectInsideUnchanged: feasible points come back (up to rounding);
// feasible diagonal points and zero come back bit for bit.
func TestPSDProjectInsideUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const d = 7
	for _, c := range projCases {
		p := newPSDProjector(c.kind, c.r, d)
		for trial := 0; trial < 10; trial++ {
			v := project(p, randMat(rng, d, 2))
			scale(0.9, v) // strictly inside the ball / trace bound
			if e := frobDist(project(p, v), v); e > 1e-13*(1+frob(v)) {
				t.Fatalf("%s: feasible point moved by %v", c.kind, e)
			}
		}
		diag := make([]float64, d*d)
		for a := 0; a < d; a++ {
			diag[a*d+a] = 0.01 * float64(a)
		}
		if got := project(p, diag); frobDist(got, diag) != 0 {
			t.Fatalf("%s: feasible diagonal point changed", c.kind)
		}
		zero := make([]float64, d*d)
		if got := project(p, zero); frob(got) != 0 {
			t.Fatalf("%s: Π(0) ≠ 0", c.kind)
		}
	}
}

// TestPSDProjectKnown checks hand-computed projections, through both the
// diagonal shortcut and the eigendecomposition (a rotated copy).
func TestPSDProjectKnown(t *testing.T) {
	const d = 2
	th := 0.7
	cs, sn := math.Cos(th), math.Sin(th)
	rot := func(l1, l2 float64) []float64 { // R diag(l1, l2) Rᵀ
		return []float64{
			cs*cs*l1 + sn*sn*l2, cs * sn * (l1 - l2),
			cs * sn * (l1 - l2), sn*sn*l1 + cs*cs*l2,
		}
	}
	for _, tc := range []struct {
		kind   string
		r      float64
		in     [2]float64
		expect [2]float64
	}{
		{"psd", 0, [2]float64{3, -1}, [2]float64{3, 0}},
		{"frobenius-psd", 1, [2]float64{3, -1}, [2]float64{1, 0}},
		{"frobenius-psd", 10, [2]float64{3, 4}, [2]float64{3, 4}},
		{"frobenius-psd", 1, [2]float64{3, 4}, [2]float64{0.6, 0.8}},
		{"nuclear-psd", 2, [2]float64{3, 1.5}, [2]float64{1.75, 0.25}},
		{"nuclear-psd", 2, [2]float64{3, -1}, [2]float64{2, 0}},
		{"nuclear-psd", 5, [2]float64{3, 1.5}, [2]float64{3, 1.5}},
		{"nuclear-psd", 1, [2]float64{3, 2.5}, [2]float64{0.75, 0.25}},
	} {
		p := newPSDProjector(tc.kind, tc.r, d)
		got := project(p, []float64{tc.in[0], 0, 0, tc.in[1]})
		want := []float64{tc.expect[0], 0, 0, tc.expect[1]}
		if e := frobDist(got, want); e > 1e-15 {
			t.Errorf("%s r=%v diag%v: got %v, want %v", tc.kind, tc.r, tc.in, got, want)
		}
		got = project(p, rot(tc.in[0], tc.in[1]))
		want = rot(tc.expect[0], tc.expect[1])
		if e := frobDist(got, want); e > 1e-14 {
			t.Errorf("%s r=%v rotated %v: got %v, want %v", tc.kind, tc.r, tc.in, got, want)
		}
	}
}

// TestPSDDiagonalShortcutMatchesEigen: the diagonal shortcut agrees with the
// eigendecomposition path.
func TestPSDDiagonalShortcutMatchesEigen(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	const d = 9
	for _, c := range projCases {
		p := newPSDProjector(c.kind, c.r, d)
		w := make([]float64, d*d)
		for a := 0; a < d; a++ {
			w[a*d+a] = 2 * rng.NormFloat64()
		}
		short := project(p, w)
		copy(p.a, w)
		viaEig := make([]float64, d*d)
		p.projectEigen(viaEig)
		if e := frobDist(short, viaEig); e > 1e-13 {
			t.Fatalf("%s: shortcut and eigendecomposition differ by %v", c.kind, e)
		}
	}
}

// cappedSimplexBisect is a reference for projectCappedSimplex: θ ≥ 0 found by
// bisection on the decreasing function θ ↦ Σ max(λ − θ, 0).
func cappedSimplexBisect(lam []float64, r float64) []float64 {
	sum := func(th float64) float64 {
		var s float64
		for _, v := range lam {
			s += math.Max(v-th, 0)
		}
		return s
	}
	th := 0.0
	if sum(0) > r {
		lo, hi := 0.0, 0.0
		for _, v := range lam {
			hi = math.Max(hi, v)
		}
		for it := 0; it < 200; it++ {
			mid := 0.5 * (lo + hi)
			if sum(mid) > r {
				lo = mid
			} else {
				hi = mid
			}
		}
		th = 0.5 * (lo + hi)
	}
	out := make([]float64, len(lam))
	for i, v := range lam {
		out[i] = math.Max(v-th, 0)
	}
	return out
}

func TestProjectCappedSimplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(12)
		lam := make([]float64, n)
		for i := range lam {
			lam[i] = rng.NormFloat64() * 3
			if trial%5 == 0 {
				lam[i] = math.Round(lam[i]) // ties
			}
		}
		r := 0.1 + 5*rng.Float64()
		want := cappedSimplexBisect(lam, r)
		got := append([]float64(nil), lam...)
		projectCappedSimplex(got, r, make([]float64, n))
		var sum float64
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Fatalf("λ=%v r=%v: got %v, want %v", lam, r, got, want)
			}
			if got[i] < 0 {
				t.Fatalf("negative entry %v", got[i])
			}
			sum += got[i]
		}
		if sum > r+1e-12 {
			t.Fatalf("sum %v > r = %v", sum, r)
		}
	}
}

func TestPSDProjectNonFinite(t *testing.T) {
	p := newPSDProjector("frobenius-psd", 1, 2)
	w := []float64{1, math.Inf(1), 0, 1}
	p.Project(w)
	for _, v := range w {
		if !math.IsNaN(v) {
			t.Fatalf("non-finite input gave %v, want NaN", w)
		}
	}
}

func TestPSDProjectNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, c := range projCases {
		p := newPSDProjector(c.kind, c.r, 19)
		w0 := randMat(rng, 19, 1)
		w := make([]float64, len(w0))
		allocs := testing.AllocsPerRun(20, func() {
			copy(w, w0)
			p.Project(w)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Project", c.kind, allocs)
		}
	}
}

func TestNewPSDProjectorPanics(t *testing.T) {
	for _, tc := range []struct {
		kind string
		r    float64
		d    int
	}{{"frobenius-psd", 0, 3}, {"nuclear-psd", math.Inf(1), 3}, {"nuclear-psd", math.NaN(), 3}, {"psd", 0, 0}, {"l1", 1, 3}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("newPSDProjector(%q, %v, %d) did not panic", tc.kind, tc.r, tc.d)
				}
			}()
			newPSDProjector(tc.kind, tc.r, tc.d)
		}()
	}
	// Via the public constructor.
	for _, kind := range []string{"psd", "frobenius-psd", "nuclear-psd"} {
		p, err := NewProjector(kind, 2, TaskMetric, 4)
		if err != nil || p.Name() != kind {
			t.Fatalf("NewProjector(%s): %v, %v", kind, p, err)
		}
	}
}

func BenchmarkPSDProject(b *testing.B) {
	for _, d := range []int{19, 64} {
		for _, kind := range []string{"psd", "frobenius-psd", "nuclear-psd"} {
			b.Run(fmt.Sprintf("%s/d=%d", kind, d), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(33, uint64(d)))
				p := newPSDProjector(kind, 1, d)
				w0 := randSym(rng, d, 1)
				w := make([]float64, len(w0))
				b.ReportAllocs()
				b.ResetTimer()
				for k := 0; k < b.N; k++ {
					copy(w, w0)
					p.Project(w)
				}
			})
		}
	}
}

// TestPSDFeasibleShortcut: a positive definite point inside the radius
// comes back exactly (the Cholesky test, no decomposition), and on random
// points — inside, on the boundary's outside, singular, indefinite — the
// projection equals the decomposition's (projectEigen) to rounding, so the
// shortcut never accepts a point outside the set.
func TestPSDFeasibleShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const d = 6
	for _, c := range projCases {
		p := newPSDProjector(c.kind, c.r, d)
		for trial := 0; trial < 200; trial++ {
			w := randMat(rng, d, 1)
			switch trial % 4 {
			case 0, 1: // feasible and positive definite: W = BBᵀ + εI scaled inside
				b := randMat(rng, d, 1)
				for i := 0; i < d; i++ {
					for j := 0; j < d; j++ {
						var s float64
						for k := 0; k < d; k++ {
							s += b[i*d+k] * b[j*d+k]
						}
						w[i*d+j] = s
					}
					w[i*d+i] += 0.1
				}
				if c.kind != "psd" {
					lim := c.r / frob(w)
					if c.kind == "nuclear-psd" {
						lim = c.r / trace(w, d)
					}
					if trial%4 == 0 {
						scale(0.9*lim, w) // inside
					} else {
						scale(1.1*lim, w) // outside the radius: must be projected
					}
				}
			case 2: // singular PSD: rank d − 1
				b := randMat(rng, d, 1)
				for k := 0; k < d; k++ {
					b[k*d+d-1] = 0
				}
				for i := 0; i < d; i++ {
					for j := 0; j < d; j++ {
						var s float64
						for k := 0; k < d; k++ {
							s += b[i*d+k] * b[j*d+k]
						}
						w[i*d+j] = s
					}
				}
			}
			got := project(p, w)
			for i := 0; i < d; i++ { // the decomposition's answer
				for j := i; j < d; j++ {
					p.a[i*d+j] = 0.5 * (w[i*d+j] + w[j*d+i])
				}
			}
			want := append([]float64(nil), w...)
			p.projectEigen(want)
			if e := frobDist(got, want); e > 1e-12*(1+frob(want)) {
				t.Fatalf("%s r=%v trial %d: shortcut and decomposition differ by %v", c.kind, c.r, trial, e)
			}
			if trial%4 == 0 {
				sym := append([]float64(nil), w...)
				for i := 0; i < d; i++ {
					for j := 0; j < d; j++ {
						sym[i*d+j] = 0.5 * (w[i*d+j] + w[j*d+i])
					}
				}
				if frobDist(got, sym) != 0 {
					t.Fatalf("%s r=%v: a feasible positive definite point was not returned exactly", c.kind, c.r)
				}
			}
		}
	}
}
