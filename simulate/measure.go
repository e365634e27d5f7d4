package simulate

// Measurement helpers for the federation benchmarks (bench_test.go) and
// scripts/fedbench: a byte-counting transport wrapper, one run of a spec
// with its sites and test split exposed, the cross-label pair share of a
// site and synthetic data. The in-process references of particular
// algorithms are in package fedalgo/fedprobe. None of this is on the path
// of `pairfed simulate`.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/transport"
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
	if fedalgo.Private(spec.Job.Algo) && !spec.Seeded {
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
