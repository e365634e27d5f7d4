package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// TestCounterCountsPublishedBytes checks the transport wrapper against a
// fed-avg job's message count: joins, then per round one announcement,
// one PhaseStart and one update per site, then the result.
func TestCounterCountsPublishedBytes(t *testing.T) {
	sites, _, _ := prepared(t, 2, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c Counter
	_, err := Federate(ctx, FederationConfig{Name: "count", Job: coordinator.JobConfig{Algo: fedalgo.FedAvg, Rounds: 2},
		Sites: sites, Connect: c.Connect(MemConnect(ctx)), Seed: 1, Tick: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	msgs, bytes := c.Counts()
	// ≥ 2 joins + 2 rounds × (2 + 2) + 1 result; leaves/retries may add more.
	if msgs < 2+2*4+1 || bytes <= 0 {
		t.Fatalf("counted %d messages, %d bytes", msgs, bytes)
	}
}

func benchDiabetes(b *testing.B) *data.Table {
	b.Helper()
	tab, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return tab
}

// benchSites splits ds (already scaled to [−1, 1]-ish values) IID over n
// sites, each clipped to R = 1, and returns them with the pooled clipped set.
func benchSites(b *testing.B, ds *pairwise.Dataset, n int) ([]Site, *pairwise.Dataset) {
	b.Helper()
	spec := Spec{Sites: n, Partition: "iid", Scale: "minmax", Job: coordinator.JobConfig{Algo: fedalgo.FedAvg, FeatureRadius: 1}}
	sites, pooled, err := Prepare(spec, ds, ds, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	return sites, pooled
}

func natsBench(b *testing.B) func(string) (transport.Transport, error) {
	b.Helper()
	s, err := transport.StartEmbedded()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Shutdown)
	return func(name string) (transport.Transport, error) { return transport.ConnectInProcess(s, name) }
}

// singleSGDPrev is the single-process counterpart of a fed-avg job: sgd-prev
// on the pooled records with the job's η and B and its total pair steps.
func singleSGDPrev(b *testing.B, pooled *pairwise.Dataset, job coordinator.JobConfig, steps int, seed uint64) []float64 {
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
	obj, err := pairwise.NewObjective(pooled, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Constraint: "l2", Radius: job.ParamRadius})
	if err != nil {
		b.Fatal(err)
	}
	algo, _ := pairwise.Lookup("sgd-prev")
	res, err := algo.Run(context.Background(), obj, pairwise.RunConfig{Steps: steps, Eta: job.Eta}, rand.New(rand.NewPCG(seed, 0)))
	if err != nil {
		b.Fatal(err)
	}
	return res.W
}

func totalSteps(sites []Site, job coordinator.JobConfig) int {
	T := 0
	for _, s := range sites {
		T += int(math.Ceil(job.LocalPasses * float64(s.Data.N)))
	}
	return T * job.Rounds
}

// benchFederate runs fc b.N times and reports bytes and messages per phase.
func benchFederate(b *testing.B, fc FederationConfig) {
	b.Helper()
	var c Counter
	connect := fc.Connect
	fc.Connect = c.Connect(connect)
	phases := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fc.Name = fmt.Sprintf("bench%d", i)
		fc.Seed = uint64(i)
		out, err := Federate(context.Background(), fc)
		if err != nil {
			b.Fatal(err)
		}
		phases += out.Job.Phases
	}
	b.StopTimer()
	msgs, bytes := c.Counts()
	b.ReportMetric(float64(bytes)/float64(phases), "bytes/phase")
	b.ReportMetric(float64(msgs)/float64(phases), "msgs/phase")
}

// BenchmarkSimulateVsSingle compares a 4-site fed-avg job (coordinator and
// workers over an embedded NATS server or the in-memory hub, 10 rounds of
// one local pass) with single-process sgd-prev on the pooled records doing
// the same number of pair steps. The fed sub-benchmarks report
// fed/single, the ratio of their ns/op to the single run's. The tick
// matters: a Join published before the coordinator subscribes is retried
// one tick later.
func BenchmarkSimulateVsSingle(b *testing.B) {
	sets := []struct {
		name string
		ds   func() *pairwise.Dataset
	}{
		{"diabetes", func() *pairwise.Dataset { return benchDiabetes(b).Dataset }},
		{"synthetic-n50000-d22", func() *pairwise.Dataset { return Synthetic(50000, 22, 0.1, 1, 1) }},
	}
	for _, set := range sets {
		sites, pooled := benchSites(b, set.ds(), 4)
		cfg := coordinator.Config{Federation: "x", Job: coordinator.JobConfig{Algo: fedalgo.FedAvg}, MinSites: 4}
		if err := cfg.Validate(); err != nil {
			b.Fatal(err)
		}
		job := cfg.Job
		T := totalSteps(sites, job)
		var single time.Duration
		b.Run(set.name+"/single", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				singleSGDPrev(b, pooled, job, T, uint64(i))
			}
			single = b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(T), "pair-steps/op")
		})
		for _, v := range []struct {
			tr   string
			tick time.Duration
		}{{"mem", 20 * time.Millisecond}, {"nats", 20 * time.Millisecond}, {"nats", time.Millisecond}} {
			b.Run(fmt.Sprintf("%s/fed-%s-tick%v", set.name, v.tr, v.tick), func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				connect := MemConnect(ctx)
				if v.tr == "nats" {
					connect = natsBench(b)
				}
				benchFederate(b, FederationConfig{Job: job, Sites: sites, Connect: connect, Tick: v.tick})
				if single > 0 {
					b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(single), "fed/single")
				}
			})
		}
	}
}

// BenchmarkSimulate64Sites runs 64 sites and a coordinator in one process
// over an embedded NATS server: fed-avg, 10 rounds of one local pass, on a
// synthetic ijcnn1-sized set (n = 50 000, d = 22; about 780 records per site).
func BenchmarkSimulate64Sites(b *testing.B) {
	sites, _ := benchSites(b, Synthetic(50000, 22, 0.1, 1, 1), 64)
	benchFederate(b, FederationConfig{Job: coordinator.JobConfig{Algo: fedalgo.FedAvg}, Sites: sites, Connect: natsBench(b), Tick: 20 * time.Millisecond})
}

// BenchmarkPhaseBytes reports the bytes published per phase (all
// participants, every message kind) for both algorithms on diabetes with
// 4 and 16 sites; d = 8, so a model is 64 bytes of float64.
func BenchmarkPhaseBytes(b *testing.B) {
	tab := benchDiabetes(b)
	for _, n := range []int{4, 16} {
		for _, job := range []coordinator.JobConfig{
			{Algo: fedalgo.FedAvg},
			{Algo: fedalgo.FedDPLocalSGD, Epsilon: 1},
		} {
			b.Run(fmt.Sprintf("%s/sites=%d", job.Algo, n), func(b *testing.B) {
				sites, _ := benchSites(b, tab.Dataset, n)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				benchFederate(b, FederationConfig{Job: job, Sites: sites, Connect: MemConnect(ctx), Tick: 20 * time.Millisecond})
			})
		}
	}
}

// Every site's first Join reaches the coordinator: Federate starts the
// sites once the coordinator listens, so no site joins twice. The tick
// is a minute: a lost Join would be retried only after it (the test's
// context ends first), and no tick comes to retry anything.
func TestFederateJoinsOnce(t *testing.T) {
	sites, _, _ := prepared(t, 16, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	joins := map[string]int{}
	out, err := Federate(ctx, FederationConfig{Name: "once", Job: coordinator.JobConfig{Algo: fedalgo.FedAvg, Rounds: 2},
		Sites: sites, Connect: MemConnect(ctx), Seed: 1, Tick: time.Minute,
		Observe: func(site string, tr transport.Transport) transport.Transport {
			return joinCounter{tr, func() { mu.Lock(); joins[site]++; mu.Unlock() }}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result == nil || len(joins) != len(sites) {
		t.Fatalf("result %v, joins from %d of %d sites", out.Result, len(joins), len(sites))
	}
	for s, n := range joins {
		if n != 1 {
			t.Errorf("site %s joined %d times", s, n)
		}
	}
}

// joinCounter calls joined for every Join its site publishes.
type joinCounter struct {
	transport.Transport
	joined func()
}

func (j joinCounter) Publish(subject string, data []byte) error {
	if len(data) > 0 && protocol.Kind(data[0]) == protocol.KindJoin {
		j.joined()
	}
	return j.Transport.Publish(subject, data)
}
