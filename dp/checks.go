package dp

import (
	"fmt"
	"math"
)

// The ranges a user's privacy parameters are accepted in, checked before
// any work by every entry point (train, simulate, job specs, audit,
// sweep, budgets) through the Check functions of this file, so that each
// rule has one wording: the name the user gave the value by (a flag such
// as "--epsilon", or a job spec or file field), the value, and the
// accepted range. Which range applies is the caller's: a private run's
// request and an audit's claimed ε (it audits such a run) take
// CheckEpsilon, a budget or a spend any finite ε ≥ 0
// (CheckEpsilonNonNegative); δ is in [0, 1) where δ = 0 asks for pure
// ε-DP or a default (CheckDelta), in (0, 1) where the mechanism needs a
// δ > 0 (CheckDeltaPositive). Callers wrap the error with what a value
// outside the range would mean for them.
//
// ε: below 1e-6 no mechanism here produces anything but noise (σ of a
// sensitivity-2 release exceeds 10⁶ at any δ), and the calibrations'
// searches and the noise granularity checks are proved to terminate and
// stay finite only over [MinEpsilon, MaxEpsilon] (σ within [2⁻⁹⁰⁰, 2⁹⁰⁰]
// for every split of ε the algorithms make); above 10⁴ a "private" run is
// not private in any useful sense. The noise scale of a what-if run is
// bounded the same way.
const (
	MinEpsilon    = 1e-6
	MaxEpsilon    = 1e4
	MinNoiseScale = 1e-6
	MaxNoiseScale = 1e6
)

// CheckEpsilon checks a requested ε; name is how the user gave it (a
// flag such as "--epsilon", or a job spec field), and is named in the
// error with the accepted range.
func CheckEpsilon(name string, eps float64) error {
	if math.IsNaN(eps) || !(eps >= MinEpsilon && eps <= MaxEpsilon) {
		return fmt.Errorf("%s = %v is outside the accepted range [%g, %g] (record-level ε of a private run: e.g. 1; 0.1 is strong, 10 weak)", name, eps, MinEpsilon, MaxEpsilon)
	}
	return nil
}

// CheckNoiseScale checks a what-if noise multiplier; 0 and 1 mean
// "unscaled" and are accepted.
func CheckNoiseScale(name string, f float64) error {
	if f == 0 || f == 1 {
		return nil
	}
	if math.IsNaN(f) || !(f >= MinNoiseScale && f <= MaxNoiseScale) {
		return fmt.Errorf("%s = %v is outside the accepted range [%g, %g] (a what-if multiplier of every σ; the run is then NOT private)", name, f, MinNoiseScale, MaxNoiseScale)
	}
	return nil
}

// outside is the error of every check: the name, the value, the accepted
// range and what the value is.
func outside(name string, v float64, rng, what string) error {
	return fmt.Errorf("%s = %v is outside the accepted range %s (%s)", name, v, rng, what)
}

// CheckEpsilonNonNegative checks an ε that may be 0: a budget, a spend,
// or a parameter whose 0 means a default. A negative ε would hide
// spending; an infinite one is no budget.
func CheckEpsilonNonNegative(name string, eps float64) error {
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return outside(name, eps, "[0, ∞)", "a finite ε ≥ 0")
	}
	return nil
}

// CheckDelta checks a δ in [0, 1): δ = 0 asks for pure ε-DP (or, where
// the caller says so, the default δ); δ ≥ 1 is no guarantee.
func CheckDelta(name string, delta float64) error {
	if !(delta >= 0 && delta < 1) {
		return outside(name, delta, "[0, 1)", "δ = 0: pure ε-DP or the default; δ ≥ 1 is no guarantee")
	}
	return nil
}

// CheckDeltaPositive checks a δ in (0, 1), for mechanisms that have no
// pure ε-DP variant (Gaussian noise, a sensitivity bound that fails with
// a small probability).
func CheckDeltaPositive(name string, delta float64) error {
	if !(delta > 0 && delta < 1) {
		return outside(name, delta, "(0, 1)", "a Gaussian mechanism needs a δ > 0; δ ≥ 1 is no guarantee")
	}
	return nil
}

// CheckSensitivity checks a sensitivity Δ: finite and ≥ 0 (a noise scale
// is Δ times a factor, so an infinite or NaN Δ calibrates nothing).
func CheckSensitivity(name string, sens float64) error {
	if !(sens >= 0) || math.IsInf(sens, 0) {
		return outside(name, sens, "[0, ∞)", "a finite sensitivity Δ ≥ 0")
	}
	return nil
}
