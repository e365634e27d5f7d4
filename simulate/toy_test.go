package simulate_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/simulate"
)

// This file alone adds a federated algorithm — no other file knows it —
// and runs it end to end through a simulation: the proof that the
// fedalgo interface is all a federated algorithm needs.
//
// fed-toy-centroid: each of R rounds, every site moves the broadcast model
// by η times its class-centroid difference d_s = mean(x | y = +1) −
// mean(x | y = −1); the coordinator takes the record-weighted mean. The
// output is w_R = R·η·c·mean_s d_s, with c its own option "scale"
// (default 1): the (scaled) mean of the per-site centroid differences, a
// linear scorer. Not private.

const toyName = "fed-toy-centroid"

func init() { fedalgo.Register(toyAlgo{}) }

type toyAlgo struct{}

func (toyAlgo) Name() string  { return toyName }
func (toyAlgo) Private() bool { return false }

// Doc is what `pairfed algos` would print of it (fedalgo.Documented).
func (toyAlgo) Doc() fedalgo.Doc {
	return fedalgo.Doc{
		Title:       "class-centroid differences of the sites, averaged each round (a test's toy)",
		Paper:       "pairfed (test)",
		Ref:         "simulate/toy_test.go",
		Assumptions: "none; not private",
	}
}

func (toyAlgo) Configure(s *fedalgo.Spec) error {
	if s.Loss == "" {
		s.Loss = "hinge" // the objective the worker builds; unused by the toy
	}
	if s.Rounds == 0 {
		s.Rounds = 3
	}
	if s.Eta == 0 {
		s.Eta = 0.5
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 100
	}
	if s.Task != protocol.TaskAUC {
		return fmt.Errorf("%s learns a linear scorer (task auc)", toyName)
	}
	if s.Epsilon != 0 || s.Delta != 0 {
		return fmt.Errorf("%s is not private", toyName)
	}
	return nil
}

// CheckOptions is the toy's own validator: one option, "scale" > 0.
func (toyAlgo) CheckOptions(opts protocol.Options) error {
	for _, o := range opts {
		if o.Name != "scale" {
			return fmt.Errorf("%s: unknown option %q (it takes scale)", toyName, o.Name)
		}
		if !(o.Value > 0) {
			return fmt.Errorf("%s: scale = %v must be > 0", toyName, o.Value)
		}
	}
	return nil
}

func (toyAlgo) Plan(s *fedalgo.Spec, _ []fedalgo.SiteInfo, _ int) (*fedalgo.Plan, error) {
	return &fedalgo.Plan{Phases: s.Rounds, Eta: s.Eta}, nil
}

func (toyAlgo) NewSite(job *protocol.JobAnnounce, env fedalgo.SiteEnv) (fedalgo.Site, error) {
	if env.Data.IsSparse() {
		return nil, fmt.Errorf("%s needs dense records", toyName)
	}
	eta := job.Eta
	if c, ok := job.Options.Get("scale"); ok {
		eta *= c
	}
	return toySite{eta: eta, dir: centroidDiff(env.Data)}, nil
}

// centroidDiff is mean(x | y = +1) − mean(x | y = −1) (a class without
// records contributes 0).
func centroidDiff(ds *pairwise.Dataset) []float64 {
	pos, neg := make([]float64, ds.D), make([]float64, ds.D)
	var np, nn float64
	for i := range ds.N {
		acc := neg
		if ds.Y[i] > 0 {
			acc, np = pos, np+1
		} else {
			nn++
		}
		for j, v := range ds.Row(i) {
			acc[j] += v
		}
	}
	out := make([]float64, ds.D)
	for j := range out {
		if np > 0 {
			out[j] += pos[j] / np
		}
		if nn > 0 {
			out[j] -= neg[j] / nn
		}
	}
	return out
}

type toySite struct {
	eta float64
	dir []float64
}

func (s toySite) Step(_ context.Context, _ int, model []float64) (*protocol.SiteUpdate, *fedalgo.Release, error) {
	next := slices.Clone(model)
	for j, v := range s.dir {
		next[j] += s.eta * v
	}
	return &protocol.SiteUpdate{Model: next, Weight: 1}, nil, nil
}

func (toyAlgo) NewCombiner(*protocol.JobAnnounce, []float64) (fedalgo.Combiner, error) {
	return toyCombiner{}, nil
}

type toyCombiner struct{}

func (toyCombiner) Combine(_ []float64, ups []*protocol.SiteUpdate, rule protocol.Aggregation) []float64 {
	vecs, weights := make([][]float64, len(ups)), make([]float64, len(ups))
	for i, u := range ups {
		vecs[i], weights[i] = u.Model, u.Weight
	}
	return fedalgo.Aggregate(rule, vecs, weights, false)
}

func (toyCombiner) Final(model []float64) []float64 { return slices.Clone(model) }
func (toyCombiner) State() []float64                { return nil }

func TestToyFederatedAlgorithmEndToEnd(t *testing.T) {
	tab, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := simulate.Spec{Sites: 3, Seed: 5, Transport: "mem", Tick: 5 * time.Millisecond,
		Job: coordinator.JobConfig{Algo: toyName, Rounds: 4, Options: protocol.OptionsOf(map[string]float64{"scale": 3})}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr, err := simulate.RunTrial(ctx, spec, tab, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := tr.Outcome
	if out.Job.Algo != toyName || out.Job.Options[0] != (protocol.Option{Name: "scale", Value: 3}) || out.Job.Phases != 4 || out.Result.Phases != 4 || len(out.Result.Sites) != 3 {
		t.Fatalf("job %+v, result %+v", out.Job, out.Result)
	}
	// Weight 1 per site: w_R = R·η·c·mean_s d_s, up to rounding.
	want := make([]float64, tab.D)
	for _, s := range tr.Sites {
		for j, v := range centroidDiff(s.Data) {
			want[j] += 4 * 0.5 * 3 * v / 3
		}
	}
	for j := range want {
		if math.Abs(out.Result.Model[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
			t.Fatalf("model[%d] = %v, want %v", j, out.Result.Model[j], want[j])
		}
	}
	for site, l := range out.Ledgers {
		if len(l) != 0 {
			t.Errorf("site %s charged a non-private algorithm: %+v", site, l)
		}
	}
	// The pooled centroid difference is a reasonable scorer on diabetes
	// (its AUC there is about 0.8; 0.7 leaves a margin for the split).
	if !(tr.AUC > 0.7) {
		t.Errorf("test AUC %v", tr.AUC)
	}
	// And through the whole `pairfed simulate` path.
	rep, err := simulate.Run(ctx, spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Algorithm != toyName || rep.Private || rep.AUC == nil || rep.AUC.Mean != tr.AUC {
		t.Errorf("report %+v, trial AUC %v", rep, tr.AUC)
	}
}

// The toy's options reach its own validator wherever a job is checked:
// at the coordinator and in the wire protocol.
// TestToyDocumented: the toy's Doc reaches the registry from the test
// file, as a new algorithm's would from its own file.
func TestToyDocumented(t *testing.T) {
	if d, ok := fedalgo.DocOf(toyName); !ok || d.Ref != "simulate/toy_test.go" {
		t.Fatalf("DocOf(%s) = %+v, %v", toyName, d, ok)
	}
}

func TestToyOptionsValidated(t *testing.T) {
	for _, opts := range []protocol.Options{{{Name: "scale", Value: -1}}, {{Name: "speed", Value: 2}}} {
		cfg := coordinator.Config{Federation: "toy", MinSites: 1, Job: coordinator.JobConfig{Algo: toyName, Options: opts}}
		if err := cfg.Validate(); err == nil {
			t.Errorf("coordinator accepted options %v", opts)
		}
		a := &protocol.JobAnnounce{Job: "j", Algo: toyName, Task: "auc", Loss: "hinge", Params: 2, Phases: 1, Sites: []string{"s"}, Options: opts}
		if _, err := protocol.Encode(a); err == nil {
			t.Errorf("protocol encoded options %v", opts)
		}
	}
	a := &protocol.JobAnnounce{Job: "j", Algo: toyName, Task: "auc", Loss: "hinge", Params: 2, Phases: 1, Sites: []string{"s"}, Options: protocol.Options{{Name: "scale", Value: 2}}}
	b, err := protocol.Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := m.(*protocol.JobAnnounce).Options.Get("scale"); !ok || c != 2 {
		t.Fatalf("round trip: %+v", m)
	}
	// Options are not for the algorithms that take none.
	cfg := coordinator.Config{Federation: "toy", MinSites: 1, Job: coordinator.JobConfig{Algo: fedalgo.FedAvg, Options: protocol.Options{{Name: "scale", Value: 2}}}}
	if err := cfg.Validate(); err == nil {
		t.Error("fed-avg accepted an option")
	}
}
