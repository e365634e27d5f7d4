package worker

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// Zero trust in the coordinator (issue 23): a site computes or checks
// every number of an announcement that sets its noise, sensitivity,
// clipping or accounting. The table below tampers, one at a time, each
// such field of an honestly planned announcement (planned as the
// coordinator plans it: fedalgo.Configure, Algorithm.Plan,
// fedalgo.PlanSecAgg) for every private algorithm of the fedalgo
// registry, with and without secure aggregation — in the direction that
// weakens privacy where one exists, and to absurd values (0, negative,
// NaN, ±Inf) — and drives the real Worker.Step path (announcement, then
// phase 1): the site must refuse naming the field, charge nothing (ledger
// and durable store empty) and send nothing derived from its data (no
// SiteUpdate, no secure aggregation message). The honest announcement of
// every (algorithm, secure) pair is run first and must be accepted and
// released (the control: a table of refusals proves nothing if the honest
// job is refused too).
//
// What the table does not tamper, and why (the submitter's spec, which
// the site takes as the job's public parameters; authenticating it is not
// the site's computation): raising ε or δ within the protocol's ranges,
// lowering κ, adding sites to the list. A site's budget (Service) bounds
// the first two; see deploy/README.md. Fields that set the noise but that
// the site uses consistently on both sides of its own bound — B (its own
// projection radius), η, λ, the phases, the local passes — have no
// weakening direction: a different value changes the computation and its
// proven bound together. They get the absurd values only.

// recStore is a durable ledger that records what was appended.
type recStore struct{ got []Release }

func (s *recStore) Append(r Release) error { s.got = append(s.got, r); return nil }

// tamperSites are the job's participants: this worker (s1) and three
// others of the same size.
var tamperSites = []fedalgo.SiteInfo{{Name: "s1", Records: 64}, {Name: "s2", Records: 64}, {Name: "s3", Records: 64}, {Name: "s4", Records: 64}}

// honestAnnounce plans algo's job as the coordinator does (startJob) for
// tamperSites on 3 features; ok is false when the algorithm does not take
// the job (secure aggregation of an algorithm that releases no sum).
func honestAnnounce(t *testing.T, algo string, secure bool) (*protocol.JobAnnounce, bool) {
	t.Helper()
	spec := fedalgo.Spec{ID: "j", Algo: algo, Task: "auc", FeatureRadius: 1, Epsilon: 1, Delta: 1e-3, Seed: 7}
	if fedalgo.TakesLocalAlgo(algo) {
		spec.LocalAlgo = "dpegd"
	}
	if algo == fedalgo.FedDPGDGrad {
		spec.Rounds = 3
	}
	if secure {
		spec.Options = protocol.OptionsOf(map[string]float64{fedalgo.OptSecAgg: 1})
	}
	a, err := fedalgo.Configure(&spec)
	if err != nil {
		if secure {
			return nil, false
		}
		t.Fatalf("%s: %v", algo, err)
	}
	const params = 3
	plan, err := a.Plan(&spec, tamperSites, params)
	if err != nil {
		t.Fatalf("%s: plan: %v", algo, err)
	}
	names := make([]string, len(tamperSites))
	for i, s := range tamperSites {
		names[i] = s.Name
	}
	m := &protocol.JobAnnounce{Job: "j", Algo: algo, LocalAlgo: spec.LocalAlgo, Task: spec.Task, Loss: spec.Loss, Params: params,
		LocalPasses: spec.LocalPasses, Eta: spec.Eta, ParamRadius: spec.ParamRadius, FeatureRadius: spec.FeatureRadius,
		Lambda: spec.Lambda, Seed: spec.Seed, Sites: names, Options: slices.Clone(spec.Options), Calibration: spec.Calibration}
	m.Phases, m.Eta, m.Epsilon, m.Delta = plan.Phases, plan.Eta, plan.Epsilon, plan.Delta
	if plan.ParamRadius > 0 {
		m.ParamRadius = plan.ParamRadius
	}
	if secure {
		if m.Options, err = fedalgo.PlanSecAgg(a, &spec, tamperSites, params, plan); err != nil {
			t.Fatalf("%s: PlanSecAgg: %v", algo, err)
		}
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("%s: honest announcement invalid: %v", algo, err)
	}
	return m, true
}

// tamperField is one coordinator-supplied number: how to set it on an
// announcement, and its honest value.
type tamperField struct {
	name string // as errors name it
	set  func(m *protocol.JobAnnounce, v float64)
	get  func(m *protocol.JobAnnounce) float64
}

func jobField(name string, p func(m *protocol.JobAnnounce) *float64) tamperField {
	return tamperField{name: name, set: func(m *protocol.JobAnnounce, v float64) { *p(m) = v }, get: func(m *protocol.JobAnnounce) float64 { return *p(m) }}
}

func optionField(name string) tamperField {
	return tamperField{name: name,
		set: func(m *protocol.JobAnnounce, v float64) {
			for i := range m.Options {
				if m.Options[i].Name == name {
					m.Options[i].Value = v
					return
				}
			}
			m.Options = append(m.Options, protocol.Option{Name: name, Value: v})
			slices.SortFunc(m.Options, func(a, b protocol.Option) int { return strings.Compare(a.Name, b.Name) })
		},
		get: func(m *protocol.JobAnnounce) float64 {
			for _, o := range m.Options {
				if o.Name == name {
					return o.Value
				}
			}
			return 0
		}}
}

var (
	fEpsilon  = jobField("epsilon", func(m *protocol.JobAnnounce) *float64 { return &m.Epsilon })
	fDelta    = jobField("delta", func(m *protocol.JobAnnounce) *float64 { return &m.Delta })
	fR        = jobField("feature_radius", func(m *protocol.JobAnnounce) *float64 { return &m.FeatureRadius })
	fB        = jobField("param_radius", func(m *protocol.JobAnnounce) *float64 { return &m.ParamRadius })
	fEta      = jobField("eta", func(m *protocol.JobAnnounce) *float64 { return &m.Eta })
	fLambda   = jobField("lambda", func(m *protocol.JobAnnounce) *float64 { return &m.Lambda })
	fPasses   = jobField("local_passes", func(m *protocol.JobAnnounce) *float64 { return &m.LocalPasses })
	fPhases   = tamperField{name: "phase", set: func(m *protocol.JobAnnounce, v float64) { m.Phases = int(v) }, get: func(m *protocol.JobAnnounce) float64 { return float64(m.Phases) }}
	fSens     = optionField("secagg-sens")
	fGamma    = optionField("secagg-gamma")
	fScale    = optionField("secagg-scale")
	fClip     = optionField("secagg-clip")
	fFail     = optionField("secagg-fail")
	fRotation = optionField("secagg-rotation")
	fThresh   = optionField(fedalgo.OptSecAggThreshold)
	fColl     = optionField(fedalgo.OptSecAggColluders)
	fKeepAll  = optionField(fedalgo.OptSecAggKeepAll)
)

// tamper is one row: a field and the value it gets from the honest one.
type tamper struct {
	f    tamperField
	what string
	v    func(honest float64, m *protocol.JobAnnounce) float64
}

func to(x float64) func(float64, *protocol.JobAnnounce) float64 {
	return func(float64, *protocol.JobAnnounce) float64 { return x }
}

func times(x float64) func(float64, *protocol.JobAnnounce) float64 {
	return func(h float64, _ *protocol.JobAnnounce) float64 { return h * x }
}

// absurd are the absurd values of a real field.
func absurd(f tamperField, zero bool) []tamper {
	out := []tamper{{f, "-1", to(-1)}, {f, "NaN", to(math.NaN())}, {f, "+Inf", to(math.Inf(1))}, {f, "-Inf", to(math.Inf(-1))}}
	if zero {
		out = append(out, tamper{f, "0", to(0)})
	}
	return out
}

// jobTampers are the rows of the job's own numbers for a private
// algorithm: every one enters some private algorithm's noise or bound
// (an algorithm that ignores a field refuses its absurd values all the
// same: the announcement is invalid). A zero is refused for ε, R and B
// (0 means "no privacy" or "no bound"); for the others 0 is a legal
// default and the site's own calibration covers it.
func jobTampers() []tamper {
	var rows []tamper
	rows = append(rows, absurd(fEpsilon, true)...)
	rows = append(rows, tamper{fDelta, "1", to(1)}, tamper{fDelta, "-1", to(-1)}, tamper{fDelta, "NaN", to(math.NaN())}, tamper{fDelta, "+Inf", to(math.Inf(1))})
	rows = append(rows, absurd(fR, true)...)
	// Weakening R: below the radius of this site's records (‖x‖ ≤ ~0.6
	// in toyData), so that the announced sensitivity would not hold.
	rows = append(rows, tamper{fR, "0.01 (below the data)", to(0.01)})
	rows = append(rows, absurd(fB, true)...)
	rows = append(rows, absurd(fEta, false)...)
	rows = append(rows, absurd(fLambda, false)...)
	rows = append(rows, absurd(fPasses, false)...)
	rows = append(rows, tamper{fPhases, "0", to(0)}, tamper{fPhases, "-1", to(-1)}, tamper{fPhases, "MaxPhases+1", to(protocol.MaxPhases + 1)})
	return rows
}

// secTampers are the rows of secure aggregation's options.
func secTampers() []tamper {
	var rows []tamper
	for _, f := range []tamperField{fSens, fGamma, fScale, fClip} {
		rows = append(rows, absurd(f, true)...)
	}
	rows = append(rows,
		tamper{fSens, "÷1000", times(1e-3)},
		tamper{fGamma, "÷1000", times(1e-3)},
		tamper{fScale, "÷2", times(0.5)},
		tamper{fClip, "×2^40", times(0x1p40)},
		// Issue 23's attack: Δ and γ ÷1000, s recalibrated (+1%).
		tamper{optionField("secagg-sens+gamma"), "÷1000 with s +1%", nil},
		tamper{fFail, "wrong δ_f", func(h float64, m *protocol.JobAnnounce) float64 {
			if h > 0 {
				return 0 // drop the failure probability: the DDG certified at δ
			}
			return m.Delta / 2
		}},
		tamper{fFail, "-1", to(-1)}, tamper{fFail, "NaN", to(math.NaN())}, tamper{fFail, "+Inf", to(math.Inf(1))},
		tamper{fRotation, "+1", func(h float64, _ *protocol.JobAnnounce) float64 { return h + 1 }},
		tamper{fRotation, "-1", to(-1)}, tamper{fRotation, "NaN", to(math.NaN())},
		tamper{fThresh, "K/2", func(_ float64, m *protocol.JobAnnounce) float64 { return float64(len(m.Sites) / 2) }},
		tamper{fThresh, "1", to(1)}, tamper{fThresh, "0", to(0)}, tamper{fThresh, "-1", to(-1)}, tamper{fThresh, "NaN", to(math.NaN())}, tamper{fThresh, "K+1", func(_ float64, m *protocol.JobAnnounce) float64 { return float64(len(m.Sites) + 1) }},
		tamper{fColl, "= t", func(_ float64, m *protocol.JobAnnounce) float64 { return fThresh.get(m) }},
		tamper{fColl, "-1", to(-1)}, tamper{fColl, "NaN", to(math.NaN())},
		// Removable copies off after the plan calibrated each copy for
		// (t − κ)·m of them (K = 4, t = 3: m = 4): one copy of that scale
		// per site certifies far less than the job's ε.
		tamper{fKeepAll, "1 after the plan", to(1)},
		tamper{fKeepAll, "2", to(2)}, tamper{fKeepAll, "NaN", to(math.NaN())},
	)
	return rows
}

// outcome is what a worker did with an announcement followed by phase 1.
type outcome struct {
	w       *Worker
	store   *recStore
	outs    []Output
	leaked  []string // kinds of messages derived from data
	aborted bool
}

func runJob(t *testing.T, m *protocol.JobAnnounce) outcome {
	t.Helper()
	st := &recStore{}
	pub, priv := testSecRoster()
	w, err := New(Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5), Store: st,
		SecAggKey: priv["s1"], SecAggRoster: pub})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := outcome{w: w, store: st}
	o.outs = append(o.outs, w.Step(ctx, m)...)
	o.outs = append(o.outs, w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: make([]float64, max(m.Params, 1))})...)
	for _, out := range o.outs {
		switch out.Msg.(type) {
		case *protocol.Abort:
			o.aborted = true
		case *protocol.Accept, *protocol.Join, *protocol.Heartbeat:
		default:
			o.leaked = append(o.leaked, fmt.Sprint(out.Msg.Kind()))
		}
	}
	return o
}

// refusedNaming reports whether the worker refused the job before
// anything left or was charged, with an error naming one of names;
// otherwise it fails t saying what happened.
func refusedNaming(t *testing.T, o outcome, names ...string) bool {
	t.Helper()
	err := o.w.Err()
	switch {
	case len(o.leaked) > 0:
		t.Errorf("sent %v", o.leaked)
	case len(o.w.Ledger()) > 0 || len(o.store.got) > 0:
		t.Errorf("charged %v (store %v)", o.w.Ledger(), o.store.got)
	case !o.aborted || err == nil:
		t.Errorf("not refused: outputs %v, err %v", kinds(o.outs), err)
	case !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(err.Error(), n) }):
		t.Errorf("refused without naming %s: %v", strings.Join(names, " or "), err)
	default:
		t.Logf("refused: %v", err)
		return true
	}
	return false
}

// cloneAnnounce deep-copies what the rows modify.
func cloneAnnounce(m *protocol.JobAnnounce) *protocol.JobAnnounce {
	c := *m
	c.Options = slices.Clone(m.Options)
	c.Sites = slices.Clone(m.Sites)
	return &c
}

func TestTamperTable(t *testing.T) {
	rows, refused := 0, 0
	for _, algo := range fedalgo.Names() {
		if !fedalgo.Private(algo) {
			// A non-private algorithm adds no noise and charges nothing:
			// no announced number sets either.
			t.Logf("%s: not private, no row", algo)
			continue
		}
		for _, secure := range []bool{false, true} {
			honest, ok := honestAnnounce(t, algo, secure)
			if !ok {
				t.Logf("%s: no secure aggregation (releases no sum)", algo)
				continue
			}
			name := fmt.Sprintf("%s/secure=%v", algo, secure)
			// The control: the honest job is accepted and released (with
			// secure aggregation its round starts: the keys leave, and the
			// charge waits for the masked vector, driven to it here).
			o := runJob(t, honest)
			if secure && !o.aborted && len(o.leaked) == 1 {
				driveToMasked(t, o.w, 1, o.outs[len(o.outs)-1].Msg)
			}
			if o.aborted || len(o.leaked) == 0 || len(o.w.Ledger()) != 1 || len(o.store.got) != 1 {
				t.Fatalf("%s: the honest announcement was not accepted and released: outputs %v, ledger %v, err %v", name, kinds(o.outs), o.w.Ledger(), o.w.Err())
			}
			rowsOf := jobTampers()
			if secure {
				rowsOf = append(rowsOf, secTampers()...)
			}
			for _, r := range rowsOf {
				m := cloneAnnounce(honest)
				field := r.f.name
				if r.f.name == "secagg-sens+gamma" {
					fSens.set(m, fSens.get(m)/1000)
					fGamma.set(m, fGamma.get(m)/1000)
					fScale.set(m, fScale.get(m)*1.01)
					field = "secagg-sens"
				} else {
					r.f.set(m, r.v(r.f.get(honest), m))
				}
				rows++
				t.Run(fmt.Sprintf("%s/%s=%s", name, r.f.name, r.what), func(t *testing.T) {
					if refusedNaming(t, runJob(t, m), field) {
						refused++
					}
				})
			}
		}
	}
	t.Logf("%d rows, %d refused as required", rows, refused)
	if rows == 0 || refused != rows {
		t.Errorf("%d of %d rows refused", refused, rows)
	}
}

func kinds(outs []Output) []string {
	var k []string
	for _, o := range outs {
		k = append(k, fmt.Sprint(o.Msg.Kind()))
	}
	return k
}
