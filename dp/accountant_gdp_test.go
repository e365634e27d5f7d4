package dp

import (
	"math"
	"testing"
)

// gdpDeltaByIntegral computes δ_μ(ε) = ∫ (p(x) − e^ε q(x))₊ dx for
// P = N(μ, 1), Q = N(0, 1) — the hockey-stick divergence, the exact δ(ε)
// of the Gaussian mechanism by definition — by composite Simpson on
// [x*, x* + 40], where x* = ε/μ + μ/2 is the point where the likelihood
// ratio e^{μx − μ²/2} crosses e^ε (below it the integrand is 0). The
// integrand is written φ(x−μ)·(1 − e^{ε−μx+μ²/2}) to avoid cancellation.
// It shares no code with the accountant (no Φ, no erfc).
func gdpDeltaByIntegral(mu, eps float64) float64 {
	x0 := eps/mu + mu/2
	f := func(x float64) float64 {
		z := x - mu
		return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) * -math.Expm1(eps-mu*x+mu*mu/2)
	}
	const n = 40000
	h := 40.0 / n
	s := f(x0) + f(x0+40)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(x0+float64(i)*h)
	}
	return s * h / 3
}

// gdpDeltaPlain is the textbook closed form in plain float64, for checks in
// ordinary ranges.
func gdpDeltaPlain(mu, eps float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return phi(-eps/mu+mu/2) - math.Exp(eps)*phi(-eps/mu-mu/2)
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// μ = 1, ε = 0: δ(0) = Φ(1/2) − Φ(−1/2) = 2Φ(1/2) − 1 = erf(1/(2√2))
// = 0.38292492254802620727… (mpmath, 40 digits).
func TestGaussianDPDeltaAtZero(t *testing.T) {
	const want = 0.3829249225480262
	got := GaussianDPDelta(1, 0)
	if got < want*(1-1e-15) || relErr(got, want) > 1e-12 {
		t.Fatalf("δ_1(0) = %.17g, want %.17g (≥, within 1e-12)", got, want)
	}
	if e := math.Erf(0.5 / math.Sqrt2); relErr(got, e) > 1e-12 {
		t.Fatalf("δ_1(0) = %.17g, erf(1/(2√2)) = %.17g", got, e)
	}
}

// Reference values of google/differential-privacy,
// go/noise/gaussian_noise_test.go (TestDeltaForGaussian and the threshold
// cases, "deltaNoise is chosen to get a sigma of 1"), computed there by the
// same Balle–Wang formula with l2 sensitivity √l0·lInf; μ = Δ/σ. Each was
// rechecked with mpmath at 40 digits (second column).
func TestGaussianDPDeltaReferenceValues(t *testing.T) {
	for _, c := range []struct {
		name          string
		mu, eps       float64
		google, mpm   float64
		relTolAgainst float64
	}{
		{"σ=10 Δ=1 ε=0.1", 0.1, 0.1, 0.008751768145810, 0.008751768145809594, 1e-11},
		{"σ=10 Δ=5 ε=ln3", 0.5, math.Log(3), 0.004159742234000802, 0.004159742234000787, 1e-11},
		{"σ=0.5 Δ=1 ε=0", 2, 0, 0.6826894921370859, 0.6826894921370859, 1e-12},
		{"σ=1 Δ=1 ε=ln3", 1, math.Log(3), 0.10985556344445052, 0.10985556344445049, 1e-12},
		{"σ=1 Δ=√2 ε=ln3", math.Sqrt2, math.Log(3), 0.26546844106038714, 0.26546844106038711, 1e-12},
		// "small delta" case: Google's value 3.129776773173962e-141 is off
		// by 6e-11 relative; mpmath gives 3.1297767729801340e-141. Here
		// ε/μ = 25 ≫ μ and δ is a difference of two terms equal to 1 part
		// in 1250, so the accountant's rounding allowance is ~4e-9.
		{"σ=500 Δ=10 ε=0.5", 0.02, 0.5, 3.129776773173962e-141, 3.129776772980134e-141, 1e-8},
	} {
		got := GaussianDPDelta(c.mu, c.eps)
		if got < c.mpm*(1-1e-14) {
			t.Errorf("%s: δ = %.17g below the exact %.17g", c.name, got, c.mpm)
		}
		if r := relErr(got, c.mpm); r > c.relTolAgainst {
			t.Errorf("%s: δ = %.17g, mpmath %.17g (rel %.2g)", c.name, got, c.mpm, r)
		}
		if r := relErr(got, c.google); r > 1e-8 {
			t.Errorf("%s: δ = %.17g, google/differential-privacy %.17g (rel %.2g)", c.name, got, c.google, r)
		}
	}
}

// The closed form against the brute-force integral of the two Gaussians'
// likelihood ratio, on a grid of μ and ε: within 1e-8 (the accountant's
// rounding allowance grows to a few 1e-9 where ε/μ ≫ μ, e.g. μ = 0.25,
// ε = 5), and never below it by more than the integral's own error
// (Simpson with h = 1e-3 on a smooth integrand: < 1e-12 relative).
func TestGaussianDPDeltaMatchesIntegral(t *testing.T) {
	for _, mu := range []float64{0.25, 0.5, 1, 2, 4} {
		for _, eps := range []float64{0, 0.1, 0.5, 1, 2, 5} {
			want := gdpDeltaByIntegral(mu, eps)
			if want < 1e-200 {
				continue
			}
			got := GaussianDPDelta(mu, eps)
			if got < want*(1-1e-12) {
				t.Errorf("μ=%v ε=%v: δ = %.15g below the integral %.15g", mu, eps, got, want)
			}
			if r := relErr(got, want); r > 1e-8 {
				t.Errorf("μ=%v ε=%v: δ = %.15g, integral %.15g (rel %.2g)", mu, eps, got, want, r)
			}
		}
	}
}

// Large μ and ε: e^ε overflows float64 for ε > 709.8; the log-space
// evaluation still gives δ. μ = 40, ε = 1000: mpmath (50 digits) gives
// δ = 2.5362965149565509e-7.
func TestGaussianDPDeltaLargeEpsilon(t *testing.T) {
	const want = 2.5362965149565509e-7
	got := GaussianDPDelta(40, 1000)
	if got < want*(1-1e-12) || relErr(got, want) > 1e-10 {
		t.Fatalf("δ_40(1000) = %.17g, want %.17g", got, want)
	}
}

// ε at δ: μ = 1, δ = 1e-5; the root of δ_1(ε) = 1e-5 is
// 4.3771780956812246277 (mpmath findroot, 40 digits). The returned ε is an
// upper bound within 1e-10, and the independent integral at it is ≤ δ.
func TestGaussianDPEpsilonRoot(t *testing.T) {
	const want = 4.377178095681224627
	got, err := GaussianDPEpsilon(1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if got < want || got-want > 1e-10 {
		t.Fatalf("ε = %.17g, want %.17g rounded up (within 1e-10)", got, want)
	}
	if d := gdpDeltaByIntegral(1, got); d > 1e-5*(1+1e-9) {
		t.Fatalf("integral δ(ε_returned) = %.15g > 1e-5", d)
	}
}

// Every ε is rounded up and tight: on a grid of μ and δ, δ(ε) ≤ δ at the
// returned ε (plain closed form, and the integral), and δ(ε(1 − 1e-9)) > δ.
func TestGaussianDPEpsilonRoundsUp(t *testing.T) {
	for _, mu := range []float64{0.01, 0.1, 0.3, 1, 3, 10} {
		for _, delta := range []float64{0.3, 1e-3, 1e-5, 1e-9, 1e-15} {
			eps, err := GaussianDPEpsilon(mu, delta)
			if err != nil {
				t.Fatal(err)
			}
			if eps == 0 {
				if gdpDeltaPlain(mu, 0) > delta {
					t.Errorf("μ=%v δ=%v: ε = 0 but δ(0) = %v", mu, delta, gdpDeltaPlain(mu, 0))
				}
				continue
			}
			if d := gdpDeltaPlain(mu, eps); d > delta*(1+1e-9) {
				t.Errorf("μ=%v δ=%v: δ(ε=%v) = %v > δ", mu, delta, eps, d)
			}
			if mu >= 0.25 {
				if d := gdpDeltaByIntegral(mu, eps); d > delta*(1+1e-8) {
					t.Errorf("μ=%v δ=%v: integral δ(ε=%v) = %v > δ", mu, delta, eps, d)
				}
			}
			if d := gdpDeltaPlain(mu, eps*(1-1e-9)); d <= delta {
				t.Errorf("μ=%v δ=%v: ε = %v not tight: δ(ε(1−1e-9)) = %v ≤ δ", mu, delta, eps, d)
			}
		}
	}
}

// μ = 40 needs ε near 1000, where e^ε overflows: the log-space search still
// finds it. The root of δ_40(ε) = 1e-10 is 1053.5257555853016 (mpmath).
func TestGaussianDPEpsilonHuge(t *testing.T) {
	const want = 1053.5257555853016
	got, err := GaussianDPEpsilon(40, 1e-10)
	if err != nil {
		t.Fatal(err)
	}
	if got < want*(1-1e-15) || relErr(got, want) > 1e-12 {
		t.Fatalf("ε = %.17g, want %.17g", got, want)
	}
}

// Composition of k identical Gaussian releases equals one release with
// σ/√k (DRS Cor 3.3): 16 releases of σ = 4 and one of σ = 1 (Δ = 1) are
// both μ = 1, with or without Count.
func TestGDPCompositionEqualsSingleRelease(t *testing.T) {
	one := []Release{{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 1}}
	counted := []Release{{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 4, Count: 16}}
	var listed []Release
	for i := 0; i < 16; i++ {
		listed = append(listed, Release{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 4})
	}
	var eps []float64
	for _, rs := range [][]Release{one, counted, listed} {
		rep, err := Compose(rs, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, rep.Method(MethodGDP).Epsilon)
	}
	for _, e := range eps[1:] {
		if relErr(e, eps[0]) > 1e-12 {
			t.Fatalf("ε = %v, want all equal (k releases of σ√k = one of σ)", eps)
		}
	}
	if relErr(eps[0], 4.377178095681224627) > 1e-10 {
		t.Fatalf("ε = %v, want 4.3771780956812246 (μ = 1, δ = 1e-5)", eps[0])
	}
}

// Balle & Wang: the analytic σ is never above the classic one for ε < 1,
// meets δ at ε exactly (checked with the plain formula and the integral),
// and is tight (1e-9 less noise violates δ).
func TestAnalyticGaussianSigma(t *testing.T) {
	for _, eps := range []float64{0.05, 0.1, 0.5, 0.9, 0.999} {
		for _, delta := range []float64{1e-3, 1e-5, 1e-8, 1e-12} {
			for _, sens := range []float64{1, 0.3, 7} {
				a, err := AnalyticGaussianSigma(eps, delta, sens)
				if err != nil {
					t.Fatal(err)
				}
				c, err := GaussianSigma(eps, delta, sens)
				if err != nil {
					t.Fatal(err)
				}
				if a > c {
					t.Errorf("ε=%v δ=%v Δ=%v: analytic σ %v > classic %v", eps, delta, sens, a, c)
				}
				if d := gdpDeltaPlain(sens/a, eps); d > delta*(1+1e-9) {
					t.Errorf("ε=%v δ=%v Δ=%v: δ(ε) at σ = %v is %v", eps, delta, sens, a, d)
				}
				if sens/a >= 0.25 {
					if d := gdpDeltaByIntegral(sens/a, eps); d > delta*(1+1e-8) {
						t.Errorf("ε=%v δ=%v Δ=%v: integral δ(ε) at σ = %v is %v", eps, delta, sens, a, d)
					}
				}
				if d := gdpDeltaPlain(sens/(a*(1-1e-9)), eps); d <= delta {
					t.Errorf("ε=%v δ=%v Δ=%v: σ = %v not tight", eps, delta, sens, a)
				}
			}
		}
	}
}

// google/differential-privacy's threshold test cases choose δ so that
// σ = 1 exactly (go/noise/gaussian_noise_test.go): ε = ln 3 with
// (Δ = 1, δ = 0.10985556344445052), (Δ = 0.5, δ = 0.0041597422340007885),
// (Δ = √2, δ = 0.26546844106038714). AnalyticGaussianSigma recovers σ = 1.
func TestAnalyticGaussianSigmaReference(t *testing.T) {
	for _, c := range []struct{ sens, delta float64 }{
		{1, 0.10985556344445052}, {0.5, 0.0041597422340007885}, {math.Sqrt2, 0.26546844106038714},
	} {
		s, err := AnalyticGaussianSigma(math.Log(3), c.delta, c.sens)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("Δ=%v δ=%v: σ = %.15g, want 1", c.sens, c.delta, s)
		}
	}
}

// Dwork & Roth Thm A.1: σ = Δ√(2 ln(1.25/δ))/ε, e.g. Δ = 1, ε = 0.5,
// δ = 1e-5: √(2 ln 125000) / 0.5 = 9.6896105252107788 (by hand:
// ln 125000 = 11.736069016284438).
func TestGaussianSigmaClassic(t *testing.T) {
	s, err := GaussianSigma(0.5, 1e-5, 1)
	if err != nil {
		t.Fatal(err)
	}
	const want = 9.6896105252107788
	if s < want || relErr(s, want) > 1e-13 {
		t.Fatalf("σ = %.17g, want %.17g rounded up", s, want)
	}
	if _, err := GaussianSigma(1, 1e-5, 1); err == nil {
		t.Fatal("GaussianSigma accepted ε = 1, outside Thm A.1")
	}
}

// log Φ: the erfc branch and the asymptotic series agree where both are
// accurate (x ∈ [−37, −20]), and the series continues smoothly past erfc's
// underflow.
func TestLogPhiBranches(t *testing.T) {
	series := func(x float64) float64 {
		tt := 1 / (x * x)
		s := 0.0
		for k := 8; k >= 1; k-- {
			s = -float64(2*k-1) * tt * (1 + s)
		}
		return -0.5*x*x - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log1p(s)
	}
	for x := -37.0; x <= -20; x += 0.37 {
		viaErfc := math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
		if r := relErr(series(x), viaErfc); r > 1e-14 {
			t.Errorf("x=%v: series %v, erfc %v (rel %.2g)", x, series(x), viaErfc, r)
		}
	}
	if got, want := acctLogPhi(-30.0000001), acctLogPhi(-29.9999999); math.Abs(got-want) > 1e-5 {
		t.Errorf("log Φ jumps at −30: %v vs %v", got, want)
	}
	// log Φ(−1000) = −500000 − log(1000) − ½ log 2π + log(1 − 1e-6 + …)
	if got, want := acctLogPhi(-1000), -500000-math.Log(1000)-0.5*math.Log(2*math.Pi)-1e-6; relErr(got, want) > 1e-15 {
		t.Errorf("log Φ(−1000) = %v, want %v", got, want)
	}
}
