package worker

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/protocol"
)

// memJobs keeps the last saved state per job, through a JSON round trip
// (as the file store does).
type memJobs struct {
	t      *testing.T
	states map[string]*JobState
}

func (m *memJobs) SaveJob(st *JobState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var back JobState
	if err := json.Unmarshal(b, &back); err != nil {
		return err
	}
	m.states[st.Announce.Job] = &back
	return nil
}

func updateOf(t *testing.T, outs []Output) *protocol.SiteUpdate {
	t.Helper()
	for _, o := range outs {
		if u, ok := o.Msg.(*protocol.SiteUpdate); ok {
			return u
		}
	}
	t.Fatalf("no update among %v", outs)
	return nil
}

// A site restarted in the middle of a private job takes it up again: a
// phase it released is answered with the same update (no new noise, no
// new ledger entry), the next phase runs on the same partition and is
// charged once. Without a saved update for a released phase (crash
// between the ledger entry and the state) the site refuses the job.
func TestServiceResumesAfterRestart(t *testing.T) {
	ctx := context.Background()
	ledger := &memStore{}
	jobs := &memJobs{t: t, states: map[string]*JobState{}}
	mk := func(seed uint64, released []Release, saved map[string]*JobState) *Service {
		s, err := NewService(ServiceConfig{
			Worker: Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(seed, 4)), Noise: dp.NewSeededNoise(seed), Store: ledger, Jobs: jobs},
			Ledger: released, Jobs: saved,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	job := dpJob("j", 1)
	s := mk(3, nil, nil)
	s.Step(ctx, job)
	model := []float64{0.1, 0, 0}
	u1 := updateOf(t, s.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: model}))
	u2 := updateOf(t, s.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 2, Model: u1.Model}))
	partition := jobs.states["j"].Partition
	if len(ledger.got) != 2 || len(jobs.states["j"].Sent) != 2 {
		t.Fatalf("before the restart: ledger %d, saved %d", len(ledger.got), len(jobs.states["j"].Sent))
	}

	// Restart: other random sources, the durable ledger and states.
	r := mk(99, append([]Release(nil), ledger.got...), jobs.states)
	if outs := r.Step(ctx, job); refusal(outs) != nil || r.Running() != "j" {
		t.Fatalf("restarted site: running %q, outputs %v", r.Running(), outs)
	}
	if again := updateOf(t, r.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 2, Model: u1.Model})); !reflect.DeepEqual(again, u2) {
		t.Fatalf("phase 2 after the restart: %+v, before: %+v", again, u2)
	}
	if len(ledger.got) != 2 {
		t.Fatalf("repeating phase 2 charged again: %d entries", len(ledger.got))
	}
	u3 := updateOf(t, r.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 3, Model: u2.Model}))
	if u3.Weight != float64(len(partition[2])) || len(ledger.got) != 3 || !reflect.DeepEqual(jobs.states["j"].Partition, partition) {
		t.Fatalf("phase 3: weight %v (subset %d), ledger %d", u3.Weight, len(partition[2]), len(ledger.got))
	}
	if n := len(r.Ledger()); n != 3 {
		t.Fatalf("service ledger has %d entries, want 3 (no duplicates)", n)
	}

	// A release without a saved update: refuse.
	lost := map[string]*JobState{"j": jobs.states["j"]}
	cut := *lost["j"]
	cut.Sent = map[int]*protocol.SiteUpdate{1: cut.Sent[1]}
	lost["j"] = &cut
	x := mk(7, append([]Release(nil), ledger.got...), lost)
	if ref := refusal(x.Step(ctx, job)); ref == nil {
		t.Fatal("a site whose phase 2 update was not saved resumed the job")
	}
	// Another announcement under the same id: refuse.
	other := dpJob("j", 1)
	other.Eta = 0.2
	y := mk(8, append([]Release(nil), ledger.got...), jobs.states)
	if ref := refusal(y.Step(ctx, other)); ref == nil {
		t.Fatal("a site resumed a job announced with other parameters")
	}
}

// A job announced to this site while another runs means the coordinator
// moved on (it runs one job at a time; the running job's result was
// lost): the site retires the old job, keeping its releases, and takes
// the new one. An announcement that does not list the site changes
// nothing.
func TestServiceRetiresJobOnNewAnnouncement(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	s := newService(t, st, nil, nil)
	s.Step(ctx, dpJob("a", 1))
	updateOf(t, s.Step(ctx, &protocol.PhaseStart{Job: "a", Phase: 1, Model: []float64{0, 0, 0}}))
	other := dpJob("x", 1)
	other.Sites = []string{"s2"}
	s.Step(ctx, other)
	if s.Running() != "a" {
		t.Fatalf("an announcement for other sites changed the running job to %q", s.Running())
	}
	s.Step(ctx, dpJob("b", 1))
	if s.Running() != "b" {
		t.Fatalf("running %q, want b", s.Running())
	}
	if l := s.Ledger(); len(l) != 1 || l[0].Job != "a" {
		t.Fatalf("ledger %+v, want a's release kept", l)
	}
}
