package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pairfed/pairfed/fedalgo"
)

// TestAlgosTableFits: the default table fits algosWidth columns (issue 16
// item 6: its REF column made it wider than any terminal); --wide and
// `algos NAME` still show the reference and assumptions.
func TestAlgosTableFits(t *testing.T) {
	out, err := runCLI(t, "algos")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if n := utf8.RuneCountInString(line); n > algosWidth {
			t.Errorf("line %d is %d columns wide (> %d): %q", i+1, n, algosWidth, line)
		}
	}
	wide, err := runCLI(t, "algos", "--wide")
	if err != nil {
		t.Fatal(err)
	}
	one, err := runCLI(t, "algos", "dp-local-sgd")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{wide, one} {
		if !strings.Contains(s, "Alg 3, Thm 10") || !strings.Contains(s, "(A1) G-Lipschitz") {
			t.Errorf("output lacks dp-local-sgd's reference or assumptions:\n%s", s)
		}
	}
	if _, err := runCLI(t, "algos", "no-such-algo"); err == nil || !strings.Contains(err.Error(), "no-such-algo") || exitCode(err) != 2 {
		t.Errorf("unknown NAME: err %v (exit %d), want a usage error naming it", err, exitCode(err))
	}
}

// `pairfed algos` lists the federated algorithms of the fedalgo registry
// too (issue 24: `pairfed algos fed-dp-lda` was an unknown algorithm), with
// their privacy and secure aggregation support from the registry, and
// describes each one.
func TestAlgosListsFederated(t *testing.T) {
	rows := algosJSON(t)
	byName := map[string]algoRow{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	for _, name := range fedalgo.Names() {
		r, ok := byName[name]
		a, _ := fedalgo.Lookup(name)
		_, sum := a.(fedalgo.SumReleaser)
		switch {
		case !ok:
			t.Errorf("algos --json lacks %s", name)
		case r.Title == "(undocumented)":
			t.Errorf("%s is registered without a Doc (title, paper, reference, assumptions: fedalgo.Documented)", name)
		case !r.Federated || r.Setting != "federated" || r.Private != a.Private() || r.SecureAggregation != sum || len(r.Tasks) == 0 || len(r.Losses) == 0:
			t.Errorf("%s: row %+v disagrees with the registry (private %v, secure aggregation %v)", name, r, a.Private(), sum)
		}
	}
	if r := byName["fed-dp-gd-grad"]; strings.Join(r.Tasks, ",") != "auc" || strings.Contains(strings.Join(r.Losses, ","), "hinge") {
		t.Errorf("fed-dp-gd-grad: tasks %v, losses %v: want auc only, no hinge (its validator's)", r.Tasks, r.Losses)
	}
	if r := byName["fed-avg"]; r.Private || r.SecureAggregation {
		t.Errorf("fed-avg: %+v", r)
	}
	one, err := runCLI(t, "algos", "fed-dp-lda")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"setting:             federated", "private:             true", "secure aggregation:  yes", "fedalgo/fedlda.go"} {
		if !strings.Contains(one, want) {
			t.Errorf("algos fed-dp-lda lacks %q:\n%s", want, one)
		}
	}
	table, err := runCLI(t, "algos")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range fedalgo.Names() {
		if !strings.Contains(table, "\n"+name+" ") {
			t.Errorf("algos table lacks %s", name)
		}
	}
}

// TestShortPaperOfEveryAlgorithm: the PAPER column of every algorithm,
// single-site and federated, is a citation key, a first author with
// "et al.", "pairfed" or "(local)" — never a stray first word of
// a description (fed-oneshot's showed "the").
func TestShortPaperOfEveryAlgorithm(t *testing.T) {
	rows := algosJSON(t)
	ok := regexp.MustCompile(`^(\[[A-Z][0-9]{2}[a-z]?\]|[A-Z][a-z]+ et al\.|pairfed|\(local\))$`)
	for _, r := range rows {
		if got := shortPaper(r.Paper); !ok.MatchString(got) {
			t.Errorf("%s: PAPER column %q (from %q) is not a citation key, a first author, pairfed or (local)", r.Name, got, r.Paper)
		}
	}
	if d, _ := fedalgo.DocOf(fedalgo.FedOneShot); shortPaper(d.Paper) != "(local)" {
		got := shortPaper(d.Paper)
		t.Errorf("fed-oneshot: PAPER %q, want (local)", got)
	}
}

// algosJSON returns the rows of `pairfed algos --json`.
func algosJSON(t *testing.T) []algoRow {
	t.Helper()
	out, err := runCLI(t, "algos", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []algoRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}
