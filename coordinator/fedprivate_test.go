package coordinator

import (
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

func TestValidateFedPrivateJobs(t *testing.T) {
	for _, tc := range []struct {
		job  JobConfig
		want string // "" valid
	}{
		{JobConfig{Algo: protocol.AlgoFedDPEGD, Epsilon: 1}, ""},
		{JobConfig{Algo: protocol.AlgoFedDPEGD, Epsilon: 1, Rounds: 3}, "epochs"},
		{JobConfig{Algo: protocol.AlgoFedDPEGD}, "ε > 0"},
		{JobConfig{Algo: protocol.AlgoFedDPEGD, Epsilon: 1, LocalAlgo: "dpegd"}, "no local algorithm"},
		{JobConfig{Algo: protocol.AlgoFedOneShot, Epsilon: 1, LocalAlgo: "dpegd"}, ""},
		{JobConfig{Algo: protocol.AlgoFedOneShot, Epsilon: 1, LocalAlgo: "dp-gd-grad"}, ""},
		{JobConfig{Algo: protocol.AlgoFedOneShot, Epsilon: 1}, "needs a local algorithm"},
		{JobConfig{Algo: protocol.AlgoFedOneShot, Epsilon: 1, LocalAlgo: "sgd-prev"}, "not private"},
		{JobConfig{Algo: protocol.AlgoFedOneShot, Epsilon: 1, LocalAlgo: "nope"}, "unknown algorithm"},
		{JobConfig{Algo: protocol.AlgoFedOneShot, Epsilon: 1, LocalAlgo: "dpgdsc"}, "λ > 0"},
		{JobConfig{Algo: protocol.AlgoFedOneShot, Epsilon: 1, LocalAlgo: "dpgdsc", Lambda: 1e-3}, ""},
		{JobConfig{Algo: protocol.AlgoFedAvg, LocalAlgo: "dpegd"}, "no local algorithm"},
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

// fed-dpegd: k = ⌊log₂ n_min⌋ phases, δ = 1/n_max, [X21] Thm 3 η at n_min;
// fed-oneshot: one phase, the local algorithm announced, σ lists reported.
func TestCoordinatorFedPrivateJobs(t *testing.T) {
	c, _ := newTest(t, JobConfig{Algo: protocol.AlgoFedDPEGD, Epsilon: 0.5}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 100, Dim: 3})
	c.Step(&protocol.Join{Site: "b", Records: 300, Dim: 3})
	j := c.Job()
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, "logistic")
	if j == nil || j.Phases != 6 || j.Delta != 1.0/300 || j.Eta != pairwise.DPEGDDefaultEta(loss, 100, 3, 1, 1, 0.5, 1.0/300) || j.LocalAlgo != "" {
		t.Fatalf("job %+v: want k = ⌊log₂ 100⌋ = 6, δ = 1/300, Thm 3 η", j)
	}
	outs := c.Step(&protocol.SiteUpdate{Job: j.Job, Phase: 1, Site: "a", Model: []float64{0, 0, 0}, Weight: 50, Epsilon: 5, Delta: j.Delta})
	if c.Err() == nil || outs[0].Msg.Kind() != protocol.KindAbort {
		t.Fatal("a wrong privacy claim was accepted")
	}

	c, _ = newTest(t, JobConfig{Algo: protocol.AlgoFedOneShot, LocalAlgo: "dpegd", Epsilon: 1}, 2)
	c.Step(&protocol.Join{Site: "a", Records: 100, Dim: 1})
	c.Step(&protocol.Join{Site: "b", Records: 300, Dim: 1})
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
