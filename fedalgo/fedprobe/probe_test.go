package fedprobe

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/simulate"
)

// prepared splits diabetes (seeded) and prepares n IID sites.
func prepared(t *testing.T, sites int, seed uint64) []simulate.Site {
	t.Helper()
	tab, err := data.Load("../../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	trIdx, teIdx, err := data.StratifiedSplit(tab.Y, 0.2, rng)
	if err != nil {
		t.Fatal(err)
	}
	spec := simulate.Spec{Sites: sites, Partition: "iid", Scale: "minmax", Job: coordinator.JobConfig{Algo: fedalgo.FedAvg, FeatureRadius: 1}}
	s, _, err := simulate.Prepare(spec, tab.Subset(trIdx), tab.Subset(teIdx), rng)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFedAvgReferenceMatchesFederate checks that the in-process reference
// used to study fed-avg variants computes exactly what the coordinator and
// workers compute.
func TestFedAvgReferenceMatchesFederate(t *testing.T) {
	sites := prepared(t, 4, 3)
	job := coordinator.JobConfig{Algo: fedalgo.FedAvg, Rounds: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := simulate.Federate(ctx, simulate.FederationConfig{Name: "ref", Job: job, Sites: sites, Connect: simulate.MemConnect(ctx), Seed: 5, Tick: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := coordinator.Config{Federation: "ref", Job: job, MinSites: len(sites)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	got, err := FedAvgReference(ctx, cfg.Job, sites, 5, FedAvgVariant{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, out.Result.Model) {
		t.Fatalf("reference %v\nfederated %v", got, out.Result.Model)
	}
}

// TestPhaseNoiseAveraging checks that the coordinator's weighted average of
// N sites' independent releases has noise of norm ≈ √(d·Σ(w_s/W)²σ²):
// averaged over 20 noise seeds, within 25% of the prediction (the mean of
// 20 χ-distributed norms with d = 8 has a relative sd of ≈ 0.06, so a
// false failure needs a 4-sd deviation).
func TestPhaseNoiseAveraging(t *testing.T) {
	for _, n := range []int{1, 4} {
		sites := prepared(t, n, 7)
		for i := range sites {
			sites[i].Data, _, _ = data.Clip(sites[i].Data, 1)
		}
		job := coordinator.JobConfig{Algo: fedalgo.FedDPLocalSGD, Loss: "logistic", Epsilon: 1, Delta: 1e-3, Eta: 1e-3, ParamRadius: 1, FeatureRadius: 1}
		var agg, pred float64
		for s := uint64(0); s < 20; s++ {
			pn, err := ProbePhase(context.Background(), job, sites, make([]float64, 8), 2, 1, s, dp.NewSeededNoise)
			if err != nil {
				t.Fatal(err)
			}
			agg += pn.Aggregated / 20
			pred = pn.Predicted
		}
		if math.Abs(agg/pred-1) > 0.25 {
			t.Errorf("%d sites: mean aggregated noise norm %.4g, predicted %.4g", n, agg, pred)
		}
	}
}
