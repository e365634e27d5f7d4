package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// Charges survive a reopen with their time stamps; a torn last line (a
// crash inside Append, before the announcement it guarded was published)
// is dropped; a corrupt complete line stops the coordinator.
func TestChargesAppendReloadTorn(t *testing.T) {
	dir := t.TempDir()
	c, got, _, err := OpenCharges(dir)
	if err != nil || len(got) != 0 {
		t.Fatal(got, err)
	}
	batch := []coordinator.Charge{
		{Key: "j/a/0", Site: "a", Job: "j", Epsilon: 1, Delta: 1e-3, Mechanism: "gaussian", Private: true},
		{Key: "j/b/0", Site: "b", Job: "j", Epsilon: 1, Delta: 1e-3, Mechanism: "gaussian", Private: true},
	}
	if err := c.Append(batch); err != nil {
		t.Fatal(err)
	}
	c.Close()
	path := filepath.Join(dir, ChargesFile)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key":"j/c/0","si`)
	f.Close()
	_, got, notes, err := OpenCharges(dir)
	if err != nil || len(got) != 2 || len(notes) != 1 || got[0].Time.IsZero() || !reflect.DeepEqual(got[1].Key, "j/b/0") {
		t.Fatalf("reload: %+v %v %v", got, notes, err)
	}
	os.WriteFile(path, []byte(`{"key":"x"}`+"\n"), 0o644)
	if _, _, _, err := OpenCharges(dir); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Errorf("corrupt line: %v", err)
	}
}

func TestCheckpointAndBudgets(t *testing.T) {
	dir := t.TempDir()
	if cp, err := LoadCheckpoint(dir); cp != nil || err != nil {
		t.Fatal(cp, err)
	}
	cp := &coordinator.Checkpoint{Version: coordinator.CheckpointVersion, Members: map[string]coordinator.MemberState{"a": {Records: 3, Dim: 2}},
		Status: map[string]*protocol.JobStatus{}, Clients: map[string]string{"j": "pairfed.f.client.c"}}
	if err := SaveCheckpoint(dir, cp); err != nil {
		t.Fatal(err)
	}
	back, err := LoadCheckpoint(dir)
	if err != nil || !reflect.DeepEqual(back, cp) {
		t.Fatalf("%+v %v", back, err)
	}
	b := map[string]coordinator.Budget{"a": {Epsilon: 2, Delta: 1e-5}}
	if err := SaveBudgets(dir, b); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadBudgets(dir); err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("%v %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, BudgetsFile), []byte(`{"a":{"epsilon":-1,"delta":0}}`), 0o644)
	if _, err := LoadBudgets(dir); err == nil || !strings.Contains(err.Error(), "budget ε") {
		t.Errorf("negative budget: %v", err)
	}
}

// Job states survive a reopen; one whose file name and job differ is
// refused.
func TestJobStates(t *testing.T) {
	dir := t.TempDir()
	j, got, err := OpenJobStates(dir)
	if err != nil || len(got) != 0 {
		t.Fatal(got, err)
	}
	st := &worker.JobState{Announce: &protocol.JobAnnounce{Job: "j", Algo: fedalgo.FedDPLocalSGD, Task: "auc", Loss: "logistic", Params: 2, Phases: 2,
		Eta: 0.1, ParamRadius: 1, FeatureRadius: 1, Epsilon: 1, Delta: 1e-3, Sites: []string{"a"}},
		Partition: [][]int{{0, 2}, {1}}, Sent: map[int]*protocol.SiteUpdate{1: {Job: "j", Phase: 1, Site: "a", Model: []float64{0.5, -1}, Weight: 2, Sigma: 3, Epsilon: 1, Delta: 1e-3}},
		StartOf: map[int][]float64{1: {0, 0}}}
	if err := j.SaveJob(st); err != nil {
		t.Fatal(err)
	}
	_, got, err = OpenJobStates(dir)
	if err != nil || !reflect.DeepEqual(got["j"], st) {
		t.Fatalf("reloaded %+v, %v", got["j"], err)
	}
	os.Rename(filepath.Join(dir, SiteJobsDir, "j.json"), filepath.Join(dir, SiteJobsDir, "k.json"))
	if _, _, err := OpenJobStates(dir); err == nil {
		t.Error("a state under another job's name was accepted")
	}
}
