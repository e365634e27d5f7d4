package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg/round"
)

// secAnnounce is a fed-dp-ssp job for sites s1..s4 planned as the
// coordinator plans it; scale multiplies the planned per-site scale.
func secAnnounce(t *testing.T, scale float64) *protocol.JobAnnounce {
	t.Helper()
	spec := fedalgo.Spec{ID: "j", Algo: fedalgo.FedDPSSP, Task: "auc", FeatureRadius: 1, Epsilon: 1, Delta: 1e-3,
		Options: protocol.OptionsOf(map[string]float64{fedalgo.OptSecAgg: 1, fedalgo.OptSecAggThreshold: 3})}
	a, err := fedalgo.Configure(&spec)
	if err != nil {
		t.Fatal(err)
	}
	sites := []fedalgo.SiteInfo{{Name: "s1", Records: 64}, {Name: "s2", Records: 64}, {Name: "s3", Records: 64}, {Name: "s4", Records: 64}}
	plan, err := a.Plan(&spec, sites, 3)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := fedalgo.PlanSecAgg(a, &spec, sites, 3, plan)
	if err != nil {
		t.Fatal(err)
	}
	for i := range opts {
		if opts[i].Name == "secagg-scale" {
			opts[i].Value *= scale
		}
	}
	return &protocol.JobAnnounce{Job: "j", Algo: spec.Algo, Task: "auc", Loss: spec.Loss, Params: 3, Phases: 1, ParamRadius: 1,
		FeatureRadius: 1, Epsilon: plan.Epsilon, Delta: plan.Delta, Sites: []string{"s1", "s2", "s3", "s4"}, Options: opts}
}

// A site charges its ledger just before its masked vector (the round's
// only message derived from its records) leaves — not before its keys:
// a round that aborts during key agreement or share distribution charges
// nothing — with the guarantee round.Charge computes at the threshold, and
// sends the keys once; a coordinator announcing a per-site scale too small
// for the job's ε gets an abort, and nothing is charged or sent. The
// entry records the local-only guarantee (one share) too, above the
// threshold's.
func TestWorkerSecAggCharge(t *testing.T) {
	ctx := context.Background()
	w := newWorker(t)
	if outs := w.Step(ctx, secAnnounce(t, 1)); len(outs) != 1 {
		t.Fatalf("announcement: %v (%v)", outs, w.Err())
	}
	ps := &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}}
	outs := w.Step(ctx, ps)
	if len(outs) != 1 {
		t.Fatalf("phase: %v (%v)", outs, w.Err())
	}
	if _, ok := outs[0].Msg.(*protocol.SecAggKeys); !ok {
		t.Fatalf("phase sent %v, want the round's keys", outs[0].Msg.Kind())
	}
	if l := w.Ledger(); len(l) != 0 {
		t.Fatalf("charged before the masked vector: %+v", l)
	}
	driveToMasked(t, w, 1, outs[0].Msg)
	l := w.Ledger()
	if len(l) != 1 || l[0].SecAgg == nil || l[0].SecAgg.Threshold != 3 || l[0].Epsilon < l[0].SecAgg.Collusion || l[0].SecAgg.Collusion < l[0].SecAgg.Coordinator || l[0].Records != 64 {
		t.Fatalf("ledger %+v", l)
	}
	if l[0].SecAgg.Local <= l[0].SecAgg.Collusion || l[0].SecAgg.Local > 100 {
		t.Errorf("local-only guarantee %g: want above the %g of 3 shares (1 share of noise calibrated for 3)", l[0].SecAgg.Local, l[0].SecAgg.Collusion)
	}
	if l[0].SecAgg.Collusion < 0.9 {
		t.Errorf("calibrated guarantee %g far below the job's ε = 1 (calibration should be tight)", l[0].SecAgg.Collusion)
	}
	if again := w.Step(ctx, ps); len(again) != 0 || len(w.Ledger()) != 1 {
		t.Errorf("a repeated phase start sent %v, ledger %d entries", again, len(w.Ledger()))
	}

	// Refused at the announcement (the site computes the job's guarantee
	// before accepting), so the phase start finds no job.
	w = newWorker(t)
	outs = w.Step(ctx, secAnnounce(t, 0.5))
	outs = append(outs, w.Step(ctx, ps)...)
	if len(outs) != 1 || len(w.Ledger()) != 0 || w.Err() == nil {
		t.Fatalf("a too small scale: outputs %v, ledger %v, err %v", outs, w.Ledger(), w.Err())
	}
	if a, ok := outs[0].Msg.(*protocol.Abort); !ok {
		t.Fatalf("sent %v, want an abort", outs[0].Msg.Kind())
	} else {
		t.Logf("refused: %s", a.Reason)
	}
}

// Issue 23, finding 1: a coordinator that divides the announced DDG
// sensitivity and granularity by 1000 (the per-site scale s, in units of
// γ, unchanged) makes the noise 1000 times smaller in real units while
// the guarantee it lets the site compute stays ε ≈ 1 (s raised by 1% to
// absorb the rounding term, as a coordinator recalibrating s for the fake
// Δ would: the real σ = s·γ is 990 times too small). The site recomputes
// its own vector's sensitivity from the job's public parameters and
// refuses, before anything is charged or sent.
func TestWorkerSecAggShrunkSensitivityRefused(t *testing.T) {
	ctx := context.Background()
	job := secAnnounce(t, 1)
	for i := range job.Options {
		if n := job.Options[i].Name; n == "secagg-sens" || n == "secagg-gamma" {
			job.Options[i].Value /= 1000
		}
		if job.Options[i].Name == "secagg-scale" {
			job.Options[i].Value *= 1.01
		}
	}
	w := newWorker(t)
	outs := w.Step(ctx, job)
	outs = append(outs, w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}})...)
	for _, o := range outs {
		if _, ok := o.Msg.(*protocol.Abort); !ok {
			t.Errorf("the site sent %v on a shrunken sensitivity", o.Msg.Kind())
		}
	}
	if len(w.Ledger()) != 0 || w.Err() == nil || !strings.Contains(w.Err().Error(), "secagg-sens") {
		t.Fatalf("shrunken sensitivity: ledger %+v, err %v", w.Ledger(), w.Err())
	}
	t.Log(w.Err())
}

// A ledger entry written before the local-only guarantee was recorded
// still decodes strictly (the field is optional), a new one round-trips,
// and an ε above 100 (+Inf from dp.DDG.Epsilon) is stored as
// math.MaxFloat64, which JSON can encode.
func TestSecAggChargeJSON(t *testing.T) {
	old := `{"job":"j","phase":1,"records":64,"sigma":1.5,"epsilon":0.9,"delta":0.001,"secure":true,"secagg":{"threshold":3,"colluders":0,"epsilon_coordinator":0.9,"epsilon_collusion":0.9}}`
	dec := json.NewDecoder(strings.NewReader(old))
	dec.DisallowUnknownFields()
	var r Release
	if err := dec.Decode(&r); err != nil || r.SecAgg == nil || r.SecAgg.Local != 0 {
		t.Fatalf("old entry: %+v, %v", r.SecAgg, err)
	}
	r.SecAgg.Local = finiteEpsilon(math.Inf(1))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Release
	dec = json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil || *back.SecAgg != *r.SecAgg || back.SecAgg.Local != math.MaxFloat64 {
		t.Fatalf("round trip of %s: %+v, %v", b, back.SecAgg, err)
	}
	if finiteEpsilon(2.5) != 2.5 {
		t.Fatal("a finite ε changed")
	}
}

// driveToMasked runs phase's secure aggregation round of w's job with an
// honest server and the job's other sites (zero vectors), from w's keys
// (the first message of the round) until w sends its masked vector, and
// returns w's outputs of that step.
func driveToMasked(t *testing.T, w *Worker, phase int, keys protocol.Message) []Output {
	t.Helper()
	ctx := context.Background()
	g, err := w.sec.DDG(w.secDim, len(w.job.Sites), w.secFloors.Copies)
	if err != nil {
		t.Fatal(err)
	}
	pub, priv := testSecRoster()
	fl := w.secFloors
	p := round.Params{Federation: "f", Job: w.job.Job, Phase: phase, Sites: w.job.Sites, Threshold: w.sec.Threshold, Degree: w.sec.Degree, Local: fl.Local, Withheld: fl.Withheld, Bits: g.Bits, Dim: g.D, Roster: pub}
	srv, err := round.NewServer(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		from string
		m    protocol.Message
	}
	queue := []msg{{"s1", keys}}
	peers := map[string]*round.Site{}
	for i, s := range p.Sites[1:] {
		site, k, err := round.NewSite(p, s, priv[s], make([]uint64, g.D), rand.NewChaCha8([32]byte{byte(i + 1)}))
		if err != nil {
			t.Fatal(err)
		}
		peers[s] = site
		queue = append(queue, msg{s, k})
	}
	for steps := 0; len(queue) > 0 && steps < 1000; steps++ {
		in := queue[0]
		queue = queue[1:]
		outs, _, err := srv.Deliver(in.from, in.m)
		if err != nil {
			t.Fatalf("server: %v", err)
		}
		var each []round.Outgoing
		for _, o := range outs {
			if o.To != "" {
				each = append(each, o)
				continue
			}
			for _, s := range p.Sites { // a broadcast
				each = append(each, round.Outgoing{To: s, Msg: o.Msg})
			}
		}
		for _, o := range each {
			if o.To == "s1" {
				wo := w.Step(ctx, o.Msg)
				for _, x := range wo {
					if _, ok := x.Msg.(*protocol.SecAggMasked); ok {
						return wo
					}
					if a, ok := x.Msg.(*protocol.Abort); ok {
						t.Fatalf("the site aborted: %s", a.Reason)
					}
					queue = append(queue, msg{"s1", x.Msg})
				}
				continue
			}
			if reply, err := peers[o.To].Deliver(o.Msg); err != nil {
				t.Fatalf("peer %s: %v", o.To, err)
			} else if reply != nil {
				queue = append(queue, msg{o.To, reply})
			}
		}
	}
	t.Fatal("the round did not reach the masked vectors")
	return nil
}
