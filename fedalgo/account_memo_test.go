package fedalgo

import (
	"reflect"
	"testing"

	"github.com/pairfed/pairfed/dpalgo"
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

// pairSumCalibrate's memo: a hit returns what calibrating afresh returns,
// with σ's of the caller's own; other inputs are calibrated on their own.
func TestPairSumCalibrateMemo(t *testing.T) {
	for _, c := range []struct {
		eps, delta float64
		phases, d  int
	}{{1, 1e-5, 4, 8}, {1, 1e-5, 4, 9}, {1, 1e-5, 5, 8}, {2, 1e-5, 4, 8}, {1, 1e-6, 4, 8}} {
		sig, sens, cert, err := calibrateSnapped(FedDPPairSGD, pairSumPlan(c.phases, c.phases, c.d), dpalgo.PairSumSensitivity, c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			s2, sens2, cert2, err := pairSumCalibrate(c.eps, c.delta, c.phases, c.d)
			if err != nil || !reflect.DeepEqual(s2, sig) || sens2 != sens || cert2 != cert {
				t.Fatalf("%+v: σ %v, Δ %v, %+v, %v; afresh σ %v, Δ %v, %+v", c, s2, sens2, cert2, err, sig, sens, cert)
			}
			s2[0] = -1 // the caller's own
		}
	}
}
