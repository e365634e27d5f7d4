package dp

import (
	"math"
	"testing"
)

// The exact sampler at small scales: the empirical variance of N_ℤ(0, s²)
// matches the exact variance Σ m²·e^(−m²/2s²)/Σ e^(−m²/2s²). The estimator
// of n = 200 000 draws has standard deviation ≈ √((μ₄ − v²)/n); the test
// allows 6 of them (false failure < 2·10⁻⁹ per scale, by the Gaussian
// approximation of the mean of bounded-moment draws) and its seed is fixed.
func TestAddDiscreteGaussianSmallScaleVariance(t *testing.T) {
	m := NewSeededNoise(3).(*Mechanism)
	for _, s := range []float64{1, 1.7, 3, 10} {
		var z, v, m4 float64
		for k := -int(40 * s); k <= int(40*s); k++ {
			w := math.Exp(-float64(k*k) / (2 * s * s))
			z += w
			v += float64(k*k) * w
			m4 += float64(k*k*k*k) * w
		}
		v /= z
		m4 /= z
		const n = 200000
		x := make([]int64, n)
		m.AddDiscreteGaussian(x, s)
		var mean, sq float64
		for _, xi := range x {
			mean += float64(xi)
			sq += float64(xi * xi)
		}
		mean /= n
		sq /= n
		sd := math.Sqrt((m4 - v*v) / n)
		if math.Abs(sq-v) > 6*sd {
			t.Errorf("s=%v: E[m²] = %.4f, exact %.4f (±%.4f)", s, sq, v, 6*sd)
		}
		if math.Abs(mean) > 6*math.Sqrt(v/n) {
			t.Errorf("s=%v: mean %.4f, want 0 (±%.4f)", s, mean, 6*math.Sqrt(v/n))
		}
	}
}

// RoundRandomized is unbiased: the mean of many roundings of x is x within
// 6 standard deviations (≤ 0.5/√n), false failure < 2·10⁻⁹ per value.
func TestRoundRandomizedUnbiased(t *testing.T) {
	m := NewSeededNoise(4).(*Mechanism)
	const n = 100000
	for _, v := range []float64{0.3, -2.75, 1e6 + 0.125, -0.999} {
		x := make([]float64, n)
		for i := range x {
			x[i] = v
		}
		z := make([]int64, n)
		m.RoundRandomized(z, x)
		sum := 0.0
		for _, zi := range z {
			if float64(zi) != math.Floor(v) && float64(zi) != math.Floor(v)+1 {
				t.Fatalf("%v rounded to %d", v, zi)
			}
			sum += float64(zi)
		}
		if math.Abs(sum/n-v) > 6*0.5/math.Sqrt(n) {
			t.Errorf("mean of roundings of %v is %v", v, sum/n)
		}
	}
}

func TestFWHTInverse(t *testing.T) {
	a := []float64{1, -2, 3.5, 0, 0.25, 7, -1, 2}
	b := append([]float64(nil), a...)
	fwht(b)
	fwht(b)
	for i := range a {
		if math.Abs(b[i]/8-a[i]) > 1e-12 {
			t.Fatalf("H·H/8 ≠ I at %d: %v vs %v", i, b[i]/8, a[i])
		}
	}
}

func ddgSum(t *testing.T, g *DDG, xs [][]float64, n IntegerNoise) []float64 {
	t.Helper()
	sum := make([]uint64, g.D)
	enc := make([]uint64, g.D)
	for _, x := range xs {
		if err := g.Encode(enc, x, n); err != nil {
			t.Fatal(err)
		}
		for i, w := range enc {
			if w>>g.Bits != 0 && g.Bits < 64 {
				t.Fatalf("encoded word %d outside ℤ/2^%d", w, g.Bits)
			}
			sum[i] += w
		}
	}
	out := make([]float64, g.p.Dim)
	if err := g.Decode(out, sum); err != nil {
		t.Fatal(err)
	}
	return out
}

// Encoding K vectors, summing mod 2^b and decoding gives the sum of the
// clipped vectors plus noise of variance ≈ K·(s² + 1/4)·γ² per coordinate
// (rounding adds at most 1/4 per site and coordinate, rotated). The test
// checks the mean squared error over all d coordinates against that
// variance: with d = 256 coordinates the MSE's relative standard deviation
// is ≈ √(2/256) = 0.09, and the bounds [0.5, 1.5]·(K·s²·γ² … K·(s²+¼)·γ²)
// are > 5 of them away (false failure < 10⁻⁶).
func TestDDGEncodeSumDecode(t *testing.T) {
	const d, K = 200, 8
	p := DDGParams{Dim: d, Clip: 1, Sensitivity: 0.01, Scale: 300, Sites: K, RotationSeed: 9}
	g, err := NewDDG(p)
	if err != nil {
		t.Fatal(err)
	}
	if g.D != 256 {
		t.Fatalf("padded dimension %d", g.D)
	}
	n := NewSeededNoise(5).(*Mechanism)
	xs := make([][]float64, K)
	want := make([]float64, d)
	for k := range xs {
		xs[k] = make([]float64, d)
		for i := range xs[k] {
			xs[k][i] = math.Sin(float64(i*(k+1))) / math.Sqrt(d) * 0.9
			want[i] += xs[k][i]
		}
	}
	got := ddgSum(t, g, xs, n)
	gm := g.Params().Gamma
	mse := 0.0
	for i := range got {
		mse += (got[i] - want[i]) * (got[i] - want[i])
	}
	mse /= d
	lo := 0.5 * K * p.Scale * p.Scale * gm * gm
	hi := 1.5 * K * (p.Scale*p.Scale + 0.25) * gm * gm
	if mse < lo || mse > hi {
		t.Fatalf("MSE %.3g outside [%.3g, %.3g]", mse, lo, hi)
	}
}

// A vector above the clip norm is scaled to norm c; all K sites at the
// clip norm in the same direction (the largest sum) decode without
// wrap-around.
func TestDDGClipsAndNeverWraps(t *testing.T) {
	const d, K = 16, 64
	p := DDGParams{Dim: d, Clip: 2, Sensitivity: 0.5, Scale: 1, Sites: K, RotationSeed: 1}
	g, err := NewDDG(p)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, d)
	x[3] = 1000 // clipped to 2
	xs := make([][]float64, K)
	for k := range xs {
		xs[k] = x
	}
	got := ddgSum(t, g, xs, NewSeededNoise(6).(*Mechanism))
	gm := g.Params().Gamma
	// Noise sd per coordinate ≈ √(K(s²+¼))·γ; allow 8 sd.
	tol := 8 * math.Sqrt(K*(1+0.25)) * gm
	for i := range got {
		want := 0.0
		if i == 3 {
			want = K * p.Clip
		}
		if math.Abs(got[i]-want) > tol {
			t.Fatalf("coordinate %d: %v, want %v ± %v (bits %d)", i, got[i], want, tol, g.Bits)
		}
	}
}

// [KLS21] Prop 14's τ and the single-site case.
func TestDDGRDPReferenceValues(t *testing.T) {
	// τ for s = 1, n = 2: 10·exp(−π²).
	if got, want := ddgTau(1, 2), 10*math.Exp(-math.Pi*math.Pi); math.Abs(got-want) > 1e-12*want {
		t.Fatalf("τ(1, 2) = %v, want %v", got, want)
	}
	if ddgTau(5, 1) != 0 {
		t.Fatal("τ for one site must be 0")
	}
	g, err := NewDDG(DDGParams{Dim: 4, Clip: 1, Sensitivity: 1, Gamma: 0.01, Scale: 50, Sites: 4})
	if err != nil {
		t.Fatal(err)
	}
	// One site: the discrete Gaussian's α·Δ²/(2s²) (CKS20), Δ = Δ_ℤ.
	dz := g.IntegerSensitivity()
	if want := 100 + 2 + 0x1p-30*100; math.Abs(dz-want) > 1e-9 {
		t.Fatalf("Δ_ℤ = %v, want %v", dz, want)
	}
	for _, a := range []float64{2, 8, 64} {
		want := a * dz * dz / (2 * 50 * 50)
		if got := g.RDP(a, 1); got < want || got > want*(1+1e-12) {
			t.Fatalf("RDP(%v, n=1) = %v, want %v", a, got, want)
		}
		// n sites: the continuous Gaussian's α·Δ²/(2ns²) up to τ (negligible at s = 50).
		want4 := a * dz * dz / (2 * 4 * 50 * 50)
		if got := g.RDP(a, 4); got < want4 || got > want4*(1+1e-12) {
			t.Fatalf("RDP(%v, n=4) = %v, want %v", a, got, want4)
		}
	}
	// At a small scale τ is visible and only increases the bound.
	g2, _ := NewDDG(DDGParams{Dim: 4, Clip: 1, Sensitivity: 1, Gamma: 0.5, Scale: 1, Sites: 4})
	if g2.RDP(2, 4) <= 2*g2.IntegerSensitivity()*g2.IntegerSensitivity()/(2*4) {
		t.Fatal("τ term missing at s = 1")
	}
}

// Per-site noise of the calibrated DDG with n sites is the central scale
// divided by √n (the pooled utility of secure aggregation), and fewer
// honest sites (collusion, dropouts) certify a larger ε.
func TestCalibrateDDGSplitsTheCentralNoise(t *testing.T) {
	p := DDGParams{Dim: 64, Clip: 1, Sensitivity: 0.02, Sites: 16}
	g1, err := CalibrateDDG(p, 1, 1, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	g16, err := CalibrateDDG(p, 1, 16, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	s1, s16 := g1.Params().Scale, g16.Params().Scale
	if r := s16 * 4 / s1; math.Abs(r-1) > 1e-4 {
		t.Fatalf("per-site scale ×√16 / central scale = %v, want 1", r)
	}
	e16, _ := g16.Epsilon(1, 16, 1e-5)
	e10, _ := g16.Epsilon(1, 10, 1e-5)
	if !(e16 <= 1 && e10 > e16) {
		t.Fatalf("ε with 16 honest sites %v, with 10: %v", e16, e10)
	}
	// The certified central scale is the continuous Gaussian's up to the
	// rounding inflation (Δ_ℤ/(Δ/γ) − 1 ≈ 2⁻¹⁰) and the RDP conversion:
	// compare with the RDP-optimal Gaussian σ at the same Δ_ℤ.
	if e, _ := g1.Epsilon(1, 1, 1e-5); e > 1 || e < 0.99 {
		t.Fatalf("calibrated ε = %v, want just below 1", e)
	}
	// Against the exact continuous Gaussian at the same (ε, δ, Δ): the
	// DDG's central noise s·γ is larger only by the rounding inflation
	// (2⁻¹⁰) and the RDP → (ε, δ) conversion (≈ 8.5% at ε = 1, δ = 10⁻⁵:
	// RDP is not tight for Gaussians, GDP is); never smaller.
	sig, err := AnalyticGaussianSigma(1, 1e-5, p.Sensitivity)
	if err != nil {
		t.Fatal(err)
	}
	if r := s1 * g1.Params().Gamma / sig; r < 1 || r > 1.1 {
		t.Fatalf("DDG central noise / exact Gaussian σ = %v, want in [1, 1.1]", r)
	}
}

func TestNewDDGRejectsBadParams(t *testing.T) {
	ok := DDGParams{Dim: 4, Clip: 1, Sensitivity: 0.1, Scale: 10, Sites: 2}
	for name, mut := range map[string]func(*DDGParams){
		"zero dim":       func(p *DDGParams) { p.Dim = 0 },
		"NaN clip":       func(p *DDGParams) { p.Clip = math.NaN() },
		"zero Δ":         func(p *DDGParams) { p.Sensitivity = 0 },
		"Δ above 2c":     func(p *DDGParams) { p.Sensitivity = 3 },
		"scale below 1":  func(p *DDGParams) { p.Scale = 0.5 },
		"no sites":       func(p *DDGParams) { p.Sites = 0 },
		"too many bits":  func(p *DDGParams) { p.Gamma = 1e-20 },
		"negative gamma": func(p *DDGParams) { p.Gamma = -1 },
	} {
		p := ok
		mut(&p)
		if _, err := NewDDG(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewDDG(ok); err != nil {
		t.Fatal(err)
	}
}

// EpsilonWeighted: weights all 1 are Epsilon bit for bit (and
// CalibrateDDGWeighted is CalibrateDDG); one release of weight w is
// exactly a release of sensitivity w·Δ at the same granularity; the
// composition is symmetric in the order of the releases; a lighter
// release costs less, and with (1/√3, 1) the centre's round costs a
// third of the statistics' RDP up to the rounding's √D term; weights
// outside (0, 1] are refused.
func TestDDGEpsilonWeighted(t *testing.T) {
	p := DDGParams{Dim: 45, Clip: 300, Sensitivity: 2, Scale: 2e4, Sites: 4, Copies: 4, RotationSeed: 9}
	g, err := NewDDG(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rounds := range []int{1, 2, 5} {
		ones := make([]float64, rounds)
		for i := range ones {
			ones[i] = 1
		}
		for _, n := range []int{1, 3, 12} {
			a, err1 := g.Epsilon(rounds, n, 1e-5)
			b, err2 := g.EpsilonWeighted(ones, n, 1e-5)
			if err1 != nil || err2 != nil || a != b {
				t.Fatalf("%d rounds, n = %d: Epsilon %v (%v), EpsilonWeighted %v (%v)", rounds, n, a, err1, b, err2)
			}
		}
		c1, err1 := CalibrateDDG(p, rounds, 12, 1, 1e-5)
		c2, err2 := CalibrateDDGWeighted(p, ones, 12, 1, 1e-5)
		if err1 != nil || err2 != nil || c1.Params() != c2.Params() {
			t.Fatalf("%d rounds: CalibrateDDG %+v (%v), weighted %+v (%v)", rounds, c1.Params(), err1, c2.Params(), err2)
		}
	}
	w := 1 / math.Sqrt(3)
	q := g.Params()
	q.Sensitivity *= w
	gw, err := NewDDG(q) // the same γ (filled in g's params), Δ scaled
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := gw.Epsilon(1, 12, 1e-5)
	b, err2 := g.EpsilonWeighted([]float64{w}, 12, 1e-5)
	if err1 != nil || err2 != nil || a != b {
		t.Fatalf("weight 1/√3: %v (%v); sensitivity Δ/√3: %v (%v)", b, err2, a, err1)
	}
	x, err1 := g.EpsilonWeighted([]float64{w, 1}, 12, 1e-5)
	y, err2 := g.EpsilonWeighted([]float64{1, w}, 12, 1e-5)
	z, err3 := g.Epsilon(2, 12, 1e-5)
	if err1 != nil || err2 != nil || err3 != nil || x != y || !(x < z) {
		t.Fatalf("(1/√3, 1) %v, (1, 1/√3) %v, (1, 1) %v (%v, %v, %v)", x, y, z, err1, err2, err3)
	}
	for _, alpha := range []float64{1.5, 4, 32} {
		r := g.rdp(alpha, 12, g.sensAt(w)) / g.RDP(alpha, 12)
		if math.Abs(r-1.0/3) > 2e-3 {
			t.Fatalf("order %v: the weighted round's RDP is %v of the full one's, want ≈ 1/3", alpha, r)
		}
	}
	for _, bad := range [][]float64{nil, {0}, {-0.5}, {1.01}, {math.NaN()}, {1, math.Inf(1)}} {
		if _, err := g.EpsilonWeighted(bad, 12, 1e-5); err == nil {
			t.Fatalf("weights %v accepted", bad)
		}
		if _, err := CalibrateDDGWeighted(p, bad, 12, 1, 1e-5); err == nil {
			t.Fatalf("calibration with weights %v accepted", bad)
		}
	}
}
