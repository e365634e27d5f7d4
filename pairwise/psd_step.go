package pairwise

import (
	"bytes"
	"fmt"
	"math"
	"unsafe"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
)

// stepProjector is implemented by projectors with a fast path for the
// projection after one SGD step of the metric objective: w holds
// A = k·P + c·v vᵀ (computed entry by entry as metricObjective.Step does),
// where P is the projector's own last output. ProjectStep must give the
// same result as Project(w) up to rounding, whatever w holds: a w that is
// not that update takes the general path.
type stepProjector interface {
	ProjectStep(w []float64, k, c float64, v []float64)
}

// ProjectStep does w ← Π_C(w) like Project, using that w is the update
// A = k·P + c·v vᵀ of the last output P ∈ C (0 < k ≤ 1, v dense of length
// d). The claim is verified first, entry by entry, in the arithmetic of
// metricObjective.Step (every A_ab == fl(fl(P_ab·k) + fl(c·v_a)·v_b), and
// A symmetric); when it fails, or any guard below fails, this is Project.
//
// # Why the projection is cheap after a rank-one step
//
// Let P ∈ C (P ⪰ 0, within the radius) and 0 < k ≤ 1, so kP ∈ C (a cone,
// shrunk toward 0 inside a ball or a trace bound centred at 0).
//
//   - c ≥ 0: A = kP + c·vvᵀ ⪰ 0. For psd, A ∈ C: Π_C(A) = A. For
//     frobenius-psd, Π_C(A) = A·min(1, r/‖A‖_F) (Π_{cone ∩ ball} =
//     Π_ball ∘ Π_cone, proved on psdProjector, and Π_cone(A) = A). For
//     nuclear-psd, A ∈ C when tr A ≤ r; otherwise the spectrum is needed
//     (the simplex projection shifts every eigenvalue) and this is Project.
//   - c < 0: A = kP − |c|·vvᵀ. By Cauchy interlacing for a rank-one
//     negative perturbation, λ_i(A) ≤ λ_i(kP) ≤ λ_{i+1}(A): A has at most
//     one negative eigenvalue μ, with unit eigenvector u, and
//     Π_{S₊}(A) = A − μ·uuᵀ. This point is in C for all three sets, so it
//     is Π_C(A) (the nearest point of the larger set S₊ lies in C): its
//     eigenvalues max(λ_i(A), 0) are ≤ λ_i(kP) term by term and ≥ 0, so
//     its Frobenius norm and trace are ≤ those of kP, which are ≤ r.
//     If A is positive definite (a Cholesky factorization succeeds) it is
//     returned unchanged, as Project's feasibility test would; the
//     factorization is skipped when a Rayleigh quotient below already shows
//     μ < 0. Otherwise μ
//     is found from the secular equation of the matrix determinant lemma:
//     for σ < 0, kP − σI ≻ 0 and det(A − σI) = det(kP − σI)·(1 − |c|ψ(σ))
//     with ψ(σ) = vᵀ(kP − σI)⁻¹v, so μ, the only eigenvalue of A below 0,
//     is the only root of g(σ) = 1/ψ(σ) − |c| on σ < 0. g is concave and
//     decreasing there (1/ψ is a weighted harmonic mean of the affine
//     λ_i(kP) − σ), so Newton's method converges monotonically from any
//     start right of the root; a start left of it lands right of it (the
//     tangent lies above g). The iteration keeps a bracket [lo, hi] ∋ μ:
//     lo = −|c|·‖v‖²·(1 + 10⁻⁸) ≤ μ (A ⪰ −|c|vvᵀ), hi the least of the
//     Rayleigh quotients seen (each is ≥ μ): of v, of span{v, q} by
//     Rayleigh–Ritz (q the eigenvector this clipped at the previous step,
//     usually close to a null vector of P), and of each iterate's x below.
//     Each step is one Cholesky factorization of kP − σI (d³/3 flops, where
//     Project's dsyev takes ≈ 9d³ and LAPACK's QR sweeps; gonum's dpotrf is
//     ≈ 30× less CPU than its dsyev at d = 20, cholLower less again) and two triangular solves: x = (kP − σI)⁻¹v, ψ = vᵀx,
//     ψ' = xᵀx; σ < μ exactly when 1/ψ > |c|. The next σ is the least upper
//     bound known, including, right of μ, the Newton step
//     σ + (ψ − |c|ψ²)/ψ' (an upper bound by concavity), or the bracket's
//     midpoint when kP − σI is not numerically positive definite; better
//     still, when it falls strictly inside the bracket, the root of the
//     osculating one-pole model ψ̃(τ) = α + β/(ρ − τ) that matches ψ, ψ′
//     and ψ″ = 2xᵀ(kP − σI)⁻¹x at σ (one more solve; exact when v's weight
//     sits on one eigenvalue of kP, third order near μ as in LAPACK's
//     secular solvers; it cut the factorizations per clipped step from
//     3.9 to 2.9 on the n = 10 000 selection's fits). When the step is
//     ≤ 10⁻³|σ| the last solve is carried to the new σ by a Neumann
//     series in the same factor (at most 40 factorizations, else Project).
//     At the root (A − μI)x =
//     (1 − |c|ψ)v = 0, so u = x/‖x‖ (this is inverse iteration), and the
//     result A − μ̂·uuᵀ uses the Rayleigh quotient μ̂ = uᵀAu.
//
// # Rounding
//
// The fast paths return A itself exactly where the math says A ∈ C, where
// Project returns the decomposition's rebuild of A (equal up to rounding,
// ≈ 1e-15·‖A‖, or A exactly when its Cholesky test passes). The negative
// case is accepted only if the residual ‖Au − μ̂u‖₂ ≤ 10⁻¹¹·‖A‖_F and μ̂ < 0;
// the eigenvector's error is then ≤ √2·‖r‖/gap with gap ≥ |μ̂| (the next
// eigenvalue is ≥ 0), so ‖result − Π_C(A)‖_F ≲ 3·10⁻¹¹·‖A‖_F.
// TestPSDStepMatchesProject measures the differences against Project
// (dsyev) along random step chains of each kind: ≤ 2e-12·max(1, ‖A‖_F),
// most ≈ 1e-15 (it asserts 1e-10).
//
// P is the projector's own output, positive semidefinite up to rounding
// (eigenvalues ≥ −O(ε‖P‖)), and the fast paths do not clip eigenvalues of
// that size, which Project would; such differences are of the same order.
func (p *psdProjector) ProjectStep(w []float64, k, c float64, v []float64) {
	d := p.d
	if len(w) != d*d {
		panic(fmt.Sprintf("pairwise: PSD projection of %d values, want %d×%d", len(w), d, d))
	}
	if p.lastOK && len(v) == d && k > 0 && k <= 1 && !math.IsNaN(c) && !math.IsInf(c, 0) && p.isStep(w, k, c, v) && p.stepFast(w, k, c, v) {
		p.remember(w)
		p.normUp = p.nextNormUp
		p.fastSteps++
		return
	}
	p.Project(w)
}

// projectStep is ProjectStep for a w the caller has made as the update of
// p.last by (k, c, v) itself (metricObjective.stepProject): the same
// guards and fast paths without isStep's entry-by-entry verification.
func (p *psdProjector) projectStep(w []float64, k, c float64, v []float64) {
	if p.lastOK && len(v) == p.d && len(w) == p.d*p.d && k > 0 && k <= 1 && !math.IsNaN(c) && !math.IsInf(c, 0) && p.stepFast(w, k, c, v) {
		p.remember(w)
		p.normUp = p.nextNormUp
		p.fastSteps++
		p.verifiedSteps++
		return
	}
	p.Project(w)
}

// equalBits reports whether a and b hold the same float64 bits (runtime's
// vectorized memory compare).
func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 8*len(a)), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 8*len(b)))
}

// isStep reports whether w is exactly (in ==) metricObjective.Step's
// update of p.last by (k, c, v), and symmetric.
func (p *psdProjector) isStep(w []float64, k, c float64, v []float64) bool {
	d := p.d
	w, v = w[:d*d], v[:d]
	for a := 0; a < d; a++ {
		ca := c * v[a]
		// Entries b = a…d−1 of row a, and of column a (col[t·d] = w[b][a]).
		row := p.last[a*d+a : (a+1)*d]
		wr := w[a*d+a : (a+1)*d]
		vb := v[a:]
		col := w[a*d+a:]
		vb, wr = vb[:len(row)], wr[:len(row)]
		for t, pv := range row {
			x := pv*k + ca*vb[t]
			if wr[t] != x || col[t*d] != x {
				return false
			}
		}
	}
	return true
}

// stepFast applies the fast path for the verified step; false sends w to
// Project (w is unchanged then). It leaves in p.nextNormUp an upper bound
// on the Frobenius norm of its output (NaN: none known).
//
// # The norm bound (frobenius-psd, c ≥ 0)
//
// The rescale needs n2 = Σ w_i², summed left to right: 400 dependent
// additions at d = 20, about a third of a microsecond on every positive
// step. It can only matter when n2 > r², and a bound carried from step to
// step usually shows it is not: with N ≥ ‖P‖_F (p.normUp, exact arithmetic
// on the stored values), every stored entry of A = k·P + c·vvᵀ is
// fl(fl(P_ab·k) + fl(c·v_a)·v_b), within 3ε(k|P_ab| + c|v_a v_b|) of the
// exact one, so ‖A‖_F ≤ (1 + 3ε)(k·N + c‖v‖²); evaluated in floating point
// (‖v‖² by dot, d ≤ 10⁴ terms, relative error ≤ 10⁴ε) with the factor
// 1 + 10⁻¹² and an absolute 10⁻²⁹⁰ for underflow, the computed bound b is
// ≥ ‖A‖_F. When b ≤ r(1 − 10⁻⁹) (and 10⁻¹⁰⁰ ≤ r ≤ 10¹⁵⁰, so that r² and
// the underflow of the squares are far from the margin), the exact
// ‖A‖_F² ≤ r²(1 − 2·10⁻⁹), and the left-to-right n2 (relative error
// ≤ d²ε ≤ 10⁻⁸ for d ≤ 300) is < fl(r·r): the sum would not rescale, and
// skipping it gives the same w bit for bit (TestPSDNormBoundSkipsExactly).
// The bounds carried to the output:
//   - after the sum: √n2·(1 + 10⁻¹²) (n2 ≥ ‖A‖²(1 − d²ε)), or r(1 + 10⁻¹²)
//     after the rescale by fl(r/√n2) (each entry within ε, the factor within
//     ≈ d²ε of r/‖A‖_F);
//   - after a clip (c < 0): out = fl(A_ab − fl(μ̂u_a)u_b) with μ̂ = uᵀAu as
//     computed and ‖u‖ = 1 up to dε; exactly, ‖A − μ̂uuᵀ‖² =
//     ‖A‖² − 2μ̂·uᵀAu + μ̂²‖u‖⁴ = ‖A‖² − μ̂² + O(d·ε‖A‖²) (|μ̂| ≤ ‖A‖), and
//     the stored entries add 2ε(‖A‖ + |μ̂|); with n2_A = Σ dot(row, row)
//     (smallestEigen's, within d²ε of ‖A‖²) the bound
//     √max(0, n2_A − μ̂² + 10⁻¹⁰·n2_A) exceeds all of it by ≈ 5·10⁻¹¹‖A‖;
//   - anything else (the Cholesky test's A ≻ 0, the other sets, Project):
//     unknown, and the next positive step sums.
func (p *psdProjector) stepFast(w []float64, k, c float64, v []float64) bool {
	d := p.d
	p.nextNormUp = math.NaN()
	if c >= 0 {
		switch p.kind {
		case "psd":
			return true
		case "frobenius-psd":
			if psdNormSkip && p.r >= 1e-100 && p.r <= 1e150 && d <= 300 {
				b := (k*p.normUp + c*dot(v, v) + 1e-290) * (1 + 1e-12)
				if b <= p.r*(1-1e-9) { // false for NaN
					p.nextNormUp = b
					p.normSkips++
					return true
				}
			}
			var n2 float64
			for _, x := range w {
				n2 += x * x
			}
			if n2 > p.r*p.r {
				scale(p.r/math.Sqrt(n2), w)
				p.nextNormUp = p.r * (1 + 1e-12)
			} else {
				p.nextNormUp = math.Sqrt(n2) * (1 + 1e-12)
			}
			return true
		default: // nuclear-psd
			var tr float64
			for i := 0; i < d; i++ {
				tr += w[i*d+i]
			}
			return tr <= p.r
		}
	}
	// c < 0: positive definite A is its own projection. A negative
	// Rayleigh quotient proves A is not (and skips that factorization).
	up, ok := p.rayleighBound(w, v)
	if !ok {
		return false
	}
	recip := psdStepRecip
	if !(up < 0) {
		for i := 0; i < d; i++ {
			copy(p.chol[i*d:i*d+i+1], w[i*d:i*d+i+1])
		}
		if p.factor(recip) {
			return true
		}
	}
	mu, ok := p.smallestEigen(w, k, -c, v, up, recip)
	if !ok && recip {
		// The reciprocal-pivot iteration's eigenpair failed its residual
		// test (or did not converge): the division-pivot one, the
		// reference, and after it Project.
		p.recipFallbacks++
		mu, ok = p.smallestEigen(w, k, -c, v, up, false)
	}
	if !ok {
		return false
	}
	p.nextNormUp = math.Sqrt(max(0, p.clipN2-mu*mu+1e-10*p.clipN2))
	u := p.x
	for a := 0; a < d; a++ {
		ma := mu * u[a]
		for b := a; b < d; b++ {
			x := w[a*d+b] - ma*u[b]
			w[a*d+b] = x
			w[b*d+a] = x
		}
	}
	return true
}

// rayleighBound returns an upper bound on λ_min(A), A = w: the Rayleigh
// quotient of v, or the smaller one from Rayleigh–Ritz on span{v, q}
// (q: the eigenvector the last step clipped, usually close to a null vector
// of P). ok is false for v = 0.
func (p *psdProjector) rayleighBound(w, v []float64) (up float64, ok bool) {
	d := p.d
	nv2 := dot(v, v)
	if !(nv2 > 0) {
		return 0, false
	}
	wv := p.z
	matVec(w, d, v, wv)
	var vav float64
	for a := 0; a < d; a++ {
		vav += v[a] * wv[a]
	}
	up = vav / nv2
	if p.qOK {
		q, e := p.q, p.y
		vq := dot(v, q) / nv2
		for a := range e {
			e[a] = q[a] - vq*v[a]
		}
		if ne := math.Sqrt(dot(e, e)); ne > 1e-6 {
			scale(1/ne, e)
			we := p.z
			matVec(w, d, e, we)
			var eae, vae float64
			for a := 0; a < d; a++ {
				ae := we[a]
				eae += e[a] * ae
				vae += v[a] * ae
			}
			aa, bb := up, vae/math.Sqrt(nv2)
			up = min(up, 0.5*(aa+eae)-math.Hypot(0.5*(aa-eae), bb))
		}
	}
	return up, true
}

// smallestEigen finds the negative eigenvalue μ of A = w = kP − cc·vvᵀ
// (cc > 0, P = p.last) and its unit eigenvector, left in p.x, by the
// secular iteration described on ProjectStep, starting from the upper
// bound up when it is negative. ok is false when it does not converge to an
// accepted eigenpair.
//
// With recip the factorizations and solves are kernel.CholLowerRecip and
// kernel.CholSolveRecip (pivots stored as reciprocals: no division on the
// recurrences' dependent chains, ≈ 1.7× less CPU per factorization and
// ≈ 2× per solve at d = 20); otherwise cholLower and cholSolve, the
// division-pivot reference. Both end in the same residual test.
func (p *psdProjector) smallestEigen(w []float64, k, cc float64, v []float64, up float64, recip bool) (mu float64, ok bool) {
	d := p.d
	lo, hi := -cc*dot(v, v)*(1+1e-8), 0.0
	sigma := lo
	if up < 0 && up > lo {
		sigma, hi = up, up
	}
	x, y, z := p.x, p.y, p.z
	converged := false
	for it := 0; it < 40; it++ {
		// chol ← lower triangle of kP − σI, then its Cholesky factor L.
		// With k = 1 (no regularizer) kP is P bit for bit (pv·1 = pv):
		// one copy of the whole matrix (the factorization ignores the
		// upper triangle and overwrites it with Lᵀ).
		if k == 1 {
			copy(p.chol[:d*d], p.last[:d*d])
			for a := 0; a < d; a++ {
				p.chol[a*d+a] -= sigma
			}
		} else {
			for a := 0; a < d; a++ {
				row := p.last[a*d : a*d+a+1]
				cr := p.chol[a*d : a*d+a+1]
				for b, pv := range row {
					cr[b] = pv * k
				}
				cr[a] -= sigma
			}
		}
		if !p.factor(recip) {
			if !(sigma > lo) {
				return 0, false
			}
			hi = sigma
			sigma = 0.5 * (lo + hi)
			continue
		}
		copy(x, v)
		p.solve(recip, x)
		psi, dpsi := dot(v, x), dot(x, x)
		if !(psi > 0) || !(dpsi > 0) || math.IsInf(dpsi, 0) {
			return 0, false
		}
		left := 1/psi > cc // g(σ) > 0: σ < μ
		if left {
			lo = max(lo, sigma)
		} else {
			hi = min(hi, sigma)
		}
		// x is σ-shifted inverse iteration's vector: its Rayleigh quotient
		// on A is an upper bound on μ, close to it once x is.
		matVec(w, d, x, y)
		var xax float64
		for a := 0; a < d; a++ {
			xax += x[a] * y[a]
		}
		if rq := xax / dpsi; rq < hi && rq > lo {
			hi = rq
		}
		// Next point: the best upper bound, the Rayleigh quotient or, from
		// the right of μ, Newton's step on 1/ψ (monotone from there);
		// bisection when neither is a usable point in the bracket.
		next := hi
		if !left {
			next = min(next, sigma+(psi-cc*psi*psi)/dpsi)
		}
		// The osculating one-pole model ψ̃(τ) = α + β/(ρ − τ), equal to ψ
		// with its first two derivatives at σ (ψ″/2 = xᵀ(kP − σI)⁻¹x): its
		// root of 1/ψ̃ = cc, exact when v's weight sits on one eigenvalue
		// of kP and of third order near μ, is the next point when it lies
		// strictly inside the bracket.
		copy(z, x)
		p.solve(recip, z)
		if h2 := dot(x, z); h2 > 0 {
			h := dpsi / h2 // ρ − σ
			alpha := psi - dpsi*h
			if den := 1/cc - alpha; den > 0 {
				if tau := sigma + h - dpsi*h*h/den; tau > lo && tau < hi && tau < 0 {
					next = tau
				}
			}
		}
		if !(next > lo && next <= hi && next < 0) {
			next = 0.5 * (lo + hi)
		}
		if delta := next - sigma; math.Abs(delta) <= 1e-3*math.Abs(sigma) {
			// x ← (kP − next·I)⁻¹v = Σ_j Δ^j (kP − σI)^{−j−1} v: each term is
			// ≤ |Δ/σ| ≤ 10⁻³ times the last (λ_min(kP − σI) ≥ |σ|); add terms
			// until one is below 10⁻¹⁷‖x‖ (at most 8; six suffice).
			// The first term's solve (kP − σI)⁻¹x is z, made for the model.
			copy(y, z)
			nx := math.Sqrt(dot(x, x))
			for term := 0; term < 8; term++ {
				if term > 0 {
					p.solve(recip, y)
				}
				scale(delta, y)
				axpy(1, y, x)
				if math.Sqrt(dot(y, y)) <= 1e-17*nx {
					break
				}
			}
			converged = true
			break
		}
		sigma = next
	}
	if !converged {
		return 0, false
	}
	// u = x/‖x‖, μ̂ = uᵀAu, residual r = Au − μ̂u (y holds Au).
	scale(1/math.Sqrt(dot(x, x)), x)
	matVec(w, d, x, y)
	var n2 float64
	for a := 0; a < d; a++ {
		row := w[a*d : (a+1)*d]
		n2 += dot(row, row)
	}
	mu = dot(x, y)
	var r2 float64
	for a := 0; a < d; a++ {
		e := y[a] - mu*x[a]
		r2 += e * e
	}
	if !(mu < 0) || !(r2 <= 1e-22*n2) {
		p.qOK = false
		return 0, false
	}
	p.clipN2 = n2
	copy(p.q, x)
	p.qOK = true
	return mu, true
}

var _ stepProjector = (*psdProjector)(nil)

// psdNormSkip lets stepFast skip the rescale's norm sum when the carried
// bound shows it would not rescale (tests compare with it off).
var psdNormSkip = true

// psdStepRecip makes ProjectStep's Cholesky test and secular iteration use
// the reciprocal-pivot factorization (kernel.CholLowerRecip), falling back
// to the division-pivot reference (cholLower, the iteration of the earlier
// releases, bit for bit) when its eigenpair fails the residual test. Tests
// turn it off to compare the two.
var psdStepRecip = true

// factor factors the lower triangle of p.chol in place: with recip by
// kernel.CholLowerRecip (the diagonal then holds 1/L_ii), else cholLower.
func (p *psdProjector) factor(recip bool) bool {
	if recip {
		return kernel.CholLowerRecip(p.chol, p.d)
	}
	return cholLower(p.chol, p.d)
}

// solve does x ← (LLᵀ)⁻¹x with the factor p.factor(recip) left in p.chol.
func (p *psdProjector) solve(recip bool, x []float64) {
	if recip {
		kernel.CholSolveRecip(p.chol, p.d, x)
		return
	}
	cholSolve(p.chol, p.d, x)
}

// matVec does y_a = dot(W_a, x) for the rows of the d×d row-major w, four
// rows at a time (kernel.MatVec4: each the same even/odd sums as dot, bit
// for bit, with AVX2 the two sums of two rows in one register's lanes).
func matVec(w []float64, d int, x, y []float64) {
	x, y = x[:d], y[:d]
	var s [4]float64
	a := 0
	for ; a+4 <= d; a += 4 {
		kernel.MatVec4(w[a*d:(a+4)*d], d, x, &s)
		y[a], y[a+1], y[a+2], y[a+3] = s[0], s[1], s[2], s[3]
	}
	for ; a < d; a++ {
		y[a] = dot(w[a*d:(a+1)*d], x)
	}
}

// cholLower replaces the lower triangle of the d×d row-major matrix in l
// (a symmetric M, upper triangle ignored) by its Cholesky factor L
// (M = LLᵀ), writes Lᵀ into the upper triangle, and reports whether M is
// numerically positive definite (every pivot > 0). The rows of L are
// contiguous, so each entry is one dot product; at the small d of metric
// learning this is several times faster than dpotrf's column calls. It is
// kernel.CholLower: entries of a row four at a time, with AVX2 the four
// dot products' common prefix in the lanes of two registers (the factor's
// columns read from the mirrored upper triangle), bit for bit the values
// of one dot per entry (cholLowerDot, TestCholLowerMatchesDot; the kernel's
// TestCholMatchesRef against its Go reference).
func cholLower(l []float64, d int) bool { return kernel.CholLower(l, d) }

// cholSolve does x ← (LLᵀ)⁻¹x for the factor cholLower left in l:
// kernel.CholSolve, bit for bit the one-dot-per-entry substitution
// (TestCholLowerMatchesDot).
func cholSolve(l []float64, d int, x []float64) { kernel.CholSolve(l, d, x) }
