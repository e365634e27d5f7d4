package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCholMatchesRef: the dispatched CholLower and CholSolve (AVX2 where
// the CPU has it) give the references' factor, mirror and solution bit for
// bit, and the same verdict on definiteness, for d = 1…24 and matrices
// positive definite, borderline (pivots near rounding) and indefinite,
// with entries over a wide range of exponents.
func TestCholMatchesRef(t *testing.T) {
	checkCholMatchesRef(t, CholLower, CholLowerGo, CholSolve, CholSolveGo)
}

// TestCholRecipMatchesRef: the same for the reciprocal-pivot factorization
// (CholLowerRecip, CholSolveRecip against CholLowerRecipGo,
// CholSolveRecipGo), bit for bit.
func TestCholRecipMatchesRef(t *testing.T) {
	checkCholMatchesRef(t, CholLowerRecip, CholLowerRecipGo, CholSolveRecip, CholSolveRecipGo)
}

// TestCholRecipSolves: the reciprocal-pivot reference solves M·x = b: for
// the definite matrices of checkCholMatchesRef's kind (condition number
// ≤ ≈ 10⁴ by the shift) the residual ‖Mx − b‖ is ≤ 10⁻¹²·‖M‖_F·‖x‖, and
// it agrees with CholLowerGo/CholSolveGo's solution to 10⁻⁹ relative (both
// are backward stable; the bound is ε·κ with margin).
func TestCholRecipSolves(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 500; trial++ {
		d := 1 + trial%24
		k := d + 2
		g := make([]float64, d*k)
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		m := make([]float64, d*d)
		var nf float64
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				var s float64
				for c := 0; c < k; c++ {
					s += g[a*k+c] * g[b*k+c]
				}
				if a == b {
					s += 1e-3 * float64(k)
				}
				m[a*d+b] = s
				nf += s * s
			}
		}
		nf = math.Sqrt(nf)
		b := make([]float64, d)
		for a := range b {
			b[a] = rng.NormFloat64()
		}
		l1, l2 := slices.Clone(m), slices.Clone(m)
		if !CholLowerRecipGo(l1, d) || !CholLowerGo(l2, d) {
			t.Fatalf("trial %d d=%d: definite matrix refused", trial, d)
		}
		x, y := slices.Clone(b), slices.Clone(b)
		CholSolveRecipGo(l1, d, x)
		CholSolveGo(l2, d, y)
		var r2, x2, e2 float64
		for a := 0; a < d; a++ {
			var s float64
			for c := 0; c < d; c++ {
				s += m[a*d+c] * x[c]
			}
			r2 += (s - b[a]) * (s - b[a])
			x2 += x[a] * x[a]
			e2 += (x[a] - y[a]) * (x[a] - y[a])
		}
		if math.Sqrt(r2) > 1e-12*nf*math.Sqrt(x2) || math.Sqrt(e2) > 1e-9*math.Sqrt(x2) {
			t.Fatalf("trial %d d=%d: residual %.3g (‖M‖‖x‖ %.3g), difference from the division factor %.3g", trial, d, math.Sqrt(r2), nf*math.Sqrt(x2), math.Sqrt(e2))
		}
	}
}

func checkCholMatchesRef(t *testing.T, lower, lowerRef func([]float64, int) bool, solve, solveRef func([]float64, int, []float64)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(181, 182))
	for trial := 0; trial < 3000; trial++ {
		d := 1 + trial%24
		k := d/2 + 1 + rng.IntN(d)
		g := make([]float64, d*k)
		sc := math.Exp2(float64(rng.IntN(40) - 20))
		for i := range g {
			g[i] = sc * rng.NormFloat64()
		}
		m := make([]float64, d*d)
		for i := range m {
			m[i] = math.NaN() // the upper triangle is not input
		}
		shift := []float64{0.5, 1e-9, -0.05, 0}[trial%4] * sc * sc
		for a := 0; a < d; a++ {
			for b := 0; b <= a; b++ {
				var s float64
				for c := 0; c < k; c++ {
					s += g[a*k+c] * g[b*k+c]
				}
				m[a*d+b] = s
			}
			m[a*d+a] += shift
		}
		got, want := slices.Clone(m), slices.Clone(m)
		okG, okW := lower(got, d), lowerRef(want, d)
		if okG != okW {
			t.Fatalf("trial %d d=%d: positive definite %v, reference %v", trial, d, okG, okW)
		}
		if !okW {
			continue
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("trial %d d=%d: l[%d][%d] = %v, reference %v", trial, d, i/d, i%d, got[i], want[i])
			}
		}
		x := make([]float64, d)
		for a := range x {
			x[a] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(20)-10))
		}
		y := slices.Clone(x)
		solve(got, d, x)
		solveRef(want, d, y)
		for a := range x {
			if math.Float64bits(x[a]) != math.Float64bits(y[a]) {
				t.Fatalf("trial %d d=%d: solution[%d] = %v, reference %v", trial, d, a, x[a], y[a])
			}
		}
	}
}

// BenchmarkCholLower20 factors and solves a 20×20 positive definite matrix.
func BenchmarkCholLower20(b *testing.B) {
	const d = 20
	rng := rand.New(rand.NewPCG(1, 2))
	m := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for c := 0; c <= a; c++ {
			m[a*d+c] = 0.01 * rng.NormFloat64()
		}
		m[a*d+a] = 1
	}
	l := make([]float64, d*d)
	x := make([]float64, d)
	for b.Loop() {
		copy(l, m)
		CholLower(l, d)
		for i := range x {
			x[i] = 1
		}
		CholSolve(l, d, x)
	}
}

func benchChol(b *testing.B, factor func([]float64, int) bool) {
	const d = 20
	rng := rand.New(rand.NewPCG(1, 2))
	m := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for c := 0; c <= a; c++ {
			m[a*d+c] = 0.01 * rng.NormFloat64()
		}
		m[a*d+a] = 1
	}
	l := make([]float64, d*d)
	for b.Loop() {
		copy(l, m)
		factor(l, d)
	}
}

func BenchmarkCholFactor20(b *testing.B)      { benchChol(b, CholLower) }
func BenchmarkCholFactor20Go(b *testing.B)    { benchChol(b, CholLowerGo) }
func BenchmarkCholFactor20Recip(b *testing.B) { benchChol(b, CholLowerRecip) }

func benchSolve(b *testing.B, factor func([]float64, int) bool, solve func([]float64, int, []float64)) {
	const d = 20
	rng := rand.New(rand.NewPCG(1, 2))
	m := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for c := 0; c <= a; c++ {
			m[a*d+c] = 0.01 * rng.NormFloat64()
		}
		m[a*d+a] = 1
	}
	factor(m, d)
	x := make([]float64, d)
	for b.Loop() {
		for i := range x {
			x[i] = 1
		}
		solve(m, d, x)
	}
}

func BenchmarkCholSolve20(b *testing.B)      { benchSolve(b, CholLower, CholSolve) }
func BenchmarkCholSolve20Recip(b *testing.B) { benchSolve(b, CholLowerRecip, CholSolveRecip) }

// TestCopyNoNaNMatchesRef: CopyNoNaN copies every value (bits included:
// signed zeros, infinities, NaN payloads) and reports a NaN at any position
// of lengths 0…40, as the reference does.
func TestCopyNoNaNMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(191, 192))
	for n := 0; n <= 40; n++ {
		for pos := -1; pos < n; pos++ {
			src := make([]float64, n)
			for i := range src {
				src[i] = []float64{rng.NormFloat64(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 5e-324}[rng.IntN(5)]
			}
			if pos >= 0 {
				src[pos] = math.Float64frombits(0x7ff8000000000000 | uint64(rng.IntN(1000)))
			}
			got, want := make([]float64, n+1), make([]float64, n+1)
			got[n], want[n] = 7, 7
			okG, okW := CopyNoNaN(got, src), CopyNoNaNGo(want, src)
			if okG != okW || okW != (pos < 0) {
				t.Fatalf("n=%d NaN at %d: no NaN %v, reference %v", n, pos, okG, okW)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d: dst[%d] = %v, reference %v", n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestMatVec4MatchesRef: MatVec4's four sums are the reference's (dot's)
// bit for bit for d = 1…25 (even and odd), values of wide range.
func TestMatVec4MatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(201, 202))
	for d := 1; d <= 25; d++ {
		for trial := 0; trial < 40; trial++ {
			w := make([]float64, 4*d)
			x := make([]float64, d)
			for i := range w {
				w[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30))
			}
			for i := range x {
				x[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30))
			}
			var got, want [4]float64
			MatVec4(w, d, x, &got)
			MatVec4Go(w, d, x, &want)
			for r := range got {
				if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
					t.Fatalf("d=%d row %d: %v, reference %v", d, r, got[r], want[r])
				}
			}
		}
	}
}

// TestAxpyMatchesRef: Axpy gives AxpyGo's y bit for bit (signed zeros,
// infinities, subnormals and wide exponents included; a NaN only as a NaN,
// its payload not compared) for every
// length 0…41 (the eight-lane loop, the four-lane step and the scalar
// tail) and leaves y past len(x) alone.
func TestAxpyMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -2.2e-308, 1e308}
	pick := func() float64 {
		if rng.IntN(6) == 0 {
			return specials[rng.IntN(len(specials))]
		}
		return rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30))
	}
	for trial := 0; trial < 2000; trial++ {
		n := trial % 42
		x := make([]float64, n)
		y := make([]float64, n+3)
		for i := range x {
			x[i] = pick()
		}
		for i := range y {
			y[i] = pick()
		}
		a := pick()
		if trial%3 == 0 {
			a = rng.NormFloat64()
		}
		got, want := slices.Clone(y), slices.Clone(y)
		Axpy(a, x, got)
		AxpyGo(a, x, want)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("trial %d n=%d a=%v: y[%d] = %v, reference %v", trial, n, a, i, got[i], want[i])
			}
		}
	}
}
