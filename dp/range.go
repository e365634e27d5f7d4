package dp

import (
	"fmt"
	"math"
)

// Private feature ranges: what a private run uses to scale its features
// when no public schema gives their bounds.
//
// # Mechanism
//
// For every feature j, the records' values are counted in a public grid
// of B = 2K + 1 bins by sign and octave (K = MaxExp − MinExp):
//
//	centre bin           |x| ≤ 2^MinExp
//	positive bin k       2^(k−1) < x ≤ 2^k      (k = MinExp+1 … MaxExp; x > 2^MaxExp counts in k = MaxExp)
//	negative bin k       −2^k ≤ x < −2^(k−1)    (mirrored)
//
// The d·B counts are released once, each plus independent noise: Gaussian
// N(0, σ²) for δ > 0 (σ from AnalyticGaussianSigma) or for a Gaussian-DP
// request μ (σ = Δ′/μ, see Privacy), Laplace(b) for δ = 0. A feature's
// range is then read off its noisy histogram alone (post-processing):
//
//  1. Detection. A bin is detected when its noisy count exceeds the
//     threshold τ, set so that with probability ≥ 1 − β no empty bin of
//     any feature exceeds it (a Gaussian or Laplace tail bound with a
//     union over d·B bins): a range is never stretched by noise alone, and
//     values held by fewer than about τ records (outliers, heavy tails) do
//     not stretch it either.
//  2. Trimmed quantiles. Over the detected bins only (the others count 0),
//     lo and hi are the q and 1 − q quantiles (q = Trim, default 0.02) of
//     the noisy counts, each interpolated linearly inside its bin: a
//     central interval holding about 1 − 2q of the detected records, so
//     the range follows the bulk of the data rather than its extremes.
//     Values outside [lo, hi] are clipped to it by the per-record map.
//
// A feature with no detected bin gets the public fallback [−1, 1] (Found
// false), i.e. it is left unscaled and clipped, as --scale none would.
//
// # Privacy (replace-one neighbours, the relation of every pairfed
// mechanism)
//
// Each record adds 1 to exactly one bin per feature. Replacing one record
// changes, per feature, at most two counts by 1 each (one down, one up):
// ℓ2 change ≤ √2 and ℓ1 change ≤ 2 per feature, hence for the whole
// d·B-vector Δ₂ = √(2d) and Δ₁ = 2d. The Gaussian release of a Δ₂
// statistic with σ = AnalyticGaussianSigma(ε, δ, Δ₂′) is (ε, δ)-DP
// ([BW18] Thm 8), and the Laplace release with b = Δ₁′/ε is ε-DP; Δ′ is
// the sensitivity after the mechanisms' snapping to their grid g
// (SnappedL2Sensitivity / SnappedL1Sensitivity: counts are integers and g
// is a power of two ≤ 1 here, so the snapping is exact, but the general
// bound is used). Everything after the release — thresholding, the
// fallback, the scaling and clipping of each record with the released
// bounds — is post-processing. The number of records n is not used.
// With a Gaussian-DP request (RangeConfig.Mu = μ > 0) σ = Δ₂′/μ, so the
// release is μ-GDP ([DRS19] Cor 2.13: N(0, σ²) on a Δ₂ query is
// (Δ₂/σ)-GDP, tight), and it composes exactly with a Gaussian training
// mechanism: μ² = μ_range² + μ_train² (SplitGDP and CertifyWithRanges in
// range_gdp.go). Otherwise the release is (ε, δ)-DP as requested and
// composes with the training mechanism by adaptive basic composition
// (Dwork & Roth 2014, Thm 3.16): the run is (ε_range + ε_train,
// δ_range + δ_train)-DP; SplitBudget gives the shares.
// The discrete Gaussian's documented deviations (noise.go: ε + 2Nθ with
// N = d·B noise coordinates, θ = 4.4e-13) add at most 1e-8 to ε for
// d·B ≤ 10^4 under (ε, δ) calibration; under μ calibration the
// composed certificate (CertifyWithRanges) counts the range release's
// N = d·B coordinates in its discrete-noise term. Release states the
// release for the accountants.
//
// # Accuracy
//
// A bin is detected when its count exceeds τ + a few σ: for the Gaussian,
// σ = √(2d)/μ (μ-GDP) or
// σ ≈ √(2d)·√(2 ln(1.25/δ))/ε, so the estimate needs roughly
// n ≳ 10·√d·√(ln(1/δ))/ε records in the extreme bins. It suits large n
// (ijcnn1: d = 22, n ≈ 40 000) and fails gracefully (fallback [−1, 1]) on
// small ones, where a public schema is the answer (see schemas/).

// RangeConfig is the request of EstimateRanges.
type RangeConfig struct {
	// Epsilon and Delta are the budget of the whole release (all d
	// features together): Delta > 0 uses Gaussian noise, Delta = 0
	// Laplace noise (pure ε-DP).
	Epsilon, Delta float64
	// Mu > 0 asks for a μ-GDP Gaussian release instead (Epsilon and Delta
	// must then be 0): σ = Δ₂′/μ, for exact composition with a Gaussian
	// training mechanism (range_gdp.go).
	Mu float64
	// MinExp and MaxExp delimit the octave grid (defaults −12 and 30: the
	// centre bin holds |x| ≤ 2^−12 ≈ 2.4e-4, the top bins start at
	// 2^29 ≈ 5.4e8).
	MinExp, MaxExp int
	// Beta bounds the probability that noise alone puts some empty bin
	// above the threshold (default 0.01).
	Beta float64
	// Trim is q: lo and hi are the q and 1 − q quantiles of the detected
	// bins' noisy counts (default DefaultRangeTrim; in [0, 0.5)). A
	// negative value means 0 (the edges of the outermost detected bins).
	Trim float64
}

// DefaultRangeTrim is the default q of RangeConfig.Trim: the estimated
// range is the central 96 % of the detected records (2nd to 98th
// percentile), by the rule that clipping at most 2 % of a feature's
// records at each end costs a linear ranker little while one heavy tail
// left in would shrink every other record's scaled values.
const DefaultRangeTrim = 0.02

// Ranges is the outcome of EstimateRanges: differentially private
// per-feature bounds and the statement of the release.
type Ranges struct {
	Lo []float64 `json:"lo"`
	Hi []float64 `json:"hi"`
	// Found[j] is false when no bin of feature j passed the threshold and
	// the fallback [−1, 1] was used.
	Found []bool `json:"found"`
	// Mechanism is "gaussian" or "laplace"; Sigma is σ or b.
	Mechanism string  `json:"mechanism"`
	Sigma     float64 `json:"sigma"`
	// Threshold is τ; Bins is B per feature.
	Threshold float64 `json:"threshold"`
	Bins      int     `json:"bins"`
	// Epsilon, Delta: the guarantee of the release (the request); both 0
	// for a μ-GDP release (Mu).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Mu is the release's Gaussian-DP μ when it was calibrated by μ.
	Mu float64 `json:"mu,omitempty"`
	// Coordinates is the number of noise coordinates drawn (d·B).
	Coordinates int `json:"coordinates"`
	// Trim is the q used.
	Trim float64 `json:"trim"`
	// Release describes the noisy histogram for the accountants.
	Release Release `json:"release"`
	// Secure is the noise source's Secure(): false for seeded noise.
	Secure bool `json:"secure"`
}

// DefaultRangeShare is the share of a private run's budget spent on
// EstimateRanges when no schema gives the feature bounds: 10 %. With exact
// Gaussian-DP composition (SplitGDP) it is a share of μ², so the training
// mechanism keeps √0.9 ≈ 95 % of μ (its σ grows by 5.4 %) while the ranges
// get √0.1 ≈ 32 % of μ; with basic composition (SplitBudget) it is a share
// of ε and δ, which keeps the training noise within ≈ 11 % of what the
// full budget would give (σ ∝ 1/ε). Fixed by this rule, not fitted to any
// dataset.
const DefaultRangeShare = 0.1

// SplitBudget splits a request (ε, δ) into the range estimate's share and
// the rest, for adaptive basic composition: (εr, δr) = share·(ε, δ) and
// (εt, δt) = (ε − εr, δ − δr), with εr + εt ≤ ε and δr + δt ≤ δ in exact
// arithmetic (BudgetRest: the float sum alone could round an excess of
// less than an ulp away). share must be in (0, 1).
func SplitBudget(eps, delta, share float64) (rangeEps, rangeDelta, restEps, restDelta float64, err error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, 0, 0, 0, fmt.Errorf("dp: range budget: ε = %v must be finite and > 0", eps)
	}
	if !(delta >= 0 && delta < 1) {
		return 0, 0, 0, 0, fmt.Errorf("dp: range budget: δ = %v must be in [0, 1)", delta)
	}
	if !(share > 0 && share < 1) {
		return 0, 0, 0, 0, fmt.Errorf("dp: range budget: share %v must be in (0, 1) (e.g. 0.1 for 10 %% of ε and δ)", share)
	}
	rangeEps, rangeDelta = eps*share, delta*share
	restEps, restDelta = BudgetRest(eps, rangeEps), BudgetRest(delta, rangeDelta)
	return rangeEps, rangeDelta, restEps, restDelta, nil
}

// EstimateRanges releases differentially private per-feature bounds of n
// records of dimension d, read through rowTo(dst, i), which must return
// the i-th record's d values (dst may be used as storage). See the file
// comment for the mechanism, its privacy proof and its accuracy. Noise is
// drawn from noise once, after every count is computed and checked
// (release once). Non-finite values are an error.
func EstimateRanges(n, d int, rowTo func(dst []float64, i int) []float64, cfg RangeConfig, noise Noise) (*Ranges, error) {
	if n < 0 || d < 1 {
		return nil, fmt.Errorf("dp: range estimate: n = %d, d = %d (need d ≥ 1)", n, d)
	}
	switch {
	case cfg.Mu != 0:
		if !(cfg.Mu > 0) || math.IsInf(cfg.Mu, 0) {
			return nil, fmt.Errorf("dp: range estimate: μ = %v must be finite and > 0", cfg.Mu)
		}
		if cfg.Epsilon != 0 || cfg.Delta != 0 {
			return nil, fmt.Errorf("dp: range estimate: give either μ (= %v) or (ε, δ) = (%v, %v), not both", cfg.Mu, cfg.Epsilon, cfg.Delta)
		}
	case !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0):
		return nil, fmt.Errorf("dp: range estimate: ε = %v must be finite and > 0", cfg.Epsilon)
	case !(cfg.Delta >= 0 && cfg.Delta < 1):
		return nil, fmt.Errorf("dp: range estimate: δ = %v must be in [0, 1)", cfg.Delta)
	}
	switch {
	case cfg.Trim == 0:
		cfg.Trim = DefaultRangeTrim
	case cfg.Trim < 0:
		cfg.Trim = 0
	case !(cfg.Trim < 0.5):
		return nil, fmt.Errorf("dp: range estimate: trim q = %v must be below 0.5 (e.g. 0.02 for the 2nd to 98th percentile)", cfg.Trim)
	}
	if err := cfg.gridDefaults(); err != nil {
		return nil, err
	}
	K := cfg.MaxExp - cfg.MinExp
	B := 2*K + 1
	if d > (1<<26)/B {
		return nil, fmt.Errorf("dp: range estimate: d = %d features × %d bins is too many noisy counts", d, B)
	}
	counts, err := rangeCounts(n, d, rowTo, cfg.MinExp, cfg.MaxExp)
	if err != nil {
		return nil, err
	}
	coords := d * B
	r := &Ranges{Bins: B, Epsilon: cfg.Epsilon, Delta: cfg.Delta, Mu: cfg.Mu, Secure: noise.Secure(),
		Coordinates: coords, Trim: cfg.Trim,
		Lo: make([]float64, d), Hi: make([]float64, d), Found: make([]bool, d)}
	nz, err := rangeNoise(d, cfg)
	if err != nil {
		return nil, err
	}
	r.Mechanism, r.Sigma, r.Threshold, r.Release = nz.mechanism, nz.scale, nz.threshold, nz.release
	if nz.mechanism == "gaussian" {
		noise.AddGaussian(counts, nz.scale)
	} else {
		noise.AddLaplace(counts, nz.scale)
	}
	// Post-processing of the noisy counts only.
	for j := 0; j < d; j++ {
		r.Lo[j], r.Hi[j], r.Found[j] = trimmedRange(counts[j*B:(j+1)*B], r.Threshold, cfg.Trim, cfg.MinExp, cfg.MaxExp)
	}
	return r, nil
}

// gridDefaults fills and checks the octave grid and β.
func (cfg *RangeConfig) gridDefaults() error {
	if cfg.MinExp == 0 && cfg.MaxExp == 0 {
		cfg.MinExp, cfg.MaxExp = -12, 30
	}
	if cfg.MinExp >= cfg.MaxExp || cfg.MinExp < -1000 || cfg.MaxExp > 1000 {
		return fmt.Errorf("dp: range estimate: octave grid [%d, %d] must have MinExp < MaxExp within ±1000", cfg.MinExp, cfg.MaxExp)
	}
	if cfg.Beta == 0 {
		cfg.Beta = 0.01
	}
	if !(cfg.Beta > 0 && cfg.Beta < 1) {
		return fmt.Errorf("dp: range estimate: β = %v must be in (0, 1)", cfg.Beta)
	}
	return nil
}

// RangeNoise returns the noise scale (σ, or b for Laplace) and the
// detection threshold τ that EstimateRanges would use for d features
// under cfg — public numbers, computed before any record is read (the
// rule of --refine-bounds reads them).
func RangeNoise(d int, cfg RangeConfig) (scale, threshold float64, err error) {
	if d < 1 {
		return 0, 0, fmt.Errorf("dp: range estimate: d = %d (need d ≥ 1)", d)
	}
	if err := cfg.gridDefaults(); err != nil {
		return 0, 0, err
	}
	nz, err := rangeNoise(d, cfg)
	return nz.scale, nz.threshold, err
}

// rangeNoiseSpec is the noise of EstimateRanges' release for d features
// (its calibration, from public numbers only).
type rangeNoiseSpec struct {
	mechanism        string // "gaussian" or "laplace"
	scale, threshold float64
	release          Release
}

// rangeNoise calibrates the release of d·B noisy counts (file comment):
// σ (or b) and the detection threshold τ. cfg must be checked and its
// defaults filled (EstimateRanges).
func rangeNoise(d int, cfg RangeConfig) (rangeNoiseSpec, error) {
	coords := d * (2*(cfg.MaxExp-cfg.MinExp) + 1)
	q := cfg.Beta / float64(coords) // per-bin false-positive probability
	if cfg.Delta > 0 || cfg.Mu > 0 {
		l2 := math.Sqrt(2 * float64(d))
		var sigma float64
		var err error
		if cfg.Mu > 0 {
			sigma, err = muGaussianSigma(cfg.Mu, l2, coords)
		} else {
			sigma, err = snappedGaussianSigma(cfg.Epsilon, cfg.Delta, l2, coords)
		}
		if err != nil {
			return rangeNoiseSpec{}, fmt.Errorf("dp: range estimate: %w", err)
		}
		// P(N(0, σ²) > τ) = q  ⇔  τ = σ·√2·erfcinv(2q).
		return rangeNoiseSpec{mechanism: "gaussian", scale: sigma, threshold: sigma * math.Sqrt2 * math.Erfcinv(2*q),
			release: Release{Mechanism: MechanismGaussian, Sigma: sigma,
				Sensitivity: SnappedL2Sensitivity(l2, GaussianGranularity(sigma), coords), Label: "feature ranges"}}, nil
	}
	l1 := 2 * float64(d)
	// b = Δ₁′/ε with Δ₁′ snapped to b's own grid: iterate to the fixed
	// point, then round up until the float64 quotient certifies ε.
	b := l1 / cfg.Epsilon
	for i := 0; i < 8; i++ {
		need := SnappedL1Sensitivity(l1, LaplaceGranularity(b), coords) / cfg.Epsilon
		if need <= b {
			break
		}
		b = need
	}
	for SnappedL1Sensitivity(l1, LaplaceGranularity(b), coords)/b > cfg.Epsilon {
		b = math.Nextafter(b, math.Inf(1))
	}
	// P(Laplace(b) > τ) = e^(−τ/b)/2 = q  ⇔  τ = b·ln(1/(2q)).
	return rangeNoiseSpec{mechanism: "laplace", scale: b, threshold: b * math.Log(1/(2*q)),
		release: Release{Mechanism: MechanismLaplace, Scale: b,
			Sensitivity: SnappedL1Sensitivity(l1, LaplaceGranularity(b), coords), Label: "feature ranges"}}, nil
}

// trimmedRange reads one feature's range off its noisy histogram h (file
// comment, steps 1 and 2): the q and 1 − q quantiles of the counts of the
// bins above tau (the others count 0), interpolated linearly in their
// bins; the fallback [−1, 1] and false when no bin is above tau.
func trimmedRange(h []float64, tau, q float64, minExp, maxExp int) (lo, hi float64, found bool) {
	total := 0.0
	first, last := -1, -1
	for k, c := range h {
		if c > tau {
			total += c
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 {
		return -1, 1, false
	}
	// at returns the point below which a share p of the detected mass lies.
	at := func(p float64) float64 {
		target, cum := p*total, 0.0
		for k := first; k <= last; k++ {
			c := h[k]
			if !(c > tau) {
				continue
			}
			if cum+c >= target {
				a, b := rangeEdges(k, minExp, maxExp)
				f := (target - cum) / c
				return a + min(max(f, 0), 1)*(b-a)
			}
			cum += c
		}
		_, b := rangeEdges(last, minExp, maxExp)
		return b
	}
	lo, hi = at(q), at(1-q)
	if q == 0 {
		lo, _ = rangeEdges(first, minExp, maxExp)
		_, hi = rangeEdges(last, minExp, maxExp)
	}
	if !(lo < hi) { // one narrow bin and rounding: keep its edges
		lo, _ = rangeEdges(first, minExp, maxExp)
		_, hi = rangeEdges(last, minExp, maxExp)
	}
	return lo, hi, true
}

// muGaussianSigma returns the smallest σ (up to a few ulps) with
// Δ₂′/σ ≤ mu, Δ₂′ the sensitivity l2 after snapping to σ's own grid over
// coords coordinates (SnappedL2Sensitivity): the noise of a mu-GDP release.
func muGaussianSigma(mu, l2 float64, coords int) (float64, error) {
	sigma := l2 / mu
	for i := 0; i < 64; i++ {
		if !(sigma >= MinScale && sigma <= MaxScale) {
			return 0, fmt.Errorf("σ = %v for μ = %v is outside the sampler's range", sigma, mu)
		}
		need := SnappedL2Sensitivity(l2, GaussianGranularity(sigma), coords)
		if need/sigma <= mu {
			return sigma, nil
		}
		sigma = math.Max(need/mu, math.Nextafter(sigma, math.Inf(1)))
	}
	return 0, fmt.Errorf("σ calibration did not settle for μ = %v", mu)
}

// rangeCounts returns the d·B bin counts (feature-major) that
// EstimateRanges releases: each record adds 1 to one bin per feature.
func rangeCounts(n, d int, rowTo func(dst []float64, i int) []float64, minExp, maxExp int) ([]float64, error) {
	B := 2*(maxExp-minExp) + 1
	counts := make([]float64, d*B)
	row := make([]float64, d)
	for i := 0; i < n; i++ {
		x := rowTo(row, i)
		if len(x) != d {
			return nil, fmt.Errorf("dp: range estimate: record %d has %d values, want %d", i, len(x), d)
		}
		for j, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("dp: range estimate: record %d, feature %d: value %v is not finite", i, j+1, v)
			}
			counts[j*B+rangeBin(v, minExp, maxExp)]++
		}
	}
	return counts, nil
}

// snappedGaussianSigma returns the smallest σ (up to AnalyticGaussianSigma's
// rounding) that is (ε, δ)-DP for the sensitivity l2 after snapping to σ's
// own grid over coords coordinates.
func snappedGaussianSigma(eps, delta, l2 float64, coords int) (float64, error) {
	sigma, err := AnalyticGaussianSigma(eps, delta, l2)
	if err != nil {
		return 0, err
	}
	for i := 0; i < 8; i++ {
		need := SnappedL2Sensitivity(l2, GaussianGranularity(sigma), coords)
		s, err := AnalyticGaussianSigma(eps, delta, need)
		if err != nil {
			return 0, err
		}
		if s <= sigma {
			return sigma, nil
		}
		sigma = s
	}
	return 0, fmt.Errorf("σ calibration did not settle for ε = %v, δ = %v", eps, delta)
}

// rangeBin returns the bin of v in the layout of EstimateRanges: bins
// 0 … K−1 are negative octaves from −2^MaxExp up, K is the centre bin and
// K+1 … 2K the positive octaves up to 2^MaxExp (bins sorted by value).
func rangeBin(v float64, minExp, maxExp int) int {
	K := maxExp - minExp
	a := math.Abs(v)
	if a <= math.Ldexp(1, minExp) {
		return K
	}
	// Smallest k with a ≤ 2^k: a = f·2^e with f ∈ [½, 1), so k = e unless
	// f = ½ exactly (a = 2^(e−1)).
	f, e := math.Frexp(a)
	k := e
	if f == 0.5 {
		k = e - 1
	}
	k = min(k, maxExp) // above 2^MaxExp: the top bin
	off := k - minExp  // 1 … K
	if v > 0 {
		return K + off
	}
	return K - off
}

// rangeEdges returns the lower and upper edges of bin b.
func rangeEdges(b, minExp, maxExp int) (lo, hi float64) {
	K := maxExp - minExp
	switch {
	case b == K:
		return -math.Ldexp(1, minExp), math.Ldexp(1, minExp)
	case b > K:
		k := minExp + (b - K)
		return math.Ldexp(1, k-1), math.Ldexp(1, k)
	default:
		k := minExp + (K - b)
		return -math.Ldexp(1, k), -math.Ldexp(1, k-1)
	}
}
