package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/urfave/cli/v2"
)

// walkFlags calls fn for every flag of the app and of every command and
// subcommand, with the command's path.
func walkFlags(app *cli.App, fn func(path string, f cli.Flag)) {
	for _, f := range app.Flags {
		fn("pairfed", f)
	}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			for _, f := range c.Flags {
				fn(p, f)
			}
			walk(p, c.Subcommands)
		}
	}
	walk("pairfed", app.Commands)
}

// placeholderWord is a back-quoted word urfave/cli may take for a flag's
// value placeholder: FILE, HOST:PORT, SEED:INDEX.
var placeholderWord = regexp.MustCompile("^[A-Z][A-Z0-9_:.-]*$")

// TestHelpOneDefaultPerFlag: every --help states a flag's default once.
// The rule: a flag for which urfave/cli prints "(default: …)" — a
// non-empty Value or DefaultText (bool flags too, unless
// DisableDefaultText) — must not also speak of a default in its Usage,
// where it would disagree (issue 24: "(default 1/(10·n)) (default: 0)");
// such a default belongs in DefaultText. And urfave/cli turns the first
// back-quoted text of a Usage into the value's placeholder, so a Usage
// may back-quote only one placeholder word (`FILE`), never a command
// (`pairfed algos` printed "--algo pairfed algos").
func TestHelpOneDefaultPerFlag(t *testing.T) {
	n := 0
	walkFlags(newApp(), func(path string, f cli.Flag) {
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			return
		}
		n++
		name := "--" + f.Names()[0]
		usage := df.GetUsage()
		shown := df.GetDefaultText()
		if bf, ok := f.(*cli.BoolFlag); ok && bf.DisableDefaultText {
			shown = ""
		}
		if shown != "" && strings.Contains(strings.ToLower(usage), "default") {
			t.Errorf("%s %s: help prints (default: %s) and the usage states a default too: %q", path, name, shown, usage)
		}
		if q := strings.Count(usage, "`"); q > 0 {
			first := strings.SplitN(usage, "`", 3)
			if q != 2 || !placeholderWord.MatchString(first[1]) {
				t.Errorf("%s %s: back-quotes in the usage become a mangled placeholder (%q): %q", path, name, first[1], usage)
			}
		}
	})
	if n < 100 {
		t.Fatalf("walked %d flags: the walk misses commands", n)
	}
}

// The federated --algo flags list the registry, not a hand-written
// subset (issue 24: job submit --help listed 5 of 9).
func TestHelpListsFederatedAlgorithms(t *testing.T) {
	for _, args := range [][]string{{"simulate", "--help"}, {"job", "submit", "--help"}} {
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "--algo ") {
				line = l
			}
		}
		for _, name := range fedalgo.Names() {
			if !strings.Contains(line, name) {
				t.Errorf("%s: --algo does not list %s: %q", strings.Join(args, " "), name, line)
			}
		}
	}
}
