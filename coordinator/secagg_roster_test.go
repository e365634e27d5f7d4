package coordinator

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// testSecRoster is a roster of secure aggregation signing keys for sites
// (seeded keys; the coordinator only verifies with them).
func testSecRoster(sites ...string) map[string]ed25519.PublicKey {
	r := map[string]ed25519.PublicKey{}
	for i, s := range sites {
		r[s] = ed25519.NewKeyFromSeed(append(make([]byte, 31), byte(i+1))).Public().(ed25519.PublicKey)
	}
	return r
}

// A job with secure aggregation is refused before it is announced by a
// coordinator without the roster of the participants' signing keys (or
// whose roster misses one): no site is asked to accept, nothing charged.
func TestSecAggNeedsRoster(t *testing.T) {
	for name, roster := range map[string]map[string]ed25519.PublicKey{
		"no roster":      nil,
		"d not in it":    testSecRoster("a", "b", "c"),
		"full (control)": testSecRoster("a", "b", "c", "d"),
	} {
		s := newService(t, ServiceConfig{SecAggRoster: roster})
		for _, site := range []string{"a", "b", "c", "d"} {
			s.Step(&protocol.Join{Site: site, Records: 40, Dim: 3})
		}
		outs := s.Step(&protocol.JobSubmit{Job: "j", Client: "c", Algo: fedalgo.FedDPSSP, MinSites: 4, Seed: 7, Epsilon: 1, Delta: 1e-3,
			Options: protocol.Options{{Name: fedalgo.OptSecAgg, Value: 1}}})
		announced := false
		for _, o := range outs {
			if _, ok := o.Msg.(*protocol.JobAnnounce); ok {
				announced = true
			}
		}
		if name == "full (control)" {
			if !announced || s.Running() != "j" {
				t.Fatalf("%s: not announced: %+v", name, s.Status("j"))
			}
			continue
		}
		if st := s.Status("j"); announced || st == nil || st.Status != protocol.StatusFailed || !strings.Contains(st.Reason, "roster") {
			t.Errorf("%s: announced %v, status %+v", name, announced, st)
		}
	}
}
