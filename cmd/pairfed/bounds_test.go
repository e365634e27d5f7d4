package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `pairfed train --feature-bounds` with the shipped diabetes schema: a
// private algorithm with secure noise reports private: true, the schema's
// map costs no ε, and the JSON carries the preprocessing statement.
func TestTrainFeatureBoundsPrivate(t *testing.T) {
	out, err := runCLI(t, "train", "--data", "../../datasets/diabetes", "--algo", "dp-gd-grad", "--loss", "logistic",
		"--epsilon", "1", "--steps", "3", "--feature-bounds", "../../schemas/diabetes.json", "--json", "--no-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var rep struct {
		Private bool `json:"private"`
		Privacy struct {
			Epsilon       float64 `json:"epsilon"`
			Preprocessing struct {
				Scale        string  `json:"scale"`
				Private      bool    `json:"private"`
				TotalEpsilon float64 `json:"total_epsilon"`
			} `json:"preprocessing"`
		} `json:"privacy"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p := rep.Privacy.Preprocessing
	if !rep.Private || !p.Private || p.Scale != "bounds" || p.TotalEpsilon != 1 || rep.Privacy.Epsilon != 1 {
		t.Fatalf("report %+v", rep)
	}
}

// Without a schema a private run estimates the ranges under DP and says
// what that cost; with --impute mean it is private: false with the reason.
func TestTrainPrivateDefaultsAndReasons(t *testing.T) {
	out, err := runCLI(t, "train", "--data", "../../datasets/diabetes", "--algo", "dp-gd-grad", "--loss", "logistic",
		"--epsilon", "1", "--steps", "3", "--no-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"feature ranges estimated under DP", "+ feature ranges: gaussian noise, (ε, δ) = (0.1,", "whole run (1,"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	csv := filepath.Join(dir, "m.csv")
	var b strings.Builder
	for i := 0; i < 40; i++ {
		v := "?"
		if i%5 != 0 {
			v = "1.5"
		}
		lab := []string{"a", "b"}[i%2]
		b.WriteString(strings.Join([]string{v, string(rune('0' + i%7)), lab}, ",") + "\n")
	}
	os.WriteFile(csv, []byte(b.String()), 0o644)
	out, err = runCLI(t, "train", "--data", csv, "--algo", "dp-gd-grad", "--loss", "logistic", "--epsilon", "1", "--steps", "3",
		"--impute", "mean", "--positive-classes", "a", "--scale", "none", "--no-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "NOT private end to end: --impute mean") || !strings.Contains(out, "false") {
		t.Errorf("--impute mean: output:\n%s", out)
	}
	// A public constant keeps the run private.
	out, err = runCLI(t, "train", "--data", csv, "--algo", "dp-gd-grad", "--loss", "logistic", "--epsilon", "1", "--steps", "3",
		"--impute", "constant:0", "--positive-classes", "a", "--scale", "none", "--no-progress", "--json")
	if err != nil || !topPrivate(t, out) {
		t.Errorf("--impute constant:0: %v\n%s", err, out)
	}
}

// Bad schemas and misuse: clear errors, usage errors exit with status 2.
func TestFeatureBoundsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	siteA := "testdata/bad/site-a.libsvm"
	cases := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--feature-bounds", write("u.json", `{"features": [{"lo": 0, "hi": 1, "max": 3}]}`)}, false, `unknown field "max"`},
		{[]string{"--feature-bounds", write("o.json", `{"features": [{"lo": 2, "hi": 1}]}`)}, false, "lo = 2 must be < hi = 1"},
		{[]string{"--feature-bounds", write("d.json", `{"features": [{"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}]}`)}, false, "index 3 exceeds"},
		{[]string{"--feature-bounds", filepath.Join(dir, "absent.json")}, false, "no such file"},
		{[]string{"--feature-bounds", "../../schemas/diabetes.json", "--scale", "minmax"}, true, "drop one"},
		{[]string{"--feature-bounds", write("p.json", `{"positive_class": "1", "features": [{"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}]}`), "--positive-classes", "-1"}, true, "disagrees with positive_class"},
		{[]string{"--impute", "schema"}, true, "--feature-bounds"},
		{[]string{"--range-share", "0.1"}, true, "--scale private"},
	}
	for _, c := range cases {
		args := append([]string{"train", "--data", siteA, "--no-progress"}, c.args...)
		out, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q\n%s", c.args, err, c.want, out)
			continue
		}
		if _, isUsage := err.(usageError); isUsage != c.usage {
			t.Errorf("%v: usage error %v, want %v (%v)", c.args, isUsage, c.usage, err)
		}
	}
}

// simulate and worker take the same schema; a private federated job on it
// is private end to end.
func TestSimulateFeatureBounds(t *testing.T) {
	out, err := runCLI(t, "simulate", "--data", "../../datasets/diabetes", "--sites", "2", "--algo", "fed-dp-gd-grad", "--epsilon", "1",
		"--rounds", "2", "--transport", "mem", "--feature-bounds", "../../schemas/diabetes.json", "--json", "--no-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !topPrivate(t, out) || !strings.Contains(out, "feature bounds ../../schemas/diabetes.json") {
		t.Errorf("simulate with a schema:\n%s", out)
	}
	out, err = runCLI(t, "simulate", "--data", "../../datasets/diabetes", "--sites", "2", "--algo", "fed-dp-gd-grad", "--epsilon", "1",
		"--rounds", "2", "--transport", "mem", "--scale", "minmax", "--json", "--no-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if topPrivate(t, out) || !strings.Contains(out, "NOT private end to end: --scale minmax") {
		t.Errorf("simulate with --scale minmax:\n%s", out)
	}
}

// topPrivate returns the top-level "private" of a JSON report.
func topPrivate(t *testing.T, out string) bool {
	t.Helper()
	var r struct {
		Private bool `json:"private"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r.Private
}
