package dp

import "math"

// Accounting the secure Gaussian noise with the continuous Gaussian's exact
// μ-GDP curve: a total-variation argument.
//
// AddGaussian (noise.go) releases fl(J·g + m·g) with J = round(x/g) and m
// drawn by discreteGaussian (noise_sample.go): N_ℤ(0, s²), s = σ/g ∈
// [2^46, 2^47), truncated to |m| ≤ 36s and with a float64-computed weight.
// The multivariate discrete Gaussian is not known to be exactly μ-GDP, so
// the exact GDP certificate (calibrate.go, accountant_gdp.go) is proven for
// it through the continuous Gaussian, as follows.
//
// Notation. φ_s(x) = e^(−x²/2s²)/(s√(2π)); q(k) = ∫_{k−½}^{k+½} φ_s, the pmf
// of round(Y) for Y ~ N(0, s²) (round to nearest; ties have probability 0);
// p(k) = e^(−k²/2s²)/Z, Z = Σ_k e^(−k²/2s²), the pmf of N_ℤ(0, s²); P̂ the
// pmf the sampler actually draws. TV(P, Q) = ½Σ|P − Q|.
//
// Lemma 1 (rounding). For every s ≥ 1,
//
//	η_r(s) := TV(p, q) ≤ (0.161 + √(1 + ln s)/30)/s²   (roundingTVBound)
//
// which is ≤ 1/s² for 1 ≤ s ≤ 2^900 and ≤ 0.36/s² < 1.2e-28 for s ∈
// [2^46, 2^47). Proof. Triangle inequality through the sampled density φ_s:
//
//	2·TV(p, q) ≤ Σ_k |p(k) − φ_s(k)| + Σ_k |φ_s(k) − q(k)|.
//
// (a) Normalizer. Poisson summation of the Gaussian gives exactly
// Σ_k φ_s(k) = 1 + ε_Z with ε_Z = 2Σ_{j≥1} e^(−2π²s²j²), and p = φ_s/(1+ε_Z),
// so Σ_k |p(k) − φ_s(k)| = Σ_k φ_s(k)·ε_Z/(1+ε_Z) = ε_Z. For s ≥ 1,
// ε_Z ≤ 2.0001·e^(−2π²s²) ≤ 6e-9/s² (s²e^(−2π²s²) decreases for s ≥ 1 and
// e^(−2π²) < 2.7e-9).
// (b) Midpoint rule. φ_s″(x) = φ_s(x)(x²/s² − 1)/s², and |(u − 1)e^(−u/2)| ≤ 1
// for u ≥ 0 (1 at u = 0; the maximum for u > 1 is 2e^(−3/2) at u = 3), so
// M := sup|φ_s″| = 1/(s³√(2π)). Taylor with the Lagrange remainder,
// φ_s(k+t) = φ_s(k) + tφ_s′(k) + ½t²φ_s″(ξ), integrated over t ∈ [−½, ½]
// (the linear term vanishes) gives |q(k) − φ_s(k)| ≤ M·∫t²/2 = M/24.
// (c) Tails. Cut at an integer n ≥ 0: for |k| ≤ n use (b); for k > n,
// Σ_{k>n} q(k) = P(Y > n + ½) and Σ_{k>n} φ_s(k) ≤ ∫_n^∞ φ_s = P(Y > n)
// (φ_s decreases on [n, ∞)); the same for k < −n by symmetry. So
//
//	Σ_k |φ_s(k) − q(k)| ≤ (2n+1)M/24 + 4·Φ̄(n/s),   Φ̄(t) = P(N(0,1) > t).
//
// Altogether, for every integer n ≥ 0 (roundingTVBoundCut),
//
//	η_r(s) ≤ ½ε_Z + (2n+1)/(48√(2π)·s³) + 2Φ̄(n/s).
//
// Take n = ⌈s·t⌉ with t = 2√(1 + ln s): Φ̄(t) ≤ ½e^(−t²/2) gives
// 2Φ̄(n/s) ≤ e^(−2 − 2 ln s) < 0.1354/s², and 2n + 1 ≤ 2st + 3 gives
// (2n+1)/(48√(2π)s³) ≤ (√(1 + ln s)/30.08 + 0.025)/s² for s ≥ 1. The sum
// with ½ε_Z ≤ 3e-9/s² is the bound stated. □
//
// Lemma 2 (the sampler). For s ∈ [2^46, 2^47), the sampler's pmf P̂ has
//
//	η(s) := TV(P̂, q) ≤ η_fp + τ + η_r(s) ≤ SecureGaussianTV = 1.6656e-16.
//
// Proof. TV(P̂, q) ≤ TV(P̂, p_t) + TV(p_t, p) + TV(p, q), p_t = p conditioned
// on the support A = [−24L, 24L) ⊇ [−36s, 36s] (L = ⌈1.5s⌉).
// TV(p_t, p) = p(Aᶜ) = τ < 1e-280 (noise_sample.go). For TV(P̂, p_t): the
// sampler accepts m with weight e^(−γ̂(m)) instead of e^(−γ(m)),
// γ = m²/(2s²), γ̂ = ½·fl(fl(m/s)²) = γ(1+e₁)²(1+e₂) with |eᵢ| ≤ u = 2^−53
// (m and s are exact; every Bernoulli trial is exact), so P̂ = p_t·r/E[r]
// with r(m) = e^(γ−γ̂) and |γ − γ̂| ≤ cγ, c = 3.0001u. Then
// ½Σ|P̂ − p_t| = ½E|r/E[r] − 1| ≤ E|r − 1|/E[r], and |r − 1| ≤ cγ·e^(cγ)
// with cγ < 2.2e-13 on A (γ < 648.01 there), so
// TV(P̂, p_t) ≤ c·E_{p_t}[γ]·e^(4.4e-13). Conditioning on the event of the
// smallest values of m² does not raise its mean, so E_{p_t}[m²] ≤ E_p[m²],
// and Σ_k k²e^(−k²/2s²) ≤ ∫x²e^(−x²/2s²)dx + 2·max_x x²e^(−x²/2s²) =
// s³√(2π) + 4s²/e (a unimodal function on each half-line sums to at most
// its integral plus its maximum), while Z ≥ s√(2π) by (a): E_p[m²] ≤
// s²(1 + 0.59/s), E_{p_t}[γ] ≤ ½(1 + 1e-14). So
// η_fp := TV(P̂, p_t) ≤ 1.50006u < 1.6654e-16. With η_r(s) < 1.2e-28 and τ
// the total is below SecureGaussianTV. (The float64 weight dominates: an
// exactly computed γ would leave η ≈ 1e-28.) □
//
// Theorem (certificate). Let a run draw N noise coordinates in all from
// the secure sampler (N fixed in advance, e.g. Dim per release × releases),
// each for a query whose snapped values J·g have ‖J − J'‖₂·g ≤ Δ'ᵢ on
// neighbours (SnappedL2Sensitivity), releases possibly chosen adaptively.
// Let M' be the same run with each integer noise m replaced by round(Y),
// Y ~ N(0, s²): its output g·(J + round(Y)) = g·round(J + Y) is post-
// processing of J·g + gY, the continuous Gaussian mechanism with noise σ,
// so M' is μ-GDP with μ = √Σ(Δ'ᵢ/σᵢ)² ([DRS19] Thm 2.7, Cor 3.3; maxᵢ for
// disjoint parts), hence (ε, δ_μ(ε))-DP for every ε. Couple M(D) and M'(D)
// one coordinate at a time (the hybrid argument): given everything drawn
// before, the next noise is drawn independently from P̂ in M and from q in
// M', whose TV is ≤ η whatever came before, so TV(M(D), M'(D)) ≤ N·η for
// every D. For any event S,
//
//	P[M(D) ∈ S] ≤ P[M'(D) ∈ S] + Nη ≤ e^ε P[M'(D') ∈ S] + δ_μ(ε) + Nη
//	            ≤ e^ε P[M(D') ∈ S] + δ_μ(ε) + (1 + e^ε)·N·η,
//
// so the run is (ε, δ_μ(ε) + δ_f + (1 + e^ε)·N·η)-DP (δ_f: the failure
// event of the sensitivity bound, as in calibrate.go). Disjoint releases
// (parallel composition): for neighbours differing in part i, every other
// release is the same kernel (given the earlier outputs) on both, so the
// earlier ones give identically distributed prefixes and the later ones
// are post-processing; the argument is needed for release i alone, with
// N = its coordinates and μ = μᵢ, and the worst i bounds the run.
// DiscreteGaussianDelta returns the last term; CertifyGaussian adds it and
// CalibrateGaussian takes it out of δ's budget before calibrating.
//
// Variant (multiplicative float64 error). Split the sampler's distance
// instead: P̂ = p_t·e^(θ(m)) pointwise with |θ(m)| ≤ θ = 4.4e-13
// (noise_sample.go), so every event's probability under the whole run is
// within e^(±Nθ) of the same run with the truncated exact discrete
// Gaussian M_t, and TV(M_t(D), M'(D)) ≤ N·η_r' with η_r' = τ + η_r(s) ≤
// RoundedGaussianTV = 1.2e-28. The same chain as above, with M' (ε₁ − 2Nθ,
// δ_μ(ε₁ − 2Nθ))-DP, gives (ε₁, e^(Nθ)·(δ_μ(ε₁ − 2Nθ) + (1 + e^ε₁)·N·η_r')
// + δ_f)-DP, which is also (ε, ·)-DP for any ε ≥ ε₁. Its δ term is ~10¹²
// times smaller and its ε cost 2Nθ is additive, so it wins for large ε;
// the certificate takes whichever variant certifies more, with
// ε₁ = min(ε, ε_c), ε_c = ln((δ − δ_f)/(4·N·η_r')) (where the δ term reaches
// a quarter of the budget; beyond it, a larger ε₁ costs more δ than it
// gains).
//
// Size, for 10⁴ steps at d = 256 (N = 2.56·10⁶) and δ = 10⁻⁵: the
// total-variation term (1 + e^ε)·N·η is 1.6e-9 at ε = 1 (almost all of it
// η_fp; the rounding alone is ≈ 1e-28 per coordinate); the multiplicative
// variant costs ε 2Nθ = 2.3e-6 and δ a factor e^(Nθ), i.e. ≈ 1e-11, and is
// the one taken. Either way σ moves by ≈ 1e-5 relative or less.

// SecureGaussianTV bounds the total-variation distance between one noise
// draw of AddGaussian (in grid units) and round(N(0, s²)), s = σ/g, for
// every σ (Lemma 2 of the file comment).
const SecureGaussianTV = 1.6656e-16

// RoundedGaussianTV bounds τ + η_r(s) for s ∈ [2^46, 2^47): the distance
// between the truncated exact discrete Gaussian and round(N(0, s²)) (Lemma 1
// and the truncation mass τ < 1e-280 of the file comment).
const RoundedGaussianTV = 1.2e-28

// SecureGaussianLogRatio is θ: the sampler's pmf is within a factor
// e^(±θ) of the truncated discrete Gaussian's (noise_sample.go).
const SecureGaussianLogRatio = 4.4e-13

// roundingTVBoundCut is Lemma 1's bound before the choice of the cut n:
// ½ε_Z + (2n+1)/(48√(2π)s³) + 2Φ̄(n/s), for s ≥ 1 and an integer n ≥ 0,
// rounded up (a few ulps: every term is computed with relative error far
// below the 1.01 factor applied).
func roundingTVBoundCut(s, n float64) float64 {
	halfEZ := 0.0
	for j := 1.0; j < 10; j++ {
		halfEZ += math.Exp(-2 * math.Pi * math.Pi * s * s * j * j)
	}
	mid := (2*n + 1) / (48 * math.Sqrt(2*math.Pi) * s * s * s)
	tail := math.Erfc(n / s / math.Sqrt2) // 2Φ̄(n/s)
	return 1.01 * (halfEZ + mid + tail)
}

// roundingTVBound is Lemma 1's closed form (0.161 + √(1 + ln s)/30)/s², an
// upper bound on TV(N_ℤ(0, s²), round(N(0, s²))) for s ≥ 1.
func roundingTVBound(s float64) float64 {
	return (0.161 + math.Sqrt(1+math.Log(s))/30) / (s * s) * (1 + 1e-15)
}

// DiscreteGaussianDelta returns (1 + e^ε)·N·SecureGaussianTV, rounded up:
// what a run that draws N coordinates from the secure Gaussian sampler adds
// to the δ of its continuous-Gaussian (μ-GDP) certificate at ε (see the
// file comment). It is 0 for N = 0 and +Inf for ε = +Inf.
func DiscreteGaussianDelta(eps float64, coordinates int64) float64 {
	if coordinates <= 0 {
		return 0
	}
	return acctUp((1+math.Exp(eps))*float64(coordinates)*SecureGaussianTV, 4)
}
