package simulate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"
)

// equivocator is a malicious coordinator's transport: the coordinator's
// secure aggregation round runs as usual, but its survivor set U3 reaches
// the sites as two different sets — every survivor to the first group,
// the first site "dropped" to the second (the view that would make the
// second group reveal the first site's mask key while the first group
// reveals its self mask) — and the sites' consistency signatures are
// forwarded to every site unverified, as soon as all arrived.
type equivocator struct {
	transport.Transport
	fed    string
	groupB map[string]bool // sites told that the first site dropped
	mu     sync.Mutex
	job    string
	phase  int
	sigs   map[string][]byte
	sites  []string
}

func (e *equivocator) Publish(subject string, b []byte) error {
	m, err := protocol.Decode(b)
	if err != nil {
		return e.Transport.Publish(subject, b)
	}
	switch m := m.(type) {
	case *protocol.JobAnnounce:
		e.mu.Lock()
		e.sites = m.Sites
		e.mu.Unlock()
	case *protocol.SecAggUnmaskRequest:
		lie := *m
		lie.Survivors = m.Survivors[1:]
		e.mu.Lock()
		e.job, e.phase, e.sigs = m.Job, m.Phase, map[string][]byte{}
		sites := e.sites
		e.mu.Unlock()
		for _, s := range sites {
			view := m
			if e.groupB[s] {
				view = &lie
			}
			out, err := protocol.Encode(view)
			if err != nil {
				return err
			}
			if err := e.Transport.Publish(protocol.SiteSubject(e.fed, s), out); err != nil {
				return err
			}
		}
		return nil
	}
	return e.Transport.Publish(subject, b)
}

func (e *equivocator) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	return e.Transport.Subscribe(subject, func(subj string, b []byte) {
		if m, err := protocol.Decode(b); err == nil {
			if c, ok := m.(*protocol.SecAggCheck); ok {
				e.collect(c)
			}
		}
		h(subj, b)
	})
}

func (e *equivocator) collect(c *protocol.SecAggCheck) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sigs == nil || c.Job != e.job || c.Phase != e.phase {
		return
	}
	e.sigs[c.Site] = c.Sig
	if len(e.sigs) != len(e.sites) {
		return
	}
	fwd := &protocol.SecAggCheckSigs{Job: e.job, Phase: e.phase}
	for i, s := range e.sites {
		fwd.Sigs = append(fwd.Sigs, protocol.SecAggSig{ID: uint32(i + 1), Sig: e.sigs[s]})
	}
	e.sigs = nil
	if out, err := protocol.Encode(fwd); err == nil {
		e.Transport.Publish(protocol.SitesSubject(e.fed), out)
	}
}

// kindCounter counts the messages of each kind a site publishes.
type kindCounter struct {
	transport.Transport
	mu    *sync.Mutex
	count map[protocol.Kind]int
}

func (k kindCounter) Publish(subject string, b []byte) error {
	if m, err := protocol.Decode(b); err == nil {
		k.mu.Lock()
		k.count[m.Kind()]++
		k.mu.Unlock()
	}
	return k.Transport.Publish(subject, b)
}

// A malicious coordinator over real NATS (an embedded nats-server, real
// workers over transport/): its secure aggregation round shows two
// different survivor sets to two halves of the sites and forwards their
// signatures. Every site detects the equivocation at the consistency
// check and aborts: no unmask share is published, the coordinator ends
// without a result or an aggregated release, and every site's ledger
// holds its charge (reserved before its masked vector left) and a second
// entry repeating it with the note that the round aborted before any
// unmask share was sent. Control: the same federation with an honest
// coordinator completes.
func TestMaliciousCoordinatorEquivocatesOverNATS(t *testing.T) {
	train, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := secAggSpec(2, 3)
	spec.Sites = 4
	spec.Job.Options = protocol.OptionsOf(map[string]float64{fedalgo.OptSecAgg: 1, fedalgo.OptSecAggThreshold: 3, fedalgo.OptSecAggTimeout: 200})
	sites := preparedSites(t, spec, train)
	connect := natsConnect(t)
	for _, malicious := range []bool{false, true} {
		name := map[bool]string{false: "honest", true: "equivocating"}[malicious]
		t.Run(name, func(t *testing.T) {
			fed := "mal" + name[:3]
			roster, signers, err := SecAggRoster(sites, false, 5)
			if err != nil {
				t.Fatal(err)
			}
			job := spec.Job
			job.ID = "job-" + name
			coord, err := coordinator.New(coordinator.Config{Federation: fed, Job: job, MinSites: len(sites), SecAggRoster: roster})
			if err != nil {
				t.Fatal(err)
			}
			ct, err := connect("coordinator")
			if err != nil {
				t.Fatal(err)
			}
			defer ct.Close()
			if malicious {
				ct = &equivocator{Transport: ct, fed: fed, groupB: map[string]bool{sites[2].Name: true, sites[3].Name: true}}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var mu sync.Mutex
			published := map[protocol.Kind]int{}
			workers := make([]*worker.Worker, len(sites))
			var wg sync.WaitGroup
			for i, s := range sites {
				cfg := worker.Config{Federation: fed, Site: s.Name, Data: s.Data, SecAggKey: signers[s.Name], SecAggRoster: roster}
				if cfg.Rand, cfg.Noise, err = SiteSources(false, 7, i); err != nil {
					t.Fatal(err)
				}
				if workers[i], err = worker.New(cfg); err != nil {
					t.Fatal(err)
				}
				st, err := connect(s.Name)
				if err != nil {
					t.Fatal(err)
				}
				wt := kindCounter{Transport: st, mu: &mu, count: published}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer st.Close()
					worker.Run(ctx, workers[i], wt, 2*time.Millisecond)
				}()
			}
			res, cerr := coordinator.RunWith(ctx, coord, ct, 2*time.Millisecond, coordinator.RunOptions{})
			if !malicious {
				if cerr != nil || res == nil {
					t.Fatalf("control: the honest coordinator failed: %v", cerr)
				}
				cancel()
				wg.Wait()
				if published[protocol.KindSecAggUnmask] != len(sites) {
					t.Fatalf("control: %d unmask messages", published[protocol.KindSecAggUnmask])
				}
				return
			}
			// The workers end on their own (each aborted the job).
			wg.Wait()
			if ctx.Err() != nil {
				t.Fatal("the workers did not end the job by themselves")
			}
			if res != nil || cerr == nil {
				t.Fatalf("the malicious coordinator got a result: %v, %v", res, cerr)
			}
			t.Logf("coordinator: %v", cerr)
			if rel := coord.TakeReleases(); len(rel) != 0 {
				t.Fatalf("the coordinator recorded aggregated releases %+v", rel)
			}
			mu.Lock()
			defer mu.Unlock()
			if published[protocol.KindSecAggCheck] != len(sites) || published[protocol.KindSecAggUnmask] != 0 {
				t.Fatalf("sites published %d consistency signatures and %d unmask messages, want %d and 0", published[protocol.KindSecAggCheck], published[protocol.KindSecAggUnmask], len(sites))
			}
			for i, w := range workers {
				if !errors.Is(w.Err(), secagg.ErrInconsistent) {
					t.Errorf("site %s did not detect the equivocation: %v", sites[i].Name, w.Err())
				}
				l := w.Ledger()
				if len(l) != 2 || l[0].SecAgg == nil || l[1].SecAgg == nil || l[0].SecAgg.Note != "" ||
					!strings.Contains(l[1].SecAgg.Note, "aborted before any unmask share was sent") ||
					l[1].Epsilon != l[0].Epsilon || l[1].Phase != l[0].Phase || l[1].Job != l[0].Job {
					t.Errorf("site %s ledger: %+v", sites[i].Name, l)
					continue
				}
				if eps, _ := worker.Spent(l); eps != l[0].Epsilon {
					t.Errorf("site %s: the note changed the spent ε: %v, charged %v", sites[i].Name, eps, l[0].Epsilon)
				}
			}
			t.Logf("site %s: %s", sites[0].Name, workers[0].Ledger()[1].SecAgg.Note)
		})
	}
}
