package coordinator

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// FuzzJobSpec fuzzes the job-spec validator (CheckSubmit, what the client
// and the coordinator check): a spec it accepts must start as a job over
// any two sites without panicking, and its announcement must pass the
// protocol's validation (so every site's decoder accepts it) — a spec
// never gets past the coordinator only to kill or be dropped by every
// site. In .ci/run for 10 s.
func FuzzJobSpec(f *testing.F) {
	algos := fedalgo.Names()
	f.Add(uint8(0), "", 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10, 3, uint8(0))
	f.Add(uint8(1), "logistic", 3, 1.0, 0.1, 1.0, 1.0, 0.0, 1.0, 1e-3, 100, 5, uint8(1))
	f.Add(uint8(2), "", 0, 0.0, 1e308, 1e308, 0.0, 0.0, 1e308, 0.0, 40, 3, uint8(0))
	f.Add(uint8(0), "hinge", 0, 1e12, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1, 1, uint8(2))
	f.Fuzz(func(t *testing.T, algo uint8, loss string, rounds int, passes, eta, B, R, lambda, eps, delta float64, n, d int, task uint8) {
		m := &protocol.JobSubmit{Job: "j", Client: "c", Algo: algos[int(algo)%len(algos)], Loss: loss, MinSites: 2, Rounds: rounds,
			LocalPasses: passes, Eta: eta, ParamRadius: B, FeatureRadius: R, Lambda: lambda, Epsilon: eps, Delta: delta,
			Task: []string{"", protocol.TaskAUC, protocol.TaskMetric}[int(task)%3]}
		if fedalgo.TakesLocalAlgo(m.Algo) {
			m.LocalAlgo = "dpegd"
		}
		if CheckSubmit("f", m) != nil {
			return
		}
		n, d = 2+int(uint(n)%200), 1+int(uint(d)%16)
		c, err := New(Config{Federation: "f", Job: JobFromSubmit(m), MinSites: 2})
		if err != nil {
			t.Fatalf("CheckSubmit accepted %+v, New refused it: %v", m, err)
		}
		c.Step(&protocol.Join{Site: "a", Records: n, Dim: d})
		outs := c.Step(&protocol.Join{Site: "b", Records: n + 1, Dim: d})
		for _, o := range outs {
			if _, err := protocol.Encode(o.Msg); err != nil {
				t.Fatalf("spec %+v: %v does not encode: %v", m, o.Msg.Kind(), err)
			}
		}
		a := c.Job()
		if a == nil {
			return // the plan refused the job (an abort naming why)
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("spec %+v announced %+v: %v", m, a, err)
		}
		// Site a runs phase 1: no internal error (a recovered panic) and
		// an update or a stated refusal.
		w, err := worker.New(worker.Config{Federation: "f", Site: "a", Data: fuzzData(n, d), Rand: rand.New(rand.NewPCG(1, 2)), Noise: dp.NewSeededNoise(3)})
		if err != nil {
			t.Fatal(err)
		}
		// One iteration must stay short (a fuzz iteration still running when
		// -fuzztime ends fails the run with "context deadline exceeded"):
		// the phase is bounded by a deadline the site honours.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		w.Step(ctx, a)
		w.Step(ctx, &protocol.PhaseStart{Job: a.Job, Phase: 1, Model: make([]float64, a.Params)})
		if err := w.Err(); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("spec %+v: site: %v", m, err)
		}
	})
}

// fuzzData is n records of d features in the unit ball, both labels.
func fuzzData(n, d int) *pairwise.Dataset {
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(2*(i%2) - 1)
		for k := 0; k < d; k++ {
			x[i*d+k] = math.Sin(float64(i*d+k)) / float64(d)
		}
	}
	return pairwise.NewDense(x, y, d)
}
