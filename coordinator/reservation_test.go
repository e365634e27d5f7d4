package coordinator

import (
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

func secSubmit(job string, timeout int) *protocol.JobSubmit {
	return &protocol.JobSubmit{Job: job, Client: "c", Algo: fedalgo.FedDPSSP, Epsilon: 0.5, Delta: 1e-3, MinSites: 4,
		Options: protocol.Options{{Name: fedalgo.OptSecAgg, Value: 1}, {Name: fedalgo.OptSecAggTimeout, Value: float64(timeout)}}}
}

// Issue 28, finding 1 (the coordinator's side): a job run with secure
// aggregation whose first round aborts before its unmasking step (here:
// no site sends its keys before the step's timeout) released nothing to
// the coordinator. Its reservations are returned — an entry "reserved,
// not released" per site — and Spent counts the job as nothing; the
// status says so. The reservation itself stays in the ledger (the journal
// is append-only).
func TestSecureAbortBeforeUnmaskReturnsReservation(t *testing.T) {
	sites := []string{"a", "b", "c", "d"}
	s := newService(t, ServiceConfig{SecAggRoster: testSecRoster(sites...)})
	for _, n := range sites {
		s.Step(&protocol.Join{Site: n, Records: 40, Dim: 3})
	}
	s.Step(secSubmit("j", 3))
	acceptAll(s)
	res := s.TakeCharges()
	if len(res) != 4 || res[0].Phase != 0 || res[0].Returned {
		t.Fatalf("reservations %+v", res)
	}
	if sp := Spent(s.Ledger()); len(sp) != 4 || sp[0].Epsilon != 0.5 {
		t.Fatalf("spent after the reservation: %+v", sp)
	}
	for i := 0; i < 10 && s.Status("j").Status == protocol.StatusRunning; i++ {
		s.Tick()
	}
	st := s.Status("j")
	if st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "reserved, not released") {
		t.Fatalf("status %s: %q", st.Status, st.Reason)
	}
	ret := s.TakeCharges()
	if len(ret) != 4 {
		t.Fatalf("returns %+v", ret)
	}
	for i, c := range ret {
		if !c.Returned || c.Site != sites[i] || c.Key != ReturnKey("j", sites[i]) || c.Epsilon != 0 || !strings.Contains(c.Note, "reserved, not released") {
			t.Fatalf("return %+v", c)
		}
	}
	for _, sp := range Spent(s.Ledger()) {
		if sp.Epsilon != 0 || sp.Delta != 0 || sp.Jobs != 0 {
			t.Fatalf("spent after the return: %+v", sp)
		}
	}
}

// A return never cancels a job with an aggregated phase: Spent ignores
// it (the rule is checked where the ledger is read, not only where the
// return is written).
func TestReturnIgnoredAfterARelease(t *testing.T) {
	cs := []Charge{
		{Key: ChargeKey("j", "a", 0), Site: "a", Job: "j", Epsilon: 1, Delta: 1e-3, Mechanism: fedalgo.MechanismDDG},
		{Key: ChargeKey("j", "a", 1), Site: "a", Job: "j", Phase: 1, Epsilon: 0.5, Delta: 1e-3, Mechanism: fedalgo.MechanismDDG},
		{Key: ReturnKey("j", "a"), Site: "a", Job: "j", Returned: true, Mechanism: fedalgo.MechanismDDG},
		{Key: ChargeKey("k", "a", 0), Site: "a", Job: "k", Epsilon: 2, Delta: 1e-3, Mechanism: fedalgo.MechanismDDG},
		{Key: ReturnKey("k", "a"), Site: "a", Job: "k", Returned: true, Mechanism: fedalgo.MechanismDDG},
	}
	sp := Spent(cs)
	if len(sp) != 1 || sp[0].Epsilon != 1 || sp[0].Jobs != 1 {
		t.Fatalf("spent %+v: want job j's reservation (1) only", sp)
	}
	if !slices.ContainsFunc(cs, func(c Charge) bool { return c.Returned }) {
		t.Fatal("no return")
	}
}
