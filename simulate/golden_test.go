package simulate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	goldenfile "github.com/pairfed/pairfed/internal/golden"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"
)

// Golden runs of every federated algorithm: seeded jobs whose final model
// bits, per-phase evaluations, site and coordinator ledgers and complete
// message transcripts are pinned in testdata/golden. They were recorded
// before the federated algorithms moved into package fedalgo and pin that
// the move changed no behaviour. `go test ./simulate -run Golden -rewrite`
// records them again (only after a deliberate change of behaviour).
//
// Every case gives δ explicitly, so that a change of the default δ does
// not move them.

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/golden")

type goldenCase struct {
	name  string
	sites int
	job   protocol.JobSubmit // Job, Client and MinSites are filled in
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"fed-avg", 3, protocol.JobSubmit{Algo: "fed-avg", Rounds: 3}},
		{"fed-avg-metric", 3, protocol.JobSubmit{Algo: "fed-avg", Rounds: 2, Task: "metric"}},
		{"fed-avg-trimmed-mean", 5, protocol.JobSubmit{Algo: "fed-avg", Rounds: 2, Aggregation: "trimmed-mean:0.2"}},
		{"fed-dp-local-sgd", 3, protocol.JobSubmit{Algo: "fed-dp-local-sgd", Epsilon: 1, Delta: 1e-3}},
		{"fed-dpegd", 3, protocol.JobSubmit{Algo: "fed-dpegd", Epsilon: 1, Delta: 1e-3}},
		{"fed-dp-gd-grad", 3, protocol.JobSubmit{Algo: "fed-dp-gd-grad", Epsilon: 1, Delta: 1e-3, Rounds: 3}},
		{"fed-oneshot-dpegd", 3, protocol.JobSubmit{Algo: "fed-oneshot", LocalAlgo: "dpegd", Epsilon: 1, Delta: 1e-3}},
		{"fed-oneshot-dp-gd-grad", 3, protocol.JobSubmit{Algo: "fed-oneshot", LocalAlgo: "dp-gd-grad", Epsilon: 2, Delta: 1e-3}},
	}
}

// golden is what one case pins.
type golden struct {
	// Lockstep: a coordinator.Service and one worker.Service per site
	// driven on the test goroutine over transport.Mem (every delivery and
	// tick explicit), with a client submitting the job.
	Lockstep lockstepRecord `json:"lockstep"`
	// Simulate: simulate.Run over the in-memory transport (real
	// goroutines), and run 0 of the same spec through RunTrial. The same
	// record must come out of the embedded NATS server.
	Simulate simRecord `json:"simulate"`
}

type lockstepRecord struct {
	Status      *protocol.JobStatus         `json:"status"`
	ModelBits   []string                    `json:"model_bits"`
	Charges     []coordinator.Charge        `json:"coordinator_ledger"`
	SiteLedgers map[string][]worker.Release `json:"site_ledgers"`
	// Transcript is every published message in order: publisher, subject,
	// kind and the SHA-256 of its encoding.
	Transcript []string `json:"transcript"`
}

type simRecord struct {
	Report    *Report                     `json:"report"`
	ModelBits []string                    `json:"model_bits"`
	AUC       float64                     `json:"auc"`
	Privacy   []coordinator.SitePrivacy   `json:"privacy"`
	Ledgers   map[string][]worker.Release `json:"site_ledgers"`
	// Transcript is, per publisher, its distinct messages (kind and
	// SHA-256 of the encoding) in order of first publication; Joins
	// repeated until the announcement, catch-up repeats and the final
	// Leave depend on timing and are left out or deduplicated.
	Transcript map[string][]string `json:"transcript"`
}

func modelBits(m []float64) []string {
	out := make([]string, len(m))
	for i, v := range m {
		out[i] = fmt.Sprintf("%016x", math.Float64bits(v))
	}
	return out
}

func msgDigest(b []byte) string {
	h := sha256.Sum256(b)
	k := "?"
	if len(b) > 0 {
		k = protocol.Kind(b[0]).String()
	}
	return k + " " + hex.EncodeToString(h[:12])
}

func goldenSpec(c goldenCase) Spec {
	job := coordinator.JobFromSubmit(&c.job)
	return Spec{Sites: c.sites, Partition: "iid", Job: job, Seed: 7, NoiseSeed: 3, Seeded: true, Transport: "mem",
		Tick: 5 * time.Millisecond, PhaseTimeout: 4000}
}

// runLockstep runs case c through the services on one goroutine.
func runLockstep(t *testing.T, c goldenCase) lockstepRecord {
	t.Helper()
	spec := goldenSpec(c)
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	tab := loadDiabetes(t)
	tr, te, rng, err := TrialSplit(spec, tab, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sites, testPrep, err := Prepare(spec, tr, te, rng)
	if err != nil {
		t.Fatal(err)
	}
	pooled, err := PrepPooled(spec, tr)
	if err != nil {
		t.Fatal(err)
	}
	const fed = "gold"
	hub := transport.NewMem()
	var rec lockstepRecord
	publish := func(from string, ep transport.Transport, subject string, m protocol.Message) {
		b, err := protocol.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		rec.Transcript = append(rec.Transcript, from+" "+subject+" "+msgDigest(b))
		if err := ep.Publish(subject, b); err != nil {
			t.Fatal(err)
		}
	}
	decode := func(b []byte) protocol.Message {
		m, err := protocol.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	coord, err := coordinator.NewService(coordinator.ServiceConfig{Federation: fed, MinSites: c.sites,
		Evaluate: func(a *protocol.JobAnnounce, model []float64) (float64, int) {
			if a.Task == protocol.TaskMetric {
				return pairwise.KNN3Accuracy(model, pooled, testPrep), testPrep.N
			}
			return pairwise.LinearAUC(model, testPrep), testPrep.N
		}})
	if err != nil {
		t.Fatal(err)
	}
	var charges []coordinator.Charge
	ce := hub.Connect("coordinator")
	coordSend := func(outs []coordinator.Output) {
		charges = append(charges, coord.TakeCharges()...) // durable before publication
		for _, o := range outs {
			publish("coordinator", ce, o.Subject, o.Msg)
		}
	}
	for _, subj := range []string{protocol.CoordWildcard(fed), protocol.JobsSubject(fed)} {
		if _, err := ce.Subscribe(subj, func(_ string, b []byte) { coordSend(coord.Step(decode(b))) }); err != nil {
			t.Fatal(err)
		}
	}
	workers := make([]*worker.Service, len(sites))
	ends := make([]transport.Transport, len(sites))
	for i, s := range sites {
		r, noise, err := SiteSources(false, spec.Seed^spec.NoiseSeed, i)
		if err != nil {
			t.Fatal(err)
		}
		w, err := worker.NewService(worker.ServiceConfig{Worker: worker.Config{Federation: fed, Site: s.Name, Data: s.Data, Rand: r, Noise: noise}})
		if err != nil {
			t.Fatal(err)
		}
		workers[i], ends[i] = w, hub.Connect(s.Name)
		name, ep := s.Name, ends[i]
		h := func(_ string, b []byte) {
			for _, o := range w.Step(context.Background(), decode(b)) {
				publish(name, ep, o.Subject, o.Msg)
			}
		}
		for _, subj := range []string{protocol.SitesSubject(fed), protocol.SiteSubject(fed, s.Name)} {
			if _, err := ep.Subscribe(subj, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	client := hub.Connect("client")
	var final *protocol.JobStatus
	if _, err := client.Subscribe(protocol.ClientSubject(fed, "gold"), func(_ string, b []byte) {
		if st := decode(b).(*protocol.JobStatus); st.Status != protocol.StatusQueued && st.Status != protocol.StatusRunning {
			final = st
		}
	}); err != nil {
		t.Fatal(err)
	}
	for i, w := range workers {
		for _, o := range w.Start() {
			publish(sites[i].Name, ends[i], o.Subject, o.Msg)
		}
	}
	sub := c.job
	sub.Job, sub.Client, sub.MinSites = "gold-1", "gold", c.sites
	publish("client", client, protocol.JobsSubject(fed), &sub)
	for tick := 0; final == nil; tick++ {
		if tick > 1000 {
			t.Fatal("no final status after 1000 ticks")
		}
		hub.Flush(0)
		if final != nil {
			break
		}
		coordSend(coord.Tick())
		for i, w := range workers {
			for _, o := range w.Tick() {
				publish(sites[i].Name, ends[i], o.Subject, o.Msg)
			}
		}
	}
	hub.Flush(0) // the result reaches the sites
	if final.Status != protocol.StatusCompleted {
		t.Fatalf("job %s: %s", final.Status, final.Reason)
	}
	rec.Status, rec.ModelBits = final, modelBits(final.Model)
	for i := range charges {
		charges[i].Time = time.Time{}
	}
	rec.Charges = charges
	rec.SiteLedgers = map[string][]worker.Release{}
	for i, w := range workers {
		l := w.Ledger()
		for j := range l {
			l[j].Time = time.Time{}
		}
		rec.SiteLedgers[sites[i].Name] = l
	}
	return rec
}

// goldenRecorder wraps every endpoint of a run and keeps, per publisher, the
// distinct messages it published in order of first publication.
type goldenRecorder struct {
	mu   sync.Mutex
	seen map[string]map[string]bool
	out  map[string][]string
}

type goldenRecordingTransport struct {
	transport.Transport
	r    *goldenRecorder
	name string
}

func (t *goldenRecordingTransport) Publish(subject string, b []byte) error {
	if len(b) > 0 && (protocol.Kind(b[0]) == protocol.KindLeave || protocol.Kind(b[0]) == protocol.KindHeartbeat) {
		return t.Transport.Publish(subject, b)
	}
	d := msgDigest(b)
	t.r.mu.Lock()
	if !t.r.seen[t.name][d] {
		if t.r.seen[t.name] == nil {
			t.r.seen[t.name] = map[string]bool{}
		}
		t.r.seen[t.name][d] = true
		t.r.out[t.name] = append(t.r.out[t.name], d)
	}
	t.r.mu.Unlock()
	return t.Transport.Publish(subject, b)
}

func (r *goldenRecorder) connect(connect func(string) (transport.Transport, error)) func(string) (transport.Transport, error) {
	return func(name string) (transport.Transport, error) {
		t, err := connect(name)
		if err != nil {
			return nil, err
		}
		return &goldenRecordingTransport{Transport: t, r: r, name: name}, nil
	}
}

// runSimulate runs case c through Run and RunTrial over transport kind
// ("mem" or "nats").
func runSimulate(t *testing.T, c goldenCase, kind string) simRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := goldenSpec(c)
	spec.Transport = kind
	tab := loadDiabetes(t)
	rep, err := Run(ctx, spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep.Seconds, rep.Transport = 0, ""
	rec := &goldenRecorder{seen: map[string]map[string]bool{}, out: map[string][]string{}}
	var connect func(string) (transport.Transport, error)
	if kind == "nats" {
		connect = natsConnect(t)
	} else {
		hctx, hcancel := context.WithCancel(ctx)
		defer hcancel()
		connect = MemConnect(hctx)
	}
	tr, err := RunTrial(ctx, spec, tab, nil, 0, rec.connect(connect))
	if err != nil {
		t.Fatal(err)
	}
	out := simRecord{Report: rep, ModelBits: modelBits(tr.Outcome.Result.Model), AUC: tr.AUC, Privacy: tr.Outcome.Privacy,
		Ledgers: tr.Outcome.Ledgers, Transcript: rec.out}
	if tr.Outcome.Job.Task == protocol.TaskMetric {
		out.AUC = 0 // RunTrial's AUC is that of a linear model
	}
	for _, l := range out.Ledgers {
		for j := range l {
			l[j].Time = time.Time{}
		}
	}
	return out
}

func marshalGolden(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".json") }

// TestGoldenFederatedAlgorithms compares every case with its golden file,
// over the lockstep services and over simulate.Run / RunTrial in memory.
func TestGoldenFederatedAlgorithms(t *testing.T) {
	if testing.Short() {
		t.Skip("golden federated runs: not in -short")
	}
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			got := marshalGolden(t, golden{Lockstep: runLockstep(t, c), Simulate: runSimulate(t, c, "mem")})
			path := goldenPath(c.name)
			goldenfile.Check(t, path, got, *rewrite)
		})
	}
}

// TestGoldenOverNATS runs the simulate half of every case over an
// embedded NATS server: real delivery order, the same record.
func TestGoldenOverNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("golden federated runs: not in -short")
	}
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			want, err := os.ReadFile(goldenPath(c.name))
			if err != nil {
				t.Fatalf("%v (record with -rewrite)", err)
			}
			var g golden
			if err := json.Unmarshal(want, &g); err != nil {
				t.Fatal(err)
			}
			got := marshalGolden(t, runSimulate(t, c, "nats"))
			if w := marshalGolden(t, g.Simulate); !bytes.Equal(got, w) {
				t.Errorf("%s over NATS differs from the golden run: %s", c.name, goldenfile.FirstDiff(got, w))
			}
		})
	}
}
