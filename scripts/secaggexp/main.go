// Command secaggexp measures what secure aggregation buys, through the
// same federation `pairfed simulate` runs (simulate.RunTrial: coordinator
// and sites over the in-memory transport), for each algorithm and dataset:
//
//   - central: the same algorithm on the pooled training records (one
//     site: one release with the central noise) — the target;
//   - secagg: K sites, --secure-aggregation with threshold t (each site
//     adds its share of the distributed discrete Gaussian, calibrated so
//     that the sum of t shares certifies the job's (ε, δ));
//   - local: K sites without secure aggregation (each site adds the noise
//     its own (ε, δ) needs: the sum carries √K times the central noise).
//
// Every configuration of a run uses the same split (simulate.TrialSplit of
// run r), the same (ε, δ) — δ = 1/(10·n_train), the pooled default, for
// all — and, for fed-dp-gd-grad, the same T (the [K22] Remark 2 rule at
// the federated sites' size). Differences are paired by run. Noise is
// seeded (reproducible, reported not private); the statistics are those
// of the secure sources.
//
// Usage (from the repository root):
//
//	go run ./scripts/secaggexp -datasets diabetes:200,ijcnn1:40 \
//	    -algos fed-dp-ssp,fed-dp-gd-grad,fed-dp-local-sgd -skip ijcnn1/fed-dp-gd-grad \
//	    -thresholds 8,6 -shared $PAIRFED_DATASETS
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/simulate"
)

var (
	flagDatasets   = flag.String("datasets", "diabetes", "comma-separated: diabetes, ijcnn1, each optionally with :runs (e.g. diabetes:200,ijcnn1:40; default -runs)")
	flagSkip       = flag.String("skip", "", "comma-separated dataset/algorithm pairs not to run (e.g. ijcnn1/fed-dp-gd-grad)")
	flagAlgos      = flag.String("algos", fedalgo.FedDPSSP, "comma-separated federated algorithms that support secure aggregation (fed-dp-lda, fed-dp-ssp, fed-dp-ssp-mean, fed-dp-gd-grad, fed-dp-local-sgd, fed-dpegd)")
	flagDiabetes   = flag.String("diabetes", "datasets/diabetes", "diabetes LIBSVM file")
	flagShared     = flag.String("shared", os.Getenv("PAIRFED_DATASETS"), "directory with ijcnn1.trn.bz2 and ijcnn1.tst.bz2")
	flagSchemas    = flag.String("schemas", "schemas", "directory with the feature-bounds schemas <dataset>.json")
	flagRuns       = flag.Int("runs", 10, "runs (splits × noise draws)")
	flagSites      = flag.Int("sites", 8, "sites K")
	flagThresholds = flag.String("thresholds", "8", "comma-separated secure aggregation thresholds t (the noise is calibrated for t shares)")
	flagEps        = flag.Float64("epsilon", 1, "ε per site")
	flagSeed       = flag.Uint64("seed", 1, "seed")
)

func main() {
	log.SetFlags(0)
	flag.Parse()
	var ts []int
	for _, s := range strings.Split(*flagThresholds, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || t < 2 || t > *flagSites {
			log.Fatalf("secaggexp: threshold %q must be a whole number in [2, %d]", s, *flagSites)
		}
		ts = append(ts, t)
	}
	fmt.Printf("<!-- go run ./scripts/secaggexp %s -->\n\n", strings.Join(os.Args[1:], " "))
	fmt.Printf("K = %d IID sites, ε = %g per site, δ = 1/(10·n_train), feature-bounds schemas (mean ± standard error over the runs; differences paired by run)\n\n", *flagSites, *flagEps)
	head := "| dataset (runs) | algorithm | central (pooled) |"
	sep := "|---|---|---|"
	for _, t := range ts {
		head += fmt.Sprintf(" secagg t = %d | secagg − central |", t)
		sep += "---|---|"
	}
	fmt.Println(head + " local noise, no secagg | local − central |")
	fmt.Println(sep + "---|---|")
	skip := map[string]bool{}
	for _, p := range strings.Split(*flagSkip, ",") {
		skip[strings.TrimSpace(p)] = true
	}
	for _, item := range strings.Split(*flagDatasets, ",") {
		name, runs := strings.TrimSpace(item), *flagRuns
		if n, r, ok := strings.Cut(name, ":"); ok {
			v, err := strconv.Atoi(r)
			if err != nil || v < 2 {
				log.Fatalf("secaggexp: runs %q of %s must be a whole number ≥ 2", r, n)
			}
			name, runs = n, v
		}
		train, test, schema, err := load(name)
		if err != nil {
			log.Fatal(err)
		}
		for _, algo := range strings.Split(*flagAlgos, ",") {
			algo = strings.TrimSpace(algo)
			if !skip[name+"/"+algo] {
				runDataset(name, algo, runs, train, test, schema, ts)
			}
		}
	}
}

// load reads a dataset with its public feature-bounds schema.
func load(name string) (train, test *data.Table, schema *data.Schema, err error) {
	if schema, err = data.LoadSchema(filepath.Join(*flagSchemas, name+".json")); err != nil {
		return nil, nil, nil, err
	}
	var opt data.Options
	if _, err := schema.Apply(&opt); err != nil {
		return nil, nil, nil, err
	}
	switch name {
	case "diabetes":
		train, err = data.Load(*flagDiabetes, opt)
	case "ijcnn1":
		if train, err = data.Load(filepath.Join(*flagShared, "ijcnn1.trn.bz2"), opt); err != nil {
			return nil, nil, nil, err
		}
		if test, err = data.Load(filepath.Join(*flagShared, "ijcnn1.tst.bz2"), opt); err != nil {
			return nil, nil, nil, err
		}
		err = data.Align(train, test)
	default:
		return nil, nil, nil, fmt.Errorf("secaggexp: unknown dataset %q (diabetes, ijcnn1)", name)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	for _, t := range []*data.Table{train, test} {
		if t != nil {
			if err := schema.Check(t); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return train, test, schema, nil
}

func runDataset(name, algo string, runs int, train, test *data.Table, schema *data.Schema, ts []int) {
	K := *flagSites
	nTrain := experiment.TrainRecords(experiment.Spec{TestFraction: 0.2}, train.N, test != nil)
	job := coordinator.JobConfig{Algo: algo, Epsilon: *flagEps, Delta: 1 / (10 * float64(nTrain)), FeatureRadius: 1}
	if algo == fedalgo.FedDPGDGrad {
		job.Rounds = dpalgo.DPGDGradDefaultSteps(nTrain/K, train.D, *flagEps)
	}
	spec := func(sites, t int) simulate.Spec {
		s := simulate.Spec{Sites: sites, Bounds: schema, Seed: *flagSeed, NoiseSeed: *flagSeed, Seeded: true, Transport: "mem", Tick: 2 * time.Millisecond, Job: job}
		if t > 0 {
			s.Job.Options = protocol.OptionsOf(map[string]float64{fedalgo.OptSecAgg: 1, fedalgo.OptSecAggThreshold: float64(t), fedalgo.OptSecAggTimeout: 1000})
		}
		if err := s.Validate(); err != nil {
			log.Fatal(err)
		}
		return s
	}
	auc := func(s simulate.Spec, r int) float64 {
		tr, err := simulate.RunTrial(context.Background(), s, train, test, r, nil)
		if err != nil {
			log.Fatalf("%s %s run %d (%d sites): %v", name, algo, r, s.Sites, err)
		}
		return tr.AUC
	}
	central := spec(1, 0)
	local := spec(K, 0)
	secure := make([]simulate.Spec, len(ts))
	for i, t := range ts {
		secure[i] = spec(K, t)
	}
	cen, loc := make([]float64, runs), make([]float64, runs)
	sec := make([][]float64, len(ts))
	for r := range runs {
		cen[r], loc[r] = auc(central, r), auc(local, r)
		for i := range ts {
			sec[i] = append(sec[i], auc(secure[i], r))
		}
	}
	row := fmt.Sprintf("| %s (%d) | %s | %s |", name, runs, algo, pm(cen))
	for i := range ts {
		row += fmt.Sprintf(" %s | %s |", pm(sec[i]), diff(sec[i], cen))
	}
	fmt.Printf("%s %s | %s |\n", row, pm(loc), diff(loc, cen))
}

// pm is mean ± standard error (Summarize's sd divides by n: se = sd/√(n−1)).
func pm(v []float64) string {
	s := experiment.Summarize(v)
	return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.Std/math.Sqrt(float64(max(len(v)-1, 1))))
}

// diff is the mean paired difference a − b with its standard error.
func diff(a, b []float64) string {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	s := experiment.Summarize(d)
	return fmt.Sprintf("%+.4f (se %.4f)", s.Mean, s.Std/math.Sqrt(float64(max(len(d)-1, 1))))
}
