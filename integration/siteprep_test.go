//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/simulate"
)

// TestFedAvgJobSchemaMatchesSimulation: a non-private job carrying a
// feature-bounds schema gives, across processes, exactly the model and the
// test AUC of `pairfed simulate` on the same sites — the workers, the
// coordinator's evaluator and the simulation prepare records by one rule
// (experiment.SiteMap; before it, simulate divided such a job's records by
// M/R while the workers clipped them, docs/results/site-prep.md). The
// workers hold the simulation's site shards in order and draw sampling as
// its sites do (--test-sources SEED:INDEX); the coordinator's test file is
// the simulation's test split.
func TestFedAvgJobSchemaMatchesSimulation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const seed = 7
	bin := pairfed(t)
	dir := t.TempDir()
	schema, err := data.LoadSchema("../schemas/diabetes.json")
	if err != nil {
		t.Fatal(err)
	}
	var opt data.Options
	if _, err := schema.Apply(&opt); err != nil {
		t.Fatal(err)
	}
	train, err := data.Load("../datasets/diabetes", opt)
	if err != nil {
		t.Fatal(err)
	}
	spec := simulate.Spec{Sites: 2, Job: coordinator.JobConfig{Algo: "fed-avg"}, Seed: seed, Bounds: schema, Transport: "mem"}
	sim, err := simulate.Run(ctx, spec, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	// simulate.Run's split and partition of run 0, drawn from PCG(seed, 0)
	// (a non-private job: a stratified split).
	rng := rand.New(rand.NewPCG(seed, 0))
	trIdx, teIdx, err := data.StratifiedSplit(train.Y, 0.2, rng)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := simulate.PartitionIID(len(trIdx), 2, rng)
	if err != nil {
		t.Fatal(err)
	}
	lines := diabetesLines(t)
	if len(lines) != train.N {
		t.Fatalf("%d lines for %d records", len(lines), train.N)
	}
	write := func(name string, idx []int) string {
		var ls []string
		for _, i := range idx {
			ls = append(ls, lines[i])
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	test := write("test.libsvm", teIdx)
	coord := start(t, ctx, dir, "coordinator", bin, "coordinator", "--listen", "127.0.0.1:0", "--state", filepath.Join(dir, "coord"), "--test", test,
		"--min-sites", "2", "--tick", "10ms")
	out := waitFor(t, ctx, coord.stdout, "listening on ", 1)
	url := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "listening on "))
	for i, part := range parts {
		idx := make([]int, len(part))
		for k, j := range part {
			idx[k] = trIdx[j]
		}
		name := fmt.Sprintf("site-%d", i)
		// No schema and no --scale: the site applies the job's schema.
		start(t, ctx, dir, name, bin, "worker", "--nats", url, "--site", name, "--data", write(name+".libsvm", idx),
			"--state", filepath.Join(dir, name), "--tick", "10ms", "--heartbeat", "50ms", "--test-sources", fmt.Sprintf("%d:%d", seed, i))
	}
	waitFor(t, ctx, coord.stderr, "joined the federation", 2)
	cmd := exec.CommandContext(ctx, bin, "job", "submit", "--nats", url, "--algo", "fed-avg", "--feature-bounds", "../schemas/diabetes.json",
		"--min-sites", "2", "--job", "run-0", "--wait", "--json", "--timeout", "90s")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("job submit: %v\n%s", err, b)
	}
	var rep struct {
		Status string    `json:"status"`
		Sites  []string  `json:"sites"`
		Model  []float64 `json:"model"`
		AUC    struct {
			Mean float64 `json:"mean"`
		} `json:"auc"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if rep.Status != "completed" || !slices.Equal(rep.Sites, []string{"site-0", "site-1"}) {
		t.Fatalf("job: %s", b)
	}
	if !slices.Equal(rep.Model, sim.Model.W) {
		t.Errorf("the workers' model %v\nthe simulation's   %v", rep.Model, sim.Model.W)
	}
	if rep.AUC.Mean != sim.AUC.Mean {
		t.Errorf("the coordinator's test AUC %.17g, the simulation's %.17g", rep.AUC.Mean, sim.AUC.Mean)
	}
	t.Logf("fed-avg with the job's schema across processes: AUC %.6f, simulation %.6f", rep.AUC.Mean, sim.AUC.Mean)
}
