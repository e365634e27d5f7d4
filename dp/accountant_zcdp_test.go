package dp

import (
	"math"
	"testing"
)

// RhoForEpsilonDelta inverts Bun–Steinke Prop 1.3 to 1e-12 relative, never
// from above (EpsilonForRho(ρ) ≤ ε), and matches the closed form of [H20]
// §4: √ρ = √(log(1/δ) + ε) − √(log(1/δ)).
func TestRhoForEpsilonDeltaInverse(t *testing.T) {
	for _, eps := range []float64{1e-4, 0.1, 0.5, 1.5, 2.5, 10, 1000} {
		for _, delta := range []float64{0.1, 1e-5, 1.0 / 256, 1e-12} {
			rho, err := RhoForEpsilonDelta(eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			back, err := EpsilonForRho(rho, delta)
			if err != nil {
				t.Fatal(err)
			}
			if back > eps || relErr(back, eps) > 1e-12 {
				t.Errorf("ε=%v δ=%v: ρ = %v maps back to %.17g", eps, delta, rho, back)
			}
			l := math.Log(1 / delta)
			s := math.Sqrt(l+eps) - math.Sqrt(l)
			if relErr(rho, s*s) > 1e-9 { // the textbook form loses digits to cancellation
				t.Errorf("ε=%v δ=%v: ρ = %v, closed form %v", eps, delta, rho, s*s)
			}
		}
	}
}

// [H20] §4's example regime: ε = 0.5, δ = 1e-5 gives
// ρ = (√(11.512925464970229 + 0.5) − √11.512925464970229)² =
// 0.0053139042307705087 (mpmath, 40 digits); the returned ρ is at or
// below it.
func TestRhoForEpsilonDeltaValue(t *testing.T) {
	rho, err := RhoForEpsilonDelta(0.5, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if rho > 0.0053139042307705087 || relErr(rho, 0.0053139042307705087) > 1e-13 {
		t.Fatalf("ρ = %.17g", rho)
	}
}

// Gaussian ρ = Δ²/(2σ²) (Bun–Steinke Prop 1.6): Δ = 2, σ = 4 → ρ = 1/8,
// and the zcdp accountant reports EpsilonForRho(1/8, δ)
// = 1/8 + 2√(log(1e5)/8) = 2.5242629560940406 at δ = 1e-5 (by hand:
// log 1e5/8 = 1.4391156831212786, √ = 1.1996314780470203, ×2 + 0.125).
// The exact GDP ε is below the zCDP conversions, and the RDP route is
// below Prop 1.3.
func TestZCDPGaussian(t *testing.T) {
	rep, err := Compose([]Release{{Mechanism: MechanismGaussian, Sensitivity: 2, Sigma: 4}}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	z := rep.Method(MethodZCDP)
	if z.Epsilon < 2.5242629560940406 || relErr(z.Epsilon, 2.5242629560940406) > 1e-13 {
		t.Fatalf("zcdp ε = %.17g, want 2.5242629560940406", z.Epsilon)
	}
	zr, g := rep.Method(MethodZCDPViaRDP), rep.Method(MethodGDP)
	if !(g.Epsilon <= zr.Epsilon && zr.Epsilon <= z.Epsilon) {
		t.Fatalf("want gdp %v ≤ zcdp-rdp %v ≤ zcdp %v", g.Epsilon, zr.Epsilon, z.Epsilon)
	}
}

// For Gaussians GDP is exact, so it is never above either zCDP conversion
// (nor RDP); over a range of noise levels and δ.
func TestGDPBelowZCDPForGaussians(t *testing.T) {
	for _, sigma := range []float64{0.3, 1, 3, 10, 100} {
		for _, k := range []int{1, 10, 1000} {
			for _, delta := range []float64{1e-3, 1e-6, 1e-10} {
				rep, err := Compose([]Release{{Mechanism: MechanismGaussian, Sensitivity: 1, Sigma: sigma, Count: k}}, delta)
				if err != nil {
					t.Fatal(err)
				}
				g := rep.Method(MethodGDP).Epsilon
				for _, m := range []Method{MethodZCDP, MethodZCDPViaRDP, MethodRDP, MethodRDPClassic} {
					if e := rep.Method(m).Epsilon; !(g <= e) {
						t.Errorf("σ=%v k=%v δ=%v: gdp %v > %s %v", sigma, k, delta, g, m, e)
					}
				}
				if rep.Best.Epsilon != g {
					t.Errorf("σ=%v k=%v δ=%v: best %v is not gdp %v", sigma, k, delta, rep.Best.Epsilon, g)
				}
			}
		}
	}
}

// ZCDPEpsilonViaRDP is never above Prop 1.3 by more than the grid's loss
// (Prop 1.3 is the classic conversion minimized over continuous α, and
// CKS ≤ classic pointwise): check it is ≤ Prop 1.3 outright on a range.
func TestZCDPViaRDPBelowProp13(t *testing.T) {
	for _, rho := range []float64{1e-5, 1e-3, 0.1, 1, 10} {
		for _, delta := range []float64{0.01, 1e-5, 1e-10} {
			a, _, err := ZCDPEpsilonViaRDP(rho, delta)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := EpsilonForRho(rho, delta)
			if a > b {
				t.Errorf("ρ=%v δ=%v: via RDP %v > Prop 1.3 %v", rho, delta, a, b)
			}
		}
	}
}
