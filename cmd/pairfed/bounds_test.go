package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/internal/publicdata"
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
	for _, want := range []string{"feature ranges estimated under DP", "+ feature ranges: gaussian noise, μ = ", "whole run μ = ", "exact Gaussian-DP composition"} {
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
		{[]string{"--feature-bounds", write("o.json", `{"features": [{"lo": 2, "hi": 1}]}`)}, false, "lo = 2 is above hi = 1: swap them"},
		{[]string{"--feature-bounds", write("d.json", `{"features": [{"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}]}`)}, false, "feature index 3, but feature bounds"},
		{[]string{"--feature-bounds", filepath.Join(dir, "absent.json")}, false, "no such file"},
		{[]string{"--feature-bounds", "../../schemas/diabetes.json", "--scale", "minmax"}, true, "drop one"},
		{[]string{"--feature-bounds", write("p.json", `{"positive_class": "1", "features": [{"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}]}`), "--positive-classes", "-1"}, true, "disagrees with positive_class"},
		{[]string{"--impute", "schema"}, true, "--feature-bounds"},
		{[]string{"--range-share", "0.1"}, true, "--scale private"},
		{[]string{"--feature-bounds", write("r.json", `{"features": [{"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}]}`), "--epsilon", "1", "--refine-bounds", "maybe"}, true, `--refine-bounds "maybe": want auto`},
		{[]string{"--refine-bounds", "on", "--epsilon", "1", "--scale", "private"}, true, "--refine-bounds on refines a --feature-bounds schema's ranges"},
		{[]string{"--feature-bounds", write("r2.json", `{"features": [{"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}, {"lo": 0, "hi": 1}]}`), "--refine-bounds", "on", "--algo", "sgd-prev"}, true, "--algo sgd-prev is not one"},
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

// Separate processes: a coordinator scoring on a test file and two workers
// that share one public schema run a private job, which every site reports
// private; a site with mean imputation logs why it is not.
func TestWorkersShareFeatureBounds(t *testing.T) {
	fed := newLinearFed(t, 80, 60)
	root, schema, test, site, logs := fed.root, fed.schema, fed.test, fed.site, fed.logs
	coord := fed.start("coordinator", "--listen", "127.0.0.1:0", "--federation", "fb", "--state", filepath.Join(root, "coord"),
		"--test", test, "--feature-bounds", schema, "--min-sites", "2", "--tick", "10ms")
	url := coordURL(t, coord)
	for _, s := range []string{"a", "b"} {
		fed.start("worker", "--nats", url, "--federation", "fb", "--site", s, "--data", site[s],
			"--state", filepath.Join(root, "site-"+s), "--feature-bounds", schema, "--tick", "10ms", "--heartbeat", "50ms")
	}
	waitFor(t, 15*time.Second, "sites a and b to join", func() bool {
		l := logs.String()
		return strings.Contains(l, "site a joined the federation") && strings.Contains(l, "site b joined the federation")
	})
	p, code := runPairfed(t, logs, 60*time.Second, "job", "submit", "--nats", url, "--federation", "fb", "--algo", "fed-dp-gd-grad",
		"--epsilon", "1", "--delta", "0.001", "--min-sites", "2", "--wait", "--json")
	if code != 0 || !topPrivate(t, p.stdout.String()) {
		t.Fatalf("job: exit %d, %v\n%s", code, p.err, p.stdout.String())
	}
	if strings.Contains(logs.String(), "reported NOT private") {
		t.Errorf("a site with the schema says it is not private")
	}
	// A third site imputing means says so at start.
	csv := filepath.Join(root, "c.csv")
	os.WriteFile(csv, []byte("1,?,2,0,1\n0,1,2,1,-1\n2,2,?,1,1\n1,0,1,1,-1\n"), 0o644)
	fed.start("worker", "--nats", url, "--federation", "fb", "--site", "c", "--data", csv,
		"--state", filepath.Join(root, "site-c"), "--feature-bounds", schema, "--impute", "mean", "--tick", "10ms", "--heartbeat", "50ms")
	waitFor(t, 15*time.Second, "site c's warning", func() bool {
		return strings.Contains(logs.String(), "worker c: this site's private updates will be reported NOT private: --impute mean")
	})
}

// A schema with unknown features: train estimates their ranges under DP
// and says so; simulate refuses it (no DP range estimate at the sites yet).
func TestUnknownFeaturesSchema(t *testing.T) {
	wdbc := publicdata.File(t, "wdbc.data")
	out, err := runCLI(t, "train", "--data", wdbc, "--feature-bounds", "../../schemas/wdbc.json",
		"--epsilon", "1", "--no-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"24 unknown features", "exact Gaussian-DP composition", "private"} {
		if !strings.Contains(out, want) {
			t.Errorf("train output lacks %q:\n%s", want, out)
		}
	}
	out, err = runCLI(t, "simulate", "--data", wdbc, "--feature-bounds", "../../schemas/wdbc.json",
		"--sites", "2", "--epsilon", "1", "--no-progress")
	if err == nil || !strings.Contains(err.Error()+out, "unknown") {
		t.Errorf("simulate with unknown features: %v\n%s", err, out)
	}
}
