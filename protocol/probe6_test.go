package protocol

import (
	"math"
	"strings"
	"testing"
)

// TestCheckJobNumbersNamesTheFix: a negative or NaN η, B, R, λ or local
// passes was "eta = -1 is negative" / "is not finite", naming no range and
// no flag (probe 6, issue 28); every value outside the range now gets the
// range and the flag, and the valid ones (0: the default) pass.
func TestCheckJobNumbersNamesTheFix(t *testing.T) {
	flags := []string{"--local-passes", "--eta", "--param-radius", "--radius", "--lambda"}
	for i, flag := range flags {
		for _, x := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1), 1e-9} {
			v := make([]float64, 5)
			v[i] = x
			err := CheckJobNumbers(v[0], v[1], v[2], v[3], v[4], 1, 0)
			if err == nil || !strings.Contains(err.Error(), "give "+flag+" in") || !strings.Contains(err.Error(), "(or 0 for the default)") || !strings.Contains(err.Error(), "[1e-06, ") {
				t.Errorf("%s %v: %v, want the range and the flag", flag, x, err)
			}
		}
		for _, x := range []float64{0, 1, MinScale} {
			v := make([]float64, 5)
			v[i] = x
			if err := CheckJobNumbers(v[0], v[1], v[2], v[3], v[4], 1, 0); err != nil {
				t.Errorf("%s %v: %v", flag, x, err)
			}
		}
	}
}

// TestValidNameShowsTheCharacter: a name with a non-ASCII letter showed its
// first byte as a Latin-1 character ("hôpital": byte 1 ('Ã')).
func TestValidNameShowsTheCharacter(t *testing.T) {
	err := ValidName("site", "hôpital")
	if err == nil || !strings.Contains(err.Error(), `byte 1 ('ô') is not in [A-Za-z0-9_-]`) {
		t.Errorf("%v", err)
	}
	err = ValidName("site", "a\xffb")
	if err == nil || !strings.Contains(err.Error(), `byte 1 ('�')`) {
		t.Errorf("invalid UTF-8: %v", err)
	}
}
