package dp

import (
	"math"
	"testing"
)

// google/differential-privacy, python/dp_accounting/dp_accounting/rdp/
// rdp_privacy_accountant_test.py, test_compute_epsilon_delta_pure_dp:
// orders 2…32, constant RDP 1.1 (pure DP), δ = 1e-5 → ε = 1.32783806176 at
// order 32 ("computed by hand"; it is the CKS20 formula:
// 1.1 + log(31/32) − (log 1e-5 + log 32)/31).
func TestRDPEpsilonReferencePure(t *testing.T) {
	var orders, taus []float64
	for a := 2; a <= 32; a++ {
		orders = append(orders, float64(a))
		taus = append(taus, 1.1)
	}
	eps, order, err := RDPEpsilon(orders, taus, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if eps < 1.32783806176-1e-11 || math.Abs(eps-1.32783806176) > 1e-10 || order != 32 {
		t.Fatalf("ε = %.12g at α = %v, want 1.32783806176 at 32", eps, order)
	}
}

// Same file, test_compute_epsilon_delta_gaussian: a Gaussian with noise
// multiplier 4.530877117, orders 1.001…99.999 step 0.001, is exactly
// (1, 1e-6)-DP by the CKS conversion (assertAlmostEqual: 7 places).
func TestRDPEpsilonReferenceGaussian(t *testing.T) {
	var orders, taus []float64
	for i := 1001; i < 100000; i++ {
		a := 0.001 * float64(i)
		orders = append(orders, a)
		taus = append(taus, GaussianRDP(a, 1, 4.530877117))
	}
	eps, _, err := RDPEpsilon(orders, taus, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(eps-1) > 5e-8 {
		t.Fatalf("ε = %.10g, want 1 (7 places)", eps)
	}
}

// One Gaussian release, Δ = σ = 1, δ = 1e-5. The classic conversion
// ε(α) = α/2 + log(1/δ)/(α−1) is minimized at α* = 1 + √(2 log(1/δ))·σ/Δ
// (set the derivative 1/2 − log(1/δ)/(α−1)² to 0) = 5.7985259121880812,
// with ε* = ½ + √(2 log(1/δ)) = 5.2985259121880812 (log 1e5 =
// 11.512925464970229). On the grid the accountant is ≥ ε* and within 0.1%.
// The CKS conversion is smaller: its minimum over a 64-per-octave grid is
// 4.7284458244759090 (mpmath), and the exact GDP ε = 4.3771780956812246
// is smaller still (GDP is exact for Gaussians).
func TestRDPGaussianClassicOptimum(t *testing.T) {
	rep, err := Compose([]Release{{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: 1}}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	classic := rep.Method(MethodRDPClassic)
	const epsStar, alphaStar = 5.2985259121880812, 5.7985259121880812
	if classic.Epsilon < epsStar || classic.Epsilon > epsStar*1.001 {
		t.Errorf("classic ε = %.10g, want ≥ %.10g within 0.1%%", classic.Epsilon, epsStar)
	}
	if math.Abs(classic.Order-alphaStar) > 0.05*(alphaStar-1) {
		t.Errorf("classic α = %v, want ≈ %v", classic.Order, alphaStar)
	}
	cks := rep.Method(MethodRDP)
	if !(cks.Epsilon <= classic.Epsilon) {
		t.Errorf("CKS ε %v > classic %v", cks.Epsilon, classic.Epsilon)
	}
	if cks.Epsilon < 4.72844582447590 || cks.Epsilon > 4.7284458244759090*1.001 {
		t.Errorf("CKS ε = %.10g, want ≈ 4.7284458245 (≥ the continuous optimum)", cks.Epsilon)
	}
	gdp := rep.Method(MethodGDP)
	if !(gdp.Epsilon <= cks.Epsilon) {
		t.Errorf("GDP ε %v > RDP ε %v", gdp.Epsilon, cks.Epsilon)
	}
	if rep.Best.Method != MethodGDP || rep.Best.Epsilon != gdp.Epsilon {
		t.Errorf("best = %+v, want the GDP estimate", rep.Best)
	}
}

// The CKS conversion is never above the classic one, at every order, and
// the reported value is an upper bound on the plain-float formula.
func TestRDPToDPCKSBelowClassic(t *testing.T) {
	for _, a := range []float64{1.0078125, 1.1, 1.5, 2, 3, 10, 100, 1e4} {
		for _, tau := range []float64{0, 0.01, 0.3, 2, 50} {
			for _, d := range []float64{0.5, 1e-5, 1e-12} {
				k, err := RDPToDP(a, tau, d)
				if err != nil {
					t.Fatal(err)
				}
				c, _ := RDPToDPClassic(a, tau, d)
				if k > c {
					t.Errorf("α=%v τ=%v δ=%v: CKS %v > classic %v", a, tau, d, k, c)
				}
				// The formula in plain float64; its own rounding error is a
				// few u times the sum of its terms' magnitudes.
				terms := []float64{tau, math.Log(a-1) - math.Log(a), -math.Log(d) / (a - 1), -math.Log(a) / (a - 1)}
				plain, mag := 0.0, 0.0
				for _, x := range terms {
					plain += x
					mag += math.Abs(x)
				}
				if k < math.Max(plain-8*acctU*mag, 0) {
					t.Errorf("α=%v τ=%v δ=%v: CKS %v below the formula %v", a, tau, d, k, plain)
				}
				if plainC := tau + math.Log(1/d)/(a-1); c < plainC || relErr(c, plainC) > 1e-13 {
					t.Errorf("α=%v τ=%v δ=%v: classic %v, formula %v", a, tau, d, c, plainC)
				}
			}
		}
	}
}

// RDP composes additively (Mironov Prop 1): the curve of a set of releases
// is the sum of the releases' curves, and Count multiplies.
func TestRDPCompositionIsAdditive(t *testing.T) {
	rs := []Release{
		{Mechanism: MechanismGaussian, Sensitivity: 2, Sigma: 3},
		{Mechanism: MechanismLaplace, Sensitivity: 1, Scale: 2, Count: 3},
		{Mechanism: MechanismPure, Epsilon: 0.2},
		{Mechanism: MechanismZCDP, Rho: 0.01},
	}
	s := acctSummarize(rs)
	for _, a := range []float64{1.5, 2, 8, 64} {
		want := GaussianRDP(a, 2, 3) + 3*LaplaceRDP(a, 1, 2) + PureRDP(a, 0.2) + a*0.01
		got := s.rdpCurveUp(a)
		if got < want*(1-1e-15) || relErr(got, want) > 1e-13 {
			t.Errorf("α=%v: curve %v, sum of parts %v", a, got, want)
		}
	}
	if g := GaussianRDP(3, 2, 3); relErr(g, 3*4.0/18) > 1e-15 {
		t.Errorf("Gaussian RDP α=3, Δ=2, σ=3 = %v, want αΔ²/2σ² = 2/3", g)
	}
}

// laplaceRDPByIntegral is D_α(Lap(0, b) ‖ Lap(1, b)) = 1/(α−1) log ∫ p^α q^{1−α}
// by Simpson on the three pieces where the integrand is smooth.
func laplaceRDPByIntegral(alpha, b float64) float64 {
	f := func(x float64) float64 {
		return math.Exp(-(alpha*math.Abs(x)+(1-alpha)*math.Abs(x-1))/b) / (2 * b)
	}
	simpson := func(lo, hi float64, n int) float64 {
		h := (hi - lo) / float64(n)
		s := f(lo) + f(hi)
		for i := 1; i < n; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			s += w * f(lo+float64(i)*h)
		}
		return s * h / 3
	}
	w := 80 * b
	i := simpson(-w, 0, 40000) + simpson(0, 1, 2000) + simpson(1, 1+w, 40000)
	return math.Log(i) / (alpha - 1)
}

// Laplace RDP (Mironov Prop 6) against the numerical integral, and its
// limits: α → ∞ gives the pure ε = Δ₁/b, α → 1 the KL divergence
// 1/b + e^{−1/b} − 1 (e.g. e^{−1} = 0.36787944117144233 at b = 1).
func TestLaplaceRDP(t *testing.T) {
	for _, b := range []float64{0.5, 1, 3} {
		for _, a := range []float64{1.5, 2, 5, 20} {
			got, want := LaplaceRDP(a, 1, b), laplaceRDPByIntegral(a, b)
			if got < want*(1-1e-9) || relErr(got, want) > 1e-8 {
				t.Errorf("b=%v α=%v: τ = %.12g, integral %.12g", b, a, got, want)
			}
		}
		if got := LaplaceRDP(1e12, 1, b); relErr(got, 1/b) > 1e-9 {
			t.Errorf("b=%v α=1e12: τ = %v, want 1/b = %v", b, got, 1/b)
		}
		if got := LaplaceRDP(math.Inf(1), 1, b); got < 1/b || relErr(got, 1/b) > 1e-15 {
			t.Errorf("b=%v α=∞: τ = %v, want 1/b", b, got)
		}
		// D_α is increasing in α, so D_{1+1e-7} ≥ KL; its slope at α = 1
		// is half the variance of the privacy loss, ≤ (1/b)²/2, so it
		// exceeds KL by ≤ 1e-7/(2b²), plus the rounding allowance, which
		// near α = 1 is ~24u/(α−1) ≈ 3e-8 (the log of a number within
		// 1e-7 of 1, divided by α − 1).
		kl := 1/b + math.Exp(-1/b) - 1
		if got := LaplaceRDP(1+1e-7, 1, b); got < kl || got-kl > 1e-7/(2*b*b)+5e-8 {
			t.Errorf("b=%v α→1: τ = %.12g, want KL %.12g", b, got, kl)
		}
	}
	if kl := LaplaceRDP(1+1e-7, 1, 1); math.Abs(kl-0.36787944117144233) > 1e-7 {
		t.Errorf("KL at b = 1: %v, want e^{−1}", kl)
	}
	// Scaling: sensitivity Δ₁ and scale b enter only through Δ₁/b.
	if x, y := LaplaceRDP(3, 2, 4), LaplaceRDP(3, 1, 2); relErr(x, y) > 1e-15 {
		t.Errorf("Δ=2,b=4: %v ≠ Δ=1,b=2: %v", x, y)
	}
}

// The vector claim of LaplaceRDP: splitting an ℓ1 shift across coordinates
// never costs more than putting it on one (superadditivity of the
// one-dimensional divergence).
func TestLaplaceRDPSuperadditive(t *testing.T) {
	for _, a := range []float64{1.25, 2, 10, 100} {
		for _, split := range []float64{0.1, 0.3, 0.5} {
			whole := LaplaceRDP(a, 1, 0.7)
			parts := laplaceRDPByIntegral(a, 0.7/split) + laplaceRDPByIntegral(a, 0.7/(1-split))
			if parts > whole*(1+1e-9) {
				t.Errorf("α=%v split %v: parts %v > whole %v", a, split, parts, whole)
			}
		}
	}
}

// Pure ε-DP as RDP: equal to the exact divergence of randomized response
// (the worst case), and never above ε or αε²/2.
func TestPureRDP(t *testing.T) {
	for _, eps := range []float64{1e-6, 0.01, 0.1, 1, 5} {
		for _, a := range []float64{1.0078125, 1.5, 2, 10, 100, 1e4} {
			got := PureRDP(a, eps)
			p := math.Exp(eps) / (1 + math.Exp(eps))
			q := 1 - p
			rr := math.Log(math.Pow(p, a)*math.Pow(q, 1-a)+math.Pow(q, a)*math.Pow(p, 1-a)) / (a - 1)
			// rr in plain float64 is accurate to ~4u/((α−1)·rr) relative
			// (the log of a number near 1), hence the tolerance.
			tol := 1e-12 + 8*acctU/((a-1)*rr)
			if a*eps < 30 && eps > 1e-3 && (got < rr*(1-tol) || relErr(got, rr) > tol+1e-9) {
				t.Errorf("ε=%v α=%v: τ = %.15g, randomized response %.15g", eps, a, got, rr)
			}
			if got > eps || got > a*eps*eps/2*(1+1e-12) {
				t.Errorf("ε=%v α=%v: τ = %v above min(ε, αε²/2)", eps, a, got)
			}
		}
	}
	// The two evaluation branches meet at αε = 600.
	x, y := PureRDP(599.999/2, 2), PureRDP(600.001/2, 2)
	if math.Abs(x-y) > 1e-6 {
		t.Errorf("branches disagree: %v vs %v", x, y)
	}
	// Small ε: τ ≈ αε²/2 (the RR divergence is αε²/2 − O(ε⁴)).
	if got := PureRDP(3, 1e-6); relErr(got, 3e-12/2) > 1e-6 {
		t.Errorf("PureRDP(3, 1e-6) = %v, want ≈ 1.5e-12", got)
	}
}
