package dp

import (
	"math"
	"testing"
)

// subsampledEpsClassic is the classic conversion (Mironov Prop 3) minimized
// over the integer orders, as TF-Privacy's compute_rdp/get_privacy_spent
// did when these reference values were published.
func subsampledEpsClassic(q, z float64, steps int, delta float64) float64 {
	best := math.Inf(1)
	for a := 2; a <= SubsampledMaxOrder; a++ {
		e, _ := RDPToDPClassic(float64(a), float64(steps)*SubsampledGaussianRDP(a, q, z), delta)
		best = math.Min(best, e)
	}
	return best
}

// Published values of the moments/RDP accountant:
//   - Abadi et al. 2016 (CCS, §5.2 / Fig. 2): q = 0.01, σ = 4, 10 000
//     steps, δ = 1e-5 → ε ≈ 1.26;
//   - TF-Privacy's MNIST DP-SGD tutorial table: n = 60 000, batch 256
//     (q = 256/60000), noise multiplier 1.1, 60 epochs (14 062 steps),
//     δ = 1e-5 → ε = 3.01.
//
// Their accountants use the classic conversion and fractional orders too;
// our integer orders may only be slightly larger. The CKS conversion
// (RDPToDP, what SubsampledGaussianEpsilon uses) must be below the classic.
func TestSubsampledGaussianReferenceValues(t *testing.T) {
	for _, c := range []struct {
		q, z  float64
		steps int
		want  float64
	}{{0.01, 4, 10000, 1.26}, {256.0 / 60000, 1.1, 14062, 3.01}} {
		cl := subsampledEpsClassic(c.q, c.z, c.steps, 1e-5)
		if cl < c.want-0.01 || cl > c.want*1.03 {
			t.Errorf("q=%g z=%g T=%d: classic ε = %.4f, published %.2f", c.q, c.z, c.steps, cl, c.want)
		}
		e, _, err := SubsampledGaussianEpsilon(c.q, c.z, c.steps, 1e-5, AddRemove)
		if err != nil {
			t.Fatal(err)
		}
		if !(e <= cl) || e < 0.7*cl {
			t.Errorf("q=%g z=%g T=%d: CKS ε = %.4f, classic %.4f", c.q, c.z, c.steps, e, cl)
		}
	}
}

// The binomial formula equals the defining expectation
// E_{x∼N(0,z²)}[((1−q) + q·e^{(2x−1)/(2z²)})^α], integrated numerically
// (Simpson's rule on ±40z, 200 000 intervals), to 1e-6 relative.
func TestSubsampledGaussianRDPMatchesIntegral(t *testing.T) {
	for _, c := range []struct {
		q, z  float64
		alpha int
	}{{0.01, 1.1, 2}, {0.01, 1.1, 8}, {0.1, 2, 5}, {0.3, 0.8, 3}, {0.004, 1.5, 32}} {
		a := float64(c.alpha)
		f := func(x float64) float64 {
			r := (1 - c.q) + c.q*math.Exp((2*x-1)/(2*c.z*c.z))
			return math.Exp(a*math.Log(r) - x*x/(2*c.z*c.z) - math.Log(c.z*math.Sqrt(2*math.Pi)))
		}
		const N = 200000
		lo, hi := -40*c.z, 40*c.z
		h := (hi - lo) / N
		s := f(lo) + f(hi)
		for i := 1; i < N; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			s += w * f(lo+float64(i)*h)
		}
		want := math.Log(s*h/3) / (a - 1)
		got := SubsampledGaussianRDP(c.alpha, c.q, c.z)
		if math.Abs(got-want) > 1e-6*want+1e-12 || got < want*(1-1e-9) {
			t.Errorf("q=%g z=%g α=%d: formula %v, integral %v", c.q, c.z, c.alpha, got, want)
		}
	}
}

// Edge cases: q = 1 is the plain Gaussian α/(2z²), q = 0 costs nothing, and
// the bound grows with q and shrinks with z; replace-one costs more than
// add/remove but at most what the weak triangle inequality allows.
func TestSubsampledGaussianRDPShape(t *testing.T) {
	if g, w := SubsampledGaussianRDP(7, 1, 1.3), 7/(2*1.3*1.3); math.Abs(g-w) > 1e-12*w {
		t.Errorf("q = 1: %v, want %v", g, w)
	}
	if g := SubsampledGaussianRDP(7, 0, 1.3); g != 0 {
		t.Errorf("q = 0: %v", g)
	}
	prev := 0.0
	for _, q := range []float64{0.001, 0.01, 0.1, 0.5} {
		v := SubsampledGaussianRDP(10, q, 1)
		if !(v > prev) || v > 10/2.0 {
			t.Errorf("q = %g: %v not increasing in q or above the unsampled 5", q, v)
		}
		prev = v
	}
	if SubsampledGaussianRDP(10, 0.01, 2) >= SubsampledGaussianRDP(10, 0.01, 1) {
		t.Error("RDP does not shrink with z")
	}
	ar, _, _ := SubsampledGaussianEpsilon(0.01, 1.5, 1000, 1e-5, AddRemove)
	rp, _, _ := SubsampledGaussianEpsilon(0.01, 1.5, 1000, 1e-5, ReplaceOne)
	if !(rp > ar) || rp > 4*ar {
		t.Errorf("replace-one ε = %v against add/remove %v", rp, ar)
	}
	for _, bad := range []func(){func() { SubsampledGaussianRDP(1, 0.1, 1) }, func() { SubsampledGaussianRDP(3, 1.5, 1) }, func() { SubsampledGaussianRDP(3, 0.1, 0) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("invalid arguments did not panic")
				}
			}()
			bad()
		}()
	}
	if _, _, err := SubsampledGaussianEpsilon(0.1, 1, 10, 1e-5, "swap"); err == nil {
		t.Error("unknown relation accepted")
	}
	if _, _, err := SubsampledGaussianEpsilon(0, 1, 10, 1e-5, AddRemove); err == nil {
		t.Error("q = 0 accepted by the ε function")
	}
}

// The calibrated multiplier meets the target and is minimal: 0.1% less
// noise exceeds it.
func TestSubsampledGaussianMultiplier(t *testing.T) {
	for _, rel := range []Neighbouring{AddRemove, ReplaceOne} {
		z, err := SubsampledGaussianMultiplier(0.01, 500, 1, 1e-5, rel)
		if err != nil {
			t.Fatal(err)
		}
		e, _, _ := SubsampledGaussianEpsilon(0.01, z, 500, 1e-5, rel)
		e2, _, _ := SubsampledGaussianEpsilon(0.01, z*0.999, 500, 1e-5, rel)
		if e > 1 || !(e2 > 1) {
			t.Errorf("%s: z = %v gives ε = %v, 0.999z gives %v", rel, z, e, e2)
		}
	}
}
