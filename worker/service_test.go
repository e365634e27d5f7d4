package worker

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// memStore records appends; fail makes them fail.
type memStore struct {
	got  []Release
	fail bool
}

func (m *memStore) Append(r Release) error {
	if m.fail {
		return errors.New("disk full")
	}
	m.got = append(m.got, r)
	return nil
}

func newService(t *testing.T, store LedgerStore, budget *Budget, ledger []Release) *Service {
	t.Helper()
	s, err := NewService(ServiceConfig{
		Worker: Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5), Store: store},
		Budget: budget, Ledger: ledger,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dpJob(id string, eps float64) *protocol.JobAnnounce {
	a := dpAnnounce("s1", "s2")
	a.Job, a.Epsilon = id, eps
	return a
}

func refusal(outs []Output) *protocol.Refuse {
	for _, o := range outs {
		if r, ok := o.Msg.(*protocol.Refuse); ok {
			return r
		}
	}
	return nil
}

// Each release reaches the store before its update is returned
// (write-ahead), and the service serves a second job after the first.
func TestServiceWriteAheadAndNextJob(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	s := newService(t, st, nil, nil)
	s.Step(ctx, dpJob("j1", 1))
	for k := 1; k <= 6; k++ {
		outs := s.Step(ctx, &protocol.PhaseStart{Job: "j1", Phase: k, Model: []float64{0, 0, 0}})
		if len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindSiteUpdate {
			t.Fatalf("phase %d: %v", k, outs)
		}
		if len(st.got) != k || st.got[k-1].Phase != k {
			t.Fatalf("phase %d released with %d durable entries", k, len(st.got))
		}
	}
	s.Step(ctx, &protocol.Result{Job: "j1", Phases: 6, Model: []float64{1, 1, 1}})
	if s.Running() != "" {
		t.Fatalf("still running %s", s.Running())
	}
	// One job's certificate (the largest phase's: exact calibration puts
	// it just below the request), not a sum over the phases.
	if e, d := Spent(s.Ledger()); !(e > 0.999 && e <= 1) || !(d > 0 && d <= 1e-3) {
		t.Errorf("spent (%v, %v), want one job's certified ≤ (1, 1e-3): phases compose in parallel", e, d)
	}
	s.Step(ctx, dpJob("j2", 1))
	if s.Running() != "j2" {
		t.Fatal("second job not taken")
	}
}

// A failing store blocks the release: no update leaves, the site leaves
// the job (which goes on with the quorum: before, its Abort ended the job
// for every site) and is free for the next one.
func TestServiceStoreFailureBlocksRelease(t *testing.T) {
	ctx := context.Background()
	s := newService(t, &memStore{fail: true}, nil, nil)
	s.Step(ctx, dpJob("j1", 1))
	outs := s.Step(ctx, &protocol.PhaseStart{Job: "j1", Phase: 1, Model: []float64{0, 0, 0}})
	if len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindLeave {
		t.Fatalf("outputs %v: want a leave and no update", outs)
	}
	if s.Running() != "" {
		t.Fatalf("still running %q after leaving", s.Running())
	}
}

// The budget counts the reloaded ledger: a job whose ε or δ would pass it
// is refused with a Refuse naming the numbers; within budget it is taken.
// With a budget, non-private jobs are refused.
func TestServiceBudget(t *testing.T) {
	ctx := context.Background()
	old := []Release{{Job: "old", Phase: 1, Epsilon: 1, Delta: 1e-3}, {Job: "old", Phase: 2, Epsilon: 1, Delta: 1e-3}}
	s := newService(t, nil, &Budget{Epsilon: 1.5, Delta: math.Inf(1)}, old)
	r := refusal(s.Step(ctx, dpJob("j", 1)))
	if r == nil || r.Job != "j" || r.Site != "s1" || !strings.Contains(r.Reason, "spent (ε, δ) = (1, 0.001)") {
		t.Fatalf("refusal %+v", r)
	}
	if s.Running() != "" {
		t.Fatal("refused job running")
	}
	if r := refusal(s.Step(ctx, dpJob("j2", 0.5))); r != nil || s.Running() != "j2" {
		t.Fatalf("job within budget refused: %+v", r)
	}

	s = newService(t, nil, &Budget{Epsilon: 10, Delta: 0.5}, nil)
	fa := &protocol.JobAnnounce{Job: "fa", Algo: fedalgo.FedAvg, Task: "auc", Loss: "hinge", Params: 3, Phases: 1, LocalPasses: 1, Eta: 1, ParamRadius: 1, FeatureRadius: 1, Sites: []string{"s1"}}
	if r := refusal(s.Step(ctx, fa)); r == nil || !strings.Contains(r.Reason, "not differentially private") {
		t.Fatalf("non-private job under a budget: %+v", r)
	}
	d := dpJob("dd", 1)
	d.Delta = 0.6
	if r := refusal(s.Step(ctx, d)); r == nil {
		t.Fatal("δ over budget accepted")
	}
}

// After a restart a site does not rejoin a job it already released for:
// a fresh worker would draw new noise for the same records.
func TestServiceRefusesReleasedJob(t *testing.T) {
	s := newService(t, nil, nil, []Release{{Job: "j", Phase: 1, Epsilon: 1, Delta: 1e-3}})
	if r := refusal(s.Step(context.Background(), dpJob("j", 1))); r == nil || !strings.Contains(r.Reason, "already released") {
		t.Fatalf("refusal %+v", r)
	}
}

func TestSpent(t *testing.T) {
	e, d := Spent([]Release{{Job: "a", Epsilon: 1, Delta: 1e-4}, {Job: "a", Epsilon: 1, Delta: 1e-4}, {Job: "b", Epsilon: 0.5, Delta: 1e-5}})
	if e != 1.5 || math.Abs(d-1.1e-4) > 1e-18 {
		t.Fatalf("spent (%v, %v)", e, d)
	}
}

// ServiceConfig.Prepare gives each job its records: an error refuses the
// job with its text (nothing runs, nothing is charged), a job it prepares
// runs on the records it returned (here: a different dataset whose
// releases the ledger records with the prepared noise's Secure flag), and
// Join keeps reporting the template's records.
func TestServicePrepare(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	prepared := toyData(40, 3)
	var asked []string
	s, err := NewService(ServiceConfig{
		Worker: Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5), Store: st},
		Prepare: func(m *protocol.JobAnnounce) (*JobData, error) {
			asked = append(asked, m.Job)
			if m.Schema == "" {
				return nil, errors.New("job " + m.Job + " is private but carries no feature-bounds schema: give --feature-bounds SCHEMA.json")
			}
			return &JobData{Data: prepared, Noise: dp.NewSecureNoise()}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := refusal(s.Step(ctx, dpJob("bare", 1)))
	if r == nil || r.Job != "bare" || !strings.Contains(r.Reason, "give --feature-bounds SCHEMA.json") || s.Running() != "" {
		t.Fatalf("job without a schema: refusal %+v, running %q", r, s.Running())
	}
	j := dpJob("schema", 1)
	j.Schema = `{"features": [{"lo": 0, "hi": 1, "count": 3}]}`
	if r := refusal(s.Step(ctx, j)); r != nil || s.Running() != "schema" {
		t.Fatalf("job with a schema refused: %+v", r)
	}
	if outs := s.Step(ctx, &protocol.PhaseStart{Job: "schema", Phase: 1, Model: []float64{0, 0, 0}}); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindSiteUpdate {
		t.Fatalf("phase 1: %v", outs)
	}
	// fed-dp-local-sgd's phase 1 reads half of the site's records: 20 of
	// the prepared 40 (32 of the template's 64), with the secure noise.
	if len(st.got) != 1 || st.got[0].Records != 20 || !st.got[0].Secure {
		t.Fatalf("ledger %+v: want one secure release over a partition of the 40 prepared records", st.got)
	}
	if j, ok := s.join().Msg.(*protocol.Join); !ok || j.Records != 64 {
		t.Errorf("join %+v: want the template's 64 records", s.join().Msg)
	}
	if strings.Join(asked, ",") != "bare,schema" {
		t.Errorf("Prepare asked for %v", asked)
	}
	// A budget refusal comes first: Prepare is not asked.
	s.cfg.Budget = &Budget{Epsilon: 0.5, Delta: 1}
	s.end()
	if r := refusal(s.Step(ctx, dpJob("over", 1))); r == nil || !strings.Contains(r.Reason, "budget") || len(asked) != 2 {
		t.Errorf("over budget: refusal %+v, Prepare asked for %v", r, asked)
	}
}
