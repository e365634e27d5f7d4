package dpalgo

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/pairwise"
)

// The site math and the coordinator's solver of fed-dp-spauc (fedalgo/
// fedspauc.go): the square-loss AUC gradient made POINTWISE by the class
// statistics (Ying, Wen & Lyu 2016; SPAUC, Lei & Ying 2019/2021, whose
// non-private form is runSPAUC in baselines.go), so that a site holding a
// single class computes its records' terms alone.
//
// # The gradient is a sum of per-record terms plus a function of the means
//
// For the linear scorer w and the square AUC loss
// F(w) = E[(1 − wᵀ(x − x'))² | y = +1, y' = −1] (the loss of dp-ssp,
// private_ssp.go), with class counts n±, class sums S±, means m± = S±/n±
// and class second moments M± = Σ_{y=±1} x xᵀ,
//
//	½∇F(w) = A w − b,   b = m₊ − m₋,
//	A = C₊ + C₋ + b bᵀ = M₊/n₊ + M₋/n₋ − m₊m₋ᵀ − m₋m₊ᵀ
//
// (C± = M±/n± − m±m±ᵀ; expand bbᵀ). The only part that reads the records
// beyond the class sums is M± v = Σ_{y=±1} (vᵀx) x for the query vector v:
// a SUM OVER RECORDS of a pointwise term, each record contributing to the
// block of its own class. The class sums and counts are released once
// (phase 1, fed-dp-ssp-mean's release), everything else is post-
// processing at the coordinator. SPAUC's per-record stochastic gradient
// (1−p)·wᵀ(x − m₊)(x − m₊) for y = +1 (baselines.go) is the same
// decomposition with the means subtracted inside the record's term; here
// they are subtracted at the coordinator, so that a site needs nothing but
// the broadcast vector.
//
// # A site's vector of a product round, and its sensitivity
//
// For the broadcast query v (any vector; the site normalizes it,
// u = v/‖v‖, u = 0 when v = 0) and the public clip level C = κR²:
//
//	t(x) = clip_C((uᵀx)x)/C,   clip_C(g) = g·min(1, C/‖g‖),
//	vec(D) = ( Σ_{y=+1} t(x) ; Σ_{y=−1} t(x) ; 0 )   (length 2d + 1).
//
// ‖t(x)‖ ≤ 1 for every record, whatever its norm (the clip). Replacing one
// record z by z' changes vec by t(z) − t(z') within one block when the
// labels agree (norm ≤ 2) or by (t(z), −t(z')) across the two blocks when
// they differ (norm ≤ √2): the replace-one ℓ2 sensitivity is Δ = 2, i.e.
// 2C in gradient units — the per-record gradient clipping's 2C
// (TestSPAUCProductSensitivity checks it by brute force and that 2 is
// attained). For records in the R-ball |uᵀx|·‖x‖ ≤ R², so κ = 1 never
// clips; a smaller κ clips the records with large |uᵀx|‖x‖ (a bias) and
// cuts the noise in gradient units by κ.
//
// Phase 1's vector is fed-dp-ssp-mean's SSPVector of the class sums x/R
// and √2·n₊ (private_ssp.go: Δ = 2, ‖φ‖ ≤ √3): all of a job's releases
// have Δ = 2 in their own units.
//
// # The coordinator's solver (post-processing)
//
// From the summed phase-1 statistics: n̂₊ clamped to [1, N − 1], n̂₋ =
// N − n̂₊, m̂± = Ŝ±/n̂± clamped into the R-ball, b̂ = m̂₊ − m̂₋. Each product
// round gives the noisy Â p for the broadcast p,
//
//	Â p = ‖p‖C·(û₊/n̂₊ + û₋/n̂₋) − m̂₊(m̂₋ᵀp) − m̂₋(m̂₊ᵀp) + λp,
//
// with û± the blocks of the summed round vector and the ridge λ the size
// of the noise Â p carries per unit of ‖p‖, λ = κR²σ√d·√(1/n̂₊² + 1/n̂₋²)
// + 10⁻⁶R² (σ the summed vector's noise per coordinate; the rule of
// SSPLambda). The solver runs conjugate gradients on (Â + λI)w = b̂ from
// w = 0 — one product per round, so the query of round k is CG's search
// direction p_k (p₁ = b̂) and the iterate after T rounds is the (noisy)
// minimizer of ½wᵀ(A + λI)w − b̂ᵀw over the Krylov space of b̂: the ridge
// square-AUC optimum of dp-ssp when T ≥ d, the class-mean difference of
// dp-ssp-mean after one round. CG needs no step size; a noisy curvature
// pᵀÂp below λ‖p‖² (impossible without noise) is raised to it.

// SPAUCDim returns the length 2d + 1 of a site's vector in every phase.
func SPAUCDim(d int) int { return 2*d + 1 }

// SPAUCSensitivity is the replace-one ℓ2 sensitivity of every release of
// fed-dp-spauc, in its vector's units (file comment).
const SPAUCSensitivity = 2.0

// SPAUCStatsVector returns a site's phase-1 vector: fed-dp-ssp-mean's
// weighted class sums and count (SSPVector, Δ = 2).
func SPAUCStatsVector(ds *pairwise.Dataset, R float64) []float64 {
	return SSPVector(SSPStatsOf(ds, SSPMean), R)
}

// SPAUCClip returns the clip level C = κR² of the product terms.
func SPAUCClip(kappa, R float64) float64 { return kappa * R * R }

// SPAUCProductVector returns a site's vector of a product round for the
// query v (file comment): the class blocks of Σ clip_C((uᵀx)x)/C with u =
// v/‖v‖, and a zero last coordinate. C must be finite and > 0.
func SPAUCProductVector(ds *pairwise.Dataset, v []float64, C float64) ([]float64, error) {
	d := ds.D
	switch {
	case len(v) != d:
		return nil, fmt.Errorf("spauc query has %d values, the data %d features", len(v), d)
	case !(C > 0) || math.IsInf(C, 0):
		return nil, fmt.Errorf("spauc clip level C = %v must be finite and > 0", C)
	}
	out := make([]float64, SPAUCDim(d))
	nv := pairwise.Norm2(v)
	if !(nv > 0) || math.IsInf(nv, 0) {
		return out, nil // u = 0 (or unusable): every term is 0
	}
	u := make([]float64, d)
	for k := range u {
		u[k] = v[k] / nv
	}
	for i := 0; i < ds.N; i++ {
		s := ds.Dot(i, u)
		g := math.Abs(s) * math.Sqrt(ds.SqNorm(i)) // ‖(uᵀx)x‖
		f := s / C
		if g > C {
			f = s / g // clip to norm C, then divide by C
		}
		if !(f == f) || math.IsInf(f, 0) {
			continue // a non-finite record (the loaders refuse them) adds nothing
		}
		blk := out[d : 2*d]
		if ds.Y[i] > 0 {
			blk = out[:d]
		}
		ds.AddScaled(blk, i, f)
	}
	return out, nil
}

// SPAUCSolver is the coordinator's state of a fed-dp-spauc job after
// phase 1: the noisy class statistics and the conjugate-gradient state.
type SPAUCSolver struct {
	D            int
	N, NPos      float64   // N public, NPos the clamped noisy count
	MPos, MNeg   []float64 // m̂₊, m̂₋ (clamped into the R-ball)
	R, Kappa     float64
	Lambda       float64
	W, Res, Dir  []float64 // iterate w, residual r = b̂ − (Â + λI)w, direction p
	Rounds, Done int       // product rounds planned and combined
}

// NewSPAUCSolver starts the solver from the summed phase-1 vector (the
// SSPVector layout of n records; noisy) whose noise has standard deviation
// sigma per coordinate in the product rounds to come.
func NewSPAUCSolver(sum []float64, d int, n, R, kappa, sigma float64, rounds int) (*SPAUCSolver, error) {
	if len(sum) != SPAUCDim(d) || !(n >= 2) || !(R > 0) || !(kappa > 0) || !(sigma >= 0) || rounds < 1 {
		return nil, fmt.Errorf("spauc solver: bad arguments (%d values for d = %d, n = %v, R = %v, κ = %v, σ = %v, %d rounds)", len(sum), d, n, R, kappa, sigma, rounds)
	}
	st := &SSPStats{D: d, N: n, SumPos: make([]float64, d), SumNeg: make([]float64, d)}
	SSPFromVector(st, sum, R)
	np, nn := sspCounts(st)
	s := &SPAUCSolver{D: d, N: n, NPos: np, R: R, Kappa: kappa, Rounds: rounds,
		MPos: make([]float64, d), MNeg: make([]float64, d), W: make([]float64, d)}
	for k := 0; k < d; k++ {
		s.MPos[k], s.MNeg[k] = st.SumPos[k]/np, st.SumNeg[k]/nn
	}
	clampBall(s.MPos, R)
	clampBall(s.MNeg, R)
	s.Lambda = kappa*R*R*sigma*math.Sqrt(float64(d))*math.Sqrt(1/(np*np)+1/(nn*nn)) + 1e-6*R*R
	s.Res = make([]float64, d)
	for k := range s.Res {
		s.Res[k] = s.MPos[k] - s.MNeg[k]
	}
	s.Dir = append([]float64(nil), s.Res...)
	return s, nil
}

// Query is the vector the next product round is asked for (CG's search
// direction; b̂ first).
func (s *SPAUCSolver) Query() []float64 { return append([]float64(nil), s.Dir...) }

// Step takes the summed vector of the round that answered Query() and
// makes one conjugate-gradient step (file comment).
func (s *SPAUCSolver) Step(sum []float64) error {
	d := s.D
	if len(sum) != SPAUCDim(d) {
		return fmt.Errorf("spauc round vector has %d values, want %d", len(sum), SPAUCDim(d))
	}
	p := s.Dir
	np, nn := s.NPos, s.N-s.NPos
	f := pairwise.Norm2(p) * SPAUCClip(s.Kappa, s.R)
	ap := make([]float64, d)
	mp, mn := pairwise.Dot(s.MPos, p), pairwise.Dot(s.MNeg, p)
	for k := 0; k < d; k++ {
		ap[k] = f*(sum[k]/np+sum[d+k]/nn) - s.MPos[k]*mn - s.MNeg[k]*mp + s.Lambda*p[k]
	}
	pp := pairwise.Dot(p, p)
	rr := pairwise.Dot(s.Res, s.Res)
	s.Done++
	if !(pp > 0) || !(rr > 0) {
		return nil // converged (or nothing to learn): w stays
	}
	pap := math.Max(pairwise.Dot(p, ap), s.Lambda*pp)
	alpha := rr / pap
	pairwise.Axpy(alpha, p, s.W)
	pairwise.Axpy(-alpha, ap, s.Res)
	beta := pairwise.Dot(s.Res, s.Res) / rr
	for k := range p {
		p[k] = s.Res[k] + beta*p[k]
	}
	return nil
}

// Output returns the iterate rescaled into the ball of radius B (AUC
// depends on its direction only); B ≤ 0 leaves it as is.
func (s *SPAUCSolver) Output(B float64) []float64 {
	w := append([]float64(nil), s.W...)
	if B > 0 {
		clampBall(w, B)
	}
	return w
}

// State packs the solver for a checkpoint: D, N, NPos, R, κ, λ, Rounds,
// Done, then m̂₊, m̂₋, w, r, p (5d + 8 values).
func (s *SPAUCSolver) State() []float64 {
	v := []float64{float64(s.D), s.N, s.NPos, s.R, s.Kappa, s.Lambda, float64(s.Rounds), float64(s.Done)}
	for _, b := range [][]float64{s.MPos, s.MNeg, s.W, s.Res, s.Dir} {
		v = append(v, b...)
	}
	return v
}

// SPAUCSolverFromState inverts State for a job of d features.
func SPAUCSolverFromState(v []float64, d int) (*SPAUCSolver, error) {
	if len(v) != 5*d+8 || v[0] != float64(d) {
		return nil, fmt.Errorf("spauc solver state of %d values for d = %d (want %d)", len(v), d, 5*d+8)
	}
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("spauc solver state has a non-finite value")
		}
	}
	s := &SPAUCSolver{D: d, N: v[1], NPos: v[2], R: v[3], Kappa: v[4], Lambda: v[5], Rounds: int(v[6]), Done: int(v[7])}
	if !(s.N >= 2) || !(s.NPos >= 1 && s.NPos <= s.N-1) || !(s.R > 0) || !(s.Kappa > 0) || s.Rounds < 1 || s.Done < 0 || s.Done > s.Rounds {
		return nil, fmt.Errorf("spauc solver state is inconsistent")
	}
	b := v[8:]
	get := func(i int) []float64 { return append([]float64(nil), b[i*d:(i+1)*d]...) }
	s.MPos, s.MNeg, s.W, s.Res, s.Dir = get(0), get(1), get(2), get(3), get(4)
	return s, nil
}
