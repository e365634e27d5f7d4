package dp

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// ksAlpha is the false-failure rate of every Kolmogorov–Smirnov check: by the
// Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant,
// P(sup|F_n − F| > c/√n) ≤ 2·exp(−2c²) for any distribution (for a discrete
// one the statistic is only smaller), and c = √(ln(2/α)/2) makes it α.
const ksAlpha = 1e-6

// ksCritical is c/√n for α = ksAlpha, plus 1e-9 for the difference between
// the lattice noise's CDF and the continuous one (≤ one grid cell's mass,
// about 2^-46, plus the truncated tail).
func ksCritical(n int) float64 {
	return math.Sqrt(math.Log(2/ksAlpha)/2)/math.Sqrt(float64(n)) + 1e-9
}

// ksDistance returns sup_x |F_n(x) − F(x)| for the sample xs (sorted in place).
func ksDistance(xs []float64, cdf func(float64) float64) float64 {
	slices.Sort(xs)
	n := float64(len(xs))
	var d float64
	for i, x := range xs {
		f := cdf(x)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
}

func gaussCDF(sigma float64) func(float64) float64 {
	return func(x float64) float64 { return 0.5 * math.Erfc(-x/(sigma*math.Sqrt2)) }
}

func laplaceCDF(b float64) func(float64) float64 {
	return func(x float64) float64 {
		if x < 0 {
			return 0.5 * math.Exp(x/b)
		}
		return 1 - 0.5*math.Exp(-x/b)
	}
}

// draw returns n noise values from add at scale on zero input.
func draw(add func([]float64, float64), scale float64, n int) []float64 {
	xs := make([]float64, n)
	for i := 0; i < n; i += 1000 { // vectors of 1000, as callers pass vectors
		add(xs[i:min(i+1000, n)], scale)
	}
	return xs
}

func meanM2(xs []float64) (mean, m2 float64) {
	for _, x := range xs {
		mean += x
		m2 += x * x
	}
	n := float64(len(xs))
	return mean / n, m2 / n
}

var testScales = []float64{1e-6, 1, 3.7, 1e6}

// TestGaussianMoments: mean and E[X²] of 200k draws for several σ. Under the
// normal approximation, mean ~ N(0, σ²/n) and E_n[X²] ~ N(σ², 2σ⁴/n); each
// bound is 5.33 sd. 8 checks at 9.8e-8: false-failure rate < 1e-6.
func TestGaussianMoments(t *testing.T) {
	m := NewSeededNoise(10)
	const n = 200_000
	for _, sigma := range testScales {
		mean, m2 := meanM2(draw(m.AddGaussian, sigma, n))
		if lim := zBound * sigma / math.Sqrt(n); math.Abs(mean) > lim {
			t.Errorf("σ = %g: mean %g, want |mean| ≤ %g", sigma, mean, lim)
		}
		if lim := zBound * math.Sqrt(2.0/n); math.Abs(m2/(sigma*sigma)-1) > lim {
			t.Errorf("σ = %g: E[X²]/σ² = %.5f, want 1 ± %.5f", sigma, m2/(sigma*sigma), lim)
		}
	}
}

// TestLaplaceMoments: Laplace(b) has mean 0, E[X²] = 2b², Var(X²) = 20b⁴;
// 5.33-sd bounds on 200k draws under the normal approximation. 8 checks at
// 9.8e-8: false-failure rate < 1e-6.
func TestLaplaceMoments(t *testing.T) {
	m := NewSeededNoise(11)
	const n = 200_000
	for _, b := range testScales {
		mean, m2 := meanM2(draw(m.AddLaplace, b, n))
		if lim := zBound * math.Sqrt2 * b / math.Sqrt(n); math.Abs(mean) > lim {
			t.Errorf("b = %g: mean %g, want |mean| ≤ %g", b, mean, lim)
		}
		if lim := zBound * math.Sqrt(20.0/n) / 2; math.Abs(m2/(2*b*b)-1) > lim {
			t.Errorf("b = %g: E[X²]/(2b²) = %.5f, want 1 ± %.5f", b, m2/(2*b*b), lim)
		}
	}
}

// TestKolmogorovSmirnov compares 100k draws with the exact CDFs (Gaussian via
// math.Erfc, Laplace in closed form), for several scales, with the secure and
// the seeded source. 16 checks at α = 1e-6 (DKW–Massart, exact): false-
// failure rate < 1.6e-5.
func TestKolmogorovSmirnov(t *testing.T) {
	const n = 100_000
	for _, src := range []struct {
		name  string
		noise Noise
	}{{"seeded", NewSeededNoise(12)}, {"secure", NewSecureNoise()}} {
		for _, scale := range testScales {
			if d := ksDistance(draw(src.noise.AddGaussian, scale, n), gaussCDF(scale)); d > ksCritical(n) {
				t.Errorf("%s Gaussian σ = %g: KS distance %.5f > %.5f", src.name, scale, d, ksCritical(n))
			}
			if d := ksDistance(draw(src.noise.AddLaplace, scale, n), laplaceCDF(scale)); d > ksCritical(n) {
				t.Errorf("%s Laplace b = %g: KS distance %.5f > %.5f", src.name, scale, d, ksCritical(n))
			}
		}
	}
}

// TestDiscreteSamplersExact runs the integer samplers at small scales, where
// a wrong pmf would show, against the exact pmfs with a chi-square test over
// the bins |m| ≤ 10 plus two tail bins. The critical value is the χ²
// quantile 1 − 1e-6 (asymptotic χ² approximation; all expected counts are
// ≥ 20). 5 checks: false-failure rate ≈ 5e-6.
func TestDiscreteSamplersExact(t *testing.T) {
	r := bitSource{src: NewSeededSource(13)}
	const n = 400_000
	const w = 10
	chi2 := func(name string, weight func(int) float64, sample func() int64) {
		t.Helper()
		// Exact probabilities: normalize over |m| ≤ 2000 (the rest is < 1e-300).
		var z float64
		for m := -2000; m <= 2000; m++ {
			z += weight(m)
		}
		p := make([]float64, 2*w+3) // bins: m < −w, −w … w, m > w
		for m := -2000; m <= 2000; m++ {
			switch {
			case m < -w:
				p[0] += weight(m) / z
			case m > w:
				p[2*w+2] += weight(m) / z
			default:
				p[m+w+1] += weight(m) / z
			}
		}
		obs := make([]float64, len(p))
		for range n {
			m := sample()
			switch {
			case m < -w:
				obs[0]++
			case m > w:
				obs[2*w+2]++
			default:
				obs[m+w+1]++
			}
		}
		var stat float64
		df := -1
		for i := range p {
			e := n * p[i]
			if e < 20 {
				if obs[i] > 0 && e == 0 {
					t.Errorf("%s: %v draws in a bin of probability 0", name, obs[i])
				}
				continue
			}
			stat += (obs[i] - e) * (obs[i] - e) / e
			df++
		}
		crit := distuv.ChiSquared{K: float64(df)}.Quantile(1 - 1e-6)
		if stat > crit {
			t.Errorf("%s: χ² = %.1f > %.1f (df %d)", name, stat, crit, df)
		}
	}
	for _, s := range []float64{0.8, 2.5, 4} {
		L := gaussBlockLen(s)
		chi2(fmt.Sprintf("discrete Gaussian s=%g", s),
			func(m int) float64 { return math.Exp(-float64(m*m) / (2 * s * s)) },
			func() int64 {
				neg, mag := r.discreteGaussian(s, L)
				if neg {
					return -int64(mag)
				}
				return int64(mag)
			})
	}
	for _, c := range []struct {
		t     uint64
		shift uint
	}{{5, 1}, {3, 2}} { // scales 2.5 and 0.75
		scale := float64(c.t) / float64(uint64(1)<<c.shift)
		chi2(fmt.Sprintf("discrete Laplace t/s=%g", scale),
			func(m int) float64 { return math.Exp(-math.Abs(float64(m)) / scale) },
			func() int64 {
				neg, hi, lo := r.discreteLaplace(c.t, c.shift)
				if hi != 0 {
					t.Fatalf("discrete Laplace of scale %g drew |m| ≥ 2^64", scale)
				}
				if neg {
					return -int64(lo)
				}
				return int64(lo)
			})
	}
}

// TestGaussianBlockGeometry checks the invariant behind the Gaussian
// rejection sampler at the extremes of s: in block k ≥ 1 every m has
// γ(m) ≥ k + 0.125 (acceptance exp(−(γ−k)) ≤ 1 with margin), and the
// support stays below 2^53 with γ < 648.01 (the bound in the error analysis).
func TestGaussianBlockGeometry(t *testing.T) {
	for _, s := range []float64{0x1p46, 0x1.fffffffffffffp46, 1.2345 * 0x1p46, 2.5} {
		L := gaussBlockLen(s)
		for k := 1; k < gaussBlocks; k++ {
			z := float64(uint64(k)*L) / s
			if g := 0.5 * z * z; g < float64(k)+0.125 {
				t.Errorf("s = %g, block %d starts at γ = %g < k + 0.125", s, k, g)
			}
		}
		top := float64(gaussBlocks) * float64(L)
		if s >= 0x1p46 {
			if top >= 0x1p53 {
				t.Errorf("s = %g: support bound %g ≥ 2^53", s, top)
			}
			if g := 0.5 * (top / s) * (top / s); g >= 648.01 {
				t.Errorf("s = %g: γ at the support's edge %g ≥ 648.01", s, g)
			}
		}
	}
}

// TestGranularity checks the grid formula 2^(⌊log₂ scale⌋ − 46) at binade
// edges and the range limits. Deterministic.
func TestGranularity(t *testing.T) {
	for _, x := range []float64{MinScale, 1e-300 * 0x1p700, 1e-6, 0.75, 1, math.Nextafter(2, 0), 2, 3.7, 1e6, MaxScale} {
		for _, g := range []float64{GaussianGranularity(x), LaplaceGranularity(x)} {
			if frac, _ := math.Frexp(g); frac != 0.5 {
				t.Errorf("granularity(%g) = %g is not a power of two", x, g)
			}
			if r := x / g; r < 0x1p46 || r >= 0x1p47 {
				t.Errorf("scale/granularity = %g/%g = %g, want in [2^46, 2^47)", x, g, r)
			}
		}
	}
	if g := GaussianGranularity(1); g != 0x1p-46 {
		t.Errorf("GaussianGranularity(1) = %g, want 2^-46", g)
	}
	if g := LaplaceGranularity(3); g != 0x1p-45 {
		t.Errorf("LaplaceGranularity(3) = %g, want 2^-45", g)
	}
	if got := SnappedL2Sensitivity(1, 0.5, 16); got != 3 {
		t.Errorf("SnappedL2Sensitivity(1, 0.5, 16) = %g, want 3", got)
	}
	if got := SnappedL1Sensitivity(1, 0.5, 16); got != 9 {
		t.Errorf("SnappedL1Sensitivity(1, 0.5, 16) = %g, want 9", got)
	}
}

func onGrid(v, g float64) bool { return math.Mod(v, g) == 0 }

// TestOutputsOnGrid: every released value is a multiple of the granularity,
// for off-grid inputs of every magnitude, for all three mechanisms and both
// sources. Deterministic given the seed; for the secure source it holds for
// every draw (the property does not depend on the noise values).
func TestOutputsOnGrid(t *testing.T) {
	inputs := []float64{0, math.Copysign(0, -1), 0.1, -0.1, 1.0 / 3, -2.0 / 3, 1e-310, -1e-200,
		12345.678901, -9.87654321e15, 1e100, -1e300, math.MaxFloat64, -math.MaxFloat64}
	for _, src := range []struct {
		name  string
		noise Noise
	}{{"seeded", NewSeededNoise(14)}, {"secure", NewSecureNoise()}} {
		for _, scale := range []float64{1e-6, 0.3, 1, 7, 1e6} {
			for _, mech := range []struct {
				name string
				add  func([]float64, float64)
				g    float64
			}{
				{"AddGaussian", src.noise.AddGaussian, GaussianGranularity(scale)},
				{"AddLaplace", src.noise.AddLaplace, LaplaceGranularity(scale)},
				{"AddL2Laplace", src.noise.AddL2Laplace, LaplaceGranularity(scale)},
			} {
				for rep := range 20 {
					dst := make([]float64, len(inputs))
					for i, x := range inputs {
						dst[i] = x * (1 - float64(rep)*1e-3)
					}
					mech.add(dst, scale)
					for i, v := range dst {
						if !onGrid(v, mech.g) && !math.IsInf(v, 0) {
							t.Fatalf("%s %s(scale %g): input %g → %g is not a multiple of %g",
								src.name, mech.name, scale, inputs[i], v, mech.g)
						}
						if math.IsNaN(v) {
							t.Fatalf("%s %s(scale %g): input %g → NaN", src.name, mech.name, scale, inputs[i])
						}
					}
				}
			}
		}
	}
}

// TestRoundingDoesNotBias: for off-grid x the released value is unbiased,
// mean(x + noise − x) ≈ 0 with 5.33-sd bounds on 200k draws (normal
// approximation; the rounding error itself is ≤ g/2 = σ·2^-47). 4 checks at
// 9.8e-8: false-failure rate < 4e-7.
func TestRoundingDoesNotBias(t *testing.T) {
	m := NewSeededNoise(15)
	const n = 200_000
	for _, scale := range []float64{1, 1e-6} {
		xs := make([]float64, n)
		for i := range xs {
			// Off-grid values whose rounding direction varies.
			xs[i] = scale * (0.3 + float64(i%977)*0.0123456789)
		}
		for _, mech := range []struct {
			name string
			add  func([]float64, float64)
			sd   float64
		}{{"Gaussian", m.AddGaussian, scale}, {"Laplace", m.AddLaplace, math.Sqrt2 * scale}} {
			dst := slices.Clone(xs)
			for i := 0; i < n; i += 1000 {
				mech.add(dst[i:i+1000], scale)
			}
			var sum float64
			for i := range dst {
				sum += dst[i] - xs[i]
			}
			if lim := zBound * mech.sd / math.Sqrt(n); math.Abs(sum/n) > lim {
				t.Errorf("%s scale %g: mean(out − x) = %g, want |·| ≤ %g", mech.name, scale, sum/n, lim)
			}
		}
	}
}

// TestRoundToGrid checks the deterministic rounding: nearest multiple, halves
// away from zero, +0 for zero results, large values untouched.
func TestRoundToGrid(t *testing.T) {
	g := 0x1p-3
	for _, c := range []struct{ x, want float64 }{
		{0.3, 0.25}, {0.32, 0.375}, {0.3125, 0.375}, {-0.3125, -0.375}, {-0.01, 0}, {0.0625, 0.125},
		{1e300, 1e300}, {0x1p52 * g, 0x1p52 * g}, {math.Nextafter(0x1p52*g, 0), 0x1p52 * g}, {1e-320, 0},
	} {
		got := roundToGrid(c.x, g)
		if got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("roundToGrid(%g, 1/8) = %g, want %g", c.x, got, c.want)
		}
	}
	// Rounding error ≤ g/2 and symmetric: its mean over a fine sweep is 0.
	var sum float64
	for i := -100000; i <= 100000; i++ {
		x := float64(i) * 0.00137
		e := roundToGrid(x, g) - x
		if math.Abs(e) > g/2 {
			t.Fatalf("roundToGrid(%g) error %g > g/2", x, e)
		}
		sum += e
	}
	if math.Abs(sum) > 1e-9 {
		t.Errorf("rounding errors sum to %g over a symmetric sweep, want 0", sum)
	}
}

// TestAddOnGridBig checks that the math/big path rounds the exact sum exactly
// as one IEEE addition does (so the path taken cannot leak anything) and
// handles |m| ≥ 2^53. Deterministic.
func TestAddOnGridBig(t *testing.T) {
	src := NewSeededSource(16)
	for i := range 20000 {
		g := math.Ldexp(1, int(src.Uint64()%200)-100)
		lo := src.Uint64() >> 11 // < 2^53
		if i%3 == 0 {
			lo >>= src.Uint64() % 53
		}
		neg := src.Uint64()&1 == 1
		var xt float64
		switch i % 4 {
		case 0:
			xt = roundToGrid(float64(int64(src.Uint64()>>12)-1<<51)*g*1.37, g)
		case 1:
			xt = roundToGrid(math.Ldexp(float64(src.Uint64()>>11), int(src.Uint64()%1900)-950), g)
		case 2:
			xt = math.MaxFloat64 * (1 - float64(src.Uint64()%4)*0x1p-53)
			g = 0x1p970
		case 3:
			xt = 0
		}
		if fast, slow := addOnGrid(xt, neg, 0, lo, g), addOnGridBig(xt, neg, 0, lo, g); fast != slow && !(math.IsNaN(fast) && math.IsNaN(slow)) {
			t.Fatalf("xt = %g, m = %v·%d, g = %g: IEEE sum %g, big sum %g", xt, neg, lo, g, fast, slow)
		}
	}
	// |m| ≥ 2^53: ties to even on the float64 grid of the result.
	for _, c := range []struct {
		xt      float64
		neg     bool
		hi, lo  uint64
		g, want float64
	}{
		{0, false, 0, 1<<53 + 1, 1, 0x1p53},
		{0, false, 0, 1<<53 + 3, 1, 0x1p53 + 4},
		{1, false, 0, 1<<53 + 1, 1, 0x1p53 + 2},
		{0, true, 1, 0, 0x1p-10, -0x1p54},
		{0x1p60, true, 0, 1 << 60, 1, 0},
	} {
		if got := addOnGrid(c.xt, c.neg, c.hi, c.lo, c.g); got != c.want {
			t.Errorf("addOnGrid(%g, %v, %d, %d, %g) = %g, want %g", c.xt, c.neg, c.hi, c.lo, c.g, got, c.want)
		}
	}
	// Cross-check one huge case against big arithmetic directly.
	want, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(new(big.Int).Lsh(big.NewInt(3), 100)), -50).Float64()
	if got := addOnGrid(0, false, 3<<36, 0, 0x1p-50); got != want {
		t.Errorf("addOnGrid huge m = %g, want %g", got, want)
	}
}

// TestSecureAndSeeded: flags, names, and that the secure source is not a
// seeded one (two secure mechanisms' 1000 draws differ; equal draws have
// probability < 2^-40 each), while equal seeds reproduce.
func TestSecureAndSeeded(t *testing.T) {
	sec1, sec2 := NewSecureNoise(), NewSecureNoise()
	s1, s2, s3 := NewSeededNoise(5), NewSeededNoise(5), NewSeededNoise(6)
	if !sec1.Secure() || s1.Secure() {
		t.Fatalf("Secure(): secure %v, seeded %v", sec1.Secure(), s1.Secure())
	}
	if n := s1.Name(); !strings.Contains(n, "seeded (NOT private") {
		t.Errorf("seeded Name() = %q lacks \"seeded (NOT private\"", n)
	}
	if n := sec1.Name(); !strings.HasPrefix(n, "secure") || strings.Contains(n, "NOT private") {
		t.Errorf("secure Name() = %q", n)
	}
	gen := func(nz Noise) []float64 {
		v := make([]float64, 1000)
		nz.AddGaussian(v, 1)
		return v
	}
	a, b := gen(sec1), gen(sec2)
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("two secure mechanisms drew %d equal values out of 1000", same)
	}
	if !slices.Equal(gen(s1), gen(s2)) {
		t.Error("equal seeds gave different noise")
	}
	if slices.Equal(gen(s1), gen(s3)) {
		t.Error("different seeds gave equal noise")
	}
}

// TestInvalidArguments: bad scales and non-finite inputs panic before dst is
// touched.
func TestInvalidArguments(t *testing.T) {
	m := NewSeededNoise(17)
	mechs := map[string]func([]float64, float64){"AddGaussian": m.AddGaussian, "AddLaplace": m.AddLaplace, "AddL2Laplace": m.AddL2Laplace,
		"GaussianGranularity": func(_ []float64, s float64) { GaussianGranularity(s) },
		"LaplaceGranularity":  func(_ []float64, s float64) { LaplaceGranularity(s) }}
	panics := func(f func()) (p bool) {
		defer func() { p = recover() != nil }()
		f()
		return false
	}
	for name, add := range mechs {
		for _, s := range []float64{math.NaN(), 0, -1, math.Inf(1), math.Inf(-1), MinScale / 2, MaxScale * 2} {
			dst := []float64{1, 2}
			if !panics(func() { add(dst, s) }) {
				t.Errorf("%s(scale %v) did not panic", name, s)
			}
			if dst[0] != 1 || dst[1] != 2 {
				t.Errorf("%s(scale %v) changed dst before panicking", name, s)
			}
		}
		if strings.HasPrefix(name, "Add") {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				dst := []float64{1, bad}
				if !panics(func() { add(dst, 1) }) {
					t.Errorf("%s with dst containing %v did not panic", name, bad)
				}
				if dst[0] != 1 {
					t.Errorf("%s changed dst before panicking on %v", name, bad)
				}
			}
			if panics(func() { add(nil, 1) }) {
				t.Errorf("%s with an empty dst panicked, want a no-op", name)
			}
		}
	}
}

// TestL2Laplace: ‖z‖ ~ Gamma(d, b) (mean d·b, 5.33-sd bound; and a KS test
// against the Gamma CDF), direction uniform (n·d·‖mean of z/‖z‖‖² is
// approximately χ²_d; bound at its 1 − 1e-6 quantile), and for d = 1 the
// output is Laplace(b) (KS). 20k vectors per d. Checks: 3 per d ∈ {3, 22},
// plus 1: false-failure rate < 4e-6 (normal/χ² approximations for the mean
// and direction checks, DKW exact for the KS checks).
func TestL2Laplace(t *testing.T) {
	m := NewSeededNoise(18)
	const n = 20_000
	const b = 0.5
	for _, d := range []int{3, 22} {
		radii := make([]float64, n)
		dirSum := make([]float64, d)
		var sum float64
		z := make([]float64, d)
		for k := range n {
			clear(z)
			m.AddL2Laplace(z, b)
			r := math.Sqrt(dot(z, z))
			radii[k] = r
			sum += r
			for i := range z {
				dirSum[i] += z[i] / r
			}
		}
		if lim := zBound * math.Sqrt(float64(d)) * b / math.Sqrt(n); math.Abs(sum/n-float64(d)*b) > lim {
			t.Errorf("d = %d: mean ‖z‖ = %g, want %g ± %g", d, sum/n, float64(d)*b, lim)
		}
		gamma := distuv.Gamma{Alpha: float64(d), Beta: 1 / b}
		if dist := ksDistance(radii, gamma.CDF); dist > ksCritical(n) {
			t.Errorf("d = %d: KS distance of ‖z‖ from Gamma(%d, %g) = %.5f > %.5f", d, d, b, dist, ksCritical(n))
		}
		var stat float64
		for i := range dirSum {
			mu := dirSum[i] / n
			stat += mu * mu
		}
		stat *= n * float64(d)
		if crit := (distuv.ChiSquared{K: float64(d)}).Quantile(1 - 1e-6); stat > crit {
			t.Errorf("d = %d: direction mean n·d·‖ū‖² = %.2f > χ²_%d quantile %.2f", d, stat, d, crit)
		}
	}
	one := make([]float64, n)
	for i := range one {
		m.AddL2Laplace(one[i:i+1], b)
	}
	if dist := ksDistance(one, laplaceCDF(b)); dist > ksCritical(n) {
		t.Errorf("d = 1: KS distance from Laplace(%g) = %.5f > %.5f", b, dist, ksCritical(n))
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
