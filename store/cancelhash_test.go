package store

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// A queued job's cancel hash goes through the checkpoint file as the
// coordinator writes and reads it (SaveCheckpoint, the strict
// LoadCheckpoint): after the restart only the job's key cancels it. A
// hash shortened in the file is refused at restore, naming the job.
func TestCheckpointKeepsCancelHash(t *testing.T) {
	dir := t.TempDir()
	s, err := coordinator.NewService(coordinator.ServiceConfig{Federation: "f"})
	if err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{7}, protocol.CancelKeyLen)
	s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedAvg, Rounds: 1, MinSites: 2, CancelHash: coordinator.CancelHash(key)})
	if err := SaveCheckpoint(dir, s.Checkpoint()); err != nil {
		t.Fatal(err)
	}
	cp, err := LoadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := coordinator.RestoreService(coordinator.ServiceConfig{Federation: "f"}, cp)
	if err != nil {
		t.Fatal(err)
	}
	status := func(outs []coordinator.Output) *protocol.JobStatus {
		t.Helper()
		if len(outs) == 0 {
			t.Fatal("no reply")
		}
		return outs[len(outs)-1].Msg.(*protocol.JobStatus)
	}
	if st := status(r.Step(&protocol.JobCancel{Job: "j", Client: "x"})); st.Status != protocol.StatusQueued || !strings.HasPrefix(st.Reason, coordinator.CancelRefusedPrefix) {
		t.Errorf("after the restart, a cancel without the key: %+v", st)
	}
	if st := status(r.Step(&protocol.JobCancel{Job: "j", Client: "x", Key: key})); st.Status != protocol.StatusFailed {
		t.Errorf("after the restart, the job's key: %+v", st)
	}

	path := filepath.Join(dir, CheckpointFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	full := base64.StdEncoding.EncodeToString(coordinator.CancelHash(key))
	if !bytes.Contains(b, []byte(`"cancel_hash":"`+full+`"`)) {
		t.Fatalf("the checkpoint does not hold the hash: %s", b)
	}
	short := base64.StdEncoding.EncodeToString(coordinator.CancelHash(key)[:20])
	if err := os.WriteFile(path, bytes.Replace(b, []byte(full), []byte(short), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if cp, err = LoadCheckpoint(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := coordinator.RestoreService(coordinator.ServiceConfig{Federation: "f"}, cp); err == nil || !strings.Contains(err.Error(), "queued job j: protocol: job j: cancel hash of 20 bytes, want 32") {
		t.Errorf("a 20-byte hash in the file: %v", err)
	}
}
