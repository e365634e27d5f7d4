package coordinator

import (
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

type logSink struct{ lines []string }

func (l *logSink) logf(format string, args ...any) {
	l.lines = append(l.lines, strings.TrimSpace(sprintf(format, args...)))
}

func newTest(t *testing.T, job JobConfig, minSites int) (*Coordinator, *logSink) {
	t.Helper()
	var sink logSink
	c, err := New(Config{Federation: "f", Job: job, MinSites: minSites, PhaseTimeout: 2, Quorum: 0, Logf: sink.logf})
	if err != nil {
		t.Fatal(err)
	}
	return c, &sink
}

func kinds(outs []Output) []protocol.Kind {
	var k []protocol.Kind
	for _, o := range outs {
		k = append(k, o.Msg.Kind())
	}
	return k
}

// A job starts when MinSites joined; updates are averaged by weight in
// site order; duplicates and stale updates are ignored with a log line.
// Updates without a last iterate: each round restarts from the weighted
// mean of the Models.
func TestCoordinatorPhases(t *testing.T) {
	c, sink := newTest(t, JobConfig{Algo: fedalgo.FedAvg, Rounds: 2}, 2)
	if outs := c.Step(&protocol.Join{Site: "a", Records: 10, Dim: 2}); len(outs) != 0 {
		t.Fatalf("job started with 1 of 2 sites: %v", kinds(outs))
	}
	c.Step(&protocol.Join{Site: "a", Records: 10, Dim: 2}) // retry: ignored
	outs := c.Step(&protocol.Join{Site: "b", Records: 30, Dim: 2})
	if !slices.Equal(kinds(outs), []protocol.Kind{protocol.KindJobAnnounce}) {
		t.Fatalf("start outputs %v, want the announcement alone (the accept round)", kinds(outs))
	}
	if outs[0].Subject != "pairfed.f.sites" {
		t.Errorf("broadcast on %s", outs[0].Subject)
	}
	// No phase starts before every participant accepted.
	if outs := c.Step(&protocol.Accept{Job: "job-1", Site: "a"}); len(outs) != 0 {
		t.Fatalf("phase started with 1 of 2 acceptances: %v", kinds(outs))
	}
	outs = c.Step(&protocol.Accept{Job: "job-1", Site: "b"})
	if !slices.Equal(kinds(outs), []protocol.Kind{protocol.KindJobAnnounce, protocol.KindPhaseStart}) {
		t.Fatalf("outputs after every acceptance %v", kinds(outs))
	}
	upd := func(site string, phase int, w float64, model ...float64) *protocol.SiteUpdate {
		return &protocol.SiteUpdate{Job: "job-1", Phase: phase, Site: site, Model: model, Weight: w}
	}
	c.Step(upd("a", 1, 10, 1, 0))
	c.Step(upd("a", 1, 10, 5, 5)) // duplicate
	outs = c.Step(upd("b", 1, 30, 0, 1))
	if !slices.Equal(kinds(outs), []protocol.Kind{protocol.KindJobAnnounce, protocol.KindPhaseStart}) {
		t.Fatalf("phase 2 outputs %v", kinds(outs))
	}
	ps := outs[1].Msg.(*protocol.PhaseStart)
	if ps.Phase != 2 || !slices.Equal(ps.Model, []float64{0.25, 0.75}) {
		t.Fatalf("phase 2 start %+v, want the weighted mean [0.25 0.75]", ps)
	}
	c.Step(upd("b", 1, 30, 9, 9)) // stale
	c.Step(upd("x", 2, 1, 9, 9))  // not a participant
	c.Step(upd("b", 2, 30, 1, 1))
	outs = c.Step(upd("a", 2, 10, 1, 1))
	if !c.Done() || c.Err() != nil || len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindResult {
		t.Fatalf("not done: %v %v", kinds(outs), c.Err())
	}
	// fed-avg's result is the mean over rounds of the aggregated models:
	// ([0.25 0.75] + [1 1]) / 2.
	if got := c.Result().Model; !slices.Equal(got, []float64{0.625, 0.875}) {
		t.Errorf("result %v, want [0.625 0.875]", got)
	}
	log := strings.Join(sink.lines, "\n")
	for _, want := range []string{"duplicate update of a", "stale update of b", "not a participant"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// fed-avg restarts each round from the weighted mean of the sites' last
// iterates and outputs the mean over rounds of the weighted means of their
// Models (Alg 1 averages); a site without Last counts with its Model.
func TestCoordinatorFedAvgLastIterate(t *testing.T) {
	c, _ := newTest(t, JobConfig{Algo: fedalgo.FedAvg, Rounds: 2}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 10, Dim: 2})
	c.Step(&protocol.Join{Site: "b", Records: 30, Dim: 2})
	acceptJob(c)
	upd := func(site string, phase int, w float64, model, last []float64) *protocol.SiteUpdate {
		return &protocol.SiteUpdate{Job: "job-1", Phase: phase, Site: site, Model: model, Last: last, Weight: w}
	}
	c.Step(upd("a", 1, 10, []float64{1, 0}, []float64{4, 0}))
	outs := c.Step(upd("b", 1, 30, []float64{0, 1}, []float64{0, 4}))
	ps := outs[1].Msg.(*protocol.PhaseStart)
	if !slices.Equal(ps.Model, []float64{1, 3}) {
		t.Fatalf("phase 2 starts from %v, want the weighted mean of the last iterates [1 3]", ps.Model)
	}
	c.Step(upd("a", 2, 10, []float64{2, 2}, nil))
	c.Step(upd("b", 2, 30, []float64{2, 2}, []float64{7, 7}))
	if !c.Done() || c.Err() != nil {
		t.Fatalf("not done: %v", c.Err())
	}
	// ([0.25 0.75] + [2 2]) / 2; the last iterates of the final round are unused.
	if got := c.Result().Model; !slices.Equal(got, []float64{1.125, 1.375}) {
		t.Errorf("result %v, want [1.125 1.375]", got)
	}
}

// A phase that times out is re-broadcast; with a quorum it is aggregated
// from the updates received; a participant that leaves below quorum aborts.
func TestCoordinatorTimeoutQuorumLeave(t *testing.T) {
	var sink logSink
	c, err := New(Config{Federation: "f", Job: JobConfig{Algo: fedalgo.FedAvg, Rounds: 1}, MinSites: 3, PhaseTimeout: 2, Quorum: 2, Logf: sink.logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c"} {
		c.Step(&protocol.Join{Site: s, Records: 5, Dim: 1})
	}
	acceptJob(c)
	c.Step(&protocol.SiteUpdate{Job: "job-1", Phase: 1, Site: "a", Model: []float64{2}, Weight: 5})
	c.Tick()
	outs := c.Tick() // timeout with 1 < quorum 2: re-broadcast
	if !slices.Equal(kinds(outs), []protocol.Kind{protocol.KindJobAnnounce, protocol.KindPhaseStart}) {
		t.Fatalf("timeout outputs %v", kinds(outs))
	}
	c.Step(&protocol.SiteUpdate{Job: "job-1", Phase: 1, Site: "b", Model: []float64{4}, Weight: 5})
	c.Tick()
	outs = c.Tick() // 2 ≥ quorum: aggregate without c
	if !c.Done() || c.Result() == nil || c.Result().Model[0] != 3 {
		t.Fatalf("quorum aggregation: %v %v", kinds(outs), c.Err())
	}

	c2, _ := New(Config{Federation: "f", Job: JobConfig{Algo: fedalgo.FedAvg}, MinSites: 2})
	c2.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	c2.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	outs = c2.Step(&protocol.Leave{Site: "b", Reason: "bye"})
	if c2.Err() == nil || len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort {
		t.Fatalf("leave below quorum: %v %v", kinds(outs), c2.Err())
	}
}

func TestCoordinatorDPJob(t *testing.T) {
	c, _ := newTest(t, JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 0.5}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 100, Dim: 3})
	c.Step(&protocol.Join{Site: "b", Records: 300, Dim: 3})
	acceptJob(c)
	j := c.Job()
	if j == nil || j.Phases != 7 || j.Delta != 1.0/3000 || !(j.Eta > 0) || j.Loss != "logistic" || j.ParamRadius != 1 {
		t.Fatalf("job %+v: want K = ⌈log₂ 100⌉ = 7, δ = 1/3000, Thm 10 η", j)
	}
	// A site claiming another (ε, δ) aborts the job.
	outs := c.Step(&protocol.SiteUpdate{Job: j.Job, Phase: 1, Site: "a", Model: []float64{0, 0, 0}, Weight: 50, Epsilon: 5, Delta: j.Delta})
	if c.Err() == nil || outs[0].Msg.Kind() != protocol.KindAbort {
		t.Fatal("a wrong privacy claim was accepted")
	}
}

// fed-dp-local-sgd ignores Last: each phase starts from, and the result
// is, the weighted mean of the released Models.
func TestCoordinatorDPIgnoresLast(t *testing.T) {
	c, _ := newTest(t, JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 0.5}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 4, Dim: 1})
	c.Step(&protocol.Join{Site: "b", Records: 4, Dim: 1})
	acceptJob(c)
	j := c.Job()
	if j.Phases != 2 {
		t.Fatalf("phases %d, want ⌈log₂ 4⌉ = 2", j.Phases)
	}
	upd := func(site string, phase int, v float64) *protocol.SiteUpdate {
		return &protocol.SiteUpdate{Job: j.Job, Phase: phase, Site: site, Model: []float64{v}, Last: []float64{100}, Weight: 2, Epsilon: j.Epsilon, Delta: j.Delta}
	}
	c.Step(upd("a", 1, 1))
	outs := c.Step(upd("b", 1, 3))
	if ps := outs[1].Msg.(*protocol.PhaseStart); !slices.Equal(ps.Model, []float64{2}) {
		t.Fatalf("phase 2 starts from %v, want [2]", ps.Model)
	}
	c.Step(upd("a", 2, 5))
	c.Step(upd("b", 2, 7))
	if got := c.Result().Model; !slices.Equal(got, []float64{6}) {
		t.Errorf("result %v, want the last phase's mean [6]", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []Config{
		{Federation: "a.b", Job: JobConfig{Algo: fedalgo.FedAvg}, MinSites: 1},
		{Federation: "f", Job: JobConfig{Algo: "nope"}, MinSites: 1},
		{Federation: "f", Job: JobConfig{Algo: fedalgo.FedDPLocalSGD}, MinSites: 1},
		{Federation: "f", Job: JobConfig{Algo: fedalgo.FedAvg, Epsilon: 1}, MinSites: 1},
		{Federation: "f", Job: JobConfig{Algo: fedalgo.FedAvg}, MinSites: 0},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("accepted %+v", cfg)
		}
	}
}

// A participant's Abort costs that site, not the job: it leaves, the phase
// is aggregated from the others while the quorum holds (the log names the
// site and its reason); below the quorum the job is aborted naming it.
func TestSiteAbortCostsTheSite(t *testing.T) {
	var sink logSink
	c, err := New(Config{Federation: "f", Job: JobConfig{Algo: fedalgo.FedAvg, Rounds: 1}, MinSites: 3, PhaseTimeout: 2, Quorum: 2, Logf: sink.logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c"} {
		c.Step(&protocol.Join{Site: s, Records: 5, Dim: 1})
	}
	acceptJob(c)
	c.Step(&protocol.SiteUpdate{Job: "job-1", Phase: 1, Site: "a", Model: []float64{2}, Weight: 5})
	c.Step(&protocol.SiteUpdate{Job: "job-1", Phase: 1, Site: "b", Model: []float64{4}, Weight: 5})
	outs := c.Step(&protocol.Abort{Job: "job-1", From: "c", Reason: "journal: no space left on device"})
	if !c.Done() || c.Err() != nil || c.Result() == nil || c.Result().Model[0] != 3 {
		t.Fatalf("one site's abort with the quorum held: %v, err %v", kinds(outs), c.Err())
	}
	if log := strings.Join(sink.lines, "\n"); !strings.Contains(log, "site c left: aborted the job: journal: no space left on device") {
		t.Errorf("the log does not name the aborting site and its reason:\n%s", log)
	}

	c2, _ := New(Config{Federation: "f", Job: JobConfig{Algo: fedalgo.FedAvg, Rounds: 1}, MinSites: 2, PhaseTimeout: 2, Quorum: 2})
	c2.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	c2.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	acceptJob(c2)
	outs = c2.Step(&protocol.Abort{Job: "job-1", From: "b", Reason: "phase 1 failed"})
	if c2.Err() == nil || !strings.Contains(c2.Err().Error(), "quorum") || len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort {
		t.Fatalf("one site's abort below the quorum: %v, err %v", kinds(outs), c2.Err())
	}
	// An abort from a site that is not a participant changes nothing.
	c3, _ := newTest(t, JobConfig{Algo: fedalgo.FedAvg, Rounds: 1}, 2)
	c3.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	c3.Step(&protocol.Join{Site: "b", Records: 5, Dim: 1})
	acceptJob(c3)
	if outs := c3.Step(&protocol.Abort{Job: "job-1", From: "x", Reason: "rogue"}); len(outs) != 0 || c3.Done() {
		t.Fatalf("abort from a stranger: %v, done %v", kinds(outs), c3.Done())
	}
}
