package main

import (
	"strings"
	"testing"
	"unicode/utf8"
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
