package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// A private simulation without a schema is refused, naming the fix; the
// explicit opt-ins run and say what they are: --scale none with a warning
// note (private), --scale minmax as "NOT private: <reason>"; with the
// schema the text output says "private: yes".
func TestPrivateSimulateNeedsSchema(t *testing.T) {
	base := []string{"simulate", "--data", "../../datasets/diabetes", "--sites", "2", "--epsilon", "1", "--transport", "mem", "--no-progress"}
	out, err := runCLI(t, base...)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "give --feature-bounds SCHEMA.json") || !strings.Contains(err.Error(), "schemas/README.md") {
		t.Fatalf("private simulate without a schema: %v (exit %d)\n%s", err, exitCode(err), out)
	}
	out, err = runCLI(t, append(base, "--scale", "none", "--dim", "8", "--json")...)
	if err != nil || !topPrivate(t, out) || !strings.Contains(out, "warning: --scale none (explicit opt-in)") {
		t.Errorf("--scale none: %v\n%s", err, out)
	}
	out, err = runCLI(t, append(base, "--scale", "minmax")...)
	if err != nil || !strings.Contains(out, "NOT private: --scale minmax is fitted on each site's own records") {
		t.Errorf("--scale minmax: %v\n%s", err, out)
	}
	out, err = runCLI(t, append(base, "--feature-bounds", "../../schemas/diabetes.json")...)
	if err != nil || !strings.Contains(out, "\nprivate: yes (secure noise at every site") || !strings.Contains(out, "private: yes (secure noise)\n") || strings.Contains(out, "secure noise: ") {
		t.Errorf("with the schema: %v\n%s", err, out)
	}
	// The non-private default needs no schema.
	if out, err := runCLI(t, "simulate", "--data", "../../datasets/diabetes", "--sites", "2", "--transport", "mem", "--no-progress"); err != nil || !strings.Contains(out, "NOT private: fed-avg adds no noise") {
		t.Errorf("fed-avg: %v\n%s", err, out)
	}
}

// newDiabetesSite is the siteData of a worker on the bundled diabetes
// file, with the local schema at schemaPath ("" for none) and --scale.
func newDiabetesSite(t *testing.T, schemaPath, scale string) *siteData {
	t.Helper()
	s := &siteData{site: "a", path: "../../datasets/diabetes", radius: 1, scale: scale, logf: func(string, ...any) {}}
	opt := s.opt
	if schemaPath != "" {
		sc, err := data.LoadSchema(schemaPath)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sc.Apply(&opt); err != nil {
			t.Fatal(err)
		}
		s.local, s.scale = sc, "bounds"
	}
	tab, err := data.Load(s.path, opt)
	if err != nil {
		t.Fatal(err)
	}
	var scaler *data.Scaler
	if s.local != nil {
		scaler = s.local.Scaler()
	} else if scaler, err = data.FitScaler(map[string]string{"": "minmax"}[scale]+scale, tab.Dataset); err != nil {
		t.Fatal(err)
	}
	ds, linear, err := prepareRecords(tab, scaler, s.local != nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.def = &worker.JobData{Data: ds, LinearData: linear, Noise: siteNoise(s.scale, tab.DataDependent)}
	return s
}

func announce(algo, schema string) *protocol.JobAnnounce {
	return &protocol.JobAnnounce{Job: "j", Algo: algo, Task: "auc", Loss: "square", Params: 8, Phases: 2, ParamRadius: 1, FeatureRadius: 1,
		Epsilon: 1, Delta: 1e-4, Sites: []string{"a"}, Schema: schema}
}

// A worker's per-job preparation (siteData.prepare, the hook
// worker.ServiceConfig.Prepare): a private job without any schema is
// refused with the fix; the job's schema is applied when the site has
// none (the same map as a site started with it); a site whose own schema
// differs refuses, naming the feature and both ranges; a malformed job
// schema or a site with an explicit --scale refuses.
func TestWorkerJobSchema(t *testing.T) {
	b, err := os.ReadFile("../../schemas/diabetes.json")
	if err != nil {
		t.Fatal(err)
	}
	diabetes := string(b)

	bare := newDiabetesSite(t, "", "")
	if _, err := bare.prepare(announce(fedalgo.FedDPLDA, "")); err == nil || !strings.Contains(err.Error(), "pairfed job submit --feature-bounds SCHEMA.json") {
		t.Errorf("private job, no schema anywhere: %v", err)
	}
	if jd, err := bare.prepare(announce(fedalgo.FedAvg, "")); err != nil || jd != bare.def {
		t.Errorf("non-private job without a schema: %v", err)
	}
	jd, err := bare.prepare(announce(fedalgo.FedDPLDA, diabetes))
	if err != nil {
		t.Fatal(err)
	}
	// The same records as a site started with --feature-bounds.
	local := newDiabetesSite(t, "../../schemas/diabetes.json", "")
	if jd.Data.N != local.def.Data.N || jd.Data.D != 8 || jd.LinearData == nil || !jd.Noise.Secure() {
		t.Fatalf("job schema: n = %d, d = %d, linear %v, secure %v", jd.Data.N, jd.Data.D, jd.LinearData != nil, jd.Noise.Secure())
	}
	for i := range min(20, jd.Data.N) {
		a, b := jd.Data.DenseRowTo(nil, i), local.def.Data.DenseRowTo(nil, i)
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("record %d feature %d: %v by the job's schema, %v by the site's", i, j, a[j], b[j])
			}
		}
	}
	if again, _ := bare.prepare(announce(fedalgo.FedDPLDA, diabetes)); again != jd {
		t.Error("the same schema was prepared twice")
	}
	if jd, err := local.prepare(announce(fedalgo.FedDPLDA, diabetes)); err != nil || jd != local.def {
		t.Errorf("identical local and job schemas: %v", err)
	}

	// A site whose own schema bounds glucose by 250 refuses the job's 300.
	other := filepath.Join(t.TempDir(), "glucose250.json")
	os.WriteFile(other, []byte(strings.Replace(diabetes, `"lo": 0, "hi": 300`, `"lo": 0, "hi": 250`, 1)), 0o644)
	differ := newDiabetesSite(t, other, "")
	_, err = differ.prepare(announce(fedalgo.FedDPLDA, diabetes))
	if err == nil || !strings.Contains(err.Error(), "feature 2 (glucose): [0, 250] here, [0, 300] in the job") || !strings.Contains(err.Error(), "differs from this site's "+other) {
		t.Errorf("differing schemas: %v", err)
	}
	// Free text does not count.
	reworded := strings.Replace(diabetes, `"name": "Pima Indians Diabetes (LIBSVM diabetes)"`, `"name": "diabetes"`, 1)
	if _, err := local.prepare(announce(fedalgo.FedDPLDA, reworded)); err != nil {
		t.Errorf("a schema differing only in its name: %v", err)
	}
	for _, c := range []struct{ name, schema, want string }{
		{"unknown field", `{"features": [{"lo": 0, "hi": 1, "count": 8, "scale": 2}]}`, "cannot use"},
		{"lo ≥ hi", `{"features": [{"lo": 1, "hi": 1, "count": 8}]}`, "cannot use"},
		{"unknown bounds", `{"features": [{"unknown": true, "count": 8}]}`, "marked unknown"},
		{"wrong dimension", `{"features": [{"lo": 0, "hi": 1, "count": 5}]}`, "5"},
	} {
		if _, err := bare.prepare(announce(fedalgo.FedDPLDA, c.schema)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to mention %q", c.name, err, c.want)
		}
	}
	minmax := newDiabetesSite(t, "", "minmax")
	if _, err := minmax.prepare(announce(fedalgo.FedDPLDA, diabetes)); err == nil || !strings.Contains(err.Error(), "restart it without --scale") {
		t.Errorf("site with --scale minmax, job with a schema: %v", err)
	}
	if jd, err := minmax.prepare(announce(fedalgo.FedDPLDA, "")); err != nil || jd.Noise.Secure() {
		t.Errorf("explicit --scale minmax: %v (its noise must say not private)", err)
	}
}

// Separate processes: a coordinator and two workers without any schema; a
// private job submitted with --feature-bounds runs on the schema's map at
// every site and is private; the same job without a schema is refused by
// both sites with the fix in their logs.
func TestJobCarriesSchema(t *testing.T) {
	fed := newLinearFed(t, 200, 200)
	root, schema, test, site, logs := fed.root, fed.schema, fed.test, fed.site, fed.logs
	coord := fed.start("coordinator", "--listen", "127.0.0.1:0", "--federation", "js", "--state", filepath.Join(root, "coord"),
		"--test", test, "--min-sites", "2", "--tick", "10ms")
	url := coordURL(t, coord)
	for _, s := range []string{"a", "b"} {
		fed.start("worker", "--nats", url, "--federation", "js", "--site", s, "--data", site[s],
			"--state", filepath.Join(root, "site-"+s), "--tick", "10ms", "--heartbeat", "50ms")
	}
	waitFor(t, 15*time.Second, "sites a and b to join", func() bool {
		l := logs.String()
		return strings.Contains(l, "site a joined the federation") && strings.Contains(l, "site b joined the federation")
	})
	p, code := runPairfed(t, logs, 60*time.Second, "job", "submit", "--nats", url, "--federation", "js", "--epsilon", "1",
		"--feature-bounds", schema, "--min-sites", "2", "--wait", "--json")
	out := p.stdout.String()
	if code != 0 || !topPrivate(t, out) || !strings.Contains(out, `"privacy_status": "private: yes`) {
		t.Fatalf("job with a schema: exit %d, %v\n%s", code, p.err, out)
	}
	var auc struct {
		AUC struct{ Mean float64 } `json:"auc"`
	}
	if err := json.Unmarshal([]byte(out), &auc); err != nil || !(auc.AUC.Mean > 0.6) || math.IsNaN(auc.AUC.Mean) {
		t.Errorf("test AUC %v (%v): the sites' and the evaluator's map must agree", auc.AUC.Mean, err)
	}
	for _, s := range []string{"a", "b"} {
		if !strings.Contains(logs.String(), "worker "+s+": job ") || !strings.Contains(logs.String(), "records mapped by the job's feature bounds") {
			t.Errorf("site %s did not say it applied the job's schema", s)
		}
	}
	p, code = runPairfed(t, logs, 60*time.Second, "job", "submit", "--nats", url, "--federation", "js", "--epsilon", "1",
		"--min-sites", "2", "--wait")
	if code != 3 || !strings.Contains(logs.String(), "carries no feature-bounds schema and site a has none") {
		t.Errorf("job without a schema: exit %d, want 3 (refused)\n%s", code, p.stdout.String())
	}
}
