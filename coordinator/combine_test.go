package coordinator

import (
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// A poisoning site sends a huge update every round. With the weighted mean
// it drags the model far away; with the coordinate-wise median the model
// stays within the honest sites' range. The job is refused at submission
// with an unknown rule.
func TestRobustAggregationAgainstPoisoning(t *testing.T) {
	run := func(agg string) []float64 {
		s := newService(t, ServiceConfig{})
		for _, site := range []string{"a", "b", "c"} {
			s.Step(&protocol.Join{Site: site, Records: 5, Dim: 1})
		}
		s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 3, MinSites: 3, Aggregation: agg})
		if s.Running() != "j" || s.inner.job.Aggregation != agg {
			t.Fatalf("job not running with %q", agg)
		}
		for k := 1; k <= 3; k++ {
			runPhase(s, "j", k, 1, "a")
			runPhase(s, "j", k, 1.2, "b")
			runPhase(s, "j", k, 1e6, "c")
		}
		st := s.Status("j")
		if st.Status != protocol.StatusCompleted {
			t.Fatalf("%q: %+v", agg, st)
		}
		return st.Model
	}
	if m := run(""); !(m[0] > 1e5) {
		t.Errorf("mean: model %v, want it dragged by the poisoned site", m)
	}
	if m := run("median"); m[0] != 1.2 {
		t.Errorf("median: model %v, want 1.2", m)
	}
	s := newService(t, ServiceConfig{})
	outs := s.Step(&protocol.JobSubmit{Job: "k", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1, Aggregation: "krum"})
	if st := lastStatus(t, outs, "c"); st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "unknown aggregation") {
		t.Errorf("unknown rule: %+v", st)
	}
}

// A metric-learning job announces d² parameters and its task; the status
// names its score KNN-3; fed-dp-gd-grad refuses the task.
func TestMetricJob(t *testing.T) {
	s := newService(t, ServiceConfig{Evaluate: func(*protocol.JobAnnounce, []float64) (float64, int) { return 0.7, 10 }})
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 3})
	s.Step(&protocol.JobSubmit{Job: "m", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1, Task: protocol.TaskMetric})
	a := s.inner.Job()
	if a == nil || a.Task != protocol.TaskMetric || a.Params != 9 {
		t.Fatalf("announcement %+v", a)
	}
	acceptAll(s)
	s.Step(&protocol.SiteUpdate{Job: "m", Phase: 1, Site: "a", Model: make([]float64, 9), Weight: 5})
	if st := s.Status("m"); st.Status != protocol.StatusCompleted || st.Metric != protocol.MetricKNN3 || len(st.Model) != 9 {
		t.Fatalf("status %+v", st)
	}
	err := CheckSubmit("f", &protocol.JobSubmit{Job: "g", Client: "c", Algo: fedalgo.FedDPGDGrad, MinSites: 1, Epsilon: 1, Task: protocol.TaskMetric})
	if err == nil || !strings.Contains(err.Error(), "AUC only") {
		t.Errorf("fed-dp-gd-grad metric: %v", err)
	}
}
