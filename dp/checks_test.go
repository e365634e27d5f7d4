package dp

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestChecks pins each check's accepted range at its edges, and that a
// refusal names the value's name, the value and the range.
func TestChecks(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		check  func(string, float64) error
		rng    string
		ok, no []float64
	}{
		{CheckEpsilon, "[1e-06, 10000]", []float64{MinEpsilon, 1, MaxEpsilon}, []float64{0, -1, MinEpsilon / 2, 2 * MaxEpsilon, inf, nan}},
		{CheckEpsilonNonNegative, "[0, ∞)", []float64{0, 1, 1e300}, []float64{-1e-300, inf, -inf, nan}},
		{CheckDelta, "[0, 1)", []float64{0, 1e-300, 0.5, math.Nextafter(1, 0)}, []float64{-1e-300, 1, 2, inf, nan}},
		{CheckDeltaPositive, "(0, 1)", []float64{1e-300, 0.5, math.Nextafter(1, 0)}, []float64{0, -1, 1, inf, nan}},
		{CheckSensitivity, "[0, ∞)", []float64{0, 2, 1e300}, []float64{-1, inf, nan}},
	} {
		for _, v := range c.ok {
			if err := c.check("--x", v); err != nil {
				t.Errorf("range %s: %v refused: %v", c.rng, v, err)
			}
		}
		for _, v := range c.no {
			err := c.check("--x", v)
			if err == nil {
				t.Errorf("range %s: %v accepted", c.rng, v)
				continue
			}
			for _, want := range []string{"--x = " + fmt.Sprint(v) + " is outside", "accepted range " + c.rng} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("range %s: error %q does not say %q", c.rng, err, want)
				}
			}
		}
	}
}
