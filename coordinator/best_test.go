package coordinator

import (
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// The best phase of a multi-phase job: the model after the phase the
// evaluator scored highest (the earliest on ties) is kept in the status,
// survives a checkpoint restore, and becomes an artefact whose release and
// provenance say it was selected on the coordinator's evaluation set (a
// non-private selection); a one-phase job has none.
func TestServiceBestPhase(t *testing.T) {
	// The evaluator's "AUC" is the model's only weight, so phase k scores
	// the model the sites sent in round k (fed-avg with one site).
	cfg := ServiceConfig{Evaluate: func(_ *protocol.JobAnnounce, m []float64) (float64, int) { return m[0], 10 }}
	s := newService(t, cfg)
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 4, MinSites: 1})
	runPhase(s, "j", 1, 0.3, "a")
	runPhase(s, "j", 2, 0.9, "a")
	// A restart between phases keeps the best so far.
	cp := s.Checkpoint()
	if cp.Running == nil || cp.Running.BestPhase != 2 || !slices.Equal(cp.Running.BestModel, []float64{0.9}) {
		t.Fatalf("checkpoint best: %+v", cp.Running)
	}
	cfg.Federation = "f"
	s, err := RestoreService(cfg, cp)
	if err != nil {
		t.Fatal(err)
	}
	s.Resume()
	runPhase(s, "j", 3, 0.9, "a") // a tie: the earlier phase stays
	outs := runPhase(s, "j", 4, 0.5, "a")
	st := lastStatus(t, outs, "c")
	if st.Status != protocol.StatusCompleted || st.Phases != 4 {
		t.Fatalf("status %+v", st)
	}
	if st.BestPhase != 2 || st.BestAUC != 0.9 || !slices.Equal(st.BestModel, []float64{0.9}) || !slices.Equal(st.PhaseAUC, []float64{0.3, 0.9, 0.9, 0.5}) {
		t.Fatalf("best phase %d (%v, %v), phase AUCs %v", st.BestPhase, st.BestAUC, st.BestModel, st.PhaseAUC)
	}
	if slices.Equal(st.Model, st.BestModel) {
		t.Fatalf("final model %v equals the best one: the test cannot tell them apart", st.Model)
	}
	m, err := BestModel(st)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Weights, []float64{0.9}) || !strings.Contains(m.Algorithm.Release, "selected on the coordinator's evaluation set: the global model after phase 2 of 4") ||
		!strings.Contains(m.Algorithm.Release, "NOT private for the evaluator's records") || !strings.Contains(m.Provenance.Command, "best phase") ||
		!strings.Contains(m.Algorithm.Settings["selection"], "non-private selection on the evaluator's data") {
		t.Errorf("best artefact: weights %v, release %q, provenance %q", m.Weights, m.Algorithm.Release, m.Provenance.Command)
	}
	if f, err := StatusModel(st); err != nil || !slices.Equal(f.Weights, st.Model) {
		t.Errorf("final artefact: %v, %v", f, err)
	}
	// One phase: no best model.
	s.Step(&protocol.JobSubmit{Job: "one", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 1})
	st = lastStatus(t, runPhase(s, "one", 1, 0.7, "a"), "c")
	if st.Status != protocol.StatusCompleted || st.BestPhase != 0 || st.BestModel != nil {
		t.Errorf("one-phase job: %+v", st)
	}
	if _, err := BestModel(st); err == nil || !strings.Contains(err.Error(), "several phases") {
		t.Errorf("BestModel of a one-phase job: %v", err)
	}
}
