package experiment

import (
	"context"
	"slices"
	"testing"
)

// OnRun is called once per evaluation, in order, with the total: runs ×
// folds with k-fold evaluation, runs with a given test table.
func TestOnRunCountsEvaluations(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	var got [][2]int
	spec := Spec{Algo: "sgd-prev", Eta: 10, ParamRadius: 100, Passes: 0.2, Runs: 2, Folds: 3, Seed: 1,
		OnRun: func(done, total int) { got = append(got, [2]int{done, total}) }}
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{1, 6}, {2, 6}, {3, 6}, {4, 6}, {5, 6}, {6, 6}}
	if !slices.Equal(got, want) || len(rep.AUC.Values) != 6 {
		t.Fatalf("OnRun calls %v, want %v (%d evaluations)", got, want, len(rep.AUC.Values))
	}
	// The callback does not change the results.
	spec.OnRun = nil
	again, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.AUC.Values, rep.AUC.Values) {
		t.Fatalf("results differ with OnRun: %v vs %v", rep.AUC.Values, again.AUC.Values)
	}
	got = nil
	spec.OnRun = func(done, total int) { got = append(got, [2]int{done, total}) }
	if _, err := Run(context.Background(), spec, tab, tab); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{1, 2}, {2, 2}}; !slices.Equal(got, want) {
		t.Fatalf("with a test table: OnRun calls %v, want %v", got, want)
	}
}
