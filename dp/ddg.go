package dp

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// The distributed discrete Gaussian mechanism (DDG) of Kairouz, Liu and
// Steinke, "The Distributed Discrete Gaussian Mechanism for Federated
// Learning with Secure Aggregation", ICML 2021 ([KLS21], arXiv:2102.06387),
// for vectors summed by secure aggregation (package secagg) modulo 2^b.
//
// Encoding (each site, Algorithm 1 of [KLS21] "DDGauss" client side):
//
//  1. clip: x ← x·min(1, c/‖x‖₂) (the site's vector norm bound c);
//  2. pad x with zeros to D = 2^⌈log₂ d⌉ and rotate by the randomized
//     Hadamard transform x ← H·diag(ξ)·x/√D, ξ ∈ {±1}^D drawn from a public
//     seed shared by all sites (H is the D×D Walsh–Hadamard matrix; the
//     map is orthogonal, so norms and distances are kept; it flattens the
//     vector so that every coordinate is ≈ ‖x‖/√D);
//  3. scale by 1/γ and round each coordinate randomly and unbiasedly to an
//     integer: ⌊a⌋ + Bernoulli(a − ⌊a⌋) (exact Bernoulli trials);
//  4. add N_ℤ(0, s²) noise to each of the D coordinates (the exact sampler
//     of noise_sample.go), s = the per-site scale in units of γ;
//  5. reduce modulo 2^b (two's complement).
//
// Decoding (the server, after secure aggregation): the sum mod 2^b is
// lifted to the centered range [−2^(b−1), 2^(b−1)), multiplied by γ,
// unrotated (x = diag(ξ)·H·y/√D) and truncated to d coordinates: an
// unbiased estimate of the sum of the clipped vectors plus noise whose
// per-coordinate variance is ≈ n·s²·γ².
//
// Privacy of the sum (record-level: one record of one site changes that
// site's real vector by at most Δ in ℓ2 — the caller's sensitivity, after
// clipping, which is a projection and so never increases distances).
//
//   - Rounding. Write the randomized rounding of a with one uniform
//     u ∈ [0,1)^D as ⌊a + u⌋ (coordinatewise): it is exactly step 3. For
//     neighbours a, a' couple the two runs on the same u; then
//     |⌊aⱼ + uⱼ⌋ − ⌊a'ⱼ + uⱼ⌋| ≤ |aⱼ − a'ⱼ| + 1, so by the triangle
//     inequality the integer vectors differ by at most
//     Δ_ℤ = ‖a − a'‖₂ + √D ≤ Δ/γ + √D in ℓ2 — the record-level analogue of
//     [KLS21] Thm 1's (c/γ + √D) term. The released sum is a mixture over u
//     of shifted noise; by joint quasi-convexity of Rényi divergence the
//     mixture's divergence is at most the worst coupled pair's. (The
//     paper's conditional rounding — retry until ‖x̃‖₂ ≤ Δ₂ — bounds a whole
//     vector's norm for client-level DP; it would break this coupling, and
//     record-level DP does not need it: with Δ/γ ≫ √D, see DDGGamma, the
//     inflation √D·γ/Δ is 2⁻¹⁰.) Floating-point error of the rotation is
//     covered by a margin 2⁻³⁰·c/γ (the FWHT of a D ≤ 2^24-point vector
//     errs by < 24·2⁻⁵²·√D·‖x‖ < 2⁻³⁵·‖x‖ in ℓ2; two runs differ by at most
//     twice that).
//   - Noise of the sum. The coordinator sees Σᵢ x̃ᵢ + Z, Z the sum of the
//     noise of the n sites in the sum whose noise it does not know. [KLS21]
//     Prop 14 (Eq. 17): for independent Zᵢ ~ N_ℤ(0, s²)^D, σ ≥ 1/2, and any
//     integer shift v with ‖v‖₂ ≤ Δ_ℤ,
//       D_α(Z ‖ Z + v) ≤ min{ α·ε₀²/2 + τ·D , (α/2)·(ε₀ + √D·τ)² },
//       ε₀ = Δ_ℤ/(√n·s),   τ = 10·Σ_{k=1}^{n−1} exp(−2π²s²·k/(k+1)):
//     the sum of discrete Gaussians is not a discrete Gaussian, and τ is
//     the price (for s ≥ 4 and n ≤ 10⁴, τ < 10⁻¹³⁰: the continuous
//     Gaussian's guarantee). n = 1 gives τ = 0, the single discrete
//     Gaussian's exact bound ([CKS20]).
//   - Who is n. Against the coordinator alone: the sites whose inputs are in
//     the sum (secagg's U3; dropped sites' noise is not in it). Against the
//     coordinator colluding with t_c sites: those sites know their own
//     noise and subtract it, so n = |U3| − t_c. A site's own guarantee is
//     computed with the honest survivors only, and the job charges the
//     smaller of the two n's it promises (DDG.RDP takes n). With Copies
//     m > 1 each site's noise is m iid draws of N_ℤ(0, s²), so n counts
//     draws: m per honest survivor, or fewer once a site's removable
//     copies are subtracted (ddg_removable.go states the floors).
//   - Modular wrap-around. The sampler's support is |m| < 24·⌈1.5s⌉
//     (noise_sample.go) and every rounded coordinate is at most c/γ·(1 +
//     2⁻³⁰) + 1 in absolute value, so every coordinate of the sum of K
//     sites lies strictly inside ±K·(c/γ·(1+2⁻³⁰) + 1 + 24⌈1.5s⌉); Bits is
//     chosen so that 2^(b−1) exceeds that: wrap-around never happens
//     (probability 0, not merely small). Reduction mod 2^b is in any case
//     post-processing of the sum and does not affect privacy.
//   - Sampler deviations (as in noise.go): the pmf is within e^(±θ),
//     θ = 1.2·10⁻¹² for s ≥ 1 (|γ̂ − γ| ≤ 3.0001·2⁻⁵³·1800 in the
//     acceptance exponent, doubled for the normalizer), of the truncated
//     discrete Gaussian, and truncation removes mass < 10⁻²⁸⁰ per
//     coordinate. With N = D·n·rounds noise coordinates the (ε, δ) of the
//     ideal mechanism becomes (ε + 2Nθ, e^(Nθ)(δ + e^ε·N·10⁻²⁸⁰)/(1 −
//     N·10⁻²⁸⁰)); DDG.Epsilon applies it.

// IntegerNoise draws the integer randomness of the distributed discrete
// Gaussian. *Mechanism implements it (NewSecureNoise and NewSeededNoise
// return one): secure runs use crypto/rand.
type IntegerNoise interface {
	// AddDiscreteGaussian adds independent N_ℤ(0, s²) to every entry, for
	// 1 ≤ s ≤ 2^46.
	AddDiscreteGaussian(dst []int64, s float64)
	// RoundRandomized writes ⌊x⌋ + Bernoulli(x − ⌊x⌋) for every entry of
	// x into dst (|x| < 2^62).
	RoundRandomized(dst []int64, x []float64)
	Secure() bool
}

var _ IntegerNoise = (*Mechanism)(nil)

// DDGMaxScale bounds the per-site scale s (integer units): every noise
// value and sum stays exact in int64.
const DDGMaxScale = 0x1p46

// AddDiscreteGaussian adds N_ℤ(0, s²) noise to every entry of dst, by the
// exact sampler (see discreteGaussian). It panics if s ∉ [1, 2^46].
func (m *Mechanism) AddDiscreteGaussian(dst []int64, s float64) {
	if !(s >= 1 && s <= DDGMaxScale) {
		panic(fmt.Sprintf("dp: AddDiscreteGaussian: scale %v outside [1, 2^46]", s))
	}
	L := gaussBlockLen(s)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range dst {
		neg, mag := m.r.discreteGaussian(s, L)
		if neg {
			dst[i] -= int64(mag)
		} else {
			dst[i] += int64(mag)
		}
	}
}

// RoundRandomized rounds every x[i] to ⌊x⌋ or ⌊x⌋+1 with the probabilities
// that make it unbiased, by exact Bernoulli trials. It panics on a value
// that is not finite or not below 2^62 in magnitude.
func (m *Mechanism) RoundRandomized(dst []int64, x []float64) {
	if len(dst) != len(x) {
		panic("dp: RoundRandomized: length mismatch")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, v := range x {
		if !(math.Abs(v) < 0x1p62) {
			panic(fmt.Sprintf("dp: RoundRandomized: entry %d = %v is not a finite value below 2^62", i, v))
		}
		f := math.Floor(v)
		r := int64(f)
		if m.r.bernoulli(v - f) { // v − f is exact: f and v share the exponent range
			r++
		}
		dst[i] = r
	}
}

// DDGParams describes one distributed discrete Gaussian release.
type DDGParams struct {
	// Dim d is the length of the real vectors.
	Dim int
	// Clip c bounds every site's vector: ‖x‖₂ ≤ c after clipping.
	Clip float64
	// Sensitivity Δ is the ℓ2 distance between a site's (clipped) vectors
	// on neighbouring record sets.
	Sensitivity float64
	// Gamma γ is the rounding granularity; 0 selects DDGGamma(Δ, d).
	Gamma float64
	// Scale s is each site's noise standard deviation in units of γ (the
	// per-site discrete Gaussian N_ℤ(0, s²)); 1 ≤ s ≤ 2^46.
	Scale float64
	// Sites K is the largest number of sites whose vectors are summed
	// (for the modulus).
	Sites int
	// Copies m ≥ 1 (0 means 1) is the number of independent N_ℤ(0, s²)
	// draws each site adds to every coordinate: its noise is their sum
	// (variance m·s²). Some of them may be removable (EncodeRemovable):
	// drawn from a seed the site reveals only when every site's input is
	// in the sum (ddg_removable.go). RDP and Epsilon count
	// copies, not sites.
	Copies int
	// RotationSeed is the public seed of the random signs ξ, the same at
	// every site and at the decoder (drawn per round by the coordinator).
	RotationSeed uint64
}

// DDGGamma is the default granularity rule: γ = Δ/(2¹⁰·√D), so that
// rounding adds √D = 2⁻¹⁰·Δ/γ to the integer sensitivity (0.1%).
func DDGGamma(sensitivity float64, dim int) float64 {
	return sensitivity / (1024 * math.Sqrt(float64(padDim(dim))))
}

func padDim(d int) int {
	if d <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(d-1))
}

// DDG is a validated distributed discrete Gaussian release.
type DDG struct {
	p       DDGParams
	D       int       // padded dimension
	Bits    int       // modulus 2^Bits for secure aggregation
	signs   []float64 // ξ
	sensInt float64   // Δ_ℤ
}

// NewDDG validates p, fills defaults and chooses the modulus.
func NewDDG(p DDGParams) (*DDG, error) {
	if p.Dim < 1 || p.Dim > 1<<24 {
		return nil, fmt.Errorf("dp: DDG dimension %d must be in [1, 2^24]", p.Dim)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"clip norm c", p.Clip}, {"sensitivity Δ", p.Sensitivity}} {
		if !(v.x > 0) || math.IsInf(v.x, 0) {
			return nil, fmt.Errorf("dp: DDG %s = %v must be finite and > 0", v.name, v.x)
		}
	}
	if p.Sensitivity > 2*p.Clip {
		return nil, fmt.Errorf("dp: DDG sensitivity %v exceeds 2c = %v (vectors of norm ≤ c are never farther apart); lower it", p.Sensitivity, 2*p.Clip)
	}
	if p.Gamma == 0 {
		p.Gamma = DDGGamma(p.Sensitivity, p.Dim)
	}
	if !(p.Gamma > 0) || math.IsInf(p.Gamma, 0) {
		return nil, fmt.Errorf("dp: DDG granularity γ = %v must be finite and > 0 (0 selects the default rule)", p.Gamma)
	}
	if !(p.Scale >= 1 && p.Scale <= DDGMaxScale) {
		return nil, fmt.Errorf("dp: DDG per-site scale s = %v (units of γ) must be in [1, 2^46]; choose γ accordingly", p.Scale)
	}
	if p.Sites < 1 {
		return nil, fmt.Errorf("dp: DDG needs ≥ 1 site, got %d", p.Sites)
	}
	if p.Copies == 0 {
		p.Copies = 1
	}
	if p.Copies < 1 || p.Copies > DDGMaxCopies {
		return nil, fmt.Errorf("dp: DDG noise copies per site %d must be in [1, %d]", p.Copies, DDGMaxCopies)
	}
	g := &DDG{p: p, D: padDim(p.Dim)}
	cg := p.Clip / p.Gamma
	bound := float64(p.Sites) * (cg*(1+0x1p-30) + 1 + float64(p.Copies)*24*float64(gaussBlockLen(p.Scale)))
	// 2^(b−1) > bound, so the centered lift is exact.
	b := int(math.Floor(math.Log2(bound))) + 2
	if !(bound < 0x1p62) || b > 64 {
		return nil, fmt.Errorf("dp: DDG sum range ±%.3g needs more than 64 bits: raise γ (now %v) or lower the clip c/Δ ratio", bound, p.Gamma)
	}
	g.Bits = b
	g.sensInt = p.Sensitivity/p.Gamma + math.Sqrt(float64(g.D)) + 0x1p-30*cg
	rng := rand.New(rand.NewPCG(p.RotationSeed, 0x5ecA99))
	g.signs = make([]float64, g.D)
	for i := range g.signs {
		g.signs[i] = float64(1 - 2*int(rng.Uint64()&1))
	}
	return g, nil
}

// Params returns the parameters with defaults filled.
func (g *DDG) Params() DDGParams { return g.p }

// IntegerSensitivity returns Δ_ℤ, the ℓ2 sensitivity of a site's integer
// vector (see the file comment).
func (g *DDG) IntegerSensitivity() float64 { return g.sensInt }

// Modulus mask 2^Bits − 1.
func (g *DDG) mask() uint64 {
	if g.Bits == 64 {
		return ^uint64(0)
	}
	return 1<<g.Bits - 1
}

// DDGMaxCopies bounds DDGParams.Copies.
const DDGMaxCopies = 64

// Encode writes the site's encoded vector (length D, entries in
// [0, 2^Bits)) into dst: clip, rotate, scale, round, add the Copies noise
// draws from n, reduce. x is not modified.
func (g *DDG) Encode(dst []uint64, x []float64, n IntegerNoise) error {
	return g.EncodeRemovable(dst, x, n, 0, nil)
}

// EncodeRemovable is Encode with the last `removable` of the Copies noise
// draws taken from r (a RemovableNoise) instead of n: the coordinator can
// subtract exactly those (Remove) once the site reveals r's seed. With
// removable = 0 it is Encode (r unused, the same draws from n).
func (g *DDG) EncodeRemovable(dst []uint64, x []float64, n IntegerNoise, removable int, r IntegerNoise) error {
	if removable < 0 || removable >= g.p.Copies || (removable > 0 && r == nil) {
		return fmt.Errorf("dp: DDG Encode: %d removable of %d noise copies (at least one must come from the site's own source)", removable, g.p.Copies)
	}
	if len(x) != g.p.Dim || len(dst) != g.D {
		return fmt.Errorf("dp: DDG Encode: input length %d and output length %d, want %d and %d", len(x), len(dst), g.p.Dim, g.D)
	}
	norm := 0.0
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("dp: DDG Encode: entry %d = %v is not finite", i, v)
		}
		norm += v * v
	}
	norm = math.Sqrt(norm)
	f := 1.0
	if norm > g.p.Clip {
		f = g.p.Clip / norm
	}
	a := make([]float64, g.D)
	for i, v := range x {
		a[i] = v * f * g.signs[i]
	}
	fwht(a)
	sc := 1 / (math.Sqrt(float64(g.D)) * g.p.Gamma)
	for i := range a {
		a[i] *= sc
	}
	z := make([]int64, g.D)
	n.RoundRandomized(z, a)
	for c := 0; c < g.p.Copies-removable; c++ {
		n.AddDiscreteGaussian(z, g.p.Scale)
	}
	for c := 0; c < removable; c++ {
		r.AddDiscreteGaussian(z, g.p.Scale)
	}
	m := g.mask()
	for i, v := range z {
		dst[i] = uint64(v) & m
	}
	return nil
}

// Remove subtracts from sum (length D, mod 2^Bits) the `removable` noise
// copies a site drew from r (a RemovableNoise rebuilt from the seed it
// revealed): exactly the values its EncodeRemovable added from its own
// RemovableNoise of that seed, so the sum is left with the site's other
// copies.
func (g *DDG) Remove(sum []uint64, removable int, r IntegerNoise) error {
	if len(sum) != g.D {
		return fmt.Errorf("dp: DDG Remove: sum length %d, want %d", len(sum), g.D)
	}
	if removable < 1 || removable >= g.p.Copies {
		return fmt.Errorf("dp: DDG Remove: %d removable of %d noise copies", removable, g.p.Copies)
	}
	z := make([]int64, g.D)
	for c := 0; c < removable; c++ {
		r.AddDiscreteGaussian(z, g.p.Scale)
	}
	m := g.mask()
	for i, v := range z {
		sum[i] = (sum[i] - uint64(v)) & m
	}
	return nil
}

// Decode writes into dst (length Dim) the real sum encoded by sum (length
// D, the secure aggregate mod 2^Bits).
func (g *DDG) Decode(dst []float64, sum []uint64) error {
	if len(sum) != g.D || len(dst) != g.p.Dim {
		return fmt.Errorf("dp: DDG Decode: sum length %d and output length %d, want %d and %d", len(sum), len(dst), g.D, g.p.Dim)
	}
	m := g.mask()
	half := uint64(1) << (g.Bits - 1)
	y := make([]float64, g.D)
	for i, w := range sum {
		w &= m
		v := int64(w)
		if w >= half {
			v = int64(w) - int64(m) - 1 // w − 2^b
		}
		y[i] = float64(v)
	}
	fwht(y)
	sc := g.p.Gamma / math.Sqrt(float64(g.D))
	for i := range dst {
		dst[i] = y[i] * sc * g.signs[i]
	}
	return nil
}

// fwht is the in-place unnormalized Walsh–Hadamard transform (len a power
// of two): a ← H·a, H symmetric with H² = len·I.
func fwht(a []float64) {
	for h := 1; h < len(a); h *= 2 {
		for i := 0; i < len(a); i += 2 * h {
			for j := i; j < i+h; j++ {
				x, y := a[j], a[j+h]
				a[j], a[j+h] = x+y, x-y
			}
		}
	}
}

// ddgTau is τ = 10·Σ_{k=1}^{n−1} exp(−2π²s²·k/(k+1)) ([KLS21] Prop 14).
func ddgTau(s float64, n int) float64 {
	t := 0.0
	for k := 1; k < n; k++ {
		t += math.Exp(-2 * math.Pi * math.Pi * s * s * float64(k) / float64(k+1))
	}
	if t == 0 {
		return 0
	}
	return acctUp(10*t, 8)
}

// ddgTheta is the sampler's per-coordinate pmf deviation θ (file comment).
const ddgTheta = 1.2e-12

// ddgTrunc bounds the mass the sampler's truncation removes per coordinate.
const ddgTrunc = 1e-280

// RDP returns the Rényi divergence bound of order α > 1 of one release
// whose sum holds the noise of n sites unknown to the adversary ([KLS21]
// Prop 14, file comment), rounded up.
func (g *DDG) RDP(alpha float64, n int) float64 {
	return g.rdp(alpha, n, g.sensInt)
}

// rdp is RDP for an integer sensitivity sensInt.
func (g *DDG) rdp(alpha float64, n int, sensInt float64) float64 {
	if n < 1 {
		return math.Inf(1)
	}
	s := g.p.Scale
	e0 := sensInt / (math.Sqrt(float64(n)) * s)
	tau := ddgTau(s, n)
	d := float64(g.D)
	t1 := acctSumUp(alpha*e0*e0/2, tau*d)
	t2 := alpha / 2 * (e0 + math.Sqrt(d)*tau) * (e0 + math.Sqrt(d)*tau)
	return acctUp(math.Min(t1, t2), 8)
}

// sensAt is Δ_ℤ of a release whose vectors are multiplied by w ∈ (0, 1]
// before encoding (EpsilonWeighted): the real sensitivity w·Δ, the
// rounding's √D and the rotation's margin 2⁻³⁰·c/γ (‖w·x‖ ≤ c still). w = 1
// is IntegerSensitivity, bit for bit.
func (g *DDG) sensAt(w float64) float64 {
	if w == 1 {
		return g.sensInt
	}
	return w*g.p.Sensitivity/g.p.Gamma + math.Sqrt(float64(g.D)) + 0x1p-30*(g.p.Clip/g.p.Gamma)
}

// ddgGroup is `count` releases of weight w (EpsilonWeighted).
type ddgGroup struct {
	w     float64
	count int
}

// ddgGroups checks weights (each in (0, 1], at least one) and merges equal
// ones, largest first.
func ddgGroups(weights []float64) ([]ddgGroup, error) {
	if len(weights) == 0 {
		return nil, fmt.Errorf("dp: DDG needs ≥ 1 release weight")
	}
	var gs []ddgGroup
	for i, w := range weights {
		if !(w > 0 && w <= 1) {
			return nil, fmt.Errorf("dp: DDG release weight %d is %v, must be in (0, 1]", i+1, w)
		}
		k := slices.IndexFunc(gs, func(x ddgGroup) bool { return x.w == w })
		if k < 0 {
			gs = append(gs, ddgGroup{w: w})
			k = len(gs) - 1
		}
		gs[k].count++
	}
	slices.SortFunc(gs, func(a, b ddgGroup) int { return cmp.Compare(b.w, a.w) })
	return gs, nil
}

// Epsilon returns the ε at δ of `rounds` releases (composed by RDP
// additivity) each holding the noise of n sites unknown to the adversary,
// including the sampler's deviations (file comment).
func (g *DDG) Epsilon(rounds, n int, delta float64) (float64, error) {
	if rounds < 1 {
		return 0, fmt.Errorf("dp: DDG rounds %d must be ≥ 1", rounds)
	}
	return g.epsilon([]ddgGroup{{w: 1, count: rounds}}, n, delta)
}

// EpsilonWeighted is Epsilon for releases that weigh their vectors
// unequally: in release k every site multiplies its vector by
// weights[k] ∈ (0, 1] before encoding (and the decoder divides the sum by
// it), so its sensitivity is weights[k]·Δ under the same per-site scale
// s — the sum's noise is s·γ/weights[k] in the vector's units. The
// releases compose by RDP additivity, each at its own sensitivity
// (sensAt). All weights 1 is Epsilon(len(weights), …), bit for bit.
func (g *DDG) EpsilonWeighted(weights []float64, n int, delta float64) (float64, error) {
	gs, err := ddgGroups(weights)
	if err != nil {
		return 0, err
	}
	return g.epsilon(gs, n, delta)
}

func (g *DDG) epsilon(gs []ddgGroup, n int, delta float64) (float64, error) {
	if n < 1 {
		return math.Inf(1), nil
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	rounds := 0
	for _, x := range gs {
		rounds += x.count
	}
	N := float64(g.D) * float64(n) * float64(rounds)
	// Ideal δ' with e^(Nθ)(δ' + e^ε·N·trunc)/(1 − N·trunc) ≤ δ: take
	// δ' = δ·e^(−Nθ)·(1 − 10⁻⁹) − N·10⁻²³⁰. For ε ≤ 100 (larger ε is
	// reported as +Inf) e^ε·N·10⁻²⁸⁰ < N·2.7·10⁻²³⁷ ≤ N·10⁻²³⁰, so the
	// numerator is ≤ δ(1 − 10⁻⁹), and N·trunc ≤ 10⁻²⁵⁰ (checked) makes
	// 1/(1 − N·trunc) ≤ 1 + 10⁻⁹.
	dIdeal := delta*math.Exp(-N*ddgTheta)*(1-1e-9) - N*1e-230
	if N*ddgTrunc > 1e-250 || !(dIdeal > 0) {
		return 0, fmt.Errorf("dp: DDG δ = %v too small for %v noise coordinates", delta, N)
	}
	orders := RDPOrders()
	taus := make([]float64, len(orders))
	parts := make([]float64, len(gs))
	for i, a := range orders {
		if len(gs) == 1 {
			taus[i] = acctUp(float64(gs[0].count)*g.rdp(a, n, g.sensAt(gs[0].w)), 4)
			continue
		}
		for k, x := range gs {
			parts[k] = acctUp(float64(x.count)*g.rdp(a, n, g.sensAt(x.w)), 4)
		}
		taus[i] = acctSumUp(parts...)
	}
	eps, _, err := RDPEpsilon(orders, taus, dIdeal)
	if err != nil {
		return 0, err
	}
	if eps > 100 {
		return math.Inf(1), nil
	}
	return acctUp(eps+2*N*ddgTheta, 4), nil
}

// CalibrateDDG returns the smallest per-site scale s (units of γ, up to a
// relative 10⁻⁶) such that `rounds` releases whose sums hold the noise of
// at least n sites unknown to the adversary are (eps, delta)-DP; p.Scale is
// ignored. The answer is certified by Epsilon.
func CalibrateDDG(p DDGParams, rounds, n int, eps, delta float64) (*DDG, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("dp: DDG rounds %d must be ≥ 1", rounds)
	}
	return calibrateDDG(p, []ddgGroup{{w: 1, count: rounds}}, n, eps, delta)
}

// CalibrateDDGWeighted is CalibrateDDG for releases of unequal weights
// (EpsilonWeighted): the smallest s certified by EpsilonWeighted.
func CalibrateDDGWeighted(p DDGParams, weights []float64, n int, eps, delta float64) (*DDG, error) {
	gs, err := ddgGroups(weights)
	if err != nil {
		return nil, err
	}
	return calibrateDDG(p, gs, n, eps, delta)
}

func calibrateDDG(p DDGParams, gs []ddgGroup, n int, eps, delta float64) (*DDG, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("dp: DDG ε = %v must be finite and > 0", eps)
	}
	try := func(s float64) (*DDG, float64, error) {
		q := p
		q.Scale = s
		g, err := NewDDG(q)
		if err != nil {
			return nil, 0, err
		}
		e, err := g.epsilon(gs, n, delta)
		return g, e, err
	}
	lo, hi := 1.0, 2.0
	for {
		_, e, err := try(hi)
		if err != nil {
			return nil, err
		}
		if e <= eps {
			break
		}
		lo, hi = hi, hi*2
		if hi > DDGMaxScale {
			return nil, fmt.Errorf("dp: DDG cannot reach ε = %v with s ≤ 2^46: raise γ", eps)
		}
	}
	if _, e, err := try(lo); err == nil && e <= eps {
		hi = lo
	}
	for hi-lo > 1e-6*hi {
		mid := (lo + hi) / 2
		_, e, err := try(mid)
		if err != nil {
			return nil, err
		}
		if e <= eps {
			hi = mid
		} else {
			lo = mid
		}
	}
	g, e, err := try(hi)
	if err != nil {
		return nil, err
	}
	if e > eps {
		return nil, fmt.Errorf("dp: DDG calibration failed to certify ε = %v (got %v)", eps, e)
	}
	return g, nil
}
