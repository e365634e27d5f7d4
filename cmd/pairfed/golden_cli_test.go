package main

import (
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pairfed/pairfed/internal/golden"
)

// CLI goldens: `pairfed algos` and the --help text of the app and of every
// command and subcommand (walked from newApp, so a new command is covered
// by default), pinned in testdata/cli so that a behaviour-preserving
// refactor of cmd/pairfed can be diffed. `go test ./cmd/pairfed -run
// GoldenCLI -rewrite` records them again (only after a deliberate change).

var versionLine = regexp.MustCompile(`(?m)^VERSION:\n.*\n`)

var rewrite = flag.Bool("rewrite", false, "rewrite the CLI goldens in testdata/cli")

// commandPaths lists every command path of the app, e.g. "federation
// coordinator", in the app's order.
func commandPaths(app *cli.App) [][]string {
	var out [][]string
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string{}, path...), c.Name)
			out = append(out, p)
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	return out
}

func TestGoldenCLI(t *testing.T) {
	runs := [][]string{{"algos"}, {"--help"}}
	for _, p := range commandPaths(newApp()) {
		runs = append(runs, append(p, "--help"))
	}
	names := map[string]bool{}
	for _, args := range runs {
		name := strings.Join(args, "_")
		if names[name] {
			t.Fatalf("two runs named %s", name)
		}
		names[name] = true
		t.Run(name, func(t *testing.T) {
			out, err := runCLI(t, args...)
			// The version line names the toolchain and build: masked.
			got := versionLine.ReplaceAll([]byte(out), []byte("VERSION:\n   (masked)\n"))
			if err != nil {
				got = append(got, []byte("\nerror: "+err.Error()+"\n")...)
			}
			path := filepath.Join("testdata", "cli", strings.TrimLeft(name, "-")+".txt")
			golden.Check(t, path, got, *rewrite)
		})
	}
}
