package coordinator

import (
	"bytes"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/protocol"
)

// A JobQuery answers on the querying client's subject only, never starts
// a job (an unknown id gets StatusUnknown), and a completed job's status
// becomes a valid, non-private model artefact of its global model.
func TestServiceQueryAndStatusModel(t *testing.T) {
	s := newService(t, ServiceConfig{})
	outs := s.Step(&protocol.JobQuery{Job: "j1", Client: "q"})
	if st := lastStatus(t, outs, "q"); st.Status != protocol.StatusUnknown || st.Job != "j1" {
		t.Fatalf("unknown job: %+v", st)
	}
	if s.Running() != "" || s.Status("j1") != nil {
		t.Fatalf("a query started or recorded a job")
	}
	s.Step(submit("j1", 1))
	s.Step(&protocol.Join{Site: "a", Records: 5, Dim: 1})
	runPhase(s, "j1", 1, 1, "a")
	runPhase(s, "j1", 2, 3, "a")
	outs = s.Step(&protocol.JobQuery{Job: "j1", Client: "q"})
	st := lastStatus(t, outs, "q")
	if st.Status != protocol.StatusCompleted || len(statusOf(t, outs, "c")) != 0 {
		t.Fatalf("query of a completed job: %+v (the submitter got %d replies)", st, len(statusOf(t, outs, "c")))
	}
	m, err := StatusModel(st)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := model.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	got, err := model.Decode(&b, "j1.model.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Certificate.Private || len(got.Certificate.Reasons) == 0 || got.Algorithm.Name != fedalgo.FedAvg || len(got.Weights) != 1 || got.Weights[0] != 2 || got.Scorable() == nil {
		t.Fatalf("model %+v", got)
	}
	if _, err := StatusModel(&protocol.JobStatus{Job: "x", Status: protocol.StatusFailed}); err == nil {
		t.Fatal("a failed job got a model")
	}
}
