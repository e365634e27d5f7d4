package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// train --epsilon without --algo runs the algorithm of the default rule and
// says which and why; without --epsilon the default stays sgd-prev.
func TestTrainDefaultPrivateAlgorithm(t *testing.T) {
	out, err := runCLI(t, "train", "--data", "../../datasets/diabetes", "--feature-bounds", "../../schemas/diabetes.json", "--epsilon", "1", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var m struct {
		Algorithm   string
		Private     bool
		Recommended *struct{ Algorithm, Loss, Reason string }
		Notes       []string
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	// diabetes: n = 614 training records, d = 8, δ = 1/(10·614): t = μn/√d ≈ 70 ≥ 6.2.
	if m.Recommended == nil || m.Recommended.Algorithm != "dp-lda" || m.Algorithm != "dp-lda" {
		t.Fatalf("algorithm %q, recommended %+v: want dp-lda", m.Algorithm, m.Recommended)
	}
	if !strings.Contains(m.Recommended.Reason, "t = μn/√d") || len(m.Notes) == 0 || !strings.Contains(m.Notes[0], "default rule") {
		t.Errorf("reason %q, notes %q: the choice is not explained", m.Recommended.Reason, m.Notes)
	}
	if !m.Private {
		t.Error("the default private run with the public schema is not reported private")
	}
	// n = 30: t = μn/√d ≈ 4.8 < 6.2 (μ ≈ 0.45 at ε = 1, δ = 1/300): the
	// centre would be off by 4R/t ≈ 0.84R.
	out, err = runCLI(t, "train", "--data", "../../datasets/diabetes", "--train-size", "30", "--epsilon", "1")
	if err != nil || !strings.Contains(out, "algorithm dp-ssp-mean (square loss) chosen by the default rule") {
		t.Errorf("n = 30: want dp-ssp-mean with its note: %v\n%s", err, out)
	}
	out, err = runCLI(t, "train", "--data", "../../datasets/diabetes", "--json", "--eta", "1", "--param-radius", "10")
	if err != nil || !strings.Contains(out, `"algorithm": "sgd-prev"`) || strings.Contains(out, "recommended") {
		t.Errorf("without --epsilon the default must stay sgd-prev: %v\n%s", err, out)
	}
}

func TestSimulateDefaultPrivateAlgorithm(t *testing.T) {
	out, err := runCLI(t, "simulate", "--data", "../../datasets/diabetes", "--sites", "2", "--epsilon", "1", "--transport", "mem", "--noise-seed", "1",
		"--feature-bounds", "../../schemas/diabetes.json")
	if err != nil || !strings.Contains(out, "chosen by the default rule") {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err = runCLI(t, "simulate", "--data", "../../datasets/diabetes", "--sites", "2", "--transport", "mem", "--json")
	if err != nil || !strings.Contains(out, `"algorithm": "fed-avg"`) {
		t.Errorf("without --epsilon the default must stay fed-avg: %v\n%s", err, out)
	}
}
