package simulate

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/fedalgo"
	goldenfile "github.com/pairfed/pairfed/internal/golden"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// Golden runs of every algorithm of the fedalgo registry, iterated so that
// a new algorithm is covered by default: each one seeded over simulate.Run
// on the in-memory transport (3 IID sites on the bundled diabetes, ε = 1,
// δ = 1e-3 for a private one, 2 rounds where rounds apply), once plain and
// once with secure aggregation (threshold 3); an algorithm that takes a
// local algorithm (fed-oneshot) with dpegd, and plain with every other
// single-site algorithm of the pairwise registry. A configuration an algorithm
// refuses (e.g. secure aggregation for a non-private one) is pinned too:
// its error text stands in the golden instead of a model, so nothing is
// skipped silently. `go test ./simulate -run GoldenRegistry -rewrite`
// records them again (only after a deliberate change of behaviour).

// registryGolden is what one (algorithm, aggregation) pins.
type registryGolden struct {
	Algo   string                `json:"algo"`
	SecAgg bool                  `json:"secagg"`
	Job    coordinator.JobConfig `json:"job"`
	// Error is the refusal of the first attempt (rounds given) when the
	// second (rounds left to the algorithm) ran, or of both.
	RoundsRefused string   `json:"rounds_refused,omitempty"`
	Error         string   `json:"error,omitempty"`
	Report        *Report  `json:"report,omitempty"`
	ModelBits     []string `json:"model_bits,omitempty"`
}

// siteNames matches a site's name in an error: which site fails first
// depends on timing.
var siteNames = regexp.MustCompile(`site-[0-9]+`)

func registryJob(name, local string, secagg bool, rounds int) coordinator.JobConfig {
	j := coordinator.JobConfig{Algo: name, Rounds: rounds}
	if fedalgo.Private(name) {
		j.Epsilon, j.Delta = 1, 1e-3
	}
	if fedalgo.TakesLocalAlgo(name) {
		j.LocalAlgo = local
		j.Epsilon, j.Delta = 1, 1e-3
		if a, err := pairwise.Lookup(local); err == nil && a.NeedsStrongConvexity {
			j.Lambda = 1e-2
		}
	}
	if secagg {
		j.Options = protocol.OptionsOf(map[string]float64{fedalgo.OptSecAgg: 1, fedalgo.OptSecAggThreshold: 3, fedalgo.OptSecAggTimeout: 1000})
	}
	return j
}

func runRegistryGolden(t *testing.T, name, local string, secagg bool) registryGolden {
	t.Helper()
	tab := loadDiabetes(t)
	g := registryGolden{Algo: name, SecAgg: secagg}
	run := func(rounds int) error {
		job := registryJob(name, local, secagg, rounds)
		g.Job = job
		spec := Spec{Sites: 3, Partition: "iid", Job: job, Seed: 7, NoiseSeed: 3, Seeded: true, Transport: "mem",
			Tick: 2 * time.Millisecond, PhaseTimeout: 4000}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rep, err := Run(ctx, spec, tab, nil)
		if err != nil {
			return err
		}
		rep.Seconds, rep.Transport = 0, ""
		g.Report = rep
		if rep.Model != nil {
			g.ModelBits = modelBits(rep.Model.W)
		}
		return nil
	}
	if err := run(2); err != nil {
		g.RoundsRefused = siteNames.ReplaceAllString(err.Error(), "site-*")
		if err := run(0); err != nil {
			g.Error = siteNames.ReplaceAllString(err.Error(), "site-*")
		}
	}
	return g
}

// TestGoldenRegistryFederated compares every registered federated
// algorithm, with and without secure aggregation, with its golden file.
func TestGoldenRegistryFederated(t *testing.T) {
	if testing.Short() {
		t.Skip("golden federated runs: not in -short")
	}
	names := fedalgo.Names()
	if len(names) == 0 {
		t.Fatal("empty fedalgo registry")
	}
	type run struct {
		name, local, file string
		secagg            bool
	}
	var runs []run
	for _, name := range names {
		runs = append(runs, run{name, "dpegd", name, false}, run{name, "dpegd", name + "+secagg", true})
		if fedalgo.TakesLocalAlgo(name) {
			// Every other single-site algorithm as the local one (dpegd
			// above), plain: refusals pinned as errors.
			for _, local := range pairwise.Names() {
				if local != "dpegd" {
					runs = append(runs, run{name, local, name + ".local-" + local, false})
				}
			}
		}
	}
	for _, r := range runs {
		{
			name, local, file, secagg := r.name, r.local, r.file, r.secagg
			t.Run(file, func(t *testing.T) {
				got := marshalGolden(t, runRegistryGolden(t, name, local, secagg))
				path := filepath.Join("testdata", "golden", "registry", file+".json")
				goldenfile.Check(t, path, got, *rewrite)
			})
		}
	}
}
