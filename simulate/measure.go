package simulate

// Measurement helpers for the federation benchmarks (bench_test.go) and
// scripts/fedbench: a byte-counting transport wrapper, one run of a spec
// with its sites and test split exposed, an in-process fed-avg reference
// with variants (to find out where fed-avg and pooled sgd-prev differ), the
// cross-label pair share of a site, and the noise probes of
// fed-dp-local-sgd. None of this is on the path of `pairfed simulate`.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"
)

// Counter counts the messages and payload bytes published through the
// transports it wraps (every participant's endpoint). Safe for concurrent use.
type Counter struct {
	msgs, bytes atomic.Int64
}

// Wrap returns t with every Publish counted.
func (c *Counter) Wrap(t transport.Transport) transport.Transport {
	return &countingTransport{Transport: t, c: c}
}

// Connect wraps a FederationConfig.Connect function.
func (c *Counter) Connect(connect func(string) (transport.Transport, error)) func(string) (transport.Transport, error) {
	return func(name string) (transport.Transport, error) {
		t, err := connect(name)
		if err != nil {
			return nil, err
		}
		return c.Wrap(t), nil
	}
}

// Counts returns the messages and bytes published so far.
func (c *Counter) Counts() (msgs, bytes int64) { return c.msgs.Load(), c.bytes.Load() }

// Reset sets both counts to zero.
func (c *Counter) Reset() { c.msgs.Store(0); c.bytes.Store(0) }

type countingTransport struct {
	transport.Transport
	c *Counter
}

var _ transport.Transport = (*countingTransport)(nil)

func (t *countingTransport) Publish(subject string, data []byte) error {
	err := t.Transport.Publish(subject, data)
	if err == nil {
		t.c.msgs.Add(1)
		t.c.bytes.Add(int64(len(data)))
	}
	return err
}

// MemConnect starts an in-memory hub served until ctx ends and returns its
// Connect function.
func MemConnect(ctx context.Context) func(string) (transport.Transport, error) {
	hub := transport.NewMem()
	go hub.Serve(ctx)
	return func(name string) (transport.Transport, error) { return hub.Connect(name), nil }
}

// Trial is run r of a spec, exactly as Run performs it (same split,
// partition, preparation and seeds), with the pieces Run does not expose.
type Trial struct {
	// Train is the pooled training split before preparation; Test is the
	// test split prepared with the pooled training split's scaler.
	Train, Test *pairwise.Dataset
	Sites       []Site
	Outcome     *Outcome
	AUC         float64
}

// TrialSplit returns run r's training and test splits and its random
// source positioned as Run leaves it before Prepare.
func TrialSplit(spec Spec, train, test *data.Table, r int) (tr, te *pairwise.Dataset, rng *rand.Rand, err error) {
	rng = rand.New(rand.NewPCG(spec.Seed, uint64(r)))
	if test != nil {
		return train.Dataset, test.Dataset, rng, nil
	}
	trIdx, teIdx, err := data.StratifiedSplit(train.Y, spec.TestFraction, rng)
	if err != nil {
		return nil, nil, nil, err
	}
	return train.Subset(trIdx), train.Subset(teIdx), rng, nil
}

// RunTrial performs run r of spec over connect (nil: a fresh in-memory hub).
// Private jobs use seeded sources unless spec.Seeded is false, in which
// case they are secure as in Run.
func RunTrial(ctx context.Context, spec Spec, train, test *data.Table, r int, connect func(string) (transport.Transport, error)) (*Trial, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	tr, te, rng, err := TrialSplit(spec, train, test, r)
	if err != nil {
		return nil, err
	}
	sites, testPrep, err := Prepare(spec, tr, te, rng)
	if err != nil {
		return nil, err
	}
	if connect == nil {
		hctx, cancel := context.WithCancel(ctx)
		defer cancel()
		connect = MemConnect(hctx)
	}
	fc := FederationConfig{Name: fmt.Sprintf("trial%d", r), Job: spec.Job, Sites: sites, Tick: spec.Tick,
		PhaseTimeout: spec.PhaseTimeout, Logf: spec.Logf, Connect: connect}
	fc.Job.ID = fmt.Sprintf("run-%d", r)
	if protocol.PrivateFedAlgo(spec.Job.Algo) && !spec.Seeded {
		fc.Secure = true
	} else {
		fc.Seed = spec.Seed ^ spec.NoiseSeed ^ uint64(r)<<32
	}
	out, err := Federate(ctx, fc)
	if err != nil {
		return nil, err
	}
	return &Trial{Train: tr, Test: testPrep, Sites: sites, Outcome: out, AUC: pairwise.LinearAUC(out.Result.Model, testPrep)}, nil
}

// CrossLabelShare is the probability that a pair sgd-prev draws at a site
// (two independent uniform draws) has opposite labels: 2p(1−p) for a
// positive share p. Same-label pairs give the AUC losses no gradient.
func CrossLabelShare(d *pairwise.Dataset) float64 {
	if d.N == 0 {
		return 0
	}
	p := float64(d.NumPositive()) / float64(d.N)
	return 2 * p * (1 - p)
}

// PairCoverage is the share of the pooled positive–negative pairs that lie
// within one site (Σ_s P_s·N_s / (P·N)): pairs across sites are never formed.
func PairCoverage(sites []Site) float64 {
	var within, P, N float64
	for _, s := range sites {
		p := float64(s.Data.NumPositive())
		n := float64(s.Data.N) - p
		within += p * n
		P += p
		N += n
	}
	if P == 0 || N == 0 {
		return 0
	}
	return within / (P * N)
}

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
func FedAvgReference(ctx context.Context, job coordinator.JobConfig, sites []Site, seed uint64, v FedAvgVariant) ([]float64, error) {
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
		rngs[i], _, _ = SiteSources(false, seed, i)
	}
	d := sites[0].Data.D
	model := make([]float64, d)
	outSum := make([]float64, d)
	eta := worker.FedAvgEta(job.Eta, len(sites), job.Rounds)
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

// zeroNoise adds nothing: the noise-free counterpart of a release.
type zeroNoise struct{}

func (zeroNoise) AddGaussian([]float64, float64)  {}
func (zeroNoise) AddLaplace([]float64, float64)   {}
func (zeroNoise) AddL2Laplace([]float64, float64) {}
func (zeroNoise) Secure() bool                    { return false }
func (zeroNoise) Name() string                    { return "none (noise-free probe)" }

// ProbePhase runs phase k of fed-dp-local-sgd at every site from start,
// as the workers do (each site's K halving subsets of pairwise.Y21aPartition,
// pairwise.LocalSGDPhase), once with seeded noise and once without noise
// from identical sampling draws, and measures the noise left in the
// coordinator's weighted average. job must be validated and have Eta and
// Delta set; K is the job's number of phases (⌈log₂ n_min⌉).
func ProbePhase(ctx context.Context, job coordinator.JobConfig, sites []Site, start []float64, k int, seed, noiseSeed uint64, noise func(seed uint64) pairwise.Noise) (*PhaseNoise, error) {
	loss, err := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
	if err != nil {
		return nil, err
	}
	nMin := math.MaxInt
	for _, s := range sites {
		nMin = min(nMin, s.Data.N)
	}
	K := pairwise.Y21aPhases(nMin)
	if k < 1 || k > K {
		return nil, fmt.Errorf("simulate: phase %d outside [1, %d]", k, K)
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
		part, err := pairwise.Y21aPartition(s.Data.N, K, prng)
		if err != nil {
			return nil, err
		}
		s1, s2 := prng.Uint64(), prng.Uint64()
		privN := &pairwise.Privacy{Epsilon: job.Epsilon, Delta: job.Delta, FeatureRadius: job.FeatureRadius, Noise: noise(noiseSeed ^ (uint64(i)+1)*0x9e3779b97f4a7c15)}
		privC := *privN
		privC.Noise = zeroNoise{}
		rn, err := pairwise.LocalSGDPhase(ctx, obj, start, part[k-1], k, job.Eta, privN, rand.New(rand.NewPCG(s1, s2)))
		if err != nil {
			return nil, err
		}
		rc, err := pairwise.LocalSGDPhase(ctx, obj, start, part[k-1], k, job.Eta, &privC, rand.New(rand.NewPCG(s1, s2)))
		if err != nil {
			return nil, err
		}
		w := float64(len(part[k-1]))
		W += w
		sumW2s2 += w * w * rn.Sigma * rn.Sigma
		axpyTo(noisy, w, rn.W)
		axpyTo(clean, w, rc.W)
		if i == 0 {
			pn.One, pn.SignalOne, pn.Sigma = dist(rn.W, rc.W), dist(rc.W, start), rn.Sigma
		}
	}
	for j := range noisy {
		noisy[j] /= W
		clean[j] /= W
	}
	pn.Aggregated, pn.Signal = dist(noisy, clean), dist(clean, start)
	pn.Predicted = math.Sqrt(float64(d) * sumW2s2 / (W * W))
	return pn, nil
}

func dist(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += (a[k] - b[k]) * (a[k] - b[k])
	}
	return math.Sqrt(s)
}

// Dist returns ‖a − b‖₂.
func Dist(a, b []float64) float64 { return dist(a, b) }

// Synthetic returns n records in d dimensions, a share pos of them
// positive, drawn from two unit-variance Gaussians whose means differ by
// sep along the first axis (a stand-in for ijcnn1-sized benchmarks; no
// file I/O).
func Synthetic(n, d int, pos, sep float64, seed uint64) *pairwise.Dataset {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range y {
		y[i] = -1
		if rng.Float64() < pos {
			y[i] = 1
		}
		for j := 0; j < d; j++ {
			x[i*d+j] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		x[i*d] += y[i] * sep / 2
	}
	return pairwise.NewDense(x, y, d)
}
