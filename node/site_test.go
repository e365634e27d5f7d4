package node

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/simulate"
	"github.com/pairfed/pairfed/worker"
)

// newDiabetesSite is the siteData of a worker on the bundled diabetes
// file, with the local schema at schemaPath ("" for none) and scale.
func newDiabetesSite(t *testing.T, schemaPath, scale string) *siteData {
	t.Helper()
	s := &siteData{site: "a", path: "../datasets/diabetes", radius: 1, scale: scale, logf: func(string, ...any) {}}
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
	s.def = &siteRecords{table: tab, schema: s.local, scale: s.scale, radius: 1, noise: siteNoise(s.scale, tab.DataDependent)}
	return s
}

func announce(algo, schema string) *protocol.JobAnnounce {
	return &protocol.JobAnnounce{Job: "j", Algo: algo, Task: "auc", Loss: "square", Params: 8, Phases: 2, ParamRadius: 1, FeatureRadius: 1,
		Epsilon: 1, Delta: 1e-4, Sites: []string{"a"}, Schema: schema}
}

func mustData(t *testing.T, r *siteRecords, algo string) *worker.JobData {
	t.Helper()
	jd, err := r.data(algo)
	if err != nil {
		t.Fatal(err)
	}
	return jd
}

func sameRecords(t *testing.T, what string, a, b *pairwise.Dataset) {
	t.Helper()
	if a.N != b.N || a.D != b.D {
		t.Fatalf("%s: %d×%d and %d×%d records", what, a.N, a.D, b.N, b.D)
	}
	for i := range a.N {
		x, y := a.DenseRowTo(make([]float64, a.D), i), b.DenseRowTo(make([]float64, b.D), i)
		for j := range x {
			if x[j] != y[j] {
				t.Fatalf("%s: record %d feature %d: %v and %v", what, i, j, x[j], y[j])
			}
		}
	}
}

// A worker's per-job preparation (siteData.prepare, the hook
// worker.ServiceConfig.Prepare): a private job without any schema is
// refused with the fix; the job's schema is applied when the site has
// none (the same map as a site started with it); a site whose own schema
// differs refuses, naming the feature and both ranges; a malformed job
// schema or a site with an explicit --scale refuses.
func TestWorkerJobSchema(t *testing.T) {
	b, err := os.ReadFile("../schemas/diabetes.json")
	if err != nil {
		t.Fatal(err)
	}
	diabetes := string(b)

	bare := newDiabetesSite(t, "", "")
	if _, err := bare.prepare(announce(fedalgo.FedDPLDA, "")); err == nil || !strings.Contains(err.Error(), "pairfed job submit --feature-bounds SCHEMA.json") {
		t.Errorf("private job, no schema anywhere: %v", err)
	}
	if jd, err := bare.prepare(announce(fedalgo.FedAvg, "")); err != nil || jd != mustData(t, bare.def, fedalgo.FedAvg) {
		t.Errorf("non-private job without a schema: %v", err)
	}
	jd, err := bare.prepare(announce(fedalgo.FedDPLDA, diabetes))
	if err != nil {
		t.Fatal(err)
	}
	// The same records as a site started with --feature-bounds, for a job
	// that centres privately (by the linear map) and one that does not.
	local := newDiabetesSite(t, "../schemas/diabetes.json", "")
	if jd.Data.D != 8 || !jd.Noise.Secure() {
		t.Fatalf("job schema: d = %d, secure %v", jd.Data.D, jd.Noise.Secure())
	}
	sameRecords(t, "fed-dp-lda by the job's schema and by the site's", jd.Data, mustData(t, local.def, fedalgo.FedDPLDA).Data)
	egd, err := bare.prepare(announce(fedalgo.FedDPEGD, diabetes))
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, "fed-dpegd by the job's schema and by the site's", egd.Data, mustData(t, local.def, fedalgo.FedDPEGD).Data)
	if again, _ := bare.prepare(announce(fedalgo.FedDPLDA, diabetes)); again != jd {
		t.Error("the same schema was prepared twice")
	}
	if jd, err := local.prepare(announce(fedalgo.FedDPLDA, diabetes)); err != nil || jd != mustData(t, local.def, fedalgo.FedDPLDA) {
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

// The maps a site applies are the rule's (experiment.SiteMap): a private
// job's records clipped to R, a job that centres privately reads them
// multiplied by R/M (‖x‖ ≤ R by construction), and a non-private job's
// clipped too — bit for bit what PrepareModelRecords gives, which is what
// the simulation and the model artefact apply.
func TestSiteMapsAreTheRule(t *testing.T) {
	local := newDiabetesSite(t, "../schemas/diabetes.json", "")
	for _, c := range []struct {
		algo, norm string
	}{{fedalgo.FedDPEGD, experiment.NormClip}, {fedalgo.FedDPLDA, experiment.NormDivide}, {fedalgo.FedAvg, experiment.NormClip}} {
		m := &model.Preprocessing{Scale: "bounds", Schema: local.local, Norm: c.norm, Radius: 1}
		want, err := experiment.PrepareModelRecords(m, local.def.table.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		sameRecords(t, c.algo, mustData(t, local.def, c.algo).Data, want)
	}
	// Divide and clip differ on these records (the test can fail).
	a, b := mustData(t, local.def, fedalgo.FedDPEGD).Data, mustData(t, local.def, fedalgo.FedDPLDA).Data
	if a.DenseRowTo(make([]float64, a.D), 0)[1] == b.DenseRowTo(make([]float64, b.D), 0)[1] {
		t.Error("the clipped and the divided records agree")
	}
}

// The site's noise is labelled not private when its scaling is fitted on
// its own records, or whose loading made data-dependent decisions;
// per-record preprocessing with public parameters (--scale none, or a
// feature-bounds schema) keeps it private.
func TestSiteNoiseLabelsFittedScalingNotPrivate(t *testing.T) {
	if siteNoise("minmax", nil).Secure() || siteNoise("standard", nil).Secure() {
		t.Fatal("data-fitted scaling reported private")
	}
	if !siteNoise("none", nil).Secure() || !siteNoise("bounds", nil).Secure() {
		t.Fatal("--scale none or bounds with secure noise reported not private")
	}
	n := siteNoise("bounds", []string{"--impute mean replaces …"})
	if n.Secure() || !strings.Contains(n.Name(), "--impute mean") {
		t.Fatalf("data-dependent loading: Secure %v, name %q", n.Secure(), n.Name())
	}
}

// A simulated site and a real one prepare the same records for every kind
// of job (private, centring privately, non-private): simulate's map
// (Spec.PrepMap) applied to the file gives, bit for bit, the records a
// worker started with the same schema hands the job. Until the rule was
// one, a non-private job differed here (simulate divided, workers clipped).
func TestSimulationAndWorkersAgree(t *testing.T) {
	local := newDiabetesSite(t, "../schemas/diabetes.json", "")
	for _, algo := range []string{fedalgo.FedAvg, fedalgo.FedDPEGD, fedalgo.FedDPLDA} {
		spec := simulate.Spec{Sites: 1, Job: coordinator.JobConfig{Algo: algo, FeatureRadius: 1, Epsilon: 1}, Bounds: local.local}
		if algo == fedalgo.FedAvg {
			spec.Job.Epsilon = 0
		}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		pm, err := spec.PrepMap(local.def.table.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		want, err := experiment.PrepareModelRecords(pm, local.def.table.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		sameRecords(t, algo+": simulate and the worker", mustData(t, local.def, algo).Data, want)
	}
}

// A URL's user, password or token never reaches a message: the job
// clients' "no answer" errors and the coordinator's log print
// RedactedServers (a --site-logins password in the URL was printed
// whole).
func TestRedactedServers(t *testing.T) {
	for in, want := range map[string]string{
		"nats://s:0123456789abcdef@127.0.0.1:4222": "nats://redacted@127.0.0.1:4222",
		"nats://TOKEN@127.0.0.1:4222":              "nats://redacted@127.0.0.1:4222",
		"127.0.0.1:4222,tls://u:p@h:1":             "nats://127.0.0.1:4222,tls://redacted@h:1",
		"nats://127.0.0.1:4222":                    "nats://127.0.0.1:4222",
	} {
		if got := RedactedServers(in); got != want {
			t.Errorf("RedactedServers(%q) = %q, want %q", in, got, want)
		}
	}
}

// CheckSiteLogins refuses each malformed list with a message naming the
// problem and the fix, and accepts a well-formed one.
func TestCheckSiteLogins(t *testing.T) {
	if err := CheckSiteLogins([]string{"site-a", "site_b", "C3"}); err != nil {
		t.Fatalf("a valid list refused: %v", err)
	}
	many := make([]string, MaxSiteLogins+1)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	for _, c := range []struct {
		sites []string
		want  string
	}{
		{[]string{"a", "", "b"}, "name 2 of 3 is empty (two commas in a row"},
		{[]string{"a b"}, `site "a b"`},
		{[]string{"a", "a"}, `site "a" is named twice`},
		{[]string{clientLogin}, "is reserved"},
		{many, "more than"},
		{[]string{"A", "b", "a"}, `sites "A" and "a" differ only in case`}, // probe 5
	} {
		err := CheckSiteLogins(c.sites)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "protocol:") {
			t.Errorf("%q: %v, want an error with %q", c.sites, err, c.want)
		}
	}
}

// Probe 5 (issue 28): a login's password file that others on the host can
// read, or that is not a regular file, is refused naming the fix; one
// deleted on a restart is generated again and logged; a restart without
// --site-logins says that the logins are ignored.
func TestLoginPasswordFiles(t *testing.T) {
	dir := t.TempDir()
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	if _, _, err := listenLogins(dir, "f", []string{"a", "b"}, false, logf); err != nil {
		t.Fatal(err)
	}
	if len(logged) != 0 {
		t.Errorf("a first start logged %q", logged)
	}
	pa := filepath.Join(dir, loginsDir, "a")
	before, _ := os.ReadFile(pa)
	if err := os.Chmod(pa, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := listenLogins(dir, "f", []string{"a", "b"}, true, logf); err == nil || !strings.Contains(err.Error(), "chmod 600 "+pa) {
		t.Errorf("a password file of mode 0644: %v", err)
	}
	if after, _ := os.ReadFile(pa); !bytes.Equal(before, after) {
		t.Error("the refused password file changed")
	}
	os.Remove(pa)
	os.Mkdir(pa, 0o700)
	if _, _, err := listenLogins(dir, "f", []string{"a", "b"}, true, logf); err == nil || !strings.Contains(err.Error(), "is not a regular file (a directory): delete it") {
		t.Errorf("a password file that is a directory: %v", err)
	}
	os.Remove(pa)
	if _, _, err := listenLogins(dir, "f", []string{"a", "b"}, true, logf); err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "generated the password of login a") || !strings.Contains(logged[0], "give it to site a") {
		t.Errorf("a regenerated password was logged as %q", logged)
	}
}
