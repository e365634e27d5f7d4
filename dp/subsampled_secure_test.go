package dp

import (
	"math"
	"testing"
)

// The secure subsampled certificate includes the discrete-noise δ term:
// with no coordinates it is the continuous accountant's; with N
// coordinates the ε it returns satisfies one variant's condition of
// discrete_gdp.go (checked here from the continuous accountant directly)
// and is above the continuous ε at the full δ (the term costs something);
// a run whose term alone exceeds δ certifies nothing; and the multiplier
// leaves room for the term.
func TestSecureSubsampledGaussian(t *testing.T) {
	const q, z, steps, delta = 0.05, 1.1, 200, 1e-5
	rel := ReplaceOne
	cont, _, err := SubsampledGaussianEpsilon(q, z, steps, delta, rel)
	if err != nil {
		t.Fatal(err)
	}
	e0, _, err := SecureSubsampledGaussianEpsilon(q, z, steps, delta, rel, 0)
	if err != nil || e0 != cont {
		t.Fatalf("no coordinates: ε = %v (%v), continuous %v", e0, err, cont)
	}
	for _, n := range []int64{1e6, 1e9, 5e10} {
		e, _, err := SecureSubsampledGaussianEpsilon(q, z, steps, delta, rel, n)
		if err != nil {
			t.Fatal(err)
		}
		if !(e > cont) {
			t.Fatalf("N = %d: secure ε = %v not above the continuous %v", n, e, cont)
		}
		// TV variant: continuous (e, δ − (1 + e^e)·N·η)-DP.
		tvRest := delta - (1+math.Exp(e))*float64(n)*SecureGaussianTV
		tvOK := false
		if tvRest > 0 {
			c, _, _ := SubsampledGaussianEpsilon(q, z, steps, tvRest, rel)
			tvOK = c <= e
		}
		// Multiplicative variant: continuous (e − 2Nθ, δe^(−Nθ) − (1 + e^e)·N·η_r')-DP.
		nt := float64(n) * SecureGaussianLogRatio
		mRest := delta*math.Exp(-nt) - (1+math.Exp(e))*float64(n)*RoundedGaussianTV
		mOK := false
		if mRest > 0 {
			c, _, _ := SubsampledGaussianEpsilon(q, z, steps, mRest, rel)
			mOK = c+2*nt <= e*(1+1e-12)
		}
		if !tvOK && !mOK {
			t.Fatalf("N = %d: ε = %v satisfies neither variant's condition", n, e)
		}
		zs, err := SecureSubsampledGaussianMultiplier(q, steps, 1, delta, rel, n)
		if err != nil {
			t.Fatal(err)
		}
		zc, _ := SubsampledGaussianMultiplier(q, steps, 1, delta, rel)
		got, _, _ := SecureSubsampledGaussianEpsilon(q, zs, steps, delta, rel, n)
		if !(zs > zc) || !(got <= 1) {
			t.Fatalf("N = %d: secure multiplier %v (continuous %v) certifies ε = %v at request 1", n, zs, zc, got)
		}
	}
	// 10¹⁴ coordinates: (1 + e^ε)·N·η ≥ 0.033 > δ, and e^(−Nθ)·δ =
	// e^(−44)·δ < 1e-24 < 2·N·η_r' = 2.4e-14: no variant leaves anything
	// for the Gaussian.
	if e, _, _ := SecureSubsampledGaussianEpsilon(q, z, steps, delta, rel, 1e14); !math.IsInf(e, 1) {
		t.Fatalf("N = 1e14: ε = %v, want +Inf", e)
	}
	if _, err := SecureSubsampledGaussianMultiplier(q, steps, 1, delta, rel, 1e14); err == nil {
		t.Fatal("N = 1e14: a multiplier was returned")
	}
}
