package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/store"
)

// A coordinator saves a completed job's model artefact beside its status
// (STATE/jobs/<job>.model.json, skipped by the job store); `job model`
// downloads it with a job query (which never starts a job), attaches the
// sites' public schema, and `evaluate` on the coordinator's test file
// gives the coordinator's AUC bit for bit. `job status` of an unknown id
// says so (exit 1) and starts nothing.
func TestJobModelFromCoordinator(t *testing.T) {
	fed := newLinearFed(t, 80, 60)
	root, schema, test, site, logs := fed.root, fed.schema, fed.test, fed.site, fed.logs
	state := filepath.Join(root, "coord")
	key := filepath.Join(root, "coord-sign.pem")
	fp := keygen(t, key, "the coordinator")
	coord := fed.start("coordinator", "--listen", "127.0.0.1:0", "--federation", "jm", "--state", state,
		"--test", test, "--feature-bounds", schema, "--min-sites", "2", "--tick", "10ms", "--sign-key", key)
	url := coordURL(t, coord)
	for _, s := range []string{"a", "b"} {
		fed.start("worker", "--nats", url, "--federation", "jm", "--site", s, "--data", site[s],
			"--state", filepath.Join(root, "site-"+s), "--feature-bounds", schema, "--tick", "10ms", "--heartbeat", "50ms")
	}
	waitFor(t, 15*time.Second, "sites a and b to join", func() bool {
		l := logs.String()
		return strings.Contains(l, "site a joined the federation") && strings.Contains(l, "site b joined the federation")
	})
	// An unknown id: status unknown, exit 1, and no job starts.
	p, code := runPairfed(t, logs, 30*time.Second, "job", "status", "--nats", url, "--federation", "jm", "nope")
	if code != 1 || !strings.Contains(p.stdout.String(), `"status": "unknown"`) {
		t.Fatalf("job status of an unknown id: exit %d, %v\n%s", code, p.err, p.stdout.String())
	}
	p, code = runPairfed(t, logs, 60*time.Second, "job", "submit", "--nats", url, "--federation", "jm", "--job", "j1", "--algo", "fed-dp-gd-grad",
		"--epsilon", "1", "--delta", "0.001", "--min-sites", "2", "--wait", "--json")
	if code != 0 {
		t.Fatalf("job: exit %d, %v\n%s", code, p.err, p.stdout.String())
	}
	var sub struct {
		AUC struct{ Values []float64 } `json:"auc"`
	}
	if err := json.Unmarshal([]byte(p.stdout.String()), &sub); err != nil {
		t.Fatal(err)
	}
	// The saved artefact, and a job store that still loads.
	saved := filepath.Join(state, "jobs", "j1.model.json")
	f, err := os.Open(saved)
	if err != nil {
		t.Fatalf("no saved model: %v", err)
	}
	m, err := model.Decode(f, saved)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if m.Algorithm.Name != "fed-dp-gd-grad" || !m.Algorithm.Federated || !m.Certificate.Private || len(m.Certificate.Sites) != 2 || m.Certificate.N != 120 || m.Scorable() == nil {
		t.Fatalf("saved model: %+v %+v", m.Algorithm, m.Certificate)
	}
	if m.Signature == nil || m.Signature.KeyFingerprint != fp || m.Signature.Signer != "the coordinator" {
		t.Fatalf("the coordinator's artefact is not signed by its --sign-key (%s): %+v", fp, m.Signature)
	}
	if jobs, err := store.ReadJobs(state); err != nil || len(jobs) != 1 || jobs[0].Job != "j1" {
		t.Fatalf("job store beside the model: %v %v", jobs, err)
	}
	// Download over NATS with the schema attached; evaluate it.
	out := filepath.Join(root, "m.json")
	p, code = runPairfed(t, logs, 30*time.Second, "job", "model", "--nats", url, "--federation", "jm", "--feature-bounds", schema, "--out", out, "j1")
	if code != 0 {
		t.Fatalf("job model: exit %d, %v\n%s", code, p.err, p.stderr.String())
	}
	o, err := runCLI(t, "evaluate", "--model", out, "--data", test, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, o)
	}
	var ev Evaluation
	if err := json.Unmarshal([]byte(o), &ev); err != nil {
		t.Fatal(err)
	}
	if len(sub.AUC.Values) != 1 || ev.AUC == nil || *ev.AUC != sub.AUC.Values[0] {
		t.Fatalf("evaluate AUC %v, the coordinator's %v", ev.AUC, sub.AUC.Values)
	}
	// Without the schema the artefact says it cannot score.
	bare := filepath.Join(root, "bare.json")
	if p, code = runPairfed(t, logs, 30*time.Second, "job", "model", "--state", state, "--out", bare, "--job", "j1"); code != 0 {
		t.Fatalf("job model --state: exit %d, %v", code, p.err)
	}
	if o, err := runCLI(t, "score", "--model", bare, "--data", test); err == nil || !strings.Contains(err.Error(), "--feature-bounds") {
		t.Fatalf("score of a coordinator's artefact without a map: %v\n%s", err, o)
	}
	// Copied unchanged from the state directory, it keeps the
	// coordinator's signature; with a map attached it is unsigned (and
	// says so) unless signed again.
	if o, err := runCLI(t, "verify", "--model", bare, "--trust-key", key+".pub"); err != nil || !strings.Contains(o, "by a trusted key") {
		t.Fatalf("verify of the state's artefact: %v\n%s", err, o)
	}
	attached := filepath.Join(root, "attached.json")
	if o, err := runCLI(t, "job", "model", "--state", state, "--feature-bounds", schema, "--out", attached, "--job", "j1"); err != nil || !strings.Contains(o, "written unsigned") {
		t.Fatalf("job model --state --feature-bounds: %v\n%s", err, o)
	}
	if o, err := runCLI(t, "evaluate", "--model", attached, "--data", test, "--trust-key", key+".pub"); err == nil || !strings.Contains(err.Error(), "is not signed") {
		t.Fatalf("evaluate --trust-key of the unsigned download: %v\n%s", err, o)
	}
	if o, err := runCLI(t, "job", "model", "--state", state, "--feature-bounds", schema, "--out", attached, "--job", "j1", "--sign-key", key); err != nil {
		t.Fatalf("job model --sign-key: %v\n%s", err, o)
	}
	if o, err := runCLI(t, "evaluate", "--model", attached, "--data", test, "--trust-key", key+".pub"); err != nil {
		t.Fatalf("evaluate --trust-key of the re-signed download: %v\n%s", err, o)
	}
}

// job model --state of a job that did not complete says how it ended
// (its status file) instead of only "no such file … did it complete?"
// (probe 4 of issue 28).
func TestJobModelOfRefusedJob(t *testing.T) {
	state := t.TempDir()
	b, err := json.Marshal(&protocol.JobStatus{Job: "r1", Status: protocol.StatusRefused, Algo: "fed-avg", Reason: "a refused: over budget"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(state, "jobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "jobs", "r1.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runCLI(t, "job", "model", "--state", state, "--out", filepath.Join(t.TempDir(), "m.json"), "r1")
	if err == nil || !strings.Contains(err.Error(), "job r1 is refused (a refused: over budget): only a completed job has a model") {
		t.Errorf("error %v", err)
	}
}
