package protocol

import "testing"

func TestLocalAlgoValidation(t *testing.T) {
	a := &JobAnnounce{Job: "j", Algo: AlgoFedOneShot, Task: "auc", Loss: "logistic", Params: 2, Phases: 1, Epsilon: 1, Delta: 1e-3, Sites: []string{"s"}}
	if err := a.Validate(); err == nil {
		t.Error("fed-oneshot without a local algorithm accepted")
	}
	a.LocalAlgo = "dpegd"
	if err := a.Validate(); err != nil {
		t.Error(err)
	}
	b, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := Decode(b); err != nil || m.(*JobAnnounce).LocalAlgo != "dpegd" {
		t.Fatalf("round trip %v %v", m, err)
	}
	a.Algo = AlgoFedDPEGD
	if err := a.Validate(); err == nil {
		t.Error("fed-dpegd with a local algorithm accepted")
	}
	s := &JobSubmit{Job: "j", Client: "c", Algo: AlgoFedOneShot, MinSites: 1, Epsilon: 1}
	if err := s.Validate(); err == nil {
		t.Error("submit of fed-oneshot without a local algorithm accepted")
	}
	u := &SiteUpdate{Job: "j", Phase: 1, Site: "s", Model: []float64{1}, Weight: 1, Sigmas: []float64{1, -1}}
	if err := u.Validate(); err == nil {
		t.Error("negative σ accepted")
	}
	if !PrivateFedAlgo(AlgoFedDPEGD) || !PrivateFedAlgo(AlgoFedOneShot) || PrivateFedAlgo(AlgoFedAvg) || !PrivateFedAlgo(AlgoFedDPGDGrad) || len(FedAlgos) != 5 {
		t.Error("algorithm list")
	}
}
