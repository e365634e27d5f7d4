package all_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/internal/golden"
	"github.com/pairfed/pairfed/pairwise"
)

// Golden runs of every algorithm of the registry (iterated, so that a new
// algorithm is covered by default), for every task it supports: seeded, on
// 200 training records of the bundled diabetes (stratified split seed 1,
// min-max scaled with the training split's ranges, clipped to R = 1; the
// metric task reads the same records, a pair similar when its labels
// agree), the first loss the algorithm names (logistic when any),
// λ = 1e-2 when the update rule needs strong convexity, B from the
// algorithm's ParamRadius rule (else 1), η = 0.1 and 400 steps where they
// apply (else the algorithm's own), ε = 1, δ = 1e-3 with seeded noise for a private one. Pinned: the
// model's float64 bits (SHA-256 of the little-endian bits, and the first
// values in hex), steps, pair gradients and the privacy report (ε, δ, σ's,
// mechanism, private flag, …). A run an algorithm refuses pins its error
// text instead, so that nothing is skipped silently.
// `go test ./pairwise -run GoldenRegistry -rewrite` records them again
// (only after a deliberate change of behaviour).

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/golden")

type pairwiseGolden struct {
	Algo      string                  `json:"algo"`
	Task      pairwise.Task           `json:"task"`
	Loss      string                  `json:"loss"`
	Lambda    float64                 `json:"lambda"`
	Radius    float64                 `json:"radius"`
	Eta       float64                 `json:"eta"`
	Steps     int                     `json:"steps"`
	Refused   []string                `json:"refused,omitempty"`
	Error     string                  `json:"error,omitempty"`
	Params    int                     `json:"params,omitempty"`
	ModelSHA  string                  `json:"model_sha256,omitempty"`
	FirstBits []string                `json:"model_first_bits,omitempty"`
	LastBits  []string                `json:"last_first_bits,omitempty"`
	RunSteps  int                     `json:"run_steps,omitempty"`
	PairGrads int64                   `json:"pair_grads,omitempty"`
	Privacy   *pairwise.PrivacyReport `json:"privacy,omitempty"`
}

func bitsDigest(w []float64) (string, []string) {
	h := sha256.New()
	var b [8]byte
	first := []string{}
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
		if i < 6 {
			first = append(first, fmt.Sprintf("%016x", math.Float64bits(v)))
		}
	}
	return hex.EncodeToString(h.Sum(nil)), first
}

func goldenTrain(t *testing.T) *pairwise.Dataset {
	t.Helper()
	tab, err := data.Load("../../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	trI, _, err := data.StratifiedSplit(tab.Y, 0.2, rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	train := tab.Subset(trI[:200])
	sc, err := data.FitScaler("minmax", train)
	if err != nil {
		t.Fatal(err)
	}
	train, _, _ = data.Clip(sc.Apply(train), 1)
	return train
}

func runPairwiseGolden(train *pairwise.Dataset, a *pairwise.Algorithm, task pairwise.Task) pairwiseGolden {
	g := pairwiseGolden{Algo: a.Name, Task: task, Loss: "logistic", Radius: 1}
	if len(a.Losses) > 0 {
		g.Loss = a.Losses[0]
	}
	if a.NeedsStrongConvexity {
		g.Lambda = 1e-2
	}
	const eps, delta = 1.0, 1e-3
	loss, err := pairwise.LossByName(task, g.Loss)
	if err != nil {
		g.Error = err.Error()
		return g
	}
	if a.ParamRadius != nil {
		params := train.D
		if task == pairwise.TaskMetric {
			params = train.D * train.D
		}
		g.Radius = a.ParamRadius(train.N, params, eps, delta, 1, task, loss)
	}
	obj, err := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Task: task, Loss: loss, Lambda: g.Lambda, Radius: g.Radius})
	if err != nil {
		g.Error = err.Error()
		return g
	}
	// The first of these configurations the algorithm accepts; the
	// refusals of the earlier ones are pinned too.
	var res *pairwise.Result
	for _, cfg := range []pairwise.RunConfig{{Eta: 0.1, Steps: 400}, {Steps: 400}, {Eta: 0.1}, {}} {
		if a.Private {
			cfg.Privacy = &pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: 1, Noise: dp.NewSeededNoise(3)}
		}
		g.Eta, g.Steps = cfg.Eta, cfg.Steps
		res, err = a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(7, 11)))
		if err == nil {
			break
		}
		g.Refused = append(g.Refused, err.Error())
	}
	if err != nil {
		g.Error = err.Error()
		return g
	}
	g.Params = len(res.W)
	g.ModelSHA, g.FirstBits = bitsDigest(res.W)
	if res.Last != nil {
		_, g.LastBits = bitsDigest(res.Last)
	}
	g.RunSteps, g.PairGrads, g.Privacy = res.Steps, res.PairGrads, res.Privacy
	return g
}

// TestGoldenRegistryPairwise compares every registered algorithm on every
// task it supports with its golden file.
func TestGoldenRegistryPairwise(t *testing.T) {
	train := goldenTrain(t)
	algos := pairwise.Algorithms()
	if len(algos) == 0 {
		t.Fatal("empty registry")
	}
	for _, a := range algos {
		t.Run(a.Name, func(t *testing.T) {
			var out []pairwiseGolden
			for _, task := range a.Tasks {
				out = append(out, runPairwiseGolden(train, a, task))
			}
			got, err := json.MarshalIndent(out, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", "registry", a.Name+".json")
			golden.Check(t, path, got, *rewrite)
		})
	}
}
