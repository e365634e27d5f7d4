package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestTrainJSONSameShapeAcrossProtocols (issue 16 item 3): `train --json`
// prints the Report's shape for every protocol: the same keys with the same
// JSON types, apart from the protocol-specific optional blocks; and both
// name their times (item 4): wall_seconds ≥ train_seconds > 0.
func TestTrainJSONSameShapeAcrossProtocols(t *testing.T) {
	optional := map[string]bool{"paper": true, "privacy": true, "warnings": true, "notes": true, "knn3_accuracy": true}
	shape := func(args ...string) map[string]string {
		t.Helper()
		out, err := runCLI(t, append([]string{"train", "--data", "../../datasets/diabetes", "--json", "--no-progress"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &m); err != nil {
			t.Fatalf("%v: not one JSON object: %v\n%s", args, err, out)
		}
		// Item 4: wall time beside algorithm time; the fits are part of the job.
		if tr, wall := m["train_seconds"].(float64), m["wall_seconds"].(float64); !(tr > 0 && tr <= wall) {
			t.Errorf("%v: train_seconds %v, wall_seconds %v: want 0 < train ≤ wall", args, tr, wall)
		}
		s := map[string]string{}
		for k, v := range m {
			s[k] = fmt.Sprintf("%T", v)
			if sub, ok := v.(map[string]any); ok && k == "auc" {
				for kk, vv := range sub {
					s[k+"."+kk] = fmt.Sprintf("%T", vv)
				}
			}
		}
		for _, k := range []string{"auc", "auc.mean", "auc.values", "n_train", "n_test", "d", "wall_seconds", "train_seconds", "eta"} {
			if _, ok := s[k]; !ok {
				t.Errorf("%v: missing %q", args, k)
			}
		}
		return s
	}
	val := shape("--eta", "10", "--param-radius", "100")
	pap := shape("--protocol", "paper", "--passes", "1")
	for _, pair := range [][2]map[string]string{{val, pap}, {pap, val}} {
		for k, typ := range pair[0] {
			if optional[strings.SplitN(k, ".", 2)[0]] {
				continue
			}
			if other, ok := pair[1][k]; !ok || other != typ {
				t.Errorf("key %q: %s in one protocol, %q in the other", k, typ, other)
			}
		}
	}
}

// TestPaperRefusesFlagsItIgnores: --protocol paper names the flags it
// cannot honour instead of ignoring them.
func TestPaperRefusesFlagsItIgnores(t *testing.T) {
	_, err := runCLI(t, "train", "--data", "../../datasets/diabetes", "--protocol", "paper", "--test", "../../datasets/diabetes", "--runs", "3")
	if err == nil || exitCode(err) != 2 {
		t.Fatalf("err %v (exit %d), want a usage error", err, exitCode(err))
	}
	for _, want := range []string{"--test", "--runs", "--protocol validation"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
