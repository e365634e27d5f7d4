package pairwise

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
)

// dp-lda: the ridge Fisher discriminant from one noisy release of the
// class sums, the positive count and the label-free second moment.
//
// # Why (the estimator)
//
// dp-ssp (private_ssp.go) solves the square-AUC optimum, whose matrix
// A = C₊ + C₋ + bbᵀ needs the class covariances C± = M±/n± − μ±μ±ᵀ. Their
// noise is that of the noisy class moments divided by the class counts,
// so it scales with √(1/n₊² + 1/n₋²): 3.4× that of a pooled moment over
// n = n₊ + n₋ records at diabetes' 65/35 split, ≈ 10× at ijcnn1's 10 %
// positives. dp-lda releases instead the label-free second moment
// M = Σ_i x_i x_iᵀ and solves
//
//	w = (Σ̂₊ + λI)⁻¹ (μ̂₊ − μ̂₋),  Σ̂ = M̂/n − m̂m̂ᵀ,  m̂ = (Ŝ₊ + Ŝ₋)/n,
//
// Σ̂₊ the PSD part of Σ̂. Without noise Σ = Σ_w + π₊π₋ bbᵀ (the total
// covariance: the within-class Σ_w = π₊C₊ + π₋C₋ plus the between-class
// rank one along b = μ₊ − μ₋), and for any invertible B,
// (B + βbbᵀ)⁻¹b = B⁻¹b / (1 + βbᵀB⁻¹b) (Sherman–Morrison): the direction
// of (Σ + λI)⁻¹b is that of (Σ_w + λI)⁻¹b, the ridge Fisher/LDA direction.
// It equals the square-AUC optimum's direction (C₊ + C₋ + λ'I)⁻¹b when the
// class covariances are equal (up to the ridge), and AUC only depends on
// the direction. So dp-lda trades the exact square-AUC target for a
// covariance estimate with 1/n instead of 1/n± noise.
//
// # Mechanism, sensitivity, calibration
//
// The released vector is φ summed over records with φ(x, y) = (a·x in
// the block of class y, b·u(x xᵀ), c·I[y = +1]) — dp-ssp's, except that
// the second moment sits in ONE block whatever the label. Replace-one
// neighbours (n public), ‖x‖, ‖x'‖ ≤ R:
//
//   - same class: exactly dp-ssp's same-class case (the sums move in one
//     block, the moment by xxᵀ − x'x'ᵀ), so the same bound;
//   - label flip: the sums move in two disjoint blocks,
//     a²(r² + r'²); the moment by xxᵀ − x'x'ᵀ in the shared block,
//     b²(r⁴ + r'⁴ − 2r²r'²t²) ≤ b²(r⁴ + r'⁴); the count by c. The total is
//     at most dp-ssp's flip bound 2a²R² + 2b²R⁴ + c².
//
// So SSPSensitivity(R, a, b, c) bounds dp-lda's vector too (tight: the
// same-class worst case is the same replacement), and with dp-ssp's
// weights a = 1/R, b = 1/(√2R²), c = 1, Δ = 2. One Gaussian release
// calibrated by the analytic Gaussian mechanism (exact) through
// SSPCalibrate with k = 2d + 1 + d(d+1)/2 coordinates;
// TestSSPSensitivityBruteForce checks the pooled layout. The solve is
// post-processing; λ = 2R²σ√d/n + 10⁻⁶R² (SSPLambda), the expected
// spectral norm of the noise in M̂/n, from σ and the public n.
//
// # Private centering (the default: two releases)
//
// The noise of the sums is proportional to the clip radius, and clipping
// around a point far from the data (the schema box's centre, say) shrinks
// every record towards it. So dp-lda first finds the data's centre and
// spread privately, then clips around that centre:
//
//  1. Release A: v_A = Σ_i (x_i/R₀, ‖x_i‖²/R₀²) + N(0, σ_A²I), R₀ the
//     records' norm bound (FeatureRadius). Replace-one sensitivity 2: with
//     r, r' ≤ R₀ = 1 and t the cosine, ‖Δv‖² = r² + r'² − 2rr't + (r² − r'²)²
//     ≤ (r + r')²(1 + (r − r')²), and along r + r' = 2 − (r − r') the
//     right side (2 − v)²(1 + v²) has derivative
//     2(2 − v)(−2v² + 2v − 1) < 0, so the maximum is 4 at r = r' = R₀,
//     t = −1 (the squared-norm coordinate rides for free).
//     ĉ = R₀·v̂_A[:d]/n (clamped into the R₀-ball), and the mean squared
//     distance to the centre ρ² = R₀²·v̂_A[d]/n − ‖ĉ‖² + d(σ_A R₀/n)²
//     (the last term removes the noise's bias of ‖ĉ‖²).
//  2. Release B: dp-lda's statistics (above) of the records
//     x̃_i = clip_{R_B}(x_i − ĉ), R_B = κ·ρ clamped to [R₀/16, 2R₀]: ĉ and
//     R_B are outputs of release A, so given them the map is per record
//     and the sensitivity argument above holds with R = R_B (Δ = 2).
//
// The score w·(x − ĉ) ranks as w·x, so the model is w. The two releases
// compose adaptively; exact Gaussian DP gives μ² = μ_A² + μ_B²
// ([DRS19] Cor 3.3), and calibrateGaussian (dp.CalibrateGaussian) picks
// the smallest σ's with σ_A/σ_B fixed by the split μ_A² = s·μ², s = 1/4.
//
// The written rule (fixed before the data): s = 1/4 (the main release
// keeps √(3/4) = 87 % of μ); κ = ldaClipFactor = 3/4: records beyond 3/4
// of the RMS distance are projected onto that sphere. A smaller radius
// divides the noise in proportion, and below the typical distance the
// class-mean difference becomes the difference of the classes' mean
// directions around ĉ (the spatial-sign mean, a robust location estimate
// that points the same way for elliptical classes), so the signal falls
// more slowly than the noise. Measured, not tuned to a dataset: README,
// "Private models that learn".
//
// --center none gives the one-release form above (no centering; the
// loader's R), which fed-dp-lda also uses.
//
// # Federation
//
// Additive over records like dp-ssp: fed-dp-lda (fedalgo/fedssp.go) sums
// the sites' noisy vectors (one release, no centering), any label mix per
// site.

var ldaAlg = &Algorithm{
	Name:    "dp-lda",
	Title:   "ridge Fisher discriminant from one noisy release of class sums, positive count and the label-free second moment",
	Paper:   "pairfed (sufficient-statistics perturbation with a pooled second moment; cf. dp-ssp and Fisher's linear discriminant)",
	Ref:     "private_lda.go",
	Setting: "full-batch",
	Tasks:   []Task{TaskAUC},
	Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer; solves the ridge Fisher discriminant (whatever --loss), " +
		"the square-AUC optimum's direction when the class covariances are equal",
	Private:          true,
	CentresPrivately: true,
	PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours (n public). Two Gaussian releases: the records' sum and " +
		"sum of squared norms (ℓ2 sensitivity 2 with weights 1/R, 1/R²), then the weighted class sums, label-free second " +
		"moment and positive count of the records centred at the released centre and clipped to a released radius R_B " +
		"(sensitivity 2 with weights 1/R_B, 1/(√2R_B²), 1); σ's by the exact Gaussian-DP accountant for the composition " +
		"(dp.CalibrateGaussian, a quarter of μ² to the first); the model is post-processing.",
}

// The written rule of the centred form (see the file comment).
const (
	ldaCenterShare = 0.25 // s: share of μ² spent on the centre and spread
	ldaClipFactor  = 0.75 // κ: R_B = κ·ρ
)

func init() {
	ldaAlg.Run = func(ctx context.Context, obj Objective, cfg RunConfig, rng *rand.Rand) (*Result, error) {
		return runLDA(ctx, obj, cfg)
	}
	Register(ldaAlg)
}

// runLDA is dp-lda with private centering (two Gaussian releases).
func runLDA(ctx context.Context, obj Objective, cfg RunConfig) (*Result, error) {
	a := ldaAlg
	_, rep, err := privateSetup(a, obj, &cfg)
	if err != nil {
		return nil, err
	}
	ds := obj.Data()
	switch {
	case ds.N < 2:
		return nil, fmt.Errorf("pairwise: %s needs at least 2 records, got %d", a.Name, ds.N)
	case ds.D > sspMaxDim:
		return nil, fmt.Errorf("pairwise: %s releases d(d+1)/2 second-moment entries: d = %d is above the limit %d; use dp-ssp-mean (class sums only) or reduce the features", a.Name, ds.D, sspMaxDim)
	case cfg.Steps != 0 || cfg.Passes != 0 || cfg.Eta != 0:
		return nil, fmt.Errorf("pairwise: %s is a one-shot release: --steps, --passes and --eta do not apply", a.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := cfg.Privacy
	R0, d, n := p.FeatureRadius, ds.D, float64(ds.N)
	k := SSPCoords(d, SSPPooled)
	s := ldaCenterShare
	sig, err := calibrateGaussian(a.Name, p, rep, nil, nil, gaussOption{
		plan: dp.GaussianPlan{Sensitivities: []float64{2, 2}, Split: []float64{1 / math.Sqrt(s), 1 / math.Sqrt(1-s)},
			Dim: max(d+1, k), Coordinates: int64(d + 1 + k)},
		how: "2 for the centre release (Σ x/R₀, Σ ‖x‖²/R₀²) and 2 for the weighted statistics of the records centred and clipped to R_B (private_lda.go)",
	})
	if err != nil {
		return nil, err
	}
	// Release A: the centre and the spread.
	vA := make([]float64, d+1)
	for i := 0; i < ds.N; i++ {
		ds.AddScaled(vA[:d], i, 1/R0)
		vA[d] += ds.SqNorm(i) / (R0 * R0)
	}
	p.Noise.AddGaussian(vA, sig[0])
	c := make([]float64, d)
	for j := range c {
		c[j] = vA[j] * R0 / n
	}
	cn2 := Norm2(c) * Norm2(c)
	rho2 := R0*R0*vA[d]/n - cn2 + float64(d)*(sig[0]*R0/n)*(sig[0]*R0/n)
	if nc := math.Sqrt(cn2); nc > R0 {
		scale(R0/nc, c)
	}
	RB := math.Min(math.Max(ldaClipFactor*math.Sqrt(math.Max(rho2, 0)), R0/16), 2*R0)
	// Release B: the statistics of the centred, clipped records.
	st := ldaCenteredStats(ds, c, RB)
	wa, wb, wc := SSPWeights(RB, SSPPooled)
	v := sspVector(st, wa, wb, wc)
	p.Noise.AddGaussian(v, sig[1])
	noisy := st.Clone()
	sspFromVector(noisy, v, wa, wb, wc)
	lambda := SSPLambda(noisy, RB, sig[1])
	w, info, err := SolveSSP(noisy, lambda)
	if err != nil {
		return nil, err
	}
	obj.Project(w) // a rescaling at most: AUC is unchanged
	rep.G, rep.L, rep.Alpha = 0, 0, 0
	rep.Releases = 2
	rep.Formula = fmt.Sprintf("σ_A, σ_B = the smallest σ's the exact Gaussian-DP accountant certifies for two releases of Δ = 2 with μ_A² = %g·μ² (dp.CalibrateGaussian): σ_A = %.4g, σ_B = %.4g", s, sig[0], sig[1])
	rep.Accountant = "two adaptive Gaussian releases composed by exact Gaussian DP (μ² = μ_A² + μ_B²); the model is post-processing"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("release A (centre and spread, R₀ = %g): ‖ĉ‖ = %.4g, RMS distance ρ = %.4g → clip radius R_B = %g·ρ = %.4g (clamped to [R₀/16, 2R₀])", R0, Norm2(c), math.Sqrt(math.Max(rho2, 0)), ldaClipFactor, RB),
		fmt.Sprintf("release B noise per coordinate: class sums %.4g, counts %.4g; noisy counts n̂₊ = %.1f, n̂₋ = %.1f (clamped to [1, n−1]; n = %d public)", sig[1]/wa, sig[1]/wc, info.NPos, info.NNeg, ds.N),
		fmt.Sprintf("solved the ridge Fisher discriminant w = (Σ̂₊ + λI)⁻¹(μ̂₊ − μ̂₋), Σ̂ = M̂/n − m̂m̂ᵀ of the centred records, whatever --loss (%s); λ = %.4g = 2R_B²σ_B√d/n + 10⁻⁶R_B²; %d of %d eigenvalues clipped to 0 (smallest %.3g)",
			obj.Loss().Name(), lambda, info.Clipped, d, info.MinEig))
	if cfg.Init != nil {
		rep.Notes = append(rep.Notes, "the initial model is ignored: the model is computed in closed form")
	}
	return &Result{W: w, Steps: 1, PairGrads: int64(ds.N), Privacy: rep}, nil
}

// ldaCenteredStats returns the pooled statistics of the records x − c
// clipped to ‖·‖ ≤ RB, streaming (one dense row buffer; O(n·d²)).
func ldaCenteredStats(ds *Dataset, c []float64, RB float64) *SSPStats {
	d := ds.D
	st := &SSPStats{D: d, N: float64(ds.N), SumPos: make([]float64, d), SumNeg: make([]float64, d), Mom: make([]float64, sspPacked(d))}
	row := make([]float64, d)
	for i := 0; i < ds.N; i++ {
		ds.DenseRowTo(row, i)
		axpy(-1, c, row)
		if nr := Norm2(row); nr > RB {
			scale(RB/nr, row)
		}
		sum := st.SumNeg
		if ds.Y[i] > 0 {
			sum = st.SumPos
			st.NPos++
		}
		axpy(1, row, sum)
		sspAddOuter(st.Mom, row, d)
	}
	return st
}
