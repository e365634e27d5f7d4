package protocol

import "testing"

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
