package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	// A syncBuffer: the command installs its logger as slog's default,
	// which in-process workers of the same test keep writing to.
	var out syncBuffer
	app.Writer = &out
	app.ErrWriter = &out
	err := app.RunContext(context.Background(), append([]string{"pairfed"}, args...))
	return out.String(), err
}

func TestTrainJSONContract(t *testing.T) {
	out, err := runCLI(t, "train", "--data", "../../datasets/diabetes", "--runs", "2", "--eta", "10", "--param-radius", "100", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"algorithm", "dataset", "task", "loss", "n_train", "n_test", "d", "runs", "auc", "objective", "seconds", "pair_steps", "pair_steps_per_second", "private"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	auc := m["auc"].(map[string]any)
	if mean := auc["mean"].(float64); mean < 0.75 || mean > 0.9 {
		t.Errorf("auc.mean = %v", mean)
	}
	if m["private"] != false || m["d"].(float64) != 8 || m["n_train"].(float64)+m["n_test"].(float64) != 768 {
		t.Errorf("unexpected fields: %v", m)
	}
}

func TestTrainHumanTableAndMetric(t *testing.T) {
	out, err := runCLI(t, "train", "--data", "../../datasets/messidor_features.arff", "--task", "metric", "--loss", "logistic",
		"--eta", "1", "--param-radius", "1", "--train-size", "64")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "KNN-3 acc") || !strings.Contains(out, "sgd-prev") {
		t.Fatalf("unexpected output:\n%s", out)
	}
}

func TestTrainBadInputs(t *testing.T) {
	dir := t.TempDir()
	nan := filepath.Join(dir, "nan.libsvm")
	os.WriteFile(nan, []byte("+1 1:0.5 2:nan\n-1 1:0.1\n"), 0o644)
	cases := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"train", "--data", filepath.Join(dir, "missing")}, "no such file", 1},
		{[]string{"train", "--data", nan}, "nan.libsvm:1:", 1},
		{[]string{"train", "--data", "../../datasets/diabetes", "--algo", "nope"}, "unknown algorithm", 2},
		{[]string{"train", "--data", "../../datasets/diabetes", "--algo", "spauc"}, "square", 2},
		{[]string{"train", "--data", "../../datasets/diabetes", "--algo", "giga"}, "--lambda", 2},
		{[]string{"train", "--data", "../../datasets/diabetes", "--eta", "-1"}, "eta", 2},
		{[]string{"train", "--data", "../../datasets/diabetes", "--protocol", "magic"}, "--protocol", 2},
	}
	for _, c := range cases {
		_, err := runCLI(t, c.args...)
		if err == nil {
			t.Errorf("%v: accepted", c.args)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %q does not mention %q", c.args, err, c.want)
		}
		if got := exitCode(err); got != c.code {
			t.Errorf("%v: exit code %d, want %d", c.args, got, c.code)
		}
	}
}

func TestAlgosListsRegistry(t *testing.T) {
	out, err := runCLI(t, "algos")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sgd-prev", "ogd-prev", "sgd-pair", "sgd-all-prev", "olp", "oam-gra", "spauc", "giga", "pgd"} {
		if !strings.Contains(out, name) {
			t.Errorf("algos output lacks %s", name)
		}
	}
}
