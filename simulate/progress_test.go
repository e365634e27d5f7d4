package simulate

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
)

// OnRun reports every run; TrainSize subsamples each run's training split
// before it is partitioned over the sites.
func TestOnRunAndTrainSize(t *testing.T) {
	tab, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	spec := Spec{Sites: 2, Runs: 2, Seed: 1, Transport: "mem", TrainSize: 40, Job: coordinator.JobConfig{Algo: "fed-avg", Rounds: 2},
		OnRun: func(done, total int) { got = append(got, [2]int{done, total}) }}
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{1, 2}, {2, 2}}; !slices.Equal(got, want) {
		t.Fatalf("OnRun calls %v, want %v", got, want)
	}
	if rep.NTrain != 40 || rep.SiteRecords[0]+rep.SiteRecords[1] != 40 {
		t.Fatalf("n_train %d, site records %v: want 40 in all", rep.NTrain, rep.SiteRecords)
	}
	spec.TrainSize = 10_000
	if _, err := Run(context.Background(), spec, tab, nil); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("train size above the split: %v", err)
	}
	spec.TrainSize = -1
	if err := spec.Validate(); err == nil {
		t.Fatal("negative train size accepted")
	}
}
