// Command secaggexp measures what secure aggregation buys: the one-shot
// sufficient-statistics release of dp-ssp (square-AUC ridge optimum) over
// K sites at ε per site, released
//
//   - central:  pooled records, one Gaussian release (dp-ssp itself, exact
//     calibration) — the target;
//   - central DDG: pooled records, one distributed-discrete-Gaussian
//     release with n = 1 (the same mechanism as secure aggregation, run
//     centrally);
//   - secagg DDG: every site encodes its statistics with the per-site
//     discrete Gaussian share calibrated so that the sum of the n_min
//     honest survivors' shares certifies (ε, δ) (dp.CalibrateDDG), the
//     encodings are summed by the secagg protocol (all state machines in
//     this process, secagg.RunInMemory) and the sum is decoded;
//   - local (no secure aggregation): every site adds the full central σ to
//     its own statistics and the coordinator sums them (fed-dp-ssp's
//     mechanism; noise √K times the central).
//
// Usage (from the repository root):
//
//	go run ./scripts/secaggexp -datasets diabetes,ijcnn1 -runs 20
//
// Noise is seeded (reproducible, NOT private); the statistics are those of
// the secure sources.
package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/simulate"
)

var (
	flagDatasets = flag.String("datasets", "diabetes", "comma-separated: diabetes, ijcnn1")
	flagDiabetes = flag.String("diabetes", "datasets/diabetes", "diabetes LIBSVM file")
	flagShared   = flag.String("shared", "../shared/datasets", "directory with ijcnn1.trn.bz2 and ijcnn1.tst.bz2")
	flagRuns     = flag.Int("runs", 20, "runs (splits × noise draws)")
	flagSites    = flag.Int("sites", 8, "sites K")
	flagMin      = flag.Int("min-honest", 0, "n_min: honest survivors whose noise the guarantee counts (0: K, i.e. no dropout or collusion tolerated)")
	flagEps      = flag.Float64("epsilon", 1, "ε per site")
	flagSeed     = flag.Uint64("seed", 1, "seed")
)

const R = 1.0 // feature radius (records clipped to ‖x‖ ≤ 1)

func main() {
	log.SetFlags(0)
	flag.Parse()
	K := *flagSites
	nMin := *flagMin
	if nMin == 0 {
		nMin = K
	}
	fmt.Printf("<!-- go run ./scripts/secaggexp %s -->\n\n", strings.Join(os.Args[1:], " "))
	fmt.Printf("dp-ssp one-shot release, K = %d sites (IID), ε = %g per site, δ = 1/(10n), %d runs; secagg DDG calibrated for n_min = %d honest survivors\n\n", K, *flagEps, *flagRuns, nMin)
	fmt.Println("| dataset | central Gaussian | central DDG (n = 1) | secagg DDG | local noise, no secagg | secagg − central DDG | local − central DDG | per-site s·γ / central σ |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, name := range strings.Split(*flagDatasets, ",") {
		runDataset(strings.TrimSpace(name), K, nMin)
	}
}

func load(name string) (train, test *data.Table, err error) {
	switch name {
	case "diabetes":
		train, err = data.Load(*flagDiabetes, data.Options{})
		return train, nil, err
	case "ijcnn1":
		if train, err = data.Load(filepath.Join(*flagShared, "ijcnn1.trn.bz2"), data.Options{}); err != nil {
			return nil, nil, err
		}
		if test, err = data.Load(filepath.Join(*flagShared, "ijcnn1.tst.bz2"), data.Options{}); err != nil {
			return nil, nil, err
		}
		return train, test, data.Align(train, test)
	}
	return nil, nil, fmt.Errorf("secaggexp: unknown dataset %q (diabetes, ijcnn1)", name)
}

func runDataset(name string, K, nMin int) {
	train, test, err := load(name)
	if err != nil {
		log.Fatal(err)
	}
	spec := simulate.Spec{Sites: K, Seed: *flagSeed, Scale: "none",
		Job: coordinator.JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: *flagEps, ParamRadius: 1, FeatureRadius: R}}
	if err := spec.Validate(); err != nil {
		log.Fatal(err)
	}
	var cG, cD, sD, lo, dS, dL, ratio []float64
	for r := 0; r < *flagRuns; r++ {
		trd, te, rng, err := simulate.TrialSplit(spec, train, test, r)
		if err != nil {
			log.Fatal(err)
		}
		sites, testPrep, err := simulate.Prepare(spec, trd, te, rng)
		if err != nil {
			log.Fatal(err)
		}
		one := spec
		one.Sites = 1
		pooledSites, _, err := simulate.Prepare(one, trd, te, mrand.New(mrand.NewPCG(*flagSeed, uint64(r))))
		if err != nil {
			log.Fatal(err)
		}
		pooled := pooledSites[0].Data
		n := pooled.N
		delta := 1 / (10 * float64(n))
		noise := dp.NewSeededNoise(uint64(1000 + r)).(*dp.Mechanism)
		auc := func(st *pairwise.SSPStats, sigma float64) float64 {
			w, _, err := pairwise.SolveSSP(st, pairwise.SSPLambda(st, R, sigma))
			if err != nil {
				log.Fatal(err)
			}
			return pairwise.LinearAUC(w, testPrep)
		}
		// Central Gaussian (dp-ssp).
		rel, err := pairwise.SSPCalibrate(*flagEps, delta, R, pooled.D, pairwise.SSPClass)
		if err != nil {
			log.Fatal(err)
		}
		full := pairwise.SSPStatsOf(pooled, pairwise.SSPClass)
		aG := auc(pairwise.NoisySSP(full, R, rel, noise), rel.Sigma)
		// Local noise, no secure aggregation.
		var sum *pairwise.SSPStats
		for _, s := range sites {
			ns := pairwise.NoisySSP(pairwise.SSPStatsOf(s.Data, pairwise.SSPClass), R, rel, noise)
			if sum == nil {
				sum = ns
			} else if err := sum.Add(ns); err != nil {
				log.Fatal(err)
			}
		}
		aL := auc(sum, rel.Sigma*math.Sqrt(float64(K)))
		// DDG parameters: Δ of the weighted vector, clip = the largest
		// possible norm of a site's vector (n_site·‖φ‖max, public counts),
		// so clipping never binds.
		a, b, c := pairwise.SSPWeights(R, pairwise.SSPClass)
		sens := pairwise.SSPSensitivity(R, a, b, c)
		phiMax := math.Sqrt(a*a*R*R + b*b*R*R*R*R*2 + c*c)
		vec := pairwise.SSPVector(full, R)
		ddgCentral := ddg(len(vec), float64(n)*phiMax, sens, 1, 1, delta)
		aD := auc(ddgRelease(ddgCentral, [][]float64{vec}, full, noise), ddgSigma(ddgCentral, 1))
		maxSite := 0
		for _, s := range sites {
			maxSite = max(maxSite, s.Data.N)
		}
		g := ddg(len(vec), float64(maxSite)*phiMax, sens, K, nMin, delta)
		vecs := make([][]float64, K)
		for i, s := range sites {
			vecs[i] = pairwise.SSPVector(pairwise.SSPStatsOf(s.Data, pairwise.SSPClass), R)
		}
		aS := auc(ddgRelease(g, vecs, full, noise), ddgSigma(g, K))
		cG, cD, sD, lo = append(cG, aG), append(cD, aD), append(sD, aS), append(lo, aL)
		dS, dL = append(dS, aS-aD), append(dL, aL-aD)
		ratio = append(ratio, g.Params().Scale*g.Params().Gamma/rel.Sigma)
	}
	fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %.4f |\n", name, pm(cG), pm(cD), pm(sD), pm(lo), se(dS), se(dL), experiment.Summarize(ratio).Mean)
}

// ddg calibrates the per-site scale for `sites` sites whose sum certifies
// (ε, δ) when n honest shares are in it.
func ddg(dim int, clip, sens float64, sites, n int, delta float64) *dp.DDG {
	g, err := dp.CalibrateDDG(dp.DDGParams{Dim: dim, Clip: clip, Sensitivity: sens, Sites: sites, RotationSeed: *flagSeed}, 1, n, *flagEps, delta)
	if err != nil {
		log.Fatal(err)
	}
	if e, err := g.Epsilon(1, n, delta); err != nil || e > *flagEps {
		log.Fatalf("DDG not certified: ε = %v, %v", e, err)
	}
	return g
}

// ddgSigma is the real-unit noise of the decoded sum of k shares.
func ddgSigma(g *dp.DDG, k int) float64 {
	return g.Params().Scale * g.Params().Gamma * math.Sqrt(float64(k))
}

// ddgRelease encodes every vector, sums the encodings by secure
// aggregation (one site: the plain encoding) and decodes into statistics
// shaped like like.
func ddgRelease(g *dp.DDG, vecs [][]float64, like *pairwise.SSPStats, noise dp.IntegerNoise) *pairwise.SSPStats {
	enc := map[uint32][]uint64{}
	ids := make([]uint32, len(vecs))
	for i, v := range vecs {
		ids[i] = uint32(i + 1)
		enc[ids[i]] = make([]uint64, g.D)
		if err := g.Encode(enc[ids[i]], v, noise); err != nil {
			log.Fatal(err)
		}
	}
	sum := enc[1]
	if len(vecs) > 1 {
		roundID := make([]byte, 32)
		rand.Read(roundID)
		cfg := secagg.Config{RoundID: roundID, Sites: ids, Threshold: secagg.DefaultThreshold(len(ids)), Bits: g.Bits, Dim: g.D}
		res, _, err := secagg.RunInMemory(cfg, enc, nil, rand.Reader)
		if err != nil {
			log.Fatal(err)
		}
		sum = res.Sum
	}
	out := make([]float64, g.Params().Dim)
	if err := g.Decode(out, sum); err != nil {
		log.Fatal(err)
	}
	st := like.Clone()
	pairwise.SSPFromVector(st, out, R)
	return st
}

func pm(v []float64) string {
	s := experiment.Summarize(v)
	return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.Std)
}

func se(v []float64) string {
	s := experiment.Summarize(v)
	return fmt.Sprintf("%+.4f (se %.4f)", s.Mean, s.Std/math.Sqrt(float64(max(len(v)-1, 1))))
}
