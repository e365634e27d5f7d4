package dp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The RDP of the repeated selection by hand at one order, from [PS22]
// Thm 2 with η = 1 and a Gaussian Q: λρ + 2·min_λ̂[(λ̂−1)ρ + L/λ̂] +
// L/(λ−1), here with the minimum found by a scan over λ̂ instead of the
// closed form.
func TestSelectionRDPMatchesTheorem(t *testing.T) {
	for _, c := range []struct{ gamma, mu, alpha float64 }{
		{0.2, 0.5, 8}, {0.1, 0.05, 30}, {0.5, 3, 2}, {0.01, 1, 5},
	} {
		s := Selection{Gamma: c.gamma}
		rho := c.mu * c.mu / 2
		L := math.Log(1 / c.gamma)
		best := math.Inf(1)
		for lh := 1.0; lh < 1e4; lh *= 1.0001 {
			best = math.Min(best, (1-1/lh)*lh*rho+L/lh)
		}
		want := c.alpha*rho + 2*best + math.Log(1/c.gamma)/(c.alpha-1)
		got := s.GDPRDP(c.alpha, c.mu)
		if got < want*(1-1e-6) || got > want*(1+1e-6) {
			t.Errorf("γ=%g μ=%g α=%g: RDP %v, by hand %v", c.gamma, c.mu, c.alpha, got, want)
		}
	}
}

// Selecting costs more than one run and less than K runs composed, and
// more repetitions cost more.
func TestSelectionEpsilonOrdering(t *testing.T) {
	const mu, delta = 0.3, 1e-5
	one, err := GaussianDPEpsilon(mu, delta)
	if err != nil {
		t.Fatal(err)
	}
	prev := one
	for _, g := range []float64{0.5, 0.2, 0.1, 0.02} {
		e, err := SelectionEpsilon(Selection{Gamma: g}, mu, delta)
		if err != nil {
			t.Fatal(err)
		}
		if e <= prev {
			t.Errorf("γ = %g: ε = %v not above %v (one run %v)", g, e, prev, one)
		}
		// Composition of E[K] runs (√E[K]·μ-GDP) is not a bound on random
		// repetition, but the selection must not cost orders of magnitude
		// more than that for these moderate E[K].
		comp, _ := GaussianDPEpsilon(mu*math.Sqrt(1/g), delta)
		if e > 5*comp+2 {
			t.Errorf("γ = %g: ε = %v implausibly above the E[K]-fold composition %v", g, e, comp)
		}
		prev = e
	}
}

// SelectionMu inverts SelectionEpsilon: the calibrated μ reaches ε (within
// the bisection's tolerance) and a slightly larger μ exceeds it.
func TestSelectionMuCalibration(t *testing.T) {
	for _, c := range []struct{ eps, delta, gamma float64 }{{1, 1e-4, 1.0 / 6}, {0.5, 1e-5, 0.25}, {5, 1e-6, 0.1}} {
		s := Selection{Gamma: c.gamma}
		mu, err := SelectionMu(s, c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := SelectionEpsilon(s, mu, c.delta)
		e2, _ := SelectionEpsilon(s, mu*(1+1e-6), c.delta)
		if e > c.eps || e2 <= c.eps*(1-1e-4) {
			t.Errorf("ε=%g δ=%g γ=%g: μ = %v gives ε %v, μ(1+1e-6) gives %v", c.eps, c.delta, c.gamma, mu, e, e2)
		}
	}
	// Selection costs budget: the per-run μ is below the μ one run alone
	// could have at the same (ε, δ).
	mu, _ := SelectionMu(Selection{Gamma: 0.2}, 1, 1e-5)
	if e, _ := GaussianDPEpsilon(mu, 1e-5); !(e < 1) {
		t.Errorf("per-run μ = %v is (%v, 1e-5)-DP alone: selection would be free", mu, e)
	}
	if _, err := SelectionMu(Selection{Gamma: 1}, 1, 1e-6); err == nil {
		t.Error("γ = 1: want an error")
	}
}

// K is geometric with mean 1/γ: over 20 000 draws the sample mean is
// within 5 standard errors (sd of K is √(1−γ)/γ; false-failure rate
// < 10⁻⁶ by the normal approximation, seeded).
func TestSelectionRunsGeometric(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, g := range []float64{0.5, 1.0 / 6, 0.05} {
		s := Selection{Gamma: g}
		const n = 20000
		var sum float64
		for i := 0; i < n; i++ {
			k := s.SampleRuns(rng)
			if k < 1 {
				t.Fatalf("K = %d < 1", k)
			}
			sum += float64(k)
		}
		mean, se := sum/n, math.Sqrt(1-g)/g/math.Sqrt(n)
		if math.Abs(mean-1/g) > 5*se {
			t.Errorf("γ = %g: mean K %v, want %v ± %v", g, mean, 1/g, 5*se)
		}
	}
}
