package fedalgo

import (
	"reflect"
	"testing"
)

// gaussianAccount's memo: a repeated call (a hit) returns what composing
// afresh returns, and inputs that differ in any one of σs, Δ, δ or the
// unit are accounted on their own.
func TestGaussianAccountMemo(t *testing.T) {
	base := []float64{3.5, 4.25}
	cases := []struct {
		sigmas      []float64
		sens, delta float64
		unit        string
	}{
		{base, 2, 1e-5, "release"},
		{base, 2, 1e-5, "round"},
		{[]float64{3.5, 4.5}, 2, 1e-5, "release"},
		{base, 1, 1e-5, "release"},
		{base, 2, 1e-6, "release"},
	}
	seen := map[float64]bool{}
	for _, c := range cases {
		want := composeGaussian(c.sigmas, c.sens, c.delta, c.unit)
		for range 2 {
			eps, notes := gaussianAccount(c.sigmas, c.sens, c.delta, c.unit, []string{"first"})
			if eps != want.epsilon || !reflect.DeepEqual(notes, []string{"first", want.note}) || eps <= 0 {
				t.Fatalf("%+v: ε %v, notes %q; composed afresh: %+v", c, eps, notes, want)
			}
		}
		seen[want.epsilon] = true
	}
	if len(seen) != 4 { // the unit labels releases only: the same ε
		t.Fatalf("%d distinct ε over %d cases, want 4", len(seen), len(cases))
	}
}
