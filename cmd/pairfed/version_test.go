package main

import (
	"strings"
	"testing"
)

// pairfed --version prints the module version and the Go version (and the
// VCS revision when the build recorded one: not in a test binary).
func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		out, err := runCLI(t, flag)
		if err != nil || !strings.HasPrefix(out, "pairfed version ") || !strings.Contains(out, "go1.") {
			t.Errorf("%s: %v %q", flag, err, out)
		}
	}
	if v := buildVersion(); v == "" || !strings.Contains(v, "go1.") {
		t.Errorf("buildVersion() = %q", v)
	}
}

// Typos of commands, subcommands, flags and algorithm names are usage
// errors (exit status 2) with the nearest name; unknown names far from
// every known one keep the command's own message.
func TestVersionSuggestions(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"trian"}, `unknown command "trian" (did you mean train?) (run ` + "`pairfed --help`"},
		{[]string{"job", "sbmit"}, `unknown command "sbmit" (did you mean submit?) (run ` + "`pairfed job --help`"},
		{[]string{"experiment", "swep"}, `(did you mean sweep?)`},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (run`},
		{[]string{"algos", "fed-dp-lad"}, `unknown algorithm "fed-dp-lad" (did you mean fed-dp-lda?)`},
		{[]string{"algos", "sgd-prve"}, `(did you mean sgd-prev?)`},
		{[]string{"train", "--data", "../../datasets/diabetes", "--algo", "sgd-perv"}, `--algo: unknown algorithm "sgd-perv" (did you mean sgd-prev?)`},
		{[]string{"train", "--data", "../../datasets/diabetes", "--algo", "sgd-magic"}, `unknown algorithm "sgd-magic" (see`},
		{[]string{"simulate", "--data", "../../datasets/diabetes", "--algo", "fed-dp-lad"}, `--algo: unknown federated algorithm "fed-dp-lad" (did you mean fed-dp-lda?)`},
		{[]string{"simulate", "--data", "../../datasets/diabetes", "--algo", "fed-dp-lda", "--local-algo", "dpegdd"}, `--local-algo: unknown algorithm "dpegdd" (did you mean dpegd?)`},
		{[]string{"train", "--data", "../../datasets/diabetes", "--epsilno", "1"}, `flag provided but not defined: -epsilno (did you mean --epsilon?)`},
	}
	for _, c := range cases {
		out, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			code := -1
			if err != nil {
				code = exitCode(err)
			}
			t.Errorf("%q: err %v (exit %d), want a usage error containing %q\n%s", c.args, err, code, c.want, out)
		}
	}
	if out, err := runCLI(t, "job"); err != nil || !strings.Contains(out, "submit") {
		t.Errorf("pairfed job without a subcommand prints its help: %v\n%s", err, out)
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"train", "trian", 1}, {"fed-dp-lda", "fed-dp-lad", 1}, {"", "abc", 3}, {"submit", "sbmit", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}
