package protocol

import (
	"bytes"
	"math"
	"testing"
)

func TestSigmasValidation(t *testing.T) {
	u := &SiteUpdate{Job: "j", Phase: 1, Site: "s", Model: []float64{1}, Weight: 1, Sigmas: []float64{1, -1}}
	if err := u.Validate(); err == nil {
		t.Error("negative σ accepted")
	}
}

// An algorithm's validator runs on every announcement and submission
// naming it (Encode and Decode included); other names pass.
func TestAlgorithmValidator(t *testing.T) {
	RegisterAlgorithm("test-needs-local", func(p AlgoParams) error {
		if p.LocalAlgo == "" {
			return errTestLocal
		}
		return nil
	})
	a := &JobAnnounce{Job: "j", Algo: "test-needs-local", Task: "auc", Loss: "logistic", Params: 2, Phases: 1, Epsilon: 1, Delta: 1e-3, Sites: []string{"s"}}
	if err := a.Validate(); err == nil {
		t.Error("announcement without the local algorithm its validator asks for accepted")
	}
	a.LocalAlgo = "dpegd"
	b, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := Decode(b); err != nil || m.(*JobAnnounce).LocalAlgo != "dpegd" {
		t.Fatalf("round trip %v %v", m, err)
	}
	a.Algo, a.LocalAlgo = "unregistered", "a.b"
	if err := a.Validate(); err == nil {
		t.Error("malformed local algorithm name accepted")
	}
	a.LocalAlgo = ""
	if err := a.Validate(); err != nil {
		t.Errorf("an algorithm without a validator: %v", err)
	}
	s := &JobSubmit{Job: "j", Client: "c", Algo: "test-needs-local", MinSites: 1, Epsilon: 1}
	if err := s.Validate(); err == nil {
		t.Error("submission without the local algorithm its validator asks for accepted")
	}
}

var errTestLocal = errorString("needs a local algorithm")

type errorString string

func (e errorString) Error() string { return string(e) }

// Options travel generically: names are subject tokens, values finite,
// at most MaxOptions, and the same options always encode to the same
// bytes (sorted keys).
func TestAlgorithmOptions(t *testing.T) {
	base := func(opts map[string]float64) *JobAnnounce {
		return &JobAnnounce{Job: "j", Algo: "x", Task: "auc", Loss: "hinge", Params: 1, Phases: 1, Sites: []string{"s"}, Options: OptionsOf(opts)}
	}
	many := map[string]float64{}
	for i := range MaxOptions + 1 {
		many[string(rune('a'+i%26))+string(rune('a'+i/26))] = 1
	}
	for _, bad := range []map[string]float64{{"a.b": 1}, {"": 1}, {"a": math.NaN()}, {"a": math.Inf(1)}, many} {
		if err := base(bad).Validate(); err == nil {
			t.Errorf("options %v accepted", bad)
		}
	}
	opts := map[string]float64{}
	for i := range 20 {
		opts[string(rune('a'+i))] = float64(i)
	}
	unsorted := base(nil)
	unsorted.Options = Options{{"b", 1}, {"a", 2}}
	if err := unsorted.Validate(); err == nil {
		t.Error("unsorted options accepted")
	}
	unsorted.Options = Options{{"a", 1}, {"a", 2}}
	if err := unsorted.Validate(); err == nil {
		t.Error("repeated option accepted")
	}
	first, err := Encode(base(opts))
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		b, err := Encode(base(opts))
		if err != nil || !bytes.Equal(b, first) {
			t.Fatal("the same options encoded to different bytes")
		}
	}
	m, err := Decode(first)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.(*JobAnnounce).Options.Get("t"); len(m.(*JobAnnounce).Options) != 20 || !ok || v != 19 {
		t.Fatalf("round trip: %+v", m)
	}
}
