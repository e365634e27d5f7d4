package dp

import (
	"fmt"
	"math"
)

// Exact composition of the private feature ranges with a Gaussian training
// mechanism.
//
// A private run without a public schema first releases its feature ranges
// (EstimateRanges), then trains on the records mapped with them. When the
// training mechanism is a sequential composition of Gaussian releases
// calibrated by CalibrateGaussian, both parts are Gaussian-DP and compose
// exactly ([DRS19] Cor 3.3, adaptive): μ² = μ_range² + μ_train². Basic
// composition of their (ε, δ) statements (SplitBudget) would waste most
// of the budget: at ε = 1 a 10 % share gives the ranges ε = 0.1, i.e.
// μ ≈ 0.03, where the same share of μ² gives μ ≈ 0.13 (4× less noise) and
// leaves the training a larger μ too.
//
// # The split (SplitGDP)
//
// For a request (ε, δ) let μ* be the largest μ with δ_μ(ε) ≤ δ − m − t_r,
// where t_r = (1 + e^ε)·N_r·SecureGaussianTV is the discrete-noise term of
// the range release's N_r noise coordinates (discrete_gdp.go) and m = δ/1024
// a margin for the floating-point rounding of the steps below. With the
// share s of μ²:
//
//	μ_range = √s·μ*,   μ_train = √(1 − s)·μ*,   δ_train = δ_{μ_train}(ε).
//
// The ranges are released μ_range-GDP (RangeConfig.Mu) and the training
// mechanism is calibrated for (ε, δ_train): its certificate gives
// δ_{μ′}(ε) + f + t_t ≤ δ_train, so its μ′ ≤ μ_train, where f is its
// failure probability and t_t its own discrete-noise term.
//
// Why the whole run is then (ε, δ)-DP: write g(x) = δ_{√x}(ε). Its
// derivative is g′(x) = φ(ε/μ − μ/2)/(2μ) (μ = √x; dδ_μ/dμ = φ(ε/μ − μ/2)
// because e^ε φ(ε/μ + μ/2) = φ(ε/μ − μ/2)), and d/dμ log(φ(ε/μ − μ/2)/μ) =
// ε²/μ³ − μ/4 − 1/μ ≥ 0 iff μ⁴/4 + μ² ≤ ε². So g is convex on
// [0, μc²] with μc² = 2(√(1 + ε²) − 1), and SplitGDP uses the split only
// when μ*² ≤ μc² (ok false otherwise: the caller falls back to basic
// composition). For convex g and x′ = μ′² ≤ x_t = μ_train²,
// g(μ_range² + x′) − g(x′) ≤ g(μ_range² + x_t) − g(x_t), so the composed
// run has
//
//	δ_{√(μ_range² + μ′²)}(ε) + f + t_t + t_r ≤ g(μ*²) − g(x_t) + g(x′) + f + t_t + t_r
//	                                        ≤ g(μ*²) + t_r ≤ δ − m.
//
// # The certificate (CertifyWithRanges)
//
// The argument above is what makes the split safe to choose before any
// noise is drawn; the printed guarantee is not taken from it but certified
// after training by CertifyGaussian on the combined plan — the range
// release (Δ = √(2d), σ_range) followed by the training releases
// (Δᵢ, σᵢ), sequential, with the training's failure probability, the
// snapping allowance for the largest release and the discrete-noise term
// for every coordinate drawn by either part. A run whose certificate does
// not cover (ε, δ) is refused.

// SplitGDP splits a request (eps, delta) between a μ-GDP range release of
// rangeCoords noise coordinates (share of μ²) and a Gaussian training
// mechanism calibrated for (eps, trainDelta); see the file comment. ok is
// false when the split's convexity condition fails (large μ*), and the
// caller must use SplitBudget (basic composition) instead.
func SplitGDP(eps, delta, share float64, rangeCoords int) (muRange, trainDelta float64, ok bool, err error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, 0, false, fmt.Errorf("dp: range budget: ε = %v must be finite and > 0", eps)
	}
	if !(delta > 0 && delta < 1) {
		return 0, 0, false, fmt.Errorf("dp: range budget: δ = %v must be in (0, 1) for Gaussian-DP composition", delta)
	}
	if !(share > 0 && share < 1) {
		return 0, 0, false, fmt.Errorf("dp: range budget: share %v must be in (0, 1) (e.g. 0.1 for 10 %% of μ²)", share)
	}
	if rangeCoords < 1 {
		return 0, 0, false, fmt.Errorf("dp: range budget: %d range coordinates", rangeCoords)
	}
	tr := acctUp((1+math.Exp(eps))*float64(rangeCoords)*SecureGaussianTV, 4)
	avail := acctDown(delta-delta/1024-tr, 4)
	if !(avail > 0) {
		return 0, 0, false, nil
	}
	inv, err := AnalyticGaussianSigma(eps, avail, 1) // 1/μ*, rounded up
	if err != nil {
		return 0, 0, false, fmt.Errorf("dp: range budget: %w", err)
	}
	mu := 1 / inv
	if mu*mu > 2*(math.Sqrt(1+eps*eps)-1)*(1-1e-9) {
		return 0, 0, false, nil
	}
	muRange = math.Sqrt(share) * mu
	muTrain := math.Sqrt(1-share) * mu
	trainDelta = GaussianDPDelta(muTrain, eps)
	if !(trainDelta > 0 && trainDelta < delta) {
		return 0, 0, false, nil
	}
	return muRange, trainDelta, true, nil
}

// RangeCoordinates returns the number of noise coordinates EstimateRanges
// draws for d features under cfg (d·B, B = 2(MaxExp − MinExp) + 1 with
// the default grid when MinExp = MaxExp = 0).
func RangeCoordinates(d int, cfg RangeConfig) int {
	if cfg.MinExp == 0 && cfg.MaxExp == 0 {
		cfg.MinExp, cfg.MaxExp = -12, 30
	}
	return d * (2*(cfg.MaxExp-cfg.MinExp) + 1)
}

// CertifyWithRanges certifies a whole run: the μ-GDP range release r
// followed by the training mechanism's sequential Gaussian releases
// (train's sensitivities and failure probability, trainSigmas, and
// trainCoords noise coordinates actually drawn), at (eps, delta). See the
// file comment.
func CertifyWithRanges(r *Ranges, train GaussianPlan, trainSigmas []float64, trainCoords int64, eps, delta float64) (Certificate, error) {
	if r == nil || r.Mechanism != "gaussian" || !(r.Mu > 0) {
		return Certificate{}, fmt.Errorf("dp: range composition: the ranges were not released μ-GDP")
	}
	if train.Disjoint {
		return Certificate{}, fmt.Errorf("dp: range composition: a training mechanism of disjoint releases is not covered")
	}
	if len(trainSigmas) != len(train.Sensitivities) {
		return Certificate{}, fmt.Errorf("dp: range composition: %d σ's for %d training releases", len(trainSigmas), len(train.Sensitivities))
	}
	if trainCoords < 0 {
		return Certificate{}, fmt.Errorf("dp: range composition: %d training coordinates", trainCoords)
	}
	dim := max(int64(r.Coordinates), trainCoords) // the snapping allowance of the largest release
	if dim > math.MaxInt32 {
		return Certificate{}, fmt.Errorf("dp: range composition: %d noise coordinates is too many", dim)
	}
	p := GaussianPlan{
		Sensitivities: append([]float64{math.Sqrt(2 * float64(len(r.Lo)))}, train.Sensitivities...),
		FailureDelta:  train.FailureDelta,
		Dim:           int(dim),
		Coordinates:   int64(r.Coordinates) + trainCoords,
	}
	sigmas := append([]float64{r.Sigma}, trainSigmas...)
	return CertifyGaussian(p, sigmas, eps, delta)
}
