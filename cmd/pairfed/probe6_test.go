package main

// Issue 28, probe 6 (docs/results/probe-6.md): the cases of simulate,
// audit, experiment sweep, report, ledger, score and deploy that were BAD
// or UNCLEAR, each refused naming the problem, the value and the fix
// with nothing written, or done as asked.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// probe6Refused runs args, wants an error containing every want, and
// checks that dir (when not "") holds the same files afterwards.
func probe6Refused(t *testing.T, dir string, args []string, want ...string) {
	t.Helper()
	before := probe6Files(t, dir)
	out, err := runCLI(t, args...)
	if err == nil {
		t.Fatalf("%v: accepted, want a refusal\n%s", args, out)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v: error %q does not say %q", args, err, w)
		}
	}
	if exitCode(err) != 2 {
		t.Errorf("%v: exit status %d, want 2 (a usage error)", args, exitCode(err))
	}
	if after := probe6Files(t, dir); after != before {
		t.Errorf("%v: files changed on refusal:\n%s\nthen\n%s", args, before, after)
	}
}

// probe6Files lists the files under dir with their sizes ("" for none).
func probe6Files(t *testing.T, dir string) string {
	t.Helper()
	if dir == "" {
		return ""
	}
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			b.WriteString(p + " " + fi.Mode().String() + " " + strings.Repeat("#", int(fi.Size()%7)) + "\n")
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	return b.String()
}

// TestProbe6StrayArguments: urfave/cli stops reading flags at the first
// argument, so `simulate --verbose true --algo fed-dp-local-sgd
// --epsilon 1` ran fed-avg, not private, and `train --json true --epsilon
// 1 --out-model m.json` wrote no model, without a word. A command that
// takes no arguments now refuses them, naming the unread flags.
func TestProbe6StrayArguments(t *testing.T) {
	dir := t.TempDir()
	probe6Refused(t, dir, []string{"simulate", "--data", "../../datasets/diabetes", "--verbose", "true", "--algo", "fed-dp-local-sgd", "--epsilon", "1"},
		`pairfed simulate takes no arguments, got "true"`, "(--algo fed-dp-local-sgd --epsilon 1) were not read as flags", "--json=false")
	probe6Refused(t, dir, []string{"train", "--data", "../../datasets/diabetes", "--json", "true", "--epsilon", "1", "--out-model", filepath.Join(dir, "m.json")},
		`pairfed train takes no arguments, got "true"`)
	probe6Refused(t, dir, []string{"ledger", "show", "--state", dir, "extra"}, `pairfed ledger show takes no arguments, got "extra"`)
	probe6Refused(t, dir, []string{"bench", "--json", "extra"}, `pairfed bench takes no arguments`)
	// A global option after the command says where it goes.
	probe6Refused(t, dir, []string{"simulate", "--data", "../../datasets/diabetes", "--cpuprofile", filepath.Join(dir, "cpu.prof")},
		"--cpuprofile is an option of pairfed itself: give it before the command")
	probe6Refused(t, dir, []string{"score", "--log-level", "debug"}, "--log-level is an option of pairfed itself")
	// Commands that take an argument keep it.
	if out, err := runCLI(t, "algos", "dpegd"); err != nil || !strings.Contains(out, "dpegd") {
		t.Errorf("algos dpegd: %v\n%s", err, out)
	}
}
