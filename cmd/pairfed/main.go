// Command pairfed trains pairwise models (AUC maximization, similarity metric
// learning) on one machine or across sites with differential privacy.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/urfave/cli/v2"
)

func main() {
	ctx, stop := signalContext(stopSignals())
	defer stop()
	if err := newApp().RunContext(ctx, os.Args); err != nil {
		if ctx.Err() != nil {
			// A signal ended the command: say so (state files are
			// consistent: every write is atomic or an fsynced append).
			fmt.Fprintln(os.Stderr, "pairfed: interrupted by a signal:", err)
		} else {
			fmt.Fprintln(os.Stderr, "pairfed:", err)
		}
		os.Exit(exitCode(err))
	}
}

// stopSignals are the signals that stop a command gracefully (its
// context is cancelled: a coordinator or worker sends its Leave, state
// files are consistent): SIGINT, SIGTERM, and SIGHUP — the hang-up of
// the terminal or session that started a coordinator or worker; its
// default action killed the process without a word (issue 28). A
// process started with SIGHUP ignored (nohup) keeps ignoring it.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// signalContext is signal.NotifyContext that logs the signal it received
// (which names it, e.g. "received hangup: stopping"); later signals are
// caught and ignored until stop is called, as with NotifyContext.
func signalContext(sigs []os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			stderrLogf("pairfed: ")("received signal %v (%s): stopping", sig, signalName(sig))
			cancel()
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}

// signalName is the conventional name of a stop signal.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// usageError marks errors in the command line (exit status 2).
type usageError struct{ error }

func exitCode(err error) int {
	if _, ok := err.(usageError); ok {
		return 2
	}
	if ec, ok := err.(cli.ExitCoder); ok {
		return ec.ExitCode()
	}
	return 1
}

func newApp() *cli.App {
	prof := &profiler{}
	app := &cli.App{
		Name:                 "pairfed",
		Usage:                "private pairwise learning (AUC maximization, metric learning), on one machine or federated",
		Version:              buildVersion(),
		Suggest:              true, // "Did you mean …?" for `pairfed help TYPO` and the flags of commands without withUsageErrors
		EnableBashCompletion: true,
		Flags:                append(logFlags(), profileFlags()...),
		Before: func(c *cli.Context) error {
			if err := setupLogging(c); err != nil {
				return err
			}
			return prof.start(c)
		},
		After: prof.stop,
		Commands: []*cli.Command{
			trainCommand(),
			scoreCommand(),
			evaluateCommand(),
			exportCommand(),
			cardCommand(),
			verifyCommand(),
			keygenCommand(),
			algosCommand(),
			benchCommand(),
			auditCommand(),
			simulateCommand(),
			coordinatorCommand(),
			workerCommand(),
			jobCommand(),
			deployCommand(),
			experimentCommand(),
			ledgerCommand(),
			reportCommand(),
		},
	}
	app.Action = unknownCommand("", func(c *cli.Context) []*cli.Command { return c.App.Commands })
	suggestCommands(app.Commands)
	return app
}

// buildVersion is the module version of the binary (runtime/debug's build
// information: "(devel)" for a build from a checkout) and, when the build
// recorded them, the VCS revision, its time and whether the tree was
// modified.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown: no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (revision %s", rev)
		if at != "" {
			v += " of " + at
		}
		v += modified + ")"
	}
	return v + ", " + bi.GoVersion
}

// unknownCommand is the action of a command that only groups
// subcommands (and of the app): without arguments it prints the help, with
// one it reports an unknown command, suggesting the nearest name.
// group is the command's name, "" for the app.
func unknownCommand(group string, cmds func(*cli.Context) []*cli.Command) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			if group == "" {
				return cli.ShowAppHelp(c)
			}
			return cli.ShowSubcommandHelp(c)
		}
		name := c.Args().First()
		var names []string
		for _, cmd := range cmds(c) {
			if !cmd.Hidden {
				names = append(names, cmd.Names()...)
			}
		}
		where := strings.TrimSpace("pairfed " + group)
		return usageError{fmt.Errorf("unknown command %q%s (run `%s --help` for the commands)", name, didYouMean(name, names), where)}
	}
}

// suggestCommands gives every command that only groups subcommands the
// unknownCommand action, and every algorithm flag (--algo, --local-algo,
// --algos) a check that turns a typo into a suggestion.
func suggestCommands(cmds []*cli.Command) { suggestCommandsIn(cmds, true) }

// suggestCommandsIn is suggestCommands; noArgs gives the leaf commands
// that take no arguments the noArguments check (the job commands that
// take a job id refuse a second argument themselves: jobArg).
func suggestCommandsIn(cmds []*cli.Command, noArgs bool) {
	for _, cmd := range cmds {
		if cmd.Action == nil && len(cmd.Subcommands) > 0 {
			sub := cmd.Subcommands
			cmd.Action = unknownCommand(cmd.Name, func(*cli.Context) []*cli.Command { return sub })
		}
		if noArgs && cmd.Action != nil && len(cmd.Subcommands) == 0 && cmd.ArgsUsage == "" && cmd.Name != "help" {
			cmd.Action = noArguments(cmd.Action)
		}
		if cmd.OnUsageError == nil {
			cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError{globalFlagHint(err)} }
		}
		for _, f := range cmd.Flags {
			if sf, ok := f.(*cli.StringFlag); ok && sf.Action == nil {
				if known := algoNames(cmd.Name, sf.Name); known != nil {
					sf.Action = suggestAlgo(sf.Name, known)
				}
			}
		}
		suggestCommandsIn(cmd.Subcommands, noArgs)
	}
}

// noArguments refuses the arguments of a command that takes none (its
// ArgsUsage is empty). urfave/cli stops reading flags at the first
// argument, so `simulate --verbose true --epsilon 1` read --epsilon 1 as
// two more arguments and ran fed-avg, not private, without a word (probe 6,
// issue 28): the command's flags after the argument were never applied.
func noArguments(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			return action(c)
		}
		args := c.Args().Slice()
		more := ""
		if len(args) > 1 {
			more = fmt.Sprintf(", and the %d after it (%s) were not read as flags", len(args)-1, strings.Join(args[1:min(len(args), 6)], " "))
			if len(args) > 6 {
				more = strings.Replace(more, ") were", " …) were", 1)
			}
		}
		return usageError{fmt.Errorf("%s takes no arguments, got %q%s: flags are read up to the first argument — a switch (e.g. --json, --verbose) takes no value (write --json, or --json=false), and a value with spaces needs quotes", commandPath(c), args[0], more)}
	}
}

// commandPath is the command's name with its parents' ("ledger show").
func commandPath(c *cli.Context) string {
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && (len(names) == 0 || names[0] != l.Command.Name) {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// globalFlags are the flags of pairfed itself (given before the command).
var globalFlags = []string{"log-format", "log-level", "cpuprofile", "memprofile"}

// globalFlagHint adds to "flag provided but not defined: -F", when F is a
// flag of pairfed itself, where it goes: before the command.
func globalFlagHint(err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if slices.Contains(globalFlags, name) {
			return fmt.Errorf("%w: --%s is an option of pairfed itself: give it before the command (pairfed --%s VALUE COMMAND …)", err, name, name)
		}
	}
	return err
}

// algoNames are the algorithm names flag of command accepts (nil: not an
// algorithm flag): federated for simulate and job submit's --algo,
// single-site for --local-algo and the other --algo flags, both for
// --algos.
func algoNames(command, flag string) func() []string {
	single := func() []string {
		var names []string
		for _, a := range pairwise.Algorithms() {
			names = append(names, a.Name)
		}
		return names
	}
	switch {
	case flag == "local-algo":
		return single
	case flag == "algo" && (command == "simulate" || command == "submit"):
		return fedalgo.Names
	case flag == "algo":
		return single
	case flag == "algos":
		return func() []string { return append(single(), fedalgo.Names()...) }
	}
	return nil
}

// suggestAlgo checks the (comma-separated) names of an algorithm flag: a
// name that is not registered but within a small edit distance of one is
// a usage error with the suggestion. Other unknown names are left to the
// command, whose error lists the known ones.
func suggestAlgo(flag string, known func() []string) func(*cli.Context, string) error {
	return func(_ *cli.Context, v string) error {
		names := known()
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" || slices.Contains(names, name) {
				continue
			}
			if s := didYouMean(name, names); s != "" {
				kind := "algorithm"
				if flag == "algo" && len(names) > 0 && strings.HasPrefix(names[0], "fed-") {
					kind = "federated algorithm"
				}
				return usageError{fmt.Errorf("--%s: unknown %s %q%s (run `pairfed algos` for the list)", flag, kind, name, s)}
			}
		}
		return nil
	}
}

// didYouMean returns " (did you mean X?)" for the candidate nearest to
// name by edit distance (optimal string alignment: a swap of two adjacent
// letters counts 1), when it is near enough — at most 1 edit for names of
// up to 5 letters, 2 up to 11, 3 beyond — else "". Ties go to the first
// candidate.
func didYouMean(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	switch n := len([]rune(name)); {
	case n > 11:
		limit = 3
	case n > 5:
		limit = 2
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent runes.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	if len(s) > 64 || len(t) > 64 {
		// Names are short; a long argument is no typo of one.
		return max(len(s), len(t))
	}
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
