package fedalgo

import (
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

func TestRegistry(t *testing.T) {
	want := []string{FedAvg, FedDPGDGrad, FedDPLDA, FedDPLocalSGD, FedDPPairSGD, FedDPSPAUC, FedDPSSP, FedDPSSPMean, FedDPEGD, FedOneShot}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		a, err := Lookup(name)
		if err != nil || a.Name() != name {
			t.Fatalf("Lookup(%s) = %v, %v", name, a, err)
		}
		if Private(name) != (name != FedAvg) {
			t.Errorf("Private(%s) = %v", name, Private(name))
		}
	}
	if _, err := Lookup("fed-nope"); err == nil || !strings.Contains(err.Error(), "fed-nope") {
		t.Errorf("unknown algorithm: %v", err)
	}
	if Private("fed-nope") {
		t.Error("an unknown algorithm is private")
	}
}

// Each algorithm's validator runs wherever the protocol validates a job:
// fed-oneshot names a local algorithm, no other algorithm takes one.
func TestLocalAlgoValidation(t *testing.T) {
	a := &protocol.JobAnnounce{Job: "j", Algo: FedOneShot, Task: "auc", Loss: "logistic", Params: 2, Phases: 1, Epsilon: 1, Delta: 1e-3, Sites: []string{"s"}}
	if err := a.Validate(); err == nil {
		t.Error("fed-oneshot without a local algorithm accepted")
	}
	a.LocalAlgo = "dpegd"
	if err := a.Validate(); err != nil {
		t.Error(err)
	}
	b, err := protocol.Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := protocol.Decode(b); err != nil || m.(*protocol.JobAnnounce).LocalAlgo != "dpegd" {
		t.Fatalf("round trip %v %v", m, err)
	}
	a.Algo = FedDPEGD
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "takes no local algorithm") {
		t.Errorf("fed-dpegd with a local algorithm: %v", err)
	}
	s := &protocol.JobSubmit{Job: "j", Client: "c", Algo: FedOneShot, MinSites: 1, Epsilon: 1}
	if err := s.Validate(); err == nil {
		t.Error("submit of fed-oneshot without a local algorithm accepted")
	}
	spec := &Spec{Algo: FedAvg, LocalAlgo: "dpegd", Task: "auc", FeatureRadius: 1}
	if _, err := Configure(spec); err == nil {
		t.Error("Configure accepted fed-avg with a local algorithm")
	}
}

// Configure fills each algorithm's documented defaults and rejects the
// parameters that do not apply to it.
func TestConfigureDefaultsAndRejections(t *testing.T) {
	s := &Spec{Algo: FedAvg, Task: "auc", FeatureRadius: 1}
	if _, err := Configure(s); err != nil {
		t.Fatal(err)
	}
	if s.Loss != "hinge" || s.Rounds != 10 || s.LocalPasses != 1 || s.Eta != 10 || s.ParamRadius != 100 {
		t.Errorf("fed-avg defaults: %+v", s)
	}
	for _, bad := range []Spec{
		{Algo: FedAvg, Epsilon: 1},
		{Algo: FedDPLocalSGD, Epsilon: 1, Rounds: 3},
		{Algo: FedDPEGD, Epsilon: 1, LocalPasses: 2},
		{Algo: FedDPGDGrad, Epsilon: 1, LocalPasses: 2},
		{Algo: FedDPGDGrad, Epsilon: 1, Task: "metric"},
		{Algo: FedDPGDGrad, Epsilon: 1, Loss: "hinge"},
		{Algo: FedDPLocalSGD},
		{Algo: FedDPEGD, Epsilon: 1, Delta: 1},
		{Algo: FedOneShot, Epsilon: 1},
		{Algo: FedOneShot, Epsilon: 1, LocalAlgo: "sgd-prev"},
		{Algo: FedOneShot, Epsilon: 1, LocalAlgo: "dpgdsc"},
	} {
		if bad.Task == "" {
			bad.Task = "auc"
		}
		bad.FeatureRadius = 1
		if _, err := Configure(&bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

// Plans: phases from the smallest site, δ = 1/(10·n_max) when not given, and
// fed-dp-gd-grad's per-site sensitivity 4G/n_s.
func TestPlans(t *testing.T) {
	sites := []SiteInfo{{"a", 100}, {"b", 300}}
	plan := func(s Spec) *Plan {
		t.Helper()
		s.Task, s.FeatureRadius = "auc", 1
		a, err := Configure(&s)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Plan(&s, sites, 8)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := plan(Spec{Algo: FedDPLocalSGD, Epsilon: 1}); p.Phases != 7 || p.Delta != 1.0/3000 || !(p.Eta > 0) {
		t.Errorf("fed-dp-local-sgd plan %+v (want K = ⌈log₂ 100⌉ = 7, δ = 1/(10·300))", p)
	}
	if p := plan(Spec{Algo: FedDPEGD, Epsilon: 1, Delta: 1e-4}); p.Phases != 6 || p.Delta != 1e-4 {
		t.Errorf("fed-dpegd plan %+v (want k = ⌊log₂ 100⌋ = 6)", p)
	}
	p := plan(Spec{Algo: FedDPGDGrad, Epsilon: 1, Rounds: 4})
	if p.Phases != 4 || !(p.Sensitivity["a"] == 3*p.Sensitivity["b"]) || !(p.Sensitivity["a"] > 0) {
		t.Errorf("fed-dp-gd-grad plan %+v (sensitivity ∝ 1/n)", p)
	}
	if p := plan(Spec{Algo: FedAvg, Rounds: 3}); p.Phases != 3 || p.Epsilon != 0 || p.Delta != 0 {
		t.Errorf("fed-avg plan %+v", p)
	}
	a, _ := Lookup(FedDPEGD)
	s := Spec{Algo: FedDPEGD, Task: "auc", Epsilon: 1, Loss: "logistic", ParamRadius: 1, FeatureRadius: 1}
	if _, err := a.Plan(&s, []SiteInfo{{"a", 1}}, 8); err == nil {
		t.Error("fed-dpegd planned a site of one record")
	}
}

// TestEveryAlgorithmDocumented: every algorithm registered by this package
// carries its Doc (what `pairfed algos` prints), with a title, a paper, a
// reference naming a file of this package and its assumptions.
func TestEveryAlgorithmDocumented(t *testing.T) {
	for _, name := range Names() {
		d, ok := DocOf(name)
		if !ok {
			t.Errorf("%s has no Doc (implement Documented beside its code)", name)
			continue
		}
		if d.Title == "" || d.Paper == "" || d.Assumptions == "" || !strings.Contains(d.Ref, "fedalgo/") {
			t.Errorf("%s: Doc %+v lacks a title, paper or assumptions, or a reference to its fedalgo/ file", name, d)
		}
	}
	if _, ok := DocOf("no-such-algorithm"); ok {
		t.Error("DocOf of an unregistered name reported a Doc")
	}
}
