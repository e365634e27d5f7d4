package main

import (
	"encoding/json"
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
