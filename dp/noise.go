package dp

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
)

// Noise mechanisms: the pairwise.Noise implementation.
//
// What is released. For a noise scale σ (Gaussian) or b (Laplace, ℓ2-Laplace)
// let g = 2^(⌊log₂ scale⌋ − 46) be its granularity (GaussianGranularity,
// LaplaceGranularity), so scale/g ∈ [2^46, 2^47). Every entry x of dst is
// replaced by
//
//	fl(J·g + m·g),   J = round(x/g) (half away from zero),
//
// where m is the integer noise (noise_sample.go) and fl is float64 rounding
// to nearest. Both J·g and m·g are exact float64 values and the sum is one
// IEEE addition, i.e. the exact real J·g + m·g rounded once (addOnGrid; when
// |m| ≥ 2^53 the same rounding is done with math/big). The output is
// therefore a deterministic function of the integer J + m alone: post-
// processing of an integer-valued mechanism, so the low-order bits of the
// float64 carry nothing about x beyond J + m (the floating-point attack of
// Mironov, CCS 2012, needs exactly such bits). Every output is a multiple
// of g.
//
// The price of rounding x. |J(x) − J(x')| ≤ |x − x'|/g + 1 per coordinate,
// so rounding adds at most g per coordinate to the sensitivity: a query of
// ℓ2 sensitivity Δ₂ released in d coordinates has ‖J − J'‖₂·g ≤ Δ₂ + g√d,
// and of ℓ1 sensitivity Δ₁, ‖J − J'‖₁·g ≤ Δ₁ + g·d (SnappedL2Sensitivity,
// SnappedL1Sensitivity). With g ≤ scale·2^−46 this is, in privacy terms:
//
//   - AddLaplace: m is exactly the discrete Laplace P(m) ∝ exp(−|m|g/b), whose
//     privacy loss for a shift of |J−J'|₁ grid steps is at most |J−J'|₁·g/b;
//     so the release is pure ε'-DP with ε' = (Δ₁ + g·d)/b ≤ Δ₁/b + d·2^−46.
//     No truncation, no floating-point approximation.
//   - AddGaussian: m is the discrete Gaussian N_ℤ(0, s²), s = σ/g, with two
//     documented deviations (discreteGaussian): support |m| ≤ 36s, removing
//     mass τ < 1e-280 per coordinate, and pmf within a factor e^(±θ),
//     θ = 4.4e-13, of the truncated one. The ideal (untruncated) discrete
//     Gaussian mechanism on J has, for an integer shift J − J', Rényi
//     divergences D_α ≤ α‖J − J'‖₂²/(2s²) ≤ αΔ'²/(2σ²) with
//     Δ' = Δ₂ + g√d — the continuous Gaussian's, i.e. ρ-zCDP with
//     ρ = Δ'²/(2σ²) (CKS20 §2 for one coordinate; divergences of independent
//     coordinates add). If the ideal mechanisms of a whole run, N noise
//     coordinates in all, are (ε, δ)-DP, the real run is
//     (ε + 2Nθ, e^(Nθ)·(δ + e^ε·N·τ)/(1 − N·τ))-DP: every event's probability
//     under the real noise is within e^(±Nθ) of its probability under the
//     truncated noise, which is within N·τ of the ideal. So an RDP/zCDP
//     accountant's (ε, δ) for σ and Δ' holds with ε raised by
//     2Nθ ≈ N·8.8e-13 (e.g. 2.3e-6 for 10^4 steps at d = 256).
//     The exact μ-GDP certificate (calibrate.go) is for the continuous
//     Gaussian, which the multivariate discrete one is not known to match;
//     discrete_gdp.go bounds the total-variation distance of each draw from
//     round(N(0, s²)) (SecureGaussianTV) and proves the run
//     (ε, δ_μ(ε) + δ_f + (1 + e^ε)·N·SecureGaussianTV)-DP (or a variant
//     with the θ factor kept multiplicative); CertifyGaussian and
//     CalibrateGaussian include that term.
//   - AddL2Laplace: not covered by a floating-point proof; see its comment.
//
// Scales must lie in [MinScale, MaxScale] (so g and every m·g are normal,
// finite float64 values); values in dst must be finite.

const (
	// MinScale and MaxScale bound the σ and b the mechanisms accept.
	MinScale = 0x1p-900
	MaxScale = 0x1p900
	// gridBits is log₂ of the minimum scale/granularity ratio: scale/g ∈
	// [2^gridBits, 2^(gridBits+1)).
	gridBits = 46
	// laplaceShift is log₂ of the denominator in the discrete Laplace scale
	// t/2^laplaceShift = b/g, with t the 53-bit integer mantissa of b.
	laplaceShift = 52 - gridBits
)

// Mechanism adds privacy noise; it implements Noise. It is safe for
// concurrent use: calls are serialized.
type Mechanism struct {
	mu      sync.Mutex
	r       bitSource
	rng     *rand.Rand // continuous draws of AddL2Laplace, driven by the same source
	secure  bool
	name    string
	scratch []float64
}

var _ Noise = (*Mechanism)(nil)

// NewSecureNoise returns the mechanism for private runs: randomness from
// crypto/rand (NewSecureSource), integer noise on a 2^k grid. Secure() is
// true.
func NewSecureNoise() Noise {
	return newMechanism(NewSecureSource(), true,
		"secure (crypto/rand): exact discrete Gaussian/Laplace on a 2^k grid (snapped); ℓ2-Laplace float64, snapped")
}

// NewSeededNoise returns a reproducible mechanism for tests and labelled
// non-private experiments: the same samplers driven by NewSeededSource(seed).
// Anyone who knows the seed can subtract the noise, so Secure() is false and
// runs using it are not private.
func NewSeededNoise(seed uint64) Noise {
	return newMechanism(NewSeededSource(seed), false,
		fmt.Sprintf("seeded (NOT private; PCG seed %d): discrete Gaussian/Laplace on a 2^k grid; ℓ2-Laplace float64, snapped", seed))
}

func newMechanism(src Source, secure bool, name string) *Mechanism {
	return &Mechanism{r: bitSource{src: src}, rng: rand.New(src), secure: secure, name: name}
}

// Secure reports whether the randomness is cryptographically secure
// (crypto/rand). AddGaussian and AddLaplace then resist floating-point attacks
// as the file comment proves; AddL2Laplace has no such proof (see its
// comment), whatever the source.
func (m *Mechanism) Secure() bool { return m.secure }

// Name describes the source and samplers.
func (m *Mechanism) Name() string { return m.name }

// GaussianGranularity returns the grid g = 2^(⌊log₂ σ⌋ − 46) of AddGaussian:
// σ/g ∈ [2^46, 2^47), and every value AddGaussian writes is a multiple of g.
// It panics if σ is not in [MinScale, MaxScale].
func GaussianGranularity(sigma float64) float64 {
	checkScale("GaussianGranularity", "σ", sigma)
	return granularity(sigma)
}

// LaplaceGranularity returns the grid g = 2^(⌊log₂ b⌋ − 46) of AddLaplace and
// AddL2Laplace: b/g ∈ [2^46, 2^47), and every value they write is a multiple
// of g. It panics if b is not in [MinScale, MaxScale].
func LaplaceGranularity(b float64) float64 {
	checkScale("LaplaceGranularity", "b", b)
	return granularity(b)
}

// SnappedL2Sensitivity returns Δ₂ + g√d: the ℓ2 sensitivity of a d-coordinate
// query of ℓ2 sensitivity l2 after its values are rounded to the grid g, as
// the mechanisms do. Accountants that want the exact guarantee use it in
// place of Δ₂ (the difference is ≤ √d·2^−46 times the noise scale).
func SnappedL2Sensitivity(l2, g float64, d int) float64 {
	return l2 + g*math.Sqrt(float64(d))
}

// SnappedL1Sensitivity returns Δ₁ + g·d, the ℓ1 analogue of
// SnappedL2Sensitivity (for AddLaplace).
func SnappedL1Sensitivity(l1, g float64, d int) float64 {
	return l1 + g*float64(d)
}

// granularity is 2^(⌊log₂ x⌋ − gridBits) for a normal positive x.
func granularity(x float64) float64 {
	_, e := math.Frexp(x) // x = f·2^e, f ∈ [1/2, 1): ⌊log₂ x⌋ = e−1
	return math.Ldexp(1, e-1-gridBits)
}

// checkScale panics unless MinScale ≤ x ≤ MaxScale (which rejects NaN, ±Inf
// and x ≤ 0). A bad scale is a programmer error: callers validate ε, δ and
// sensitivities first, and σ = 0 is never "no noise" here.
func checkScale(fn, what string, x float64) {
	if !(x >= MinScale && x <= MaxScale) {
		panic(fmt.Sprintf("dp: %s: %s = %v must be finite and in [2^-900, 2^900]", fn, what, x))
	}
}

// checkFinite panics if some entry of dst is NaN or ±Inf: such a value has no
// bounded sensitivity, and releasing it would reveal it. It runs before any
// entry is changed.
func checkFinite(fn string, dst []float64) {
	for i, x := range dst {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			panic(fmt.Sprintf("dp: %s: dst[%d] = %v is not finite", fn, i, x))
		}
	}
}

// AddGaussian adds independent N(0, σ²) noise to every entry of dst, as the
// discrete Gaussian N_ℤ(0, (σ/g)²) scaled by g = GaussianGranularity(σ),
// after rounding each entry to a multiple of g (see the file comment for the
// exact guarantee). It panics if σ is not in [MinScale, MaxScale] or an entry
// of dst is not finite.
func (m *Mechanism) AddGaussian(dst []float64, sigma float64) {
	checkScale("AddGaussian", "σ", sigma)
	checkFinite("AddGaussian", dst)
	g := granularity(sigma)
	s := sigma / g // exact: g is a power of two; s ∈ [2^46, 2^47)
	L := gaussBlockLen(s)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range dst {
		neg, mag := m.r.discreteGaussian(s, L)
		dst[i] = addOnGrid(roundToGrid(x, g), neg, 0, mag, g)
	}
}

// AddLaplace adds independent Laplace(0, b) noise to every entry of dst, as
// the discrete Laplace P(m) ∝ exp(−|m|g/b) scaled by
// g = LaplaceGranularity(b), after rounding each entry to a multiple of g
// (see the file comment). It panics if b is not in [MinScale, MaxScale] or an
// entry of dst is not finite.
func (m *Mechanism) AddLaplace(dst []float64, b float64) {
	checkScale("AddLaplace", "b", b)
	checkFinite("AddLaplace", dst)
	g := granularity(b)
	// b = f·2^e with f ∈ [1/2, 1): t = f·2^53 is b's integer mantissa and
	// b/g = f·2^47 = t/2^6 exactly.
	f, _ := math.Frexp(b)
	t := uint64(math.Ldexp(f, 53))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range dst {
		neg, hi, lo := m.r.discreteLaplace(t, laplaceShift)
		dst[i] = addOnGrid(roundToGrid(x, g), neg, hi, lo, g)
	}
}

// AddL2Laplace adds z with density ∝ exp(−‖z‖₂/b) to dst: ‖z‖ = b·(E₁+…+E_d)
// with E_i independent Exp(1) (so ‖z‖ ~ Gamma(d, b)), direction a normalized
// vector of independent N(0, 1) (uniform on the sphere). The E_i and N(0, 1)
// are math/rand/v2's ziggurat samplers driven by the mechanism's source.
//
// Snapping: each entry x and each coordinate z_i are rounded to multiples of
// g = LaplaceGranularity(b) (x̃ = round_g(x), w = round_g(z)) and x̃ + w is
// released (one IEEE addition: exact, or the exact sum correctly rounded).
// For an ideal real-valued z this is ε-DP with ε = (Δ₂ + g√d)/b
// (SnappedL2Sensitivity): w takes the value v with probability
// P(z ∈ C(v)), C(v) the grid cell rounding to v, and for a grid shift δ,
// C(v − δ) = C(v) − δ up to a null set, so P(w = v − δ) = ∫_C(v) p(y − δ) dy
// ≤ e^(‖δ‖₂/b)·P(w = v) by the triangle inequality; δ = x̃ − x̃' has
// ‖δ‖₂ ≤ Δ₂ + g√d.
//
// Unlike AddGaussian and AddLaplace, this is NOT proven resistant to
// floating-point attacks: z is computed in float64, and no bound is known on
// how far the distribution of round_g(computed z) is from round_g(ideal z).
// Snapping removes the low-order bits that Mironov's attack reads, but only
// heuristically. The randomness is as secure as the source. It panics if b is
// not in [MinScale, MaxScale] or an entry of dst is not finite.
func (m *Mechanism) AddL2Laplace(dst []float64, b float64) {
	checkScale("AddL2Laplace", "b", b)
	checkFinite("AddL2Laplace", dst)
	d := len(dst)
	if d == 0 {
		return
	}
	g := granularity(b)
	m.mu.Lock()
	defer m.mu.Unlock()
	if cap(m.scratch) < d {
		m.scratch = make([]float64, d)
	}
	dir := m.scratch[:d]
	var norm2 float64
	for norm2 == 0 { // a zero vector has probability 0; redraw it
		norm2 = 0
		for i := range dir {
			dir[i] = m.rng.NormFloat64()
			norm2 += dir[i] * dir[i]
		}
	}
	var radius float64
	for range d {
		radius += m.rng.ExpFloat64()
	}
	scale := b * radius / math.Sqrt(norm2)
	for i, x := range dst {
		// Both terms are multiples of g: one IEEE addition rounds their
		// exact sum.
		dst[i] = roundToGrid(x, g) + roundToGrid(scale*dir[i], g)
	}
}

// roundToGrid returns J·g with J = round(x/g) (half away from zero), for a
// finite x and a power of two g. If |x| ≥ 2^52·g, x is already a multiple of
// g (its ulp is ≥ g) and is returned as is; otherwise x/g is exact (or
// underflows only when |x/g| < 2^−1022, which rounds to 0 anyway) and so is
// J·g. A zero result is +0, so the sign of a small x is not kept.
func roundToGrid(x, g float64) float64 {
	if !(math.Abs(x) < 0x1p52*g) {
		return x
	}
	r := math.Round(x/g) * g
	if r == 0 {
		return 0
	}
	return r
}

// addOnGrid returns fl(xt + m·g), the float64 nearest (ties to even) to the
// exact real xt + m·g, where m = ±(hi·2^64 + lo) and xt is a multiple of the
// power of two g. For |m| < 2^53 (always, in practice), m·g is exact and one
// IEEE addition rounds the exact sum; otherwise math/big does the same.
func addOnGrid(xt float64, neg bool, hi, lo uint64, g float64) float64 {
	if hi == 0 && lo < 1<<53 {
		n := float64(lo) * g
		if neg {
			n = -n
		}
		return xt + n
	}
	return addOnGridBig(xt, neg, hi, lo, g)
}

// addOnGridBig is addOnGrid for any m: the sum is exact in 2300 bits (the
// operands' bits span at most 2^1024 down to g ≥ 2^−947) and is then rounded
// to the nearest float64, ties to even, overflowing to ±Inf as IEEE addition
// does.
func addOnGridBig(xt float64, neg bool, hi, lo uint64, g float64) float64 {
	const prec = 2300
	var mi, low big.Int
	mi.SetUint64(hi)
	mi.Lsh(&mi, 64)
	mi.Or(&mi, low.SetUint64(lo))
	if neg {
		mi.Neg(&mi)
	}
	_, e := math.Frexp(g) // g = 2^(e−1)
	var n, y big.Float
	n.SetPrec(prec).SetInt(&mi)
	n.SetMantExp(&n, e-1)
	y.SetPrec(prec).SetFloat64(xt)
	y.Add(&y, &n)
	f, _ := y.Float64()
	return f
}
