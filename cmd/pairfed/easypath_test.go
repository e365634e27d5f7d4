package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
