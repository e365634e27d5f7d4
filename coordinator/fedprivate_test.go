package coordinator

import (
	"math"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

func TestValidateFedPrivateJobs(t *testing.T) {
	for _, tc := range []struct {
		job  JobConfig
		want string // "" valid
	}{
		{JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 1}, ""},
		{JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 1, Rounds: 3}, "epochs"},
		{JobConfig{Algo: fedalgo.FedDPEGD}, "accepted range"},
		{JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 1, LocalAlgo: "dpegd"}, "no local algorithm"},
		{JobConfig{Algo: fedalgo.FedOneShot, Epsilon: 1, LocalAlgo: "dpegd"}, ""},
		{JobConfig{Algo: fedalgo.FedOneShot, Epsilon: 1, LocalAlgo: "dp-gd-grad"}, ""},
		{JobConfig{Algo: fedalgo.FedOneShot, Epsilon: 1}, "needs a local algorithm"},
		{JobConfig{Algo: fedalgo.FedOneShot, Epsilon: 1, LocalAlgo: "sgd-prev"}, "not private"},
		{JobConfig{Algo: fedalgo.FedOneShot, Epsilon: 1, LocalAlgo: "nope"}, "unknown algorithm"},
		{JobConfig{Algo: fedalgo.FedOneShot, Epsilon: 1, LocalAlgo: "dpgdsc"}, "λ > 0"},
		{JobConfig{Algo: fedalgo.FedOneShot, Epsilon: 1, LocalAlgo: "dpgdsc", Lambda: 1e-3}, ""},
		{JobConfig{Algo: fedalgo.FedAvg, LocalAlgo: "dpegd"}, "no local algorithm"},
	} {
		cfg := Config{Federation: "f", Job: tc.job, MinSites: 1}
		err := cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.job, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.job, err, tc.want)
		}
	}
}

// fed-dpegd: k = ⌊log₂ n_min⌋ phases, δ = dp.DefaultDelta(n_max) = 1/(10·n_max), [X21] Thm 3 η at n_min;
// fed-oneshot: one phase, the local algorithm announced, σ lists reported.
func TestCoordinatorFedPrivateJobs(t *testing.T) {
	c, _ := newTest(t, JobConfig{Algo: fedalgo.FedDPEGD, Epsilon: 0.5}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 100, Dim: 3})
	c.Step(&protocol.Join{Site: "b", Records: 300, Dim: 3})
	acceptJob(c)
	j := c.Job()
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, "logistic")
	if j == nil || j.Phases != 6 || j.Delta != dp.DefaultDelta(300) || j.Eta != dpalgo.DPEGDDefaultEta(loss, 100, 3, 1, 1, 0.5, dp.DefaultDelta(300)) || j.LocalAlgo != "" {
		t.Fatalf("job %+v: want k = ⌊log₂ 100⌋ = 6, δ = 1/3000, Thm 3 η", j)
	}
	outs := c.Step(&protocol.SiteUpdate{Job: j.Job, Phase: 1, Site: "a", Model: []float64{0, 0, 0}, Weight: 50, Epsilon: 5, Delta: j.Delta})
	if c.Err() == nil || outs[0].Msg.Kind() != protocol.KindAbort {
		t.Fatal("a wrong privacy claim was accepted")
	}

	c, _ = newTest(t, JobConfig{Algo: fedalgo.FedOneShot, LocalAlgo: "dpegd", Epsilon: 1}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 100, Dim: 1})
	c.Step(&protocol.Join{Site: "b", Records: 300, Dim: 1})
	acceptJob(c)
	j = c.Job()
	if j.Phases != 1 || j.LocalAlgo != "dpegd" {
		t.Fatalf("job %+v", j)
	}
	c.Step(&protocol.SiteUpdate{Job: j.Job, Phase: 1, Site: "a", Model: []float64{4}, Weight: 100, Sigma: 3, Sigmas: []float64{3, 2}, Epsilon: 1, Delta: j.Delta, Secure: true})
	outs = c.Step(&protocol.SiteUpdate{Job: j.Job, Phase: 1, Site: "b", Model: []float64{0}, Weight: 300, Sigma: 1, Sigmas: []float64{1}, Epsilon: 1, Delta: j.Delta, Secure: true})
	r := c.Result()
	if r == nil || r.Model[0] != 1 || len(outs) != 1 {
		t.Fatalf("result %+v, want the record-weighted mean 1", r)
	}
	p := c.Privacy()
	if len(p[0].Sigmas) != 2 || p[0].Sigmas[1] != 2 || len(p[1].Sigmas) != 1 || !p[0].Secure {
		t.Errorf("privacy %+v", p)
	}
}

// fed-dp-gd-grad: T = ⌈ln(n_min ε/√p)⌉ rounds ([K22] Remark 2 at the
// smallest site) unless given, δ = dp.DefaultDelta(n_max) = 1/(10·n_max), η = 1/L; each round the model
// steps along the record-weighted mean of the sites' noisy gradients and is
// projected onto the ball; the result is the last iterate; the privacy
// report carries the paper's (ε, δ) and the dp.Compose (GDP) ε.
func TestCoordinatorFedDPGDGrad(t *testing.T) {
	for _, tc := range []struct {
		job  JobConfig
		want string
	}{
		{JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1}, ""},
		{JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1, Rounds: 5}, ""},
		{JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1, LocalPasses: 1}, "full-batch"},
		{JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1, Loss: "hinge"}, "smooth"},
		{JobConfig{Algo: fedalgo.FedDPGDGrad}, "accepted range"},
		{JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1, LocalAlgo: "dp-gd-grad"}, "no local algorithm"},
	} {
		cfg := Config{Federation: "f", Job: tc.job, MinSites: 1}
		err := cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want %q", tc.job, err, tc.want)
		}
	}

	c, _ := newTest(t, JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 2}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 100, Dim: 2})
	c.Step(&protocol.Join{Site: "b", Records: 300, Dim: 2})
	acceptJob(c)
	j := c.Job()
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, "logistic")
	props := loss.Props(1, 1)
	wantT := int(math.Ceil(math.Log(100 * 2 / math.Sqrt(2)))) // ⌈ln(n_min ε/√p)⌉ = ⌈ln 141.4⌉ = 5
	if j == nil || j.Phases != wantT || wantT != 5 || j.Delta != dp.DefaultDelta(300) || j.Eta != 1/props.Smooth || j.Epsilon != 2 {
		t.Fatalf("job %+v: want T = %d, δ = 1/3000, η = 1/L = %g", j, wantT, 1/props.Smooth)
	}
	// Round 1 from 0: ḡ = (100·(4, 0) + 300·(0, −4))/400 = (1, −3);
	// w = 0 − η ḡ, projected onto the unit ball if longer.
	eta := j.Eta
	step := func(w, g []float64) []float64 {
		out := []float64{w[0] - eta*g[0], w[1] - eta*g[1]}
		if n := math.Hypot(out[0], out[1]); n > 1 {
			out[0], out[1] = out[0]/n, out[1]/n
		}
		return out
	}
	want := []float64{0, 0}
	for k := 1; k <= wantT; k++ {
		ga, gb := []float64{4, 0}, []float64{0, -4}
		c.Step(&protocol.SiteUpdate{Job: j.Job, Phase: k, Site: "b", Model: gb, Weight: 300, Sigma: 0.5, Epsilon: 2, Delta: j.Delta})
		outs := c.Step(&protocol.SiteUpdate{Job: j.Job, Phase: k, Site: "a", Model: ga, Weight: 100, Sigma: 1.5, Epsilon: 2, Delta: j.Delta})
		want = step(want, []float64{0.25*4 + 0.75*0, 0.25*0 + 0.75*-4})
		if k < wantT {
			ps := outs[1].Msg.(*protocol.PhaseStart)
			if ps.Phase != k+1 || math.Abs(ps.Model[0]-want[0]) > 1e-12 || math.Abs(ps.Model[1]-want[1]) > 1e-12 {
				t.Fatalf("round %d: broadcast %v, want %v", k, ps.Model, want)
			}
		}
	}
	r := c.Result()
	if r == nil || r.Phases != wantT || math.Abs(r.Model[0]-want[0]) > 1e-12 || math.Abs(r.Model[1]-want[1]) > 1e-12 {
		t.Fatalf("result %+v, want %v", r, want)
	}
	p := c.Privacy()
	if len(p) != 2 || len(p[0].Sigmas) != wantT || p[0].Sigmas[0] != 1.5 || p[1].Sigmas[0] != 0.5 {
		t.Fatalf("privacy %+v", p)
	}
	for _, sp := range p {
		// The sites calibrate to the proven 2Γ/n (dpalgo.DPGDGradSiteSensitivity).
		sens := dpalgo.DPGDGradSiteSensitivity(loss, 1, 1, sp.Records)
		rels := make([]dp.Release, len(sp.Sigmas))
		for i, s := range sp.Sigmas {
			rels[i] = dp.Release{Mechanism: dp.MechanismGaussian, Sensitivity: sens, Sigma: s}
		}
		rep, err := dp.Compose(rels, sp.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if e := rep.Method(dp.MethodGDP).Epsilon; sp.ComposedEpsilon != e || !(e > 0) || len(sp.Notes) != 2 {
			t.Errorf("%s: composed ε %g, want dp.Compose's GDP %g; notes %v", sp.Site, sp.ComposedEpsilon, e, sp.Notes)
		}
	}

	// A site with one record: no pair, the job is aborted before any phase.
	c, _ = newTest(t, JobConfig{Algo: fedalgo.FedDPGDGrad, Epsilon: 1}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 1, Dim: 2})
	if outs := c.Step(&protocol.Join{Site: "b", Records: 300, Dim: 2}); c.Err() == nil || len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort {
		t.Fatalf("a 1-record site did not abort the job: %v", outs)
	}
}
