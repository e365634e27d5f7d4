package coordinator

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

func siteNames(v View) []string {
	var out []string
	for _, s := range v.Sites {
		out = append(out, s.Site)
	}
	return out
}

// A coordinator's view follows its one job from queued (waiting for
// sites) through running (phase, updates) to finished; a site is charged
// the job's (ε, δ) once, from its first release on; and a view is a
// snapshot: it does not change with the coordinator, and changing it does
// not change the coordinator.
func TestCoordinatorView(t *testing.T) {
	c, _ := newTest(t, JobConfig{Algo: fedalgo.FedDPLocalSGD, Epsilon: 1, Delta: 1e-3}, 2)
	v := c.View()
	if v.Federation != "f" || v.Kind != "coordinator" || v.Running != nil || len(v.Queued) != 1 || len(v.Sites) != 0 {
		t.Fatalf("initial view %+v", v)
	}
	if q := v.Queued[0]; q.Job != "job-1" || q.Status != protocol.StatusQueued || q.MinSites != 2 || q.Algo != fedalgo.FedDPLocalSGD {
		t.Fatalf("queued job %+v", q)
	}
	c.Step(&protocol.Join{Site: "b", Records: 8, Dim: 2})
	c.Tick()
	c.Tick()
	if v := c.View(); !slices.Equal(siteNames(v), []string{"b"}) || v.Sites[0].Records != 8 || v.Sites[0].Dim != 2 || v.Sites[0].Silent != 2 || v.Sites[0].Job != "" {
		t.Fatalf("one site joined: %+v", v.Sites)
	}
	c.Step(&protocol.Join{Site: "a", Records: 8, Dim: 2})
	if r := c.View().Running; r == nil || r.Phase != 0 || !strings.Contains(r.Reason, "0 of 2 sites accepted") {
		t.Fatalf("accept round view %+v", r)
	}
	acceptJob(c)
	started := c.View()
	r := started.Running
	// K = ⌈log₂ 8⌉ = 3 phases ([Y21a] Alg 3).
	if r == nil || r.Status != protocol.StatusRunning || r.Phase != 1 || r.PhasesDone != 0 || r.Phases != 3 || r.Updates != 0 ||
		!slices.Equal(r.Sites, []string{"a", "b"}) || r.Epsilon != 1 || r.Delta != 1e-3 || len(started.Queued) != 0 {
		t.Fatalf("running job %+v", r)
	}
	if !slices.Equal(siteNames(started), []string{"a", "b"}) || started.Sites[0].Job != "job-1" || started.Sites[0].Silent != 0 || started.Sites[1].Silent != 0 {
		t.Fatalf("sites %+v", started.Sites)
	}
	if len(started.Privacy) != 0 {
		t.Fatalf("privacy spent before any release: %+v", started.Privacy)
	}
	upd := func(site string, phase int) *protocol.SiteUpdate {
		return &protocol.SiteUpdate{Job: "job-1", Phase: phase, Site: site, Model: []float64{1, 1}, Weight: 4, Epsilon: 1, Delta: 1e-3, Sigma: 0.5, Secure: true}
	}
	c.Step(upd("a", 1))
	one := c.View()
	if one.Running.Updates != 1 || len(one.Privacy) != 1 || one.Privacy[0] != (SiteSpend{Site: "a", Epsilon: 1, Delta: 1e-3, Jobs: 1}) {
		t.Fatalf("after a's first update: running %+v, privacy %+v", one.Running, one.Privacy)
	}
	// Changing a view does not reach the coordinator.
	one.Sites[0].Site = "zzz"
	one.Running.Sites[0] = "zzz"
	one.Privacy[0].Epsilon = 99
	if v := c.View(); v.Sites[0].Site != "a" || v.Running.Sites[0] != "a" || v.Privacy[0].Epsilon != 1 {
		t.Fatalf("a view shares memory with the coordinator: %+v", v)
	}
	for k := 1; k <= 3; k++ {
		if k > 1 {
			c.Step(upd("a", k))
		}
		c.Step(upd("b", k))
	}
	if !c.Done() || c.Err() != nil {
		t.Fatalf("not done: %v", c.Err())
	}
	// The coordinator moved on; the views taken before did not.
	if started.Running.Phase != 1 || started.Running.Updates != 0 || len(started.Privacy) != 0 || len(one.Privacy) != 1 {
		t.Fatalf("an earlier view changed: %+v %+v", started.Running, one.Privacy)
	}
	done := c.View()
	if done.Running != nil || len(done.Finished) != 1 {
		t.Fatalf("finished view %+v", done)
	}
	f := done.Finished[0]
	if f.Status != protocol.StatusCompleted || f.PhasesDone != 3 || f.Phases != 3 || f.Progress() != 1 || !slices.Equal(f.Sites, []string{"a", "b"}) {
		t.Fatalf("finished job %+v", f)
	}
	// Three disjoint partitions: the job costs its (ε, δ) once per site.
	want := []SiteSpend{{Site: "a", Epsilon: 1, Delta: 1e-3, Jobs: 1}, {Site: "b", Epsilon: 1, Delta: 1e-3, Jobs: 1}}
	if !slices.Equal(done.Privacy, want) {
		t.Fatalf("privacy %+v, want %+v", done.Privacy, want)
	}
}

// An aborted job is finished with status failed and the reason.
func TestCoordinatorViewAborted(t *testing.T) {
	c, _ := newTest(t, JobConfig{Algo: fedalgo.FedAvg, Rounds: 3}, 1)
	c.Step(&protocol.Join{Site: "a", Records: 8, Dim: 1})
	c.Step(&protocol.Abort{Job: "job-1", From: "a", Reason: "disk full"})
	v := c.View()
	if v.Running != nil || len(v.Finished) != 1 || v.Finished[0].Status != protocol.StatusFailed || v.Finished[0].Reason == "" || v.Finished[0].PhasesDone != 0 {
		t.Fatalf("aborted view %+v", v)
	}
	if len(v.Privacy) != 0 {
		t.Fatalf("fed-avg charged privacy: %+v", v.Privacy)
	}
}

// A service's view has its live members, the running job, the queue, the
// finished jobs (reloaded ones included) with their AUC, and its ledger
// per site with the budgets; sites that refused or were left out by their
// budget are listed apart from dropped ones.
func TestServiceView(t *testing.T) {
	reloaded := &protocol.JobStatus{Job: "old", Status: protocol.StatusCompleted, Algo: fedalgo.FedDPEGD, Phases: 2, Sites: []string{"a"},
		Privacy: []protocol.SiteReport{{Site: "a", Records: 4, Epsilon: 0.25, Delta: 1e-4, Sigmas: []float64{1, 1}, Secure: true}}}
	s := newService(t, ServiceConfig{Finished: []*protocol.JobStatus{reloaded},
		Ledger:   []Charge{{Key: ChargeKey("old", "a", 0), Site: "a", Job: "old", Algo: fedalgo.FedDPEGD, Mechanism: "gaussian", Epsilon: 0.25, Delta: 1e-4}},
		Budgets:  map[string]Budget{"a": {Epsilon: 2, Delta: 0.01}},
		Evaluate: func(*protocol.JobAnnounce, []float64) (float64, int) { return 0.75, 10 }})
	priv := func(job string, eps float64, min int) *protocol.JobSubmit {
		return &protocol.JobSubmit{Job: job, Client: "c", Algo: fedalgo.FedDPLocalSGD, Epsilon: eps, Delta: 1e-3, MinSites: min}
	}
	upd := func(job, site string, phase int, eps float64) *protocol.SiteUpdate {
		return &protocol.SiteUpdate{Job: job, Phase: phase, Site: site, Model: []float64{1}, Weight: 2, Epsilon: eps, Delta: 1e-3, Sigma: 1, Secure: true}
	}
	spend := func(v View) map[string]SiteSpend {
		out := map[string]SiteSpend{}
		for _, p := range v.Privacy {
			out[p.Site] = p
		}
		return out
	}
	near := func(p SiteSpend, eps, delta float64, jobs int) bool {
		return math.Abs(p.Epsilon-eps) < 1e-12 && math.Abs(p.Delta-delta) < 1e-15 && p.Jobs == jobs
	}
	budgetA := func(v View, remaining float64) {
		t.Helper()
		a := spend(v)["a"]
		if a.BudgetEpsilon == nil || *a.BudgetEpsilon != 2 || *a.BudgetDelta != 0.01 || math.Abs(*a.RemainingEpsilon-remaining) > 1e-12 {
			t.Fatalf("budget of a: %+v", a)
		}
	}
	finished := func(v View, job string) JobView {
		t.Helper()
		i := slices.IndexFunc(v.Finished, func(j JobView) bool { return j.Job == job })
		if i < 0 {
			t.Fatalf("%s not finished: %+v", job, v.Finished)
		}
		return v.Finished[i]
	}

	s.Step(priv("j1", 1, 3))
	s.Step(priv("j2", 0.5, 3)) // behind j1 and, like it, waiting for 3 sites
	s.Step(&protocol.Join{Site: "a", Records: 4, Dim: 1})
	s.Step(&protocol.Join{Site: "b", Records: 4, Dim: 1})
	v := s.View()
	if v.Kind != "service" || v.Running != nil || len(v.Queued) != 2 || v.Queued[0].Job != "j1" || v.Queued[1].Job != "j2" ||
		v.Queued[0].MinSites != 3 || v.Queued[0].Reason == "" || v.Queued[1].Epsilon != 0.5 || !slices.Equal(siteNames(v), []string{"a", "b"}) {
		t.Fatalf("queued view %+v", v)
	}
	if old := finished(v, "old"); old.PhasesDone != 2 || old.Epsilon != 0.25 || len(v.Finished) != 1 {
		t.Fatalf("reloaded job %+v", v.Finished)
	}
	if sp := spend(v); len(sp) != 1 || !near(sp["a"], 0.25, 1e-4, 1) {
		t.Fatalf("privacy of the reloaded ledger: %+v", v.Privacy)
	}
	budgetA(v, 1.75)

	// Once c joins, j1 (quorum 3) is announced; nothing is charged in its
	// accept round. c refuses it, which ends it: a refused job charges no
	// one.
	s.Step(&protocol.Join{Site: "c", Records: 4, Dim: 1})
	v = s.View()
	if r := v.Running; r == nil || r.Job != "j1" || r.Phase != 0 || r.Phases != 2 || r.MinSites != 3 || !slices.Equal(r.Sites, []string{"a", "b", "c"}) {
		t.Fatalf("j1 not announced to a, b, c: %+v", r)
	}
	if len(v.Queued) != 1 || v.Queued[0].Job != "j2" || v.Sites[2].Site != "c" || v.Sites[2].Job != "j1" {
		t.Fatalf("view %+v", v)
	}
	if sp := spend(v); len(sp) != 1 || !near(sp["a"], 0.25, 1e-4, 1) {
		t.Fatalf("privacy in j1's accept round: %+v", v.Privacy)
	}
	budgetA(v, 1.75)
	s.Step(&protocol.Accept{Job: "j1", Site: "a"})
	s.Step(&protocol.Refuse{Job: "j1", Site: "c", Reason: "budget"})
	v = s.View()
	if j1 := finished(v, "j1"); j1.Status != protocol.StatusRefused || !slices.Equal(j1.Refused, []string{"c"}) || j1.PhasesDone != 0 {
		t.Fatalf("j1 not refused: %+v", j1)
	}
	if sp := spend(v); len(sp) != 1 || !near(sp["a"], 0.25, 1e-4, 1) {
		t.Fatalf("privacy after j1 was refused: %+v", v.Privacy)
	}
	if r := v.Running; r == nil || r.Job != "j2" || r.Epsilon != 0.5 || len(v.Queued) != 0 || !slices.Equal(r.Sites, []string{"a", "b", "c"}) {
		t.Fatalf("j2 not running after j1 ended: %+v", v)
	}
	acceptAll(s)

	// j2 runs to the end and is scored.
	s.Step(upd("j2", "a", 1, 0.5))
	if r := s.View().Running; r.Updates != 1 || r.Phase != 1 || r.PhasesDone != 0 {
		t.Fatalf("after a's update: %+v", r)
	}
	for phase := 1; phase <= 2; phase++ {
		for _, site := range []string{"a", "b", "c"} {
			if phase > 1 || site != "a" {
				s.Step(upd("j2", site, phase, 0.5))
			}
		}
	}
	v = s.View()
	j2 := finished(v, "j2")
	if v.Running != nil || j2.Status != protocol.StatusCompleted || j2.AUC != 0.75 || j2.TestRecords != 10 || j2.PhasesDone != 2 || j2.Epsilon != 0.5 {
		t.Fatalf("j2 finished: %+v, running %+v", j2, v.Running)
	}
	if sp := spend(v); len(sp) != 3 || !near(sp["a"], 0.75, 1.1e-3, 2) || !near(sp["b"], 0.5, 1e-3, 1) || !near(sp["c"], 0.5, 1e-3, 1) || sp["b"].BudgetEpsilon != nil {
		t.Fatalf("privacy after j2: %+v", v.Privacy)
	}
	budgetA(v, 1.25)
	// Deep copy: a finished job's site list is not the status's.
	j2.Sites[0] = "zzz"
	if st := s.Status("j2"); st.Sites[0] != "a" {
		t.Fatalf("view shares the status's sites: %v", st.Sites)
	}

	// j3 (ε = 1.5) would exceed a's budget: a is left out, listed as
	// refused, not dropped; b and c run it.
	s.Step(priv("j3", 1.5, 2))
	v = s.View()
	if r := v.Running; r == nil || r.Job != "j3" || !slices.Equal(r.Refused, []string{"a"}) || len(r.Dropped) != 0 || !slices.Equal(r.Sites, []string{"b", "c"}) {
		t.Fatalf("j3: %+v", v.Running)
	}
	if v.Sites[0].Site != "a" || v.Sites[0].Job != "" || v.Sites[1].Job != "j3" {
		t.Fatalf("sites during j3: %+v", v.Sites)
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatal(err)
	}
}

// A ledger's figures replace the state machine's, site by site, with
// budgets; an unlimited budget stays unknown; Clone copies the pointers.
func TestViewApplyLedgerAndClone(t *testing.T) {
	v := View{Privacy: []SiteSpend{{Site: "a", Epsilon: 1, Jobs: 1}, {Site: "b", Epsilon: 2, Jobs: 2}}}
	v.ApplyLedger([]SiteSpend{
		SiteSpend{Site: "b", Epsilon: 2.5, Delta: 1e-3, Jobs: 3}.WithBudget(4, 1e-2),
		SiteSpend{Site: "c", Epsilon: 5}.WithBudget(3, math.Inf(1)),
	})
	if len(v.Privacy) != 3 || v.Privacy[0].Epsilon != 1 || v.Privacy[0].BudgetEpsilon != nil {
		t.Fatalf("site a: %+v", v.Privacy)
	}
	b, c := v.Privacy[1], v.Privacy[2]
	if b.Epsilon != 2.5 || *b.BudgetEpsilon != 4 || *b.RemainingEpsilon != 1.5 || *b.BudgetDelta != 1e-2 || math.Abs(*b.RemainingDelta-9e-3) > 1e-15 {
		t.Fatalf("site b: %+v", b)
	}
	if *c.BudgetEpsilon != 3 || *c.RemainingEpsilon != 0 || c.BudgetDelta != nil || c.RemainingDelta != nil {
		t.Fatalf("site c (overspent, unlimited δ): %+v", c)
	}
	v.Running = &JobView{Job: "j", Sites: []string{"a"}}
	w := v.Clone()
	*w.Privacy[1].BudgetEpsilon = 100
	w.Running.Sites[0] = "x"
	w.Privacy[0].Site = "x"
	if *v.Privacy[1].BudgetEpsilon != 4 || v.Running.Sites[0] != "a" || v.Privacy[0].Site != "a" {
		t.Fatalf("Clone shares memory: %+v", v)
	}
}

// A finished job's view says whether it is private, and why not.
func TestPrivacyStatus(t *testing.T) {
	done := func(algo string, secure ...bool) *protocol.JobStatus {
		st := &protocol.JobStatus{Job: "j", Status: protocol.StatusCompleted, Algo: algo}
		for i, s := range secure {
			st.Privacy = append(st.Privacy, protocol.SiteReport{Site: string(rune('a' + i)), Epsilon: 1, Secure: s})
		}
		return st
	}
	for _, c := range []struct {
		st   *protocol.JobStatus
		want string
	}{
		{done("fed-dp-lda", true, true), "private: yes ("},
		{done("fed-dp-lda", true, false), "NOT private: site(s) b reported not-private releases"},
		{done("fed-dp-lda"), "NOT private: no site reported"},
		{done("fed-avg"), "NOT private: fed-avg adds no noise"},
		{&protocol.JobStatus{Job: "j", Status: protocol.StatusFailed, Algo: "fed-dp-lda"}, ""},
	} {
		if got := PrivacyStatus(c.st); !strings.HasPrefix(got, c.want) || (c.want == "" && got != "") {
			t.Errorf("%s %v: %q, want %q…", c.st.Algo, c.st.Privacy, got, c.want)
		}
	}
}
