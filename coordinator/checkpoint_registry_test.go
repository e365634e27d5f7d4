package coordinator

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// Every registered federated algorithm, with and without secure
// aggregation where it supports it, survives a checkpoint of its running
// job: serialized, restored into a new service and resumed at the same
// phase with the same model and the same combiner state. fed-dp-lda's
// combiner keeps its phase (one value), which the restore once compared
// with the model's length: a coordinator stopped during the default
// private job could never start again ("model of 8 parameters, job has
// 8"). The table is the registry, so a new algorithm is covered by
// default.
func TestCheckpointEveryAlgorithm(t *testing.T) {
	for _, name := range fedalgo.Names() {
		for _, secure := range []bool{false, true} {
			a, err := fedalgo.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := a.(fedalgo.SumReleaser); secure && !ok {
				continue
			}
			t.Run(fmt.Sprintf("%s/secagg=%v", name, secure), func(t *testing.T) {
				s := newService(t, ServiceConfig{SecAggRoster: testSecRoster("a", "b", "c", "d")})
				for _, site := range []string{"a", "b", "c", "d"} {
					s.Step(&protocol.Join{Site: site, Records: 40, Dim: 3})
				}
				sub := &protocol.JobSubmit{Job: "j", Client: "c", Algo: name, MinSites: 4, Seed: 7}
				if fedalgo.Private(name) {
					sub.Epsilon, sub.Delta = 1, 1e-3
				}
				if fedalgo.TakesLocalAlgo(name) {
					sub.LocalAlgo, sub.Epsilon, sub.Delta = "dpegd", 1, 1e-3
				}
				if secure {
					sub.Options = protocol.Options{{Name: fedalgo.OptSecAgg, Value: 1}}
				}
				s.Step(sub)
				if s.Running() != "j" {
					t.Fatalf("job not running: %+v", s.Status("j"))
				}
				acceptAll(s)
				if !s.inner.Accepted() {
					t.Fatalf("job not accepted: %+v", s.Status("j"))
				}
				cp := s.Checkpoint()
				if cp.Running == nil {
					t.Fatal("no running job in the checkpoint")
				}
				b, err := json.Marshal(cp)
				if err != nil {
					t.Fatal(err)
				}
				var back Checkpoint
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				r, err := RestoreService(ServiceConfig{Federation: "f", SecAggRoster: testSecRoster("a", "b", "c", "d")}, &back)
				if err != nil {
					t.Fatalf("restore of a checkpoint at phase %d (combiner state %v): %v", cp.Running.Phase, cp.Running.OutSum, err)
				}
				if r.Running() != "j" || r.inner.phase != s.inner.phase || !reflect.DeepEqual(r.inner.model, s.inner.model) {
					t.Fatalf("restored job %q at phase %d, want j at %d", r.Running(), r.inner.phase, s.inner.phase)
				}
				if got, want := r.inner.comb.State(), s.inner.comb.State(); !reflect.DeepEqual(got, want) {
					t.Fatalf("restored combiner state %v, want %v", got, want)
				}
				// A secure job cannot resume its rounds: it ends at once
				// with a reason that names the restart (it used to wait
				// for updates no site sends: "0 of 3 updates after 3
				// retries"); a plain job resumes.
				r.Resume()
				st := r.Status("j")
				if secure {
					if st == nil || st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "coordinator restarted during phase") {
						t.Fatalf("secure job after a restart: %+v, want failed naming the restart", st)
					}
				} else if st == nil || st.Status != protocol.StatusRunning {
					t.Fatalf("plain job after a restart: %+v, want running", st)
				}
			})
		}
	}
}
