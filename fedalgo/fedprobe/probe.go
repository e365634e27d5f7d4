// Package fedprobe holds in-process references of federated algorithms for
// the federation benchmarks (simulate's bench tests and scripts/fedbench):
// fed-avg computed without a coordinator, workers or transport, with
// variants (to find out where fed-avg and pooled sgd-prev differ), and the
// noise probes of fed-dp-local-sgd. None of this is on the path of a job:
// the algorithms themselves live in package fedalgo, and these references
// are checked against them (probe_test.go).
package fedprobe

import (
	"context"
	"fmt"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"math"
	"math/rand/v2"
	"slices"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/simulate"
)

// FedAvgVariant changes one aspect of fed-avg in FedAvgReference; the zero
// value is fed-avg as the coordinator and workers run it.
type FedAvgVariant struct {
	// EtaScale replaces the √N (N sites) that multiplies every site's step
	// size (0 keeps √N). √N makes the distance a round moves the model
	// equal to pooled sgd-prev's over the same number of pair steps; 1 is
	// the step of fed-avg before that change, η/√(R·T_s).
	EtaScale float64
	// RestartFromAverage makes each round restart from the average of the
	// sites' Alg 1 outputs and the output the last round's average (fed-avg
	// before it restarted from the sites' last iterates and averaged its
	// output over rounds, as Alg 1 averages over the whole run).
	RestartFromAverage bool
}

// FedAvgReference runs fed-avg in process, without a coordinator, workers
// or transport: with the zero variant it computes exactly what Federate
// computes with seeded sources (same per-site random streams, same
// weighted aggregation in site-name order; for d ≤ protocol.MaxLastParams,
// above which sites send no last iterate). job must be validated
// (coordinator.Config.Validate fills its defaults).
func FedAvgReference(ctx context.Context, job coordinator.JobConfig, sites []simulate.Site, seed uint64, v FedAvgVariant) ([]float64, error) {
	loss, err := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
	if err != nil {
		return nil, err
	}
	algo, err := pairwise.Lookup("sgd-prev")
	if err != nil {
		return nil, err
	}
	order := make([]int, len(sites))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case sites[a].Name < sites[b].Name:
			return -1
		case sites[a].Name > sites[b].Name:
			return 1
		}
		return 0
	})
	objs := make([]pairwise.Objective, len(sites))
	rngs := make([]*rand.Rand, len(sites))
	for i, s := range sites {
		objs[i], err = pairwise.NewObjective(s.Data, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Lambda: job.Lambda, Constraint: "l2", Radius: job.ParamRadius})
		if err != nil {
			return nil, err
		}
		rngs[i], _, _ = simulate.SiteSources(false, seed, i)
	}
	d := sites[0].Data.D
	model := make([]float64, d)
	outSum := make([]float64, d)
	eta := fedalgo.FedAvgEta(job.Eta, len(sites), job.Rounds)
	if v.EtaScale != 0 {
		eta = v.EtaScale * job.Eta / math.Sqrt(float64(job.Rounds))
	}
	for round := 1; round <= job.Rounds; round++ {
		next, avg := make([]float64, d), make([]float64, d)
		var total float64
		for _, i := range order {
			n := sites[i].Data.N
			T := int(math.Ceil(job.LocalPasses * float64(n)))
			res, err := algo.Run(ctx, objs[i], pairwise.RunConfig{Steps: T, Eta: eta, Init: model}, rngs[i])
			if err != nil {
				return nil, err
			}
			wt := float64(n)
			total += wt
			if v.RestartFromAverage {
				axpyTo(next, wt, res.W)
				continue
			}
			axpyTo(next, wt, res.Last)
			axpyTo(avg, wt, res.W)
		}
		for k := range next {
			next[k] /= total
			avg[k] /= total
		}
		model = next
		axpyTo(outSum, 1, avg)
	}
	if v.RestartFromAverage {
		return model, nil
	}
	for k := range outSum {
		outSum[k] /= float64(job.Rounds)
	}
	return outSum, nil
}

func axpyTo(dst []float64, a float64, x []float64) {
	for k, v := range x {
		dst[k] += a * v
	}
}

// PhaseNoise is one measurement of the noise a fed-dp-local-sgd phase
// leaves in the aggregated model.
type PhaseNoise struct {
	Sites int
	// Aggregated is ‖Σ_s (w_s/W)(ŵ_s − w̄_s)‖: the coordinator's average of
	// the noisy releases ŵ_s minus its average of the noise-free phase
	// outputs w̄_s (same start, same draws). One is the same for site 0 alone.
	Aggregated, One float64
	// Predicted is √(d·Σ_s (w_s/W)² σ_s²), the expected norm of the
	// aggregated noise (before the projection onto W).
	Predicted float64
	// Signal is ‖Σ_s (w_s/W) w̄_s − start‖ and SignalOne ‖w̄_0 − start‖:
	// how far the noise-free phase moves the model.
	Signal, SignalOne float64
	Sigma             float64 // σ_k of site 0
}

// ProbePhase runs phase k of fed-dp-local-sgd at every site from start,
// as the workers do (each site's K halving subsets of dpalgo.LocalSGDPartition,
// dpalgo.LocalSGDPhase), once with seeded noise and once without noise
// from identical sampling draws, and measures the noise left in the
// coordinator's weighted average. job must be validated and have Eta and
// Delta set; K is the job's number of phases (⌈log₂ n_min⌉).
func ProbePhase(ctx context.Context, job coordinator.JobConfig, sites []simulate.Site, start []float64, k int, seed, noiseSeed uint64, noise func(seed uint64) pairwise.Noise) (*PhaseNoise, error) {
	loss, err := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
	if err != nil {
		return nil, err
	}
	nMin := math.MaxInt
	for _, s := range sites {
		nMin = min(nMin, s.Data.N)
	}
	K := dpalgo.LocalSGDPhases(nMin)
	if k < 1 || k > K {
		return nil, fmt.Errorf("fedprobe: phase %d outside [1, %d]", k, K)
	}
	d := len(start)
	noisy, clean := make([]float64, d), make([]float64, d)
	var W, sumW2s2 float64
	pn := &PhaseNoise{Sites: len(sites)}
	for i, s := range sites {
		obj, err := pairwise.NewObjective(s.Data, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Lambda: job.Lambda, Constraint: "l2", Radius: job.ParamRadius})
		if err != nil {
			return nil, err
		}
		prng := rand.New(rand.NewPCG(seed, uint64(i)+1))
		part, err := dpalgo.LocalSGDPartition(s.Data.N, K, prng)
		if err != nil {
			return nil, err
		}
		s1, s2 := prng.Uint64(), prng.Uint64()
		privN := &pairwise.Privacy{Epsilon: job.Epsilon, Delta: job.Delta, FeatureRadius: job.FeatureRadius, Noise: noise(noiseSeed ^ (uint64(i)+1)*0x9e3779b97f4a7c15)}
		privC := *privN
		privC.Noise = dp.ZeroNoise() // the noise-free counterpart of the release
		rn, err := dpalgo.LocalSGDPhase(ctx, obj, start, part[k-1], k, job.Eta, privN, rand.New(rand.NewPCG(s1, s2)))
		if err != nil {
			return nil, err
		}
		rc, err := dpalgo.LocalSGDPhase(ctx, obj, start, part[k-1], k, job.Eta, &privC, rand.New(rand.NewPCG(s1, s2)))
		if err != nil {
			return nil, err
		}
		w := float64(len(part[k-1]))
		W += w
		sumW2s2 += w * w * rn.Sigma * rn.Sigma
		axpyTo(noisy, w, rn.W)
		axpyTo(clean, w, rc.W)
		if i == 0 {
			pn.One, pn.SignalOne, pn.Sigma = simulate.Dist(rn.W, rc.W), simulate.Dist(rc.W, start), rn.Sigma
		}
	}
	for j := range noisy {
		noisy[j] /= W
		clean[j] /= W
	}
	pn.Aggregated, pn.Signal = simulate.Dist(noisy, clean), simulate.Dist(clean, start)
	pn.Predicted = math.Sqrt(float64(d) * sumW2s2 / (W * W))
	return pn, nil
}
