package experiment

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/data"
)

// TestConsumeSameResults checks that Spec.Consume (the last evaluation
// splits and scales the table in place, data.Partition) changes no result:
// the same AUCs, objectives, η and B and the same models, bit for bit, as
// the gathered splits — dense and CSR, the default selection, several
// runs, k folds, a --test table and a seeded private run — and that the
// table keeps its size.
func TestConsumeSameResults(t *testing.T) {
	load := func(rep string) *data.Table {
		tab, err := data.Load("../datasets/diabetes", data.Options{Representation: rep})
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	cases := []struct {
		name string
		spec Spec
		test bool
	}{
		{"selection", Spec{Algo: "sgd-prev", Grid: []float64{0.1, 10}}, false},
		{"runs 2", Spec{Algo: "sgd-prev", Eta: 1, ParamRadius: 10, Runs: 2}, false},
		{"folds 3", Spec{Algo: "sgd-prev", Eta: 1, ParamRadius: 10, Folds: 3}, false},
		{"test table", Spec{Algo: "sgd-prev", Eta: 1, ParamRadius: 10}, true},
		{"private", Spec{Algo: "dp-pair-sgd", Epsilon: 1, FeatureRadius: 1, Seeded: true, NoiseSeed: 5}, false},
		{"train size", Spec{Algo: "sgd-prev", Eta: 1, ParamRadius: 10, TrainSize: 300}, false},
		{"tune", Spec{Tune: true, Epsilon: 1, FeatureRadius: 1, Seeded: true, NoiseSeed: 5}, false},
	}
	for _, rep := range []string{data.Dense, data.Sparse} {
		for _, c := range cases {
			run := func(consume bool) (*Report, [][]float64, *data.Table) {
				tab, test := load(rep), (*data.Table)(nil)
				if c.test {
					test = load(rep)
				}
				spec := c.spec
				spec.Seed, spec.Consume = 3, consume
				var models [][]float64
				spec.OnModel = func(fm *FittedModel) { models = append(models, slices.Clone(fm.W)) }
				r, err := Run(context.Background(), spec, tab, test)
				if err != nil {
					t.Fatalf("%s %s: %v", rep, c.name, err)
				}
				return r, models, tab
			}
			want, wantModels, tab := run(false)
			got, gotModels, tab2 := run(true)
			// The last evaluation took the table (scaled in place), but for
			// a subsample of it (TrainSize: gathered as before).
			fresh := load(rep).Dataset
			taken := !slices.Equal(tab2.Y, fresh.Y) || !slices.Equal(tab2.X, fresh.X) || !slices.Equal(tab2.Val, fresh.Val)
			if taken != (c.spec.TrainSize == 0) || !slices.Equal(tab.Y, fresh.Y) || !slices.Equal(tab.X, fresh.X) || !slices.Equal(tab.Val, fresh.Val) {
				t.Errorf("%s %s: the table was taken: %v without Consume, %v with", rep, c.name, !slices.Equal(tab.X, fresh.X), taken)
			}
			n, n2 := tab.N, tab2.N
			bits := func(a, b []float64) bool {
				return len(a) == len(b) && slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
			}
			switch {
			case n != n2:
				t.Errorf("%s %s: the table's N changed: %d → %d", rep, c.name, n, n2)
			case !bits(got.AUC.Values, want.AUC.Values):
				t.Errorf("%s %s: AUCs %v with Consume, %v without", rep, c.name, got.AUC.Values, want.AUC.Values)
			case math.Float64bits(got.Objective) != math.Float64bits(want.Objective):
				t.Errorf("%s %s: objective %v with Consume, %v without", rep, c.name, got.Objective, want.Objective)
			case !bits(got.Eta, want.Eta) || !bits(got.ParamRadius, want.ParamRadius):
				t.Errorf("%s %s: η, B %v %v with Consume, %v %v without", rep, c.name, got.Eta, got.ParamRadius, want.Eta, want.ParamRadius)
			case len(gotModels) != len(wantModels) || len(gotModels) == 0:
				t.Errorf("%s %s: %d models with Consume, %d without", rep, c.name, len(gotModels), len(wantModels))
			default:
				for k := range gotModels {
					if !bits(gotModels[k], wantModels[k]) {
						t.Errorf("%s %s: model %d differs with Consume", rep, c.name, k)
					}
				}
			}
		}
	}
}
