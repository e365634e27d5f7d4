// Command fedbench measures the federation and prints Markdown tables:
//
//  1. fed-avg (N IID sites) vs single-process sgd-prev on the pooled
//     training split with the same η, B and total pair steps, paired by
//     split, with in-process variants that locate the gap;
//  2. fed-dp-local-sgd vs single-process dp-local-sgd at the same ε, δ, loss,
//     R, B, and the noise left in the aggregated model for 1, 4, 16 sites;
//  3. fed-avg under label skew: AUC and cross-label pair shares;
//  4. (with -bench) timings and bytes per phase via testing.Benchmark.
//
// Usage (from the repository root):
//
//	go run ./scripts/fedbench                              # diabetes, 5/10 runs
//	go run ./scripts/fedbench -datasets diabetes,ijcnn1 -runs 5 -dp-runs 10 -bench
//
// Private runs use seeded noise and sampling (reproducible, NOT private);
// their statistics are those of the secure sources.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/fedalgo/fedprobe"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/simulate"
	"github.com/pairfed/pairfed/transport"
)

var (
	flagDatasets = flag.String("datasets", "diabetes", "comma-separated: diabetes, ijcnn1")
	flagDiabetes = flag.String("diabetes", "datasets/diabetes", "diabetes LIBSVM file")
	flagShared   = flag.String("shared", os.Getenv("PAIRFED_DATASETS"), "directory with ijcnn1.trn.bz2 and ijcnn1.tst.bz2")
	flagRuns     = flag.Int("runs", 5, "runs (splits) for fed-avg and label skew")
	flagDPRuns   = flag.Int("dp-runs", 10, "runs for the private comparison")
	flagSites    = flag.Int("sites", 4, "sites N")
	flagBetas    = flag.String("betas", "0.1,0.5,1,10", "label-skew concentrations β")
	flagNoise    = flag.Int("noise-seeds", 10, "noise seeds per site count in the noise table")
	flagSeed     = flag.Uint64("seed", 1, "seed")
	flagBench    = flag.Bool("bench", false, "also run the timing/bytes benchmarks (item 4)")
	flagSkip     = flag.String("skip", "", "comma-separated sections to skip: avg, dp, noise, skew")
)

type dataset struct {
	name        string
	train, test *data.Table
}

func main() {
	log.SetFlags(0)
	flag.Parse()
	ctx := context.Background()
	skip := map[string]bool{}
	for _, s := range strings.Split(*flagSkip, ",") {
		skip[strings.TrimSpace(s)] = true
	}
	var sets []dataset
	for _, name := range strings.Split(*flagDatasets, ",") {
		ds, err := load(strings.TrimSpace(name))
		if err != nil {
			log.Fatal(err)
		}
		sets = append(sets, ds)
	}
	fmt.Printf("<!-- go run ./scripts/fedbench %s -->\n\n", strings.Join(os.Args[1:], " "))
	if !skip["avg"] {
		fedAvgTable(ctx, sets)
	}
	if !skip["dp"] {
		dpTable(ctx, sets)
	}
	if !skip["noise"] {
		noiseTable(ctx, sets[0])
	}
	if !skip["skew"] {
		skewTable(ctx, sets)
	}
	if *flagBench {
		benchTable(sets)
	}
}

func load(name string) (dataset, error) {
	switch name {
	case "diabetes":
		tr, err := data.Load(*flagDiabetes, data.Options{})
		return dataset{name: name, train: tr}, err
	case "ijcnn1":
		tr, err := data.Load(filepath.Join(*flagShared, "ijcnn1.trn.bz2"), data.Options{})
		if err != nil {
			return dataset{}, err
		}
		te, err := data.Load(filepath.Join(*flagShared, "ijcnn1.tst.bz2"), data.Options{})
		if err != nil {
			return dataset{}, err
		}
		if err := data.Align(tr, te); err != nil {
			return dataset{}, err
		}
		return dataset{name: name, train: tr, test: te}, nil
	}
	return dataset{}, fmt.Errorf("fedbench: unknown dataset %q (diabetes, ijcnn1)", name)
}

func mean(v []float64) (m, sd float64) {
	s := experiment.Summarize(v)
	return s.Mean, s.Std
}

func pm(v []float64) string {
	m, sd := mean(v)
	return fmt.Sprintf("%.4f ± %.4f", m, sd)
}

// diff is the mean paired difference a−b and its standard error.
func diff(a, b []float64) string {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	m, sd := mean(d)
	return fmt.Sprintf("%+.4f (se %.4f)", m, sd/math.Sqrt(float64(max(len(d)-1, 1))))
}

func avgSpec(sites int, partition string) simulate.Spec {
	return simulate.Spec{Sites: sites, Partition: partition, Seed: *flagSeed, Job: coordinator.JobConfig{Algo: fedalgo.FedAvg}}
}

func validatedJob(job coordinator.JobConfig, sites int) coordinator.JobConfig {
	cfg := coordinator.Config{Federation: "x", Job: job, MinSites: sites}
	if err := cfg.Validate(); err != nil {
		log.Fatal(err)
	}
	return cfg.Job
}

// fedAvgTable is item 1.
func fedAvgTable(ctx context.Context, sets []dataset) {
	N := *flagSites
	fmt.Printf("### 1. fed-avg (%d IID sites) vs pooled sgd-prev, same η, B, pair steps (%d runs, paired splits)\n\n", N, *flagRuns)
	fmt.Println("| dataset | variant | AUC | Δ vs pooled sgd-prev |")
	fmt.Println("|---|---|---|---|")
	for _, ds := range sets {
		spec := avgSpec(N, "iid")
		if err := spec.Validate(); err != nil {
			log.Fatal(err)
		}
		job := validatedJob(spec.Job, N)
		rows := []string{"fed-avg over NATS (`pairfed simulate`)", "fed-avg, 1 site", "reference: former fed-avg (step η/√(R·T_s), restart from Alg 1 averages)",
			"reference: η × √N only", "reference: last iterate + average over rounds only", "reference: both (= fed-avg)",
			"reference: pooled scaling (no per-site minmax)", "pooled sgd-prev, step η/√T with T = R·n (default)", "pooled sgd-prev, 10·n steps, η·√N"}
		auc := make([][]float64, len(rows))
		var steps int
		for r := 0; r < *flagRuns; r++ {
			tr, err := simulate.RunTrial(ctx, spec, ds.train, ds.test, r, nil)
			if err != nil {
				log.Fatal(err)
			}
			auc[0] = append(auc[0], tr.AUC)
			s1 := spec
			s1.Sites = 1
			t1, err := simulate.RunTrial(ctx, s1, ds.train, ds.test, r, nil)
			if err != nil {
				log.Fatal(err)
			}
			auc[1] = append(auc[1], t1.AUC)
			seed := spec.Seed ^ uint64(r)<<32
			for i, v := range []fedprobe.FedAvgVariant{{EtaScale: 1, RestartFromAverage: true}, {RestartFromAverage: true}, {EtaScale: 1}, {}} {
				w, err := fedprobe.FedAvgReference(ctx, job, tr.Sites, seed, v)
				if err != nil {
					log.Fatal(err)
				}
				auc[2+i] = append(auc[2+i], pairwise.LinearAUC(w, tr.Test))
			}
			// Pooled scaling: the same partition of the pooled-scaled split.
			trd, _, rng, err := simulate.TrialSplit(spec, ds.train, ds.test, r)
			if err != nil {
				log.Fatal(err)
			}
			sc, err := data.FitScaler("minmax", trd)
			if err != nil {
				log.Fatal(err)
			}
			sp := spec
			sp.Scale = "none"
			sitesPooled, _, err := simulate.Prepare(sp, sc.Apply(trd), sc.Apply(trd), rng)
			if err != nil {
				log.Fatal(err)
			}
			w, err := fedprobe.FedAvgReference(ctx, job, sitesPooled, seed, fedprobe.FedAvgVariant{})
			if err != nil {
				log.Fatal(err)
			}
			auc[6] = append(auc[6], pairwise.LinearAUC(w, tr.Test))
			steps = 0
			for _, s := range tr.Sites {
				steps += int(math.Ceil(job.LocalPasses * float64(s.Data.N)))
			}
			steps *= job.Rounds
		}
		for i, eta := range []float64{job.Eta, job.Eta * math.Sqrt(float64(N))} {
			rep, err := experiment.Run(ctx, experiment.Spec{Algo: "sgd-prev", Loss: job.Loss, Eta: eta, ParamRadius: job.ParamRadius,
				FeatureRadius: job.FeatureRadius, Scale: "minmax", Steps: steps, Runs: *flagRuns, Seed: *flagSeed}, ds.train, ds.test)
			if err != nil {
				log.Fatal(err)
			}
			auc[7+i] = rep.AUC.Values
		}
		for i, name := range rows {
			fmt.Printf("| %s | %s | %s | %s |\n", ds.name, name, pm(auc[i]), diff(auc[i], auc[7]))
		}
	}
	fmt.Printf("\nη = 10, B = 100, hinge, R = 1, 10 rounds × 1 local pass; pooled T = Σ_rounds Σ_sites ⌈n_s⌉. Δ is the mean paired difference over the same splits (se = sd/√(runs−1)).\n\n")
}

// dpTable is item 2 (AUC part).
func dpTable(ctx context.Context, sets []dataset) {
	N := *flagSites
	fmt.Printf("### 2. fed-dp-local-sgd (%d IID sites) vs pooled dp-local-sgd, ε = 1 (%d runs, seeded noise: NOT private)\n\n", N, *flagDPRuns)
	fmt.Println("| dataset | algorithm | δ | η | phases | AUC | Δ vs pooled |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, ds := range sets {
		nTrain := ds.train.N
		if ds.test == nil {
			nTrain = ds.train.N - int(math.Round(0.2*float64(ds.train.N)))
		}
		delta := dp.DefaultDelta(nTrain)
		var fed, fed1 []float64
		var eta float64
		var phases int
		for _, sites := range []int{N, 1} {
			spec := simulate.Spec{Sites: sites, Seed: *flagSeed, Seeded: true, NoiseSeed: 7, Scale: "none",
				Job: coordinator.JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 1, Delta: delta, ParamRadius: 1, FeatureRadius: 1}}
			for r := 0; r < *flagDPRuns; r++ {
				tr, err := simulate.RunTrial(ctx, spec, ds.train, ds.test, r, nil)
				if err != nil {
					log.Fatal(err)
				}
				if sites == N {
					fed = append(fed, tr.AUC)
					eta, phases = tr.Outcome.Job.Eta, tr.Outcome.Job.Phases
				} else {
					fed1 = append(fed1, tr.AUC)
				}
			}
		}
		rep, err := experiment.Run(ctx, experiment.Spec{Algo: "dp-local-sgd", Loss: "logistic", Epsilon: 1, Delta: delta, DeltaSet: true,
			ParamRadius: 1, FeatureRadius: 1, Scale: "none", Runs: *flagDPRuns, Seed: *flagSeed, Seeded: true, NoiseSeed: 7}, ds.train, ds.test)
		if err != nil {
			log.Fatal(err)
		}
		pooled := rep.AUC.Values
		pk := "—"
		if rep.Privacy != nil {
			pk = strconv.Itoa(len(rep.Privacy.Sigmas))
		}
		fmt.Printf("| %s | fed-dp-local-sgd, %d sites | %.3g | %.3g | %d | %s | %s |\n", ds.name, N, delta, eta, phases, pm(fed), diff(fed, pooled))
		fmt.Printf("| %s | fed-dp-local-sgd, 1 site | %.3g | | | %s | %s |\n", ds.name, delta, pm(fed1), diff(fed1, pooled))
		loss, _ := pairwise.LossByName(pairwise.TaskAUC, "logistic")
		etaPooled := dpalgo.LocalSGDDefaultEta(loss, nTrain, ds.train.D, 1, 1, 1, delta)
		fmt.Printf("| %s | dp-local-sgd (pooled) | %.3g | %.3g | %s | %s | |\n", ds.name, delta, etaPooled, pk, pm(pooled))
	}
	fmt.Printf("\nlogistic loss, R = 1 (clipping only, --scale none), B = 1, η of [Y21a] Thm 10 (federation: at the smallest site).\n\n")
}

// noiseTable is item 2 (noise part): the same pooled training split of ds,
// split over 1, 4, 16 sites; ε = 1 vs ε = 10⁹ with identical η, δ and
// sampling draws.
func noiseTable(ctx context.Context, ds dataset) {
	spec := simulate.Spec{Sites: 1, Seed: *flagSeed, Scale: "none", Job: coordinator.JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 1, ParamRadius: 1, FeatureRadius: 1}}
	if err := spec.Validate(); err != nil {
		log.Fatal(err)
	}
	trd, te, _, err := simulate.TrialSplit(spec, ds.train, ds.test, 0)
	if err != nil {
		log.Fatal(err)
	}
	delta := dp.DefaultDelta(trd.N)
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, "logistic")
	eta := dpalgo.LocalSGDDefaultEta(loss, trd.N, trd.D, 1, 1, 1, delta)
	job := validatedJob(coordinator.JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 1, Delta: delta, Eta: eta, ParamRadius: 1, FeatureRadius: 1}, 1)
	clean := job
	clean.Epsilon = 1e9
	fmt.Printf("### 2b. Noise in the aggregated model, %s (n = %d, d = %d), ε = 1, δ = %.3g, η = %.3g fixed, %d noise seeds\n\n", ds.name, trd.N, trd.D, delta, eta, *flagNoise)
	fmt.Println("| sites | phases K | σ_1 (per coord.) | phase 1: ‖noise‖ one site | phase 1: ‖noise‖ aggregated | predicted √(dΣ(w_s/W)²σ²) | phase-1 signal one / aggregated | final ‖w_ε=1 − w_clean‖ | final ‖w_clean‖ | AUC ε=1 | AUC clean |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range []int{1, 4, 16} {
		sp := spec
		sp.Sites = n
		sites, testPrep, err := simulate.Prepare(sp, trd, te, rand.New(rand.NewPCG(*flagSeed, 99)))
		if err != nil {
			log.Fatal(err)
		}
		var one, agg, pred, sig1, sigA, sigma, final, cleanNorm, aucN, aucC float64
		K := 0
		M := float64(*flagNoise)
		for s := 0; s < *flagNoise; s++ {
			pn, err := fedprobe.ProbePhase(ctx, job, sites, make([]float64, trd.D), 1, uint64(s), uint64(s)+1000, dp.NewSeededNoise)
			if err != nil {
				log.Fatal(err)
			}
			one, agg, pred, sig1, sigA, sigma = one+pn.One/M, agg+pn.Aggregated/M, pn.Predicted, sig1+pn.SignalOne/M, sigA+pn.Signal/M, pn.Sigma
			var w [2][]float64
			for i, j := range []coordinator.JobConfig{job, clean} {
				hctx, cancel := context.WithCancel(ctx)
				out, err := simulate.Federate(hctx, simulate.FederationConfig{Name: fmt.Sprintf("noise%d", n), Job: j, Sites: sites,
					Connect: simulate.MemConnect(hctx), Seed: uint64(s) + 1, Tick: 5 * time.Millisecond})
				cancel()
				if err != nil {
					log.Fatal(err)
				}
				w[i], K = out.Result.Model, out.Job.Phases
			}
			final += simulate.Dist(w[0], w[1]) / M
			cleanNorm += simulate.Dist(w[1], make([]float64, len(w[1]))) / M
			aucN += pairwise.LinearAUC(w[0], testPrep) / M
			aucC += pairwise.LinearAUC(w[1], testPrep) / M
		}
		fmt.Printf("| %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f / %.4f | %.4f | %.4f | %.4f | %.4f |\n", n, K, sigma, one, agg, pred, sig1, sigA, final, cleanNorm, aucN, aucC)
	}
	fmt.Printf("\nσ_k = 12·G·η·4^{−k}·log(4/δ)·√(2 log(2.5/δ))/ε; the clean run uses ε = 10⁹ with the same η, δ, partitions and sampling draws (same seed), so ‖w_ε=1 − w_clean‖ is the noise the whole job leaves (including its effect through later phases and the projections onto ‖w‖ ≤ B).\n\n")
}

// skewTable is item 3.
func skewTable(ctx context.Context, sets []dataset) {
	N := *flagSites
	fmt.Printf("### 3. fed-avg under label skew (%d sites, %d runs)\n\n", N, *flagRuns)
	fmt.Println("| dataset | partition | AUC | cross-label pair share per site (mean; min–max) | single-label sites | pos–neg pairs formable within sites |")
	fmt.Println("|---|---|---|---|---|---|")
	parts := []string{"iid"}
	for _, b := range strings.Split(*flagBetas, ",") {
		parts = append(parts, "label-skew:"+strings.TrimSpace(b))
	}
	for _, ds := range sets {
		pos := float64(ds.train.NumPositive()) / float64(ds.train.N)
		for _, p := range parts {
			var auc, share, cover []float64
			lo, hi, single := 1.0, 0.0, 0
			for r := 0; r < *flagRuns; r++ {
				tr, err := simulate.RunTrial(ctx, avgSpec(N, p), ds.train, ds.test, r, nil)
				if err != nil {
					log.Fatal(err)
				}
				auc = append(auc, tr.AUC)
				for _, s := range tr.Sites {
					c := simulate.CrossLabelShare(s.Data)
					share = append(share, c)
					lo, hi = min(lo, c), max(hi, c)
					if c == 0 {
						single++
					}
				}
				cover = append(cover, simulate.PairCoverage(tr.Sites))
			}
			m, _ := mean(share)
			cm, _ := mean(cover)
			fmt.Printf("| %s | %s | %s | %.3f; %.3f–%.3f | %d of %d | %.3f |\n", ds.name, p, pm(auc), m, lo, hi, single, N**flagRuns, cm)
		}
		fmt.Printf("| %s | pooled (reference) | | %.3f | | 1 |\n", ds.name, 2*pos*(1-pos))
	}
	fmt.Printf("\ncross-label share = 2p(1−p) for a site's positive share p: the probability that an sgd-prev pair (two uniform draws) has opposite labels, i.e. gives the AUC loss a gradient. The last column is Σ_s P_s·N_s / (P·N).\n\n")
}

// benchTable is item 4.
func benchTable(sets []dataset) {
	fmt.Printf("### 4. Timings (testing.Benchmark, 2 cores) and bytes per phase\n\n")
	fmt.Println("| dataset | run | ns/op | × single | bytes/phase | msgs/phase |")
	fmt.Println("|---|---|---|---|---|---|")
	srv, err := transport.StartEmbedded()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	natsConnect := func(name string) (transport.Transport, error) { return transport.ConnectInProcess(srv, name) }
	type bset struct {
		name  string
		ds    *pairwise.Dataset
		sites []int
	}
	var bs []bset
	for _, d := range sets {
		bs = append(bs, bset{d.name, d.train.Dataset, []int{4}})
	}
	bs = append(bs, bset{"synthetic n=50000 d=22", simulate.Synthetic(50000, 22, 0.1, 1, 1), []int{4, 64}})
	for _, b := range bs {
		for _, n := range b.sites {
			spec := avgSpec(n, "iid")
			spec.Scale = "minmax"
			spec.Job.FeatureRadius = 1
			sites, pooled, err := simulate.Prepare(spec, b.ds, b.ds, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				log.Fatal(err)
			}
			job := validatedJob(spec.Job, n)
			steps := 0
			for _, s := range sites {
				steps += s.Data.N
			}
			steps *= job.Rounds
			loss, _ := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
			obj, _ := pairwise.NewObjective(pooled, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Constraint: "l2", Radius: job.ParamRadius})
			algo, _ := pairwise.Lookup("sgd-prev")
			single := testing.Benchmark(func(tb *testing.B) {
				for i := 0; i < tb.N; i++ {
					if _, err := algo.Run(context.Background(), obj, pairwise.RunConfig{Steps: steps, Eta: job.Eta}, rand.New(rand.NewPCG(uint64(i), 0))); err != nil {
						tb.Fatal(err)
					}
				}
			})
			fmt.Printf("| %s | sgd-prev pooled, %d pair steps | %d | 1 | | |\n", b.name, steps, single.NsPerOp())
			for _, tick := range []time.Duration{20 * time.Millisecond, time.Millisecond} {
				var c simulate.Counter
				phases := 0
				fed := testing.Benchmark(func(tb *testing.B) {
					for i := 0; i < tb.N; i++ {
						out, err := simulate.Federate(context.Background(), simulate.FederationConfig{Name: fmt.Sprintf("b%d", i), Job: job, Sites: sites,
							Connect: c.Connect(natsConnect), Seed: uint64(i), Tick: tick})
						if err != nil {
							tb.Fatal(err)
						}
						phases += out.Job.Phases
					}
				})
				msgs, bytes := c.Counts()
				fmt.Printf("| %s | fed-avg %d sites, NATS, tick %v | %d | %.2f | %.0f | %.1f |\n", b.name, n, tick, fed.NsPerOp(),
					float64(fed.NsPerOp())/float64(single.NsPerOp()), float64(bytes)/float64(phases), float64(msgs)/float64(phases))
			}
		}
	}
	fmt.Println()
}
