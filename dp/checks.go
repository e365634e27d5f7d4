package dp

import (
	"fmt"
	"math"
)

// The ranges a user's privacy parameters are accepted in, checked before
// any work by every entry point (train, simulate, job specs, audit,
// sweep) through CheckEpsilon and CheckNoiseScale, so that one rule with
// one wording holds everywhere.
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
