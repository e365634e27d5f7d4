package dpalgo

import (
	"context"
	"fmt"
	"math"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"gonum.org/v1/gonum/mat"
)

// dp-ssp: one-shot sufficient-statistics perturbation for the pairwise
// (AUC) square loss with a linear scorer, and dp-ssp-mean, its
// strongest-regularized case, the class-mean-difference ranker.
//
// # The loss and its statistics
//
// For the symmetrized square AUC loss f(w; z, z') = (1 − s·wᵀ(x − x'))²·I[y ≠ y']
// the empirical risk over the n₊n₋ positive–negative pairs is, with class
// sums S± = Σ_{y=±1} x, class second moments M± = Σ_{y=±1} x xᵀ and class
// counts n±,
//
//	(1/(n₊n₋)) Σ_{i∈P, j∈N} (1 − wᵀ(x_i − x_j))² = 1 − 2wᵀb + wᵀAw,
//	b = μ₊ − μ₋,  A = C₊ + C₋ + b bᵀ,  μ± = S±/n±,  C± = M±/n± − μ±μ±ᵀ,
//
// (expand the square and sum over j, then i). So the ridge-regularized
// optimum argmin_w 1 − 2wᵀb + wᵀAw + λ‖w‖² is w = (A + λI)⁻¹ b, a function of
// (S₊, S₋, M₊, M₋, n₊) and the public n alone. (The objective F_S of package
// pairwise weighs the same pairs by 2/(n(n−1)); its λ_F corresponds to
// λ = λ_F·n(n−1)/(4n₊n₋) here. AUC only depends on the direction of w.)
// As λ → ∞, (A + λI)⁻¹b → b/λ: the direction of the class-mean difference
// μ₊ − μ₋, the dp-ssp-mean ranker.
//
// # Mechanism
//
// One Gaussian release of the weighted concatenation
//
//	v(D) = Σ_i φ(z_i),  φ(x, y) = ( a·x in the block of class y,
//	                                b·u(x xᵀ) in the block of class y,
//	                                c·I[y = +1] ),
//
// where u(M) packs the upper triangle of a symmetric M with the
// off-diagonal entries multiplied by √2, so that ‖u(M)‖₂ = ‖M‖_F.
// v(D) + N(0, σ²I) is released once; everything after is post-processing.
// n is public (replace-one neighbours keep n), so n₋ = n − n₊.
//
// # Neighbouring relation and sensitivity (replace one record)
//
// D' replaces z = (x, y) by z' = (x', y'), ‖x‖, ‖x'‖ ≤ R (the loaders clip;
// CheckRadius verifies). v(D) − v(D') = φ(z) − φ(z').
//
//   - Same class (y = y'): the count is unchanged and
//     ‖φ(z) − φ(z')‖² = a²‖x − x'‖² + b²‖xxᵀ − x'x'ᵀ‖²_F
//     = a²(r² + r'² − 2rr't) + b²(r⁴ + r'⁴ − 2r²r'²t²),
//     with r = ‖x‖, r' = ‖x'‖, t = cos∠(x, x'). For t ≥ 0 both terms are at
//     most their value at t = 0, and for t ≤ 0 both grow with r, r'; so the
//     supremum is at r = r' = R, t ≤ 0, of 2a²R²(1 − t) + 2b²R⁴(1 − t²),
//     a concave quadratic in t maximized at t* = −a²/(2b²R²): if t* ≥ −1 the
//     maximum is 2a²R² + 2b²R⁴ + a⁴/(2b²), otherwise (and for b = 0) it is
//     4a²R² (x' = −x, where the second moments do not change at all).
//   - Label flip (y ≠ y'): φ(z) and φ(z') live in disjoint class blocks, and
//     the count moves by 1: ‖φ(z) − φ(z')‖² = a²(r² + r'²) + b²(r⁴ + r'⁴) + c²
//     ≤ 2a²R² + 2b²R⁴ + c².
//
// Δ² is the larger of the two (SSPSensitivity; TestSSPSensitivityBruteForce
// checks it against random and adversarial replacements, including label
// flips and antipodal pairs on the sphere).
//
// # Weights (the budget split), a written rule
//
// With a = 1/R, the sums alone have Δ = 2 (an antipodal replacement moves a
// class sum by 2R). We then take the largest second-moment and count weights
// that leave Δ at 2 — the moments and the count ride for free:
//
//   - dp-ssp: b = 1/(√2·R²) makes t* = −1, so the same-class case is
//     2 + 1 + 1 = 4 = 4a²R²; c = 1 makes the flip case 2 + 1 + 1 = 4.
//     Δ = 2.
//   - dp-ssp-mean (no moments, b = 0): c = √2 makes the flip case
//     2 + 2 = 4. Δ = 2.
//
// So the noise on the class sums is σR, on each second-moment entry √2·R²σ
// (diagonal) and R²σ (off-diagonal), and on n₊ σ (dp-ssp) or σ/√2.
//
// # Calibration and accounting
//
// One Gaussian release of ℓ2 sensitivity Δ' is (ε, δ)-DP iff
// δ_{Δ'/σ}(ε) ≤ δ (Balle & Wang 2018 Thm 8; exact): σ is the smallest such
// (dp.AnalyticGaussianSigma). Δ' = Δ + g√k accounts for the secure
// mechanism's rounding of the k released coordinates to its grid g
// (dp.SnappedL2Sensitivity, dp/noise.go); the report carries Δ' and σ, and
// the accountant recomputes ε from them.
//
// # Solve (post-processing)
//
// n̂₊ is clamped to [1, n − 1] (a noisy count ≤ 0 or ≥ n, possible for a
// site holding one class or for a tiny class, becomes the nearest feasible
// count); Â = Ĉ₊ + Ĉ₋ + b̂b̂ᵀ is made PSD by clipping its negative
// eigenvalues to 0, and w = (Â₊ + λI)⁻¹ b̂ through the eigendecomposition.
// λ by a rule fixed before the data is read (SSPLambda): the expected
// spectral norm of the noise in Ĉ₊ + Ĉ₋, 2R²σ√d·√(1/n̂₊² + 1/n̂₋²) (a
// symmetric Gaussian matrix whose off-diagonal entries have variance v has
// norm ≈ 2√(dv)), plus R²·10⁻⁶ for numerical rank; computed from σ and
// the noisy counts, so it is post-processing too.
//
// # Federation
//
// The statistics are sums over records: sites compute SSPStatsOf on their
// own records (any label mix, a single class included), release
// NoisySSP once each, and the coordinator sums them (SSPStats.Add) and
// calls SolveSSP. Each record is in one site, so the guarantee of every
// site's release is the single-release one above (parallel composition),
// and the summed noise has σ√K for K sites (SSPLambda takes that σ).

// SSPStats are the sufficient statistics of the square AUC loss: class
// sums, class second moments and the positive count, plus the public record
// count N. Moments are packed upper triangles (row-major, k ≤ l) of the
// plain Σ x xᵀ, nil for the mean-only variant.
type SSPStats struct {
	D              int
	N              float64 // records (public under replace-one)
	NPos           float64 // positives (noisy after NoisySSP)
	SumPos, SumNeg []float64
	MomPos, MomNeg []float64 // class second moments (SSPClass)
	Mom            []float64 // label-free second moment Σ x xᵀ (SSPPooled)
}

// SSPKind selects the statistics released besides the class sums and the
// positive count.
type SSPKind uint8

const (
	// SSPMean releases the class sums and count only (dp-ssp-mean).
	SSPMean SSPKind = iota
	// SSPClass adds the two class second moments M₊, M₋ (dp-ssp).
	SSPClass
	// SSPPooled adds the label-free second moment M = M₊ + M₋ (dp-lda).
	SSPPooled
)

// Moments reports whether the kind releases a second moment.
func (k SSPKind) Moments() bool { return k != SSPMean }

// Kind returns the kind of statistics s holds.
func (s *SSPStats) Kind() SSPKind {
	switch {
	case s.Mom != nil:
		return SSPPooled
	case s.MomPos != nil:
		return SSPClass
	}
	return SSPMean
}

// sspMoments returns the second-moment blocks of s in release order.
func (s *SSPStats) sspMoments() [][]float64 {
	switch s.Kind() {
	case SSPClass:
		return [][]float64{s.MomPos, s.MomNeg}
	case SSPPooled:
		return [][]float64{s.Mom}
	}
	return nil
}

// SSPCoords returns the number of coordinates of the weighted release
// vector of d-dimensional statistics of the given kind.
func SSPCoords(d int, kind SSPKind) int {
	k := 2*d + 1
	switch kind {
	case SSPClass:
		k += 2 * sspPacked(d)
	case SSPPooled:
		k += sspPacked(d)
	}
	return k
}

// sspMaxDim bounds d for the second-moment release (2 × d(d+1)/2 noisy
// coordinates and a d×d eigendecomposition: 4·10⁶ entries at the limit).
const sspMaxDim = 2000

// sspPacked returns the length d(d+1)/2 of a packed upper triangle.
func sspPacked(d int) int { return d * (d + 1) / 2 }

// SSPStatsOf computes the exact statistics of ds of the given kind.
// It reads every record once: O(n·d²) dense, O(Σ nnz²) sparse.
func SSPStatsOf(ds *pairwise.Dataset, kind SSPKind) *SSPStats {
	d := ds.D
	s := &SSPStats{D: d, N: float64(ds.N), SumPos: make([]float64, d), SumNeg: make([]float64, d)}
	switch kind {
	case SSPClass:
		s.MomPos, s.MomNeg = make([]float64, sspPacked(d)), make([]float64, sspPacked(d))
	case SSPPooled:
		s.Mom = make([]float64, sspPacked(d))
	}
	row := make([]float64, d)
	for i := 0; i < ds.N; i++ {
		sum, mom := s.SumNeg, s.MomNeg
		if ds.Y[i] > 0 {
			sum, mom = s.SumPos, s.MomPos
			s.NPos++
		}
		if kind == SSPPooled {
			mom = s.Mom
		}
		ds.AddScaled(sum, i, 1)
		if mom == nil {
			continue
		}
		if ds.X != nil {
			copy(row, ds.Row(i))
			sspAddOuter(mom, row, d)
			continue
		}
		idx, val := ds.SparseRow(i)
		for p, k := range idx {
			base := int(k)*d - int(k)*(int(k)-1)/2 - int(k) // offset of row k in the packed triangle
			for q := p; q < len(idx); q++ {
				mom[base+int(idx[q])] += val[p] * val[q]
			}
		}
	}
	return s
}

// sspAddOuter adds the upper triangle of x xᵀ to the packed mom.
func sspAddOuter(mom, x []float64, d int) {
	p := 0
	for k := 0; k < d; k++ {
		xk := x[k]
		if xk == 0 {
			p += d - k
			continue
		}
		for l := k; l < d; l++ {
			mom[p] += xk * x[l]
			p++
		}
	}
}

// Add adds o's statistics to s (the coordinator's sum over sites).
func (s *SSPStats) Add(o *SSPStats) error {
	if o.D != s.D || o.Kind() != s.Kind() {
		return fmt.Errorf("dpalgo: cannot add SSP statistics of dimension %d (kind %d) to dimension %d (kind %d)",
			o.D, o.Kind(), s.D, s.Kind())
	}
	s.N += o.N
	s.NPos += o.NPos
	pairwise.Axpy(1, o.SumPos, s.SumPos)
	pairwise.Axpy(1, o.SumNeg, s.SumNeg)
	om := o.sspMoments()
	for i, m := range s.sspMoments() {
		pairwise.Axpy(1, om[i], m)
	}
	return nil
}

// Clone returns a deep copy.
func (s *SSPStats) Clone() *SSPStats {
	c := *s
	c.SumPos = append([]float64(nil), s.SumPos...)
	c.SumNeg = append([]float64(nil), s.SumNeg...)
	if s.MomPos != nil {
		c.MomPos = append([]float64(nil), s.MomPos...)
		c.MomNeg = append([]float64(nil), s.MomNeg...)
	}
	if s.Mom != nil {
		c.Mom = append([]float64(nil), s.Mom...)
	}
	return &c
}

// SSPWeights returns the weights (a, b, c) of the sums, second moments and
// positive count in the released vector (see the file comment): a = 1/R,
// and b = 1/(√2R²), c = 1 with moments, b = 0, c = √2 without.
func SSPWeights(R float64, kind SSPKind) (a, b, c float64) {
	if kind.Moments() {
		return 1 / R, 1 / (math.Sqrt2 * R * R), 1
	}
	return 1 / R, 0, math.Sqrt2
}

// SSPSensitivity returns the tight ℓ2 sensitivity, under replacement of one
// record with ‖x‖ ≤ R, of the weighted statistic v = Σ φ(z_i) with weights
// a (sums), b (packed, √2-scaled second moments), c (positive count); see
// the file comment for the proof.
func SSPSensitivity(R, a, b, c float64) float64 {
	same := 4 * a * a * R * R
	if b > 0 && a*a <= 2*b*b*R*R {
		same = 2*a*a*R*R + 2*b*b*R*R*R*R + a*a*a*a/(2*b*b)
	}
	flip := 2*a*a*R*R + 2*b*b*R*R*R*R + c*c
	return math.Sqrt(math.Max(same, flip))
}

// sspVector writes the weighted release vector of s.
func sspVector(s *SSPStats, a, b, c float64) []float64 {
	v := make([]float64, 0, SSPCoords(s.D, s.Kind()))
	for _, x := range s.SumPos {
		v = append(v, a*x)
	}
	for _, x := range s.SumNeg {
		v = append(v, a*x)
	}
	for _, mom := range s.sspMoments() {
		p := 0
		for k := 0; k < s.D; k++ {
			for l := k; l < s.D; l++ {
				w := b
				if l != k {
					w *= math.Sqrt2
				}
				v = append(v, w*mom[p])
				p++
			}
		}
	}
	return append(v, c*s.NPos)
}

// sspFromVector inverts sspVector into out (same shape as the source).
func sspFromVector(out *SSPStats, v []float64, a, b, c float64) {
	p := 0
	for k := range out.SumPos {
		out.SumPos[k] = v[p] / a
		p++
	}
	for k := range out.SumNeg {
		out.SumNeg[k] = v[p] / a
		p++
	}
	for _, mom := range out.sspMoments() {
		q := 0
		for k := 0; k < out.D; k++ {
			for l := k; l < out.D; l++ {
				w := b
				if l != k {
					w *= math.Sqrt2
				}
				mom[q] = v[p] / w
				p++
				q++
			}
		}
	}
	out.NPos = v[p] / c
}

// SSPRelease describes one noisy release of SSP statistics.
type SSPRelease struct {
	// Sensitivity is Δ' (the tight Δ plus the snapping allowance) and
	// Sigma the σ of the Gaussian noise on the weighted vector.
	Sensitivity, Sigma float64
	// Coords is the number of released coordinates.
	Coords int
}

// SSPCalibrate returns the release parameters that make one NoisySSP of
// d-dimensional statistics (ε, δ)-DP under replace-one neighbours: the
// tight Δ, the snapping allowance of the secure mechanism, and the exact
// (analytic) σ.
func SSPCalibrate(eps, delta, R float64, d int, kind SSPKind) (SSPRelease, error) {
	a, b, c := SSPWeights(R, kind)
	sens := SSPSensitivity(R, a, b, c)
	k := SSPCoords(d, kind)
	sigma, err := calibrateSnapped(eps, delta, sens, k)
	if err != nil {
		return SSPRelease{}, err
	}
	return SSPRelease{Sensitivity: dp.SnappedL2Sensitivity(sens, dp.GaussianGranularity(sigma), k), Sigma: sigma, Coords: k}, nil
}

// NoisySSP returns s plus the release's noise: N(0, σ²) on every
// coordinate of the weighted vector (see the file comment), drawn by noise.
// s is not modified. The caller must have charged the release.
func NoisySSP(s *SSPStats, R float64, rel SSPRelease, noise pairwise.Noise) *SSPStats {
	a, b, c := SSPWeights(R, s.Kind())
	v := sspVector(s, a, b, c)
	noise.AddGaussian(v, rel.Sigma)
	out := s.Clone()
	sspFromVector(out, v, a, b, c)
	return out
}

// SSPLambda is the ridge λ of SolveSSP for statistics whose weighted
// release vector carries noise of total standard deviation sigma per
// coordinate (σ√K for a sum of K sites' releases; 0 for exact statistics):
// the expected spectral norm of the noise in Ĉ₊ + Ĉ₋,
// 2R²σ√d·√(1/n̂₊² + 1/n̂₋²), plus 10⁻⁶R². The counts are the clamped noisy
// ones, so λ is post-processing of the release.
func SSPLambda(s *SSPStats, R, sigma float64) float64 {
	if s.Kind() == SSPPooled {
		// The noise of M̂/N: one packed matrix with the same weights.
		return 2*R*R*sigma*math.Sqrt(float64(s.D))/s.N + 1e-6*R*R
	}
	np, nn := sspCounts(s)
	return 2*R*R*sigma*math.Sqrt(float64(s.D))*math.Sqrt(1/(np*np)+1/(nn*nn)) + 1e-6*R*R
}

// sspCounts returns n̂₊ clamped to [1, N − 1] and n̂₋ = N − n̂₊.
func sspCounts(s *SSPStats) (np, nn float64) {
	np = math.Min(math.Max(s.NPos, 1), s.N-1)
	return np, s.N - np
}

// SSPSolveInfo describes a solve.
type SSPSolveInfo struct {
	NPos, NNeg float64 // clamped counts used
	Clipped    int     // eigenvalues of Â clipped to 0
	MinEig     float64 // smallest eigenvalue of Â before clipping
}

// SolveSSP returns w = (Â₊ + λI)⁻¹ b̂, the ridge optimum of the square AUC
// loss from (noisy) statistics, with Â₊ the PSD part of Â (negative
// eigenvalues clipped to 0). λ = +Inf, or statistics without moments,
// give the class-mean difference b̂ = μ̂₊ − μ̂₋. It needs N ≥ 2.
func SolveSSP(s *SSPStats, lambda float64) ([]float64, SSPSolveInfo, error) {
	if !(s.N >= 2) {
		return nil, SSPSolveInfo{}, fmt.Errorf("dpalgo: SSP solve needs statistics of at least 2 records, got N = %v", s.N)
	}
	if !(lambda > 0) || math.IsNaN(lambda) {
		return nil, SSPSolveInfo{}, fmt.Errorf("dpalgo: SSP ridge λ = %v must be > 0 (or +Inf for the class-mean difference)", lambda)
	}
	d := s.D
	np, nn := sspCounts(s)
	info := SSPSolveInfo{NPos: np, NNeg: nn}
	mp, mn := make([]float64, d), make([]float64, d)
	b := make([]float64, d)
	for k := 0; k < d; k++ {
		mp[k], mn[k] = s.SumPos[k]/np, s.SumNeg[k]/nn
		b[k] = mp[k] - mn[k]
	}
	kind := s.Kind()
	if !kind.Moments() || math.IsInf(lambda, 1) {
		return b, info, nil
	}
	A := mat.NewSymDense(d, nil)
	p := 0
	if kind == SSPPooled {
		// Σ̂ = M̂/N − m̂m̂ᵀ, m̂ = (Ŝ₊ + Ŝ₋)/N: the total covariance, whose
		// inverse maps b to the Fisher direction (file comment of
		// private_lda.go).
		m := make([]float64, d)
		for k := range m {
			m[k] = (s.SumPos[k] + s.SumNeg[k]) / s.N
		}
		for k := 0; k < d; k++ {
			for l := k; l < d; l++ {
				A.SetSym(k, l, s.Mom[p]/s.N-m[k]*m[l])
				p++
			}
		}
	} else {
		for k := 0; k < d; k++ {
			for l := k; l < d; l++ {
				v := s.MomPos[p]/np - mp[k]*mp[l] + s.MomNeg[p]/nn - mn[k]*mn[l] + b[k]*b[l]
				A.SetSym(k, l, v)
				p++
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(A, true) {
		return nil, info, fmt.Errorf("dpalgo: SSP solve: eigendecomposition of the %d×%d moment matrix failed", d, d)
	}
	vals := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	info.MinEig = math.Inf(1)
	// w = V diag(1/(max(λ_i, 0) + λ)) Vᵀ b
	c := make([]float64, d)
	for i, e := range vals {
		info.MinEig = math.Min(info.MinEig, e)
		if e < 0 {
			e = 0
			info.Clipped++
		}
		var t float64
		for k := 0; k < d; k++ {
			t += V.At(k, i) * b[k]
		}
		c[i] = t / (e + lambda)
	}
	w := make([]float64, d)
	for k := 0; k < d; k++ {
		var t float64
		for i := 0; i < d; i++ {
			t += V.At(k, i) * c[i]
		}
		w[k] = t
	}
	return w, info, nil
}

// statsReleaseSetup is PrivateSetup plus the checks every one-shot statistics
// release (dp-ssp, dp-ssp-mean, dp-lda) makes before reading a record.
func statsReleaseSetup(ctx context.Context, a *pairwise.Algorithm, moments bool, obj pairwise.Objective, cfg *pairwise.RunConfig) (*pairwise.PrivacyReport, error) {
	_, rep, err := pairwise.PrivateSetup(a, obj, cfg)
	if err != nil {
		return nil, err
	}
	ds := obj.Data()
	switch {
	case ds.N < 2:
		return nil, fmt.Errorf("%s needs at least 2 records, got %d", a.Name, ds.N)
	case moments && ds.D > sspMaxDim:
		return nil, fmt.Errorf("%s releases second-moment entries (d(d+1)/2 per matrix): d = %d is above the limit %d; use dp-ssp-mean (class sums only) or reduce the features", a.Name, ds.D, sspMaxDim)
	case cfg.Steps != 0 || cfg.Passes != 0 || cfg.Eta != 0:
		return nil, fmt.Errorf("%s is a one-shot release: --steps, --passes and --eta do not apply", a.Name)
	}
	return rep, ctx.Err()
}
