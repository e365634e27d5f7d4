package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestSimulateJSONContract(t *testing.T) {
	for _, args := range [][]string{
		{"--algo", "fed-avg", "--runs", "2"},
		{"--algo", "fed-dp-local-sgd", "--epsilon", "1", "--partition", "label-skew:1", "--noise-seed", "3", "--feature-bounds", "../../schemas/diabetes.json"},
	} {
		out, err := runCLI(t, append([]string{"simulate", "--data", "../../datasets/diabetes", "--sites", "3", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, out)
		}
		for _, k := range []string{"algorithm", "auc", "sites", "phases", "seconds"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%v: missing %q", args, k)
			}
		}
		auc := m["auc"].(map[string]any)
		if _, ok := auc["std"]; !ok {
			t.Error("auc.std missing")
		}
		if args[1] == "fed-avg" {
			if mean := auc["mean"].(float64); mean < 0.75 {
				t.Errorf("fed-avg auc.mean = %v", mean)
			}
			continue
		}
		priv, ok := m["privacy"].([]any)
		if !ok || len(priv) != 3 {
			t.Fatalf("privacy per site: %v", m["privacy"])
		}
		p := priv[0].(map[string]any)
		for _, k := range []string{"site", "epsilon", "delta", "sigmas", "private"} {
			if _, ok := p[k]; !ok {
				t.Errorf("privacy lacks %q", k)
			}
		}
		if m["private"] != false {
			t.Error("a seeded run reported private")
		}
	}
	if _, err := runCLI(t, "simulate", "--data", "../../datasets/diabetes", "--partition", "skewed"); err == nil || !strings.Contains(err.Error(), "partition") {
		t.Errorf("bad partition: %v", err)
	}
}

// A private federated job of K ≥ 2 sites whose algorithm could sum its
// releases under secure aggregation, run without it, says what that costs
// (√K the noise) and what the alternative assumes; the note is absent
// with --secure-aggregation, for one site, for a non-private algorithm
// and for fed-dp-pair-sgd's metric form (no sum release), which refuses
// --secure-aggregation up front, naming the task.
func TestSimulateSecAggHint(t *testing.T) {
	base := []string{"simulate", "--data", "../../datasets/diabetes", "--feature-bounds", "../../schemas/diabetes.json", "--runs", "1", "--transport", "mem"}
	const hint = "--secure-aggregation would sum them under masks"
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--sites", "4", "--epsilon", "1"}, true},
		{[]string{"--sites", "4", "--epsilon", "1", "--secure-aggregation"}, false},
		{[]string{"--sites", "1", "--epsilon", "1"}, false},
		{[]string{"--sites", "4", "--algo", "fed-avg"}, false},
		{[]string{"--sites", "4", "--epsilon", "1", "--task", "metric", "--algo", "fed-dp-pair-sgd"}, false},
	} {
		out, err := runCLI(t, append(slices.Clone(base), c.args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		if got := strings.Contains(out, hint); got != c.want {
			t.Errorf("%v: the secure aggregation note printed %v, want %v", c.args, got, c.want)
		}
		if c.want && !strings.Contains(out, "√4 = 2×") {
			t.Errorf("%v: the note does not state the √K factor:\n%s", c.args, out)
		}
	}
	_, err := runCLI(t, append(slices.Clone(base), "--sites", "4", "--epsilon", "1", "--task", "metric", "--algo", "fed-dp-pair-sgd", "--secure-aggregation")...)
	if err == nil || !strings.Contains(err.Error(), "AUC task only") {
		t.Errorf("metric fed-dp-pair-sgd with --secure-aggregation: %v, want a refusal naming the task", err)
	}
}
