package experiment

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
)

func TestUsedEtaParsesNotes(t *testing.T) {
	for _, c := range []struct {
		note string
		want float64
		ok   bool
	}{
		{"η = 0.5 given", 0.5, true},
		{"η = 0.5 given (default 1/L = 0.25)", 0.5, true},
		{"η = 1/L = 0.25 ([K22] Thms 2–3)", 0.25, true},
		{"η = 2/(L+α) = 0.3, the largest step", 0.3, true},
		{"η = 1.5e-05 from [Y21a] Thm 10: (D/G)·min{…} with D = 1", 1.5e-05, true},
		{"σ = 3", 0, false},
	} {
		got, ok := usedEta(&pairwise.PrivacyReport{Notes: []string{c.note}})
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.note, got, ok, c.want, c.ok)
		}
	}
}

// TestPrivateRunReportsEta: a private run's Report carries the η the
// algorithm used (issue 16 item 6: it printed [0]).
func TestPrivateRunReportsEta(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, d := 200, 3
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(2*(i%2) - 1)
		for j := 0; j < d; j++ {
			x[i*d+j] = 0.3*rng.NormFloat64() + 0.2*y[i]
		}
	}
	ds := pairwise.NewDense(x, y, d)
	tab := &data.Table{Dataset: ds, Source: "fixture"}
	for _, algo := range []string{"dp-gd", "dp-local-sgd"} {
		rep, err := Run(context.Background(), Spec{Algo: algo, Loss: "logistic", Epsilon: 1, FeatureRadius: 1, Seed: 1, Seeded: true, NoiseSeed: 2}, tab, nil)
		if err != nil {
			t.Fatal(algo, err)
		}
		if len(rep.Eta) != 1 || !(rep.Eta[0] > 0) {
			t.Errorf("%s: eta %v, want the η used (> 0)", algo, rep.Eta)
		}
	}
}
