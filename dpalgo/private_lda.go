package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
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
// weights a = 1/R, b = 1/(√2R²), c = 1, Δ = 2 (release B below, with
// k = 2d + 1 + d(d+1)/2 coordinates); TestSSPSensitivityBruteForce checks
// the pooled layout. The solve is
// post-processing; λ = 2R²σ√d/n + 10⁻⁶R² (SSPLambda), the expected
// spectral norm of the noise in M̂/n, from σ and the public n.
//
// # Private centring and the spatial sign (two releases)
//
// The noise of the sums is proportional to the clip radius, and clipping
// around a point far from the data (the schema box's centre, say) shrinks
// every record towards it. So dp-lda first finds the data's centre
// privately and then uses each record's direction from that centre:
//
//  1. Release A: v_A = Σ_i x_i/R₀ + N(0, σ_A²I), R₀ the records' norm
//     bound (FeatureRadius): replace-one sensitivity ‖x − x'‖/R₀ ≤ 2.
//     ĉ = R₀·v̂_A/n, clamped into the R₀-ball (post-processing).
//  2. Release B: dp-lda's statistics (above) of the records
//     u_i = R₀·(x_i − ĉ)/‖x_i − ĉ‖ (0 when x_i = ĉ), the spatial sign of
//     x_i around ĉ scaled to R₀. ĉ is an output of release A, so given it
//     the map is per record with ‖u_i‖ ≤ R₀, and the sensitivity argument
//     above holds with R = R₀ (Δ = 2).
//
// The score w·(x − ĉ) ranks as w·x, so the model is w, applied to the
// records (not their signs). The two releases compose adaptively; exact
// Gaussian DP gives μ² = μ_A² + μ_B² ([DRS19] Cor 3.3), and
// CalibrateGaussian (dp.CalibrateGaussian, LDAPlan) picks the smallest σ's
// with the split μ_A² = μ²/4 (the main release keeps √(3/4) = 87 % of μ).
//
// Why signs: release B's noise is fixed by its radius, while a record's
// distance from the centre is no evidence of its class; projecting every
// record onto the sphere around ĉ keeps the part of the signal that the
// direction carries (for elliptical classes the difference of the mean
// signs points as the mean difference does, and the sign covariance has
// the covariance's eigenvectors — the spatial-sign estimators of robust
// statistics, Visuri, Koivunen & Oja 2000) and spends the whole radius on
// it; heavy-tailed records cannot dominate. Measured against clipping at
// 3/4 of the RMS distance (docs/private-models.md): equal or
// better on diabetes, breast-cancer-wisconsin, ijcnn1 and a9a, and it needs
// no spread estimate, so the federated form (fedalgo/fedlda.go) broadcasts
// the centre alone.
var ldaAlg = &pairwise.Algorithm{
	Name:       "dp-lda",
	MaxDim:     sspMaxDim,
	GaussianDP: true,
	TuneLoss:   "square",
	Title:      "ridge Fisher discriminant from one noisy release of class sums, positive count and the label-free second moment",
	Paper:      "pairfed (sufficient-statistics perturbation with a pooled second moment; cf. dp-ssp and Fisher's linear discriminant)",
	Ref:        "private_lda.go",
	Setting:    "full-batch",
	Tasks:      []pairwise.Task{pairwise.TaskAUC},
	Assumptions: "records clipped to ‖x‖ ≤ R; linear scorer; solves the ridge Fisher discriminant (whatever --loss), " +
		"the square-AUC optimum's direction when the class covariances are equal",
	Private:          true,
	CentresPrivately: true,
	PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours (n public). Two Gaussian releases: the records' sum " +
		"(ℓ2 sensitivity 2 with weight 1/R), then the weighted class sums, label-free second moment and positive count of " +
		"the records' directions R(x − ĉ)/‖x − ĉ‖ from the released centre ĉ (sensitivity 2 with weights 1/R, 1/(√2R²), 1); " +
		"σ's by the exact Gaussian-DP accountant for the composition (dp.CalibrateGaussian, a quarter of μ² to the first); " +
		"the model is post-processing.",
}

// ldaCentreShare is the share of μ² spent on the centre (the written
// rule: see the file comment).
const ldaCentreShare = 0.25

// LDAPlan is the Gaussian plan of dp-lda's two releases for d features:
// the centre (d coordinates) and the statistics of the signs
// (SSPCoords(d, SSPPooled)), Δ = 2 each, split μ_A² = μ²/4. Sites of
// fed-dp-lda calibrate with it too.
func LDAPlan(d int) dp.GaussianPlan {
	k := SSPCoords(d, SSPPooled)
	s := ldaCentreShare
	return dp.GaussianPlan{Sensitivities: []float64{2, 2}, Split: []float64{1 / math.Sqrt(s), 1 / math.Sqrt(1-s)},
		Dim: max(d, k), Coordinates: int64(d + k)}
}

func init() {
	ldaAlg.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
		return runLDA(ctx, obj, cfg)
	}
	pairwise.Register(ldaAlg)
}

// runLDA is dp-lda with private centering (two Gaussian releases).
func runLDA(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig) (*pairwise.Result, error) {
	a := ldaAlg
	rep, err := statsReleaseSetup(ctx, a, true, obj, &cfg)
	if err != nil {
		return nil, err
	}
	ds := obj.Data()
	p := cfg.Privacy
	R0, d, n := p.FeatureRadius, ds.D, float64(ds.N)
	sig, err := pairwise.CalibrateGaussian(a.Name, p, rep, nil, nil, pairwise.GaussOption{
		Plan: LDAPlan(d),
		How:  "2 for the centre release Σ x/R₀ and 2 for the weighted statistics of the records' signs around it (private_lda.go)",
	})
	if err != nil {
		return nil, err
	}
	// Release A: the centre.
	vA := LDACentreVector(ds, R0)
	p.Noise.AddGaussian(vA, sig[0])
	c := LDACentre(vA, n, R0)
	// Release B: the statistics of the signs around it.
	st := LDASignStats(ds, c, R0)
	wa, wb, wc := SSPWeights(R0, SSPPooled)
	v := sspVector(st, wa, wb, wc)
	p.Noise.AddGaussian(v, sig[1])
	noisy := st.Clone()
	sspFromVector(noisy, v, wa, wb, wc)
	lambda := SSPLambda(noisy, R0, sig[1])
	w, info, err := SolveSSP(noisy, lambda)
	if err != nil {
		return nil, err
	}
	obj.Project(w) // a rescaling at most: AUC is unchanged
	rep.G, rep.L, rep.Alpha = 0, 0, 0
	rep.Releases = 2
	rep.Formula = fmt.Sprintf("σ_A, σ_B = the smallest σ's the exact Gaussian-DP accountant certifies for two releases of Δ = 2 with μ_A² = %g·μ² (dp.CalibrateGaussian): σ_A = %.4g, σ_B = %.4g", ldaCentreShare, sig[0], sig[1])
	rep.Accountant = "two adaptive Gaussian releases composed by exact Gaussian DP (μ² = μ_A² + μ_B²); the model is post-processing"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("release A (the centre, R₀ = %g): ‖ĉ‖ = %.4g; release B: the records' signs R₀(x − ĉ)/‖x − ĉ‖", R0, pairwise.Norm2(c)),
		fmt.Sprintf("release B noise per coordinate: class sums %.4g, counts %.4g; noisy counts n̂₊ = %.1f, n̂₋ = %.1f (clamped to [1, n−1]; n = %d public)", sig[1]/wa, sig[1]/wc, info.NPos, info.NNeg, ds.N),
		fmt.Sprintf("solved the ridge Fisher discriminant w = (Σ̂₊ + λI)⁻¹(μ̂₊ − μ̂₋), Σ̂ = M̂/n − m̂m̂ᵀ of the signs, whatever --loss (%s); λ = %.4g = 2R₀²σ_B√d/n + 10⁻⁶R₀²; %d of %d eigenvalues clipped to 0 (smallest %.3g)",
			obj.Loss().Name(), lambda, info.Clipped, d, info.MinEig))
	if cfg.Init != nil {
		rep.Notes = append(rep.Notes, "the initial model is ignored: the model is computed in closed form")
	}
	return &pairwise.Result{W: w, Steps: 1, PairGrads: int64(ds.N), Privacy: rep}, nil
}

// LDASignStats returns the pooled statistics (SSPPooled) of the records'
// signs around c scaled to R: R(x − c)/‖x − c‖, 0 when x = c. Streaming:
// one dense row buffer, O(n·d²).
func LDASignStats(ds *pairwise.Dataset, c []float64, R float64) *SSPStats {
	d := ds.D
	st := &SSPStats{D: d, N: float64(ds.N), SumPos: make([]float64, d), SumNeg: make([]float64, d), Mom: make([]float64, sspPacked(d))}
	row := make([]float64, d)
	for i := 0; i < ds.N; i++ {
		ds.DenseRowTo(row, i)
		pairwise.Axpy(-1, c, row)
		if nr := pairwise.Norm2(row); nr > 0 {
			pairwise.Scale(R/nr, row)
		}
		sum := st.SumNeg
		if ds.Y[i] > 0 {
			sum = st.SumPos
			st.NPos++
		}
		pairwise.Axpy(1, row, sum)
		sspAddOuter(st.Mom, row, d)
	}
	return st
}
