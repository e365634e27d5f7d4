package simulate

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// signalInOneFeature returns n records of dimension d whose label is the
// sign of feature 0 (±0.3 plus small noise) while the d−1 other features
// are pure noise of larger spread: Euclidean 3-NN is near chance, a metric
// that weights feature 0 is near perfect.
func signalInOneFeature(n, d int, seed uint64) *data.Table {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(2*rng.IntN(2) - 1)
		x[i*d] = 0.3*y[i] + 0.05*rng.NormFloat64()
		for a := 1; a < d; a++ {
			x[i*d+a] = rng.NormFloat64()
		}
	}
	return &data.Table{Dataset: pairwise.NewDense(x, y, d), Source: "synthetic"}
}

// Federated metric learning (fed-avg, task metric): four sites learn W on
// their own shards over the embedded NATS server; the learned metric beats
// Euclidean 3-NN on the same test split by a wide margin, and is a metric
// (PSD, within the Frobenius ball of radius B).
func TestFedAvgMetricLearns(t *testing.T) {
	tab := signalInOneFeature(600, 20, 3)
	spec := Spec{Sites: 4, Runs: 1, Seed: 5, Scale: "none", Transport: "nats",
		Job: coordinator.JobConfig{Algo: fedalgo.FedAvg, Task: protocol.TaskMetric, Rounds: 30, LocalPasses: 2}}
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.KNN3 == nil || rep.AUC != nil || rep.Task != protocol.TaskMetric {
		t.Fatalf("report %+v: want a KNN-3 accuracy", rep)
	}
	// Euclidean baseline on the same split (Run's first split: seed 5, run 0).
	rng := rand.New(rand.NewPCG(spec.Seed, 0))
	trIdx, teIdx, err := data.StratifiedSplit(tab.Y, 0.2, rng)
	if err != nil {
		t.Fatal(err)
	}
	tr, te := tab.Subset(trIdx), tab.Subset(teIdx)
	ref, _ := PrepPooled(Spec{Scale: "none", Job: spec.Job}, tr)
	teP, _ := PrepPooled(Spec{Scale: "none", Job: spec.Job}, te) // clipping only: per record
	I := make([]float64, 20*20)
	for a := 0; a < 20; a++ {
		I[a*20+a] = 1
	}
	euclid := pairwise.KNN3Accuracy(I, ref, teP)
	t.Logf("KNN-3 accuracy: learned metric %.3f, Euclidean %.3f", rep.KNN3.Mean, euclid)
	// The gap is structural (19 noise features of spread 1 vs a signal of
	// ±0.3): require 0.15 of it, and the learned metric near perfect.
	if !(rep.KNN3.Mean > euclid+0.15 && rep.KNN3.Mean > 0.85) {
		t.Errorf("learned %.3f vs Euclidean %.3f", rep.KNN3.Mean, euclid)
	}
}

// A metric model too large for one NATS message (d = 350: 122 500
// parameters, 1.1 MB in msgpack, over the server's 1 MiB max_payload)
// goes through the chunked transport in both directions: a private job
// (seeded noise) completes with every site's release. 12 records over the
// two sites: each local step projects the 350 × 350 matrix onto the PSD cone,
// which under -race is most of this test's time (33 s at 20 records).
func TestMetricModelOverMaxPayload(t *testing.T) {
	const d = 350
	tab := signalInOneFeature(12, d, 4)
	ps, err := protocol.Encode(&protocol.PhaseStart{Job: "x", Phase: 1, Model: make([]float64, d*d)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) <= transport.MaxPayload {
		t.Fatalf("a %d-byte phase start fits one message: the test would not exercise chunking", len(ps))
	}
	spec := Spec{Sites: 2, Runs: 1, Seed: 6, Scale: "none", Transport: "nats", NoiseSeed: 1, Seeded: true,
		Job: coordinator.JobConfig{Algo: fedalgo.FedDPEGD, Task: protocol.TaskMetric, Epsilon: 1, ParamRadius: 1}}
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Phases < 1 || rep.KNN3 == nil || math.IsNaN(rep.KNN3.Mean) || len(rep.Privacy) != 2 {
		t.Fatalf("report %+v", rep)
	}
}
