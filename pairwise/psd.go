package pairwise

import (
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// psdProjector is the Frobenius-norm projection onto one of the spectral
// parameter sets of metric learning, for W ∈ R^{d×d} stored row-major:
//
//	"psd":           S^d_+                          (Radius +Inf)
//	"frobenius-psd": S^d_+ ∩ {‖W‖_F ≤ r}            ([H20]/[X21] Example 1, Radius r)
//	"nuclear-psd":   S^d_+ ∩ {‖W‖_* = tr W ≤ r}     ([Y21b] Lemma 5 on S^d_+, Radius r)
//
// # Reduction to eigenvalues
//
// Project first replaces W by its symmetric part A = (W + Wᵀ)/2, which is the
// Frobenius projection onto S^d (‖W − X‖² = ‖A − X‖² + ‖(W − Wᵀ)/2‖² for
// every symmetric X, because the symmetric and antisymmetric subspaces are
// orthogonal). Each set is C = {X ∈ S^d : λ(X) ∈ K} with K ⊂ R^d convex,
// closed and invariant under permutations:
//
//	psd:           K = {μ ≥ 0}
//	frobenius-psd: K = {μ ≥ 0, ‖μ‖₂ ≤ r}
//	nuclear-psd:   K = {μ ≥ 0, Σμ ≤ r}
//
// and for such sets Π_C(A) = U diag(Π_K(λ)) Uᵀ where A = U diag(λ) Uᵀ.
// Proof: for any X ∈ C, the Hoffman–Wielandt inequality for symmetric
// matrices gives ‖A − X‖_F ≥ ‖λ↓(A) − λ↓(X)‖₂ (eigenvalues sorted the same
// way), and λ↓(X) ∈ K, so ‖A − X‖_F ≥ ‖λ(A) − Π_K(λ(A))‖₂. The point
// U diag(Π_K(λ)) Uᵀ attains this bound and lies in C (its eigenvalues are
// Π_K(λ) ∈ K), so it is the (unique) projection.
//
// The eigenvalue maps Π_K are:
//
//	psd:           μ_i = max(λ_i, 0).
//	frobenius-psd: μ = max(λ, 0), then μ ← μ·min(1, r/‖μ‖₂). This is
//	  Π_{cone ∩ ball} = Π_ball ∘ Π_cone, which holds for any closed convex
//	  cone K₀ and ball B_r centred at 0 (here applied to the matrices
//	  directly, so it does not even need the spectral argument). Let
//	  P = Π_{K₀}(A). If ‖P‖ ≤ r, P ∈ K₀ ∩ B_r and it is already the nearest
//	  point of the larger set K₀, done. Otherwise let t = r/‖P‖ < 1 and
//	  Q = tP ∈ K₀ ∩ B_r. By Moreau's decomposition A − P = −N with N in the
//	  dual cone (for S^d_+, N = A₋ ⪰ 0) and ⟨N, P⟩ = 0. For any X ∈ K₀ ∩ B_r:
//	    ⟨A − Q, X − Q⟩ = ⟨A − P, X − tP⟩ + (1 − t)⟨P, X − tP⟩
//	                   = −⟨N, X⟩ + 0 + (1 − t)(⟨P, X⟩ − r‖P‖)
//	                   ≤ 0 + (1 − t)‖P‖(‖X‖ − r) ≤ 0,
//	  using ⟨N, X⟩ ≥ 0 (both PSD) and Cauchy–Schwarz. This variational
//	  inequality characterizes Q = Π_{K₀ ∩ B_r}(A).
//	nuclear-psd: the KKT conditions of min ½‖μ − λ‖² s.t. μ ≥ 0, Σμ ≤ r give
//	  μ_i = max(λ_i − θ, 0) with θ ≥ 0 and θ·(Σμ − r) = 0. If
//	  Σ max(λ_i, 0) ≤ r, θ = 0 (clip only). Otherwise θ > 0, Σμ = r, and μ is
//	  the Euclidean projection onto the simplex {μ ≥ 0, Σμ = r}, computed
//	  with the sort-based algorithm of Duchi, Shalev-Shwartz, Singer and
//	  Chandra (ICML 2008, Fig. 1). On S^d_+ the nuclear norm is the trace and
//	  ‖W‖_F ≤ ‖W‖_*, so Radius is r.
//
// # Numerics and workspace
//
// The eigendecomposition is LAPACK's dsyev as implemented by gonum
// (lapack64.Syev, the routine mat.EigenSym wraps). It is called directly so
// the per-projector workspace (the d×d eigenvector buffer, the eigenvalues
// and dsyev's work array, all sized in the constructor) is reused and
// Project does not allocate; mat.EigenSym.Factorize allocates a new matrix
// and eigenvalue slice on every call, and Project runs after every SGD step.
// The result is rebuilt as B·Bᵀ with B = U_+ diag(√μ_+) (only the columns
// with μ > 0) by dsyrk into the upper triangle, then mirrored, so the output
// is exactly symmetric and PSD up to rounding.
//
// Two shortcuts skip the decomposition. When A is diagonal (including
// A = 0) its eigenvectors are the unit vectors and the eigenvalues its
// diagonal, so the map is applied to the diagonal. When A is already in C
// the projection is A itself: a Cholesky factorization (dpotrf, about d³/3
// flops against dsyev's ≈ 9d³) that succeeds proves λ(A) > 0, and then A ∈ C
// for psd, for frobenius-psd when ‖A‖_F ≤ r (‖λ‖₂ = ‖A‖_F) and for
// nuclear-psd when tr A ≤ r (Σλ = tr A). SGD on a metric moves W by small
// steps from a feasible point, so most projections are this test alone.
// Without the shortcut a feasible point came back from the decomposition
// equal up to rounding (about 1e-15·‖W‖); with it, exactly.
//
// Non-finite input (NaN or ±Inf, e.g. after a diverging step) and the
// (practically impossible) failure of dsyev to converge set every entry of
// W to NaN, so the failure shows in the model instead of being hidden.
//
// A psdProjector holds scratch space: it is owned by one Objective and must
// not be used from two goroutines at once.
type psdProjector struct {
	kind string
	r    float64
	d    int

	a    []float64 // d×d: symmetric part of the input, then eigenvectors (U, column j ↔ λ_j)
	lam  []float64 // d: eigenvalues (ascending), then their image under Π_K
	srt  []float64 // d: sort scratch for the simplex projection
	cols []int     // d: eigenvector columns kept in the rebuild
	work []float64 // dsyev workspace
	chol []float64 // d×d: the Cholesky test's factor

	// last is the most recent output of Project or ProjectStep (a point of
	// C up to rounding) while lastOK; ProjectStep's fast paths start from it.
	last   []float64
	lastOK bool
	x, y   []float64 // d: the secular iteration's solves
	z      []float64 // d: its second solve (the model step's ψ″)
	q      []float64 // d: the last eigenvector ProjectStep clipped, while qOK
	qOK    bool
	// fastSteps counts the ProjectStep calls its fast paths answered;
	// recipFallbacks the clipped steps whose reciprocal-pivot eigenpair
	// failed its residual test and went to the division-pivot iteration.
	fastSteps      int
	recipFallbacks int
	// verifiedSteps counts the fast steps of metricObjective.stepProject
	// (the update made by the caller, isStep skipped).
	verifiedSteps int
	// normUp is an upper bound on ‖last‖_F (exact arithmetic on the stored
	// values), NaN when unknown; nextNormUp the one stepFast makes for its
	// output, kept when ProjectStep remembers it. normSkips counts the
	// frobenius-psd steps whose norm sum the bound made unnecessary.
	normUp, nextNormUp float64
	normSkips          int
	clipN2             float64 // ‖A‖_F² as smallestEigen summed it for its residual test
}

// newPSDProjector returns the projector onto the set named kind ("psd",
// "frobenius-psd" or "nuclear-psd") of radius r (ignored for "psd") for
// d×d matrices. It panics on an unknown kind, d < 1 or, for the bounded sets,
// a radius that is not finite and positive.
func newPSDProjector(kind string, r float64, d int) *psdProjector {
	switch kind {
	case "psd":
		r = math.Inf(1)
	case "frobenius-psd", "nuclear-psd":
		if !(r > 0) || math.IsInf(r, 0) {
			panic(fmt.Sprintf("pairwise: %s projection needs a finite radius > 0, got %v", kind, r))
		}
	default:
		panic(fmt.Sprintf("pairwise: unknown PSD constraint %q", kind))
	}
	if d < 1 {
		panic(fmt.Sprintf("pairwise: PSD projection of dimension %d", d))
	}
	p := &psdProjector{
		kind: kind,
		r:    r,
		d:    d,
		a:    make([]float64, d*d),
		lam:  make([]float64, d),
		srt:  make([]float64, d),
		cols: make([]int, d),
		chol: make([]float64, d*d),
		last: make([]float64, d*d),
		x:    make([]float64, d),
		y:    make([]float64, d),
		z:    make([]float64, d),
		q:    make([]float64, d),

		normUp: math.NaN(),
	}
	// Workspace query (lwork = −1) for the eigenvector job.
	q := []float64{0}
	lapack64.Syev(lapack.EVCompute, p.sym(), p.lam, q, -1)
	p.work = make([]float64, max(int(q[0]), 3*d))
	return p
}

func (p *psdProjector) Name() string    { return p.kind }
func (p *psdProjector) Radius() float64 { return p.r }

func (p *psdProjector) sym() blas64.Symmetric {
	return blas64.Symmetric{N: p.d, Stride: p.d, Data: p.a, Uplo: blas.Upper}
}

// Project does w ← Π_C(w) in place for w a row-major d×d matrix. It panics
// if len(w) ≠ d·d and does not allocate. It remembers its output for
// ProjectStep.
func (p *psdProjector) Project(w []float64) {
	d := p.d
	if len(w) != d*d {
		panic(fmt.Sprintf("pairwise: PSD projection of %d values, want %d×%d", len(w), d, d))
	}
	p.project(w)
	p.remember(w)
	p.normUp = math.NaN()
}

// remember stores w as the last output, valid only when it holds no NaN (a
// failed projection is no point of C): kernel.CopyNoNaN copies and checks
// in one pass (four values per instruction with AVX2); after a NaN, last is
// overwritten but lastOK is false, and nothing reads last then.
func (p *psdProjector) remember(w []float64) {
	p.lastOK = kernel.CopyNoNaN(p.last, w)
}

// project is Project without the bookkeeping: the reference projection.
func (p *psdProjector) project(w []float64) {
	d := p.d
	diagonal := true
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := w[i*d+j]
			if i != j {
				v = 0.5 * (v + w[j*d+i])
				if v != 0 {
					diagonal = false
				}
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				fillNaN(w)
				return
			}
			p.a[i*d+j] = v
		}
	}
	if diagonal {
		p.projectDiagonal(w)
		return
	}
	if p.feasible() {
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				w[i*d+j], w[j*d+i] = p.a[i*d+j], p.a[i*d+j]
			}
		}
		return
	}
	p.projectEigen(w)
}

// feasible reports whether the symmetric part held in p.a (upper triangle)
// lies in the projector's set: positive definite (its Cholesky factor
// exists) and within the radius. False sends A to the decomposition, which
// is always correct; a PSD but singular A is one such case.
func (p *psdProjector) feasible() bool {
	d := p.d
	var norm2, trace float64
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := p.a[i*d+j]
			p.chol[i*d+j] = v
			if i == j {
				norm2 += v * v
				trace += v
			} else {
				norm2 += 2 * v * v
			}
		}
	}
	switch p.kind {
	case "frobenius-psd":
		if !(norm2 <= p.r*p.r) {
			return false
		}
	case "nuclear-psd":
		if !(trace <= p.r) {
			return false
		}
	}
	_, ok := lapack64.Potrf(blas64.Symmetric{N: d, Stride: d, Data: p.chol, Uplo: blas.Upper})
	return ok
}

// projectDiagonal handles a diagonal symmetric part held in p.a: the map is
// applied to the diagonal entries (the eigenvalues, with unit eigenvectors).
func (p *psdProjector) projectDiagonal(w []float64) {
	d := p.d
	for i := 0; i < d; i++ {
		p.lam[i] = p.a[i*d+i]
	}
	p.mapEigenvalues()
	for i := range w {
		w[i] = 0
	}
	for i := 0; i < d; i++ {
		w[i*d+i] = p.lam[i]
	}
}

// projectEigen projects the symmetric matrix whose upper triangle is in p.a
// through its eigendecomposition and writes the result into w.
func (p *psdProjector) projectEigen(w []float64) {
	d := p.d
	if !lapack64.Syev(lapack.EVCompute, p.sym(), p.lam, p.work, len(p.work)) {
		fillNaN(w)
		return
	}
	p.mapEigenvalues()
	// Compact the columns with μ_j > 0 to the left of p.a, scaled by √μ_j:
	// B = U_+ diag(√μ_+). Column j moves to m ≤ j, so reading row i left to
	// right never reads an overwritten entry.
	m := 0
	for j, mu := range p.lam {
		if mu > 0 {
			p.lam[m] = math.Sqrt(mu) // m ≤ j: entries still to be read are untouched
			p.cols[m] = j
			m++
		}
	}
	if m == 0 {
		for i := range w {
			w[i] = 0
		}
		return
	}
	for i := 0; i < d; i++ {
		row := p.a[i*d : (i+1)*d]
		for c := 0; c < m; c++ {
			row[c] = row[p.cols[c]] * p.lam[c]
		}
	}
	b := blas64.General{Rows: d, Cols: m, Stride: d, Data: p.a}
	c := blas64.Symmetric{N: d, Stride: d, Data: w, Uplo: blas.Upper}
	blas64.Syrk(blas.NoTrans, 1, b, 0, c)
	for i := 1; i < d; i++ {
		for j := 0; j < i; j++ {
			w[i*d+j] = w[j*d+i]
		}
	}
}

// mapEigenvalues replaces p.lam by Π_K(p.lam) for the projector's set K.
func (p *psdProjector) mapEigenvalues() {
	lam := p.lam
	switch p.kind {
	case "psd":
		for i, v := range lam {
			lam[i] = math.Max(v, 0)
		}
	case "frobenius-psd":
		var s float64
		for i, v := range lam {
			v = math.Max(v, 0)
			lam[i] = v
			s += v * v
		}
		if s > p.r*p.r {
			scale(p.r/math.Sqrt(s), lam)
		}
	case "nuclear-psd":
		projectCappedSimplex(lam, p.r, p.srt)
	}
}

// projectCappedSimplex does μ ← argmin{‖ν − μ‖₂ : ν ≥ 0, Σν ≤ r} in place
// (r > 0), using scratch (len ≥ len(mu)) for sorting. See psdProjector for
// the KKT argument; the simplex case is Duchi et al. (2008), Fig. 1: with
// u sorted in decreasing order, ρ = max{j : u_j − (Σ_{i≤j} u_i − r)/j > 0}
// and θ = (Σ_{i≤ρ} u_i − r)/ρ, the projection is max(μ − θ, 0).
func projectCappedSimplex(mu []float64, r float64, scratch []float64) {
	var pos float64
	for _, v := range mu {
		if v > 0 {
			pos += v
		}
	}
	if pos <= r {
		for i, v := range mu {
			mu[i] = math.Max(v, 0)
		}
		return
	}
	u := scratch[:len(mu)]
	copy(u, mu)
	slices.Sort(u) // ascending; walk it from the end
	var cum, theta float64
	for j := 1; j <= len(u); j++ {
		v := u[len(u)-j]
		cum += v
		t := (cum - r) / float64(j)
		if v-t <= 0 {
			break
		}
		theta = t
	}
	for i, v := range mu {
		mu[i] = math.Max(v-theta, 0)
	}
}

func fillNaN(w []float64) {
	for i := range w {
		w[i] = math.NaN()
	}
}
