package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/worker"
)

// The JSON contract of `ledger show --json` on a coordinator's state
// directory: per site, site, epsilon_spent, delta_spent, epsilon_budget,
// delta_budget and the entries; spent composes as max within a job, sum
// across jobs.
func TestLedgerShowCoordinatorJSON(t *testing.T) {
	dir := t.TempDir()
	ch, _, _, err := store.OpenCharges(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := func(job, site string, phase int, eps float64) coordinator.Charge {
		return coordinator.Charge{Key: coordinator.ChargeKey(job, site, phase), Site: site, Job: job, Phase: phase, Algo: "fed-dp-local-sgd",
			Mechanism: "gaussian", Records: 10, Epsilon: eps, Delta: 1e-3, Private: true}
	}
	if err := ch.Append([]coordinator.Charge{c("j1", "a", 0, 0.5), c("j1", "b", 0, 0.5), c("j1", "a", 1, 0.5), c("j2", "a", 0, 0.25)}); err != nil {
		t.Fatal(err)
	}
	ch.Close()
	if _, err := runCLI(t, "ledger", "budget", "set", "--state", dir, "--site", "a", "--epsilon", "1", "--delta", "0.01"); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "ledger", "show", "--state", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Kind  string                       `json:"kind"`
		Sites []map[string]json.RawMessage `json:"sites"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Kind != "coordinator" || len(rep.Sites) != 2 {
		t.Fatalf("report %s", out)
	}
	for _, k := range []string{"site", "epsilon_spent", "delta_spent", "epsilon_budget", "delta_budget", "entries"} {
		if _, ok := rep.Sites[0][k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	num := func(s map[string]json.RawMessage, k string) string { return string(s[k]) }
	if num(rep.Sites[0], "site") != `"a"` || num(rep.Sites[0], "epsilon_spent") != "0.75" || num(rep.Sites[0], "epsilon_budget") != "1" ||
		num(rep.Sites[0], "epsilon_remaining") != "0.25" || num(rep.Sites[1], "epsilon_spent") != "0.5" || num(rep.Sites[1], "epsilon_budget") != "null" {
		t.Errorf("sites %s", out)
	}
	// Human table and CSV export.
	out, err = runCLI(t, "ledger", "show", "--state", dir)
	if err != nil || !strings.Contains(out, "ε remaining") || !strings.Contains(out, "0.25") {
		t.Errorf("table: %v\n%s", err, out)
	}
	out, err = runCLI(t, "ledger", "export", "--state", dir)
	if err != nil || strings.Count(out, "\n") != 5 || !strings.HasPrefix(out, "site,job,phase") {
		t.Errorf("csv: %v\n%s", err, out)
	}
	// An export never writes into a state directory: --out naming the
	// coordinator's own charges journal (which it once replaced, so the
	// coordinator refused to start) or any file beside it is refused and
	// leaves the journal as it was.
	before, err := os.ReadFile(filepath.Join(dir, store.ChargesFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{filepath.Join(dir, store.ChargesFile), filepath.Join(dir, "export.csv"), filepath.Join(dir, "jobs", "x.csv")} {
		if _, err := runCLI(t, "ledger", "export", "--state", dir, "--out", out); err == nil || !strings.Contains(err.Error(), "inside the state directory") {
			t.Errorf("export --out %s: %v", out, err)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, store.ChargesFile)); !bytes.Equal(before, after) {
		t.Error("a refused export changed the charges journal")
	}
	if _, err := os.Stat(filepath.Join(dir, "export.csv")); err == nil {
		t.Error("a refused export created a file")
	}
	elsewhere := filepath.Join(t.TempDir(), "export.csv")
	if _, err := runCLI(t, "ledger", "export", "--state", dir, "--out", elsewhere); err != nil {
		t.Errorf("export outside the state directory: %v", err)
	}
}

// On a site's state directory the ledger is the site's own releases; the
// site's name comes from the directory, and budget set needs no --site.
// Bad budgets and directories without a ledger are refused and change
// nothing.
func TestLedgerShowSiteAndErrors(t *testing.T) {
	dir := t.TempDir()
	if err := claimSiteDir(dir, "h1"); err != nil {
		t.Fatal(err)
	}
	if err := claimSiteDir(dir, "h2"); err == nil || !strings.Contains(err.Error(), "belongs to site") {
		t.Errorf("a second site claimed the directory: %v", err)
	}
	l, _, _, err := store.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(worker.Release{Job: "j", Phase: 1, Records: 5, Sigma: 2, Epsilon: 0.6, Delta: 1e-3, Secure: true})
	l.Append(worker.Release{Job: "j", Phase: 2, Records: 3, Sigma: 1, Epsilon: 0.6, Delta: 1e-3, Secure: true})
	l.Close()
	if _, err := runCLI(t, "ledger", "budget", "set", "--state", dir, "--epsilon", "1", "--delta", "0.1"); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "ledger", "show", "--state", dir, "--json")
	if err != nil || !strings.Contains(out, `"kind": "site"`) || !strings.Contains(out, `"site": "h1"`) || !strings.Contains(out, `"epsilon_spent": 0.6`) {
		t.Fatalf("%v\n%s", err, out)
	}
	before, _ := os.ReadFile(filepath.Join(dir, store.BudgetsFile))
	for _, args := range [][]string{
		{"--epsilon", "-1", "--delta", "0"},
		{"--epsilon", "NaN", "--delta", "0"},
		{"--epsilon", "1", "--delta", "1"},
		{"--site", "a.b", "--epsilon", "1", "--delta", "0"},
	} {
		_, err := runCLI(t, append([]string{"ledger", "budget", "set", "--state", dir}, args...)...)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%v: err %v (exit %d)", args, err, exitCode(err))
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, store.BudgetsFile)); string(after) != string(before) {
		t.Error("a refused budget changed budgets.json")
	}
	if _, err := runCLI(t, "ledger", "show", "--state", t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no ledger") {
		t.Errorf("empty dir: %v", err)
	}
	// ε = +Inf is no budget: the refusal names unset, which removes the
	// entry (no cap from the file), and unsetting twice changes nothing.
	_, err = runCLI(t, "ledger", "budget", "set", "--state", dir, "--epsilon", "inf", "--delta", "0")
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--epsilon = +Inf is no budget: to remove h1's cap run `pairfed ledger budget unset") {
		t.Errorf("set --epsilon inf: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, store.BudgetsFile)); string(after) != string(before) {
		t.Error("a refused budget changed budgets.json")
	}
	for i, want := range []string{"budget of h1 removed", "h1 had no budget"} {
		out, err := runCLI(t, "ledger", "budget", "unset", "--state", dir)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("unset #%d: %v %q, want %q", i+1, err, out, want)
		}
		if b, err := store.LoadBudgets(dir); err != nil || len(b) != 0 {
			t.Errorf("unset #%d: budgets %v, %v; want none", i+1, b, err)
		}
	}
}

// Bad command lines of the long-running commands do not create or claim
// their state directories (the ledger stays where it is, or absent).
func TestBadFlagsLeaveNoState(t *testing.T) {
	dir := t.TempDir()
	data := "../../datasets/diabetes"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"coordinator", "--listen", "127.0.0.1:0", "--min-sites", "0"}, "--min-sites"},
		{[]string{"coordinator", "--listen", "127.0.0.1:99999"}, "bad port"},
		{[]string{"coordinator", "--listen", "127.0.0.1:0", "--max-queue", "-1"}, "max queue"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:1", "--site", "a.b", "--data", data}, "site"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:1", "--site", "a", "--data", data, "--budget-epsilon", "-1"}, "budget-epsilon"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:1", "--site", "a", "--data", data, "--budget-delta", "1"}, "budget-delta"},
	} {
		state := filepath.Join(dir, "state")
		_, err := runCLI(t, append(c.args, "--state", state)...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v (exit %d), want a usage error about %q", c.args, err, exitCode(err), c.want)
		}
		if _, err := os.Stat(state); err == nil {
			t.Errorf("%v created the state directory", c.args)
			os.RemoveAll(state)
		}
	}
}

// A site name file edited to an invalid name ("a/b") is refused by
// `ledger show` and `ledger budget set`, naming the file, the name and
// the fix — not shown as two sites (the spending under "a/b", the budget
// under "a"), which probe 4 of issue 28 found. Nothing is changed.
func TestLedgerShowInvalidSiteName(t *testing.T) {
	dir := t.TempDir()
	if err := claimSiteDir(dir, "a"); err != nil {
		t.Fatal(err)
	}
	l, _, _, err := store.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(worker.Release{Job: "j", Phase: 1, Records: 5, Sigma: 2, Epsilon: 0.5, Delta: 1e-3, Secure: true})
	l.Close()
	if _, err := runCLI(t, "ledger", "budget", "set", "--state", dir, "--epsilon", "1", "--delta", "0.1"); err != nil {
		t.Fatal(err)
	}
	rows := func() []string {
		t.Helper()
		out, err := runCLI(t, "ledger", "show", "--state", dir, "--json")
		var rep struct{ Sites []struct{ Site string } }
		if err != nil || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var names []string
		for _, s := range rep.Sites {
			names = append(names, s.Site)
		}
		return names
	}
	if r := rows(); len(r) != 1 || r[0] != "a" {
		t.Fatalf("before the edit: rows %v", r)
	}
	nameFile := filepath.Join(dir, siteNameFile)
	if err := os.WriteFile(nameFile, []byte("a/b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	budgets, _ := os.ReadFile(filepath.Join(dir, store.BudgetsFile))
	for _, args := range [][]string{
		{"ledger", "show", "--state", dir},
		{"ledger", "show", "--state", dir, "--json"},
		{"ledger", "budget", "set", "--state", dir, "--epsilon", "2", "--delta", "0.1"},
	} {
		out, err := runCLI(t, args...)
		if err == nil {
			t.Fatalf("%v: accepted\n%s", args, out)
		}
		for _, want := range []string{nameFile, `"a/b"`, "write the site's name", "--site"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %q does not say %q", args, err, want)
			}
		}
	}
	if _, err := runCLI(t, "ledger", "show", "--state", dir); err == nil || !strings.Contains(err.Error(), "budgets for a") {
		t.Errorf("show does not name the budget's site: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, store.BudgetsFile)); string(after) != string(budgets) {
		t.Error("a refused command changed budgets.json")
	}
	// Restored, it shows one row again.
	os.WriteFile(nameFile, []byte("a\n"), 0o644)
	if r := rows(); len(r) != 1 || r[0] != "a" {
		t.Fatalf("after the fix: rows %v", r)
	}
}
