package dpalgo

import (
	"fmt"
	"math"
)

// dp-lda's ridge rule (docs/results/ridge-rule.md).
//
// dp-lda's ridge has always been the noise's spectral edge,
// λ_e = 2R²σ√d/n + 10⁻⁶R² (SSPLambda, pooled kind): the expected spectral
// norm of the noise in M̂/n, so that the noise's eigenvalues are dominated
// whatever the data. It is proportional to the noise's standard deviation.
// A Tikhonov (ridge) regulariser that trades a noisy estimate's variance
// against its bias is, at its optimum, proportional to the noise's
// *variance* (λ* = σ²/τ² for a Gaussian prior of variance τ²): at high
// signal-to-noise the edge over-shrinks. LDARidgeScaled keeps the edge
// where dp-lda starts (t = μn/√d = RecommendCentre, where dp-lda's noise
// is the largest the default ever lets it run with) and scales it as the
// noise variance above, λ = c·(λ_e − 10⁻⁶R²) + 10⁻⁶R² with
//
//	c = clamp(κ/κ*, 1/4, 1),  κ = 2σ√d/n,  κ* = 4/(√(3/4)·RecommendCentre),
//
// κ the edge in units of the records' total variance bound R² and κ* its
// value for a single-site run at t = RecommendCentre (σ_B = 2/μ_B,
// μ_B² = (3/4)μ²: κ = 4/(√(3/4)·t)), so c = RecommendCentre/t for a
// single site. The floor 1/4 is the smallest multiple of the edge that was
// measured (docs/results/extdata.md); below it the rule does not go.
// Everything is public: σ from (ε, δ, d) and the number of sites, n and d
// public; λ stays post-processing of the release. fed-dp-lda passes the
// summed noise σ√K and the pooled n, so the rule is the same function of
// the noise level.

// LDARidge selects dp-lda's (and fed-dp-lda's) ridge rule.
type LDARidge int

const (
	// LDARidgeEdge is λ = SSPLambda: the noise's spectral edge.
	LDARidgeEdge LDARidge = iota
	// LDARidgeScaled is λ = LDARidgeMultiplier·edge (the file comment).
	LDARidgeScaled
)

// LDARidgeRule is the rule dp-lda and fed-dp-lda solve with. Scripts
// switch it to compare the rules; it is read once per solve and must not
// be changed while runs are in progress.
var LDARidgeRule = LDARidgeEdge

// ldaRidgeRef is κ*, the edge 2σ√d/n in units of R² of a single-site
// dp-lda run at t = RecommendCentre = 4/√(5/12) (recommend.go) with the
// ¾ of μ² on the statistics (private_lda.go): 4/(√(3/4)·4/√(5/12)) =
// √(5/9) ≈ 0.745 (TestLDARidgeMultiplier checks it against both).
var ldaRidgeRef = math.Sqrt(5.0 / 9)

// LDARidgeMultiplier is c of LDARidgeScaled for n records, d features and
// noise sigma per coordinate of the weighted release vector (σ√K summed
// over K sites): clamp(κ/κ*, 1/4, 1) with κ = 2σ√d/n.
func LDARidgeMultiplier(n float64, d int, sigma float64) float64 {
	k := 2 * sigma * math.Sqrt(float64(d)) / n
	return math.Min(1, math.Max(0.25, k/ldaRidgeRef))
}

// LDALambda is dp-lda's ridge for the pooled statistics s (noise sigma
// per coordinate) under rule: SSPLambda, or for LDARidgeScaled its edge
// term multiplied by LDARidgeMultiplier(s.N, s.D, sigma).
func LDALambda(s *SSPStats, R, sigma float64, rule LDARidge) float64 {
	if rule != LDARidgeScaled {
		return SSPLambda(s, R, sigma)
	}
	c := LDARidgeMultiplier(s.N, s.D, sigma)
	return c*2*R*R*sigma*math.Sqrt(float64(s.D))/s.N + 1e-6*R*R
}

// ldaLambdaText is the run note's formula of λ under LDARidgeRule.
func ldaLambdaText(n float64, d int, sigma float64) string {
	if LDARidgeRule != LDARidgeScaled {
		return "2R₀²σ_B√d/n + 10⁻⁶R₀²"
	}
	return fmt.Sprintf("c·2R₀²σ_B√d/n + 10⁻⁶R₀², c = %.4g (LDARidgeScaled)", LDARidgeMultiplier(n, d, sigma))
}
