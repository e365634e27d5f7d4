package dp

import "testing"

// The default δ exposes at most a tenth of a record in expectation (n·δ ≤
// 1/10) and is far below the 1/n of the verbatim-record mechanism.
func TestDefaultDeltaIsATenthOfOneOverN(t *testing.T) {
	for _, n := range []int{1, 2, 16, 614, 1_000_000} {
		d := DefaultDelta(n)
		if !(d > 0) || float64(n)*d > 0.1*(1+1e-15) || d >= 1/float64(n) {
			t.Errorf("n = %d: δ = %g, want 0 < δ ≤ 1/(10n) = %g", n, d, 1/(10*float64(n)))
		}
	}
	if DefaultDelta(0) != DefaultDelta(1) || DefaultDelta(-3) != 0.1 {
		t.Errorf("n ≤ 0: δ = %g, %g, want 0.1", DefaultDelta(0), DefaultDelta(-3))
	}
}
